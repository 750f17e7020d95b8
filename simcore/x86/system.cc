// The i486's system side: segmentation (real mode, virtual-8086 mode, and protected-mode
// descriptors with their checks), paging in the memory path, interrupt and exception delivery
// (the real-mode vector table, protected-mode interrupt and trap gates; task gates go to
// task.cc), far transfers and call gates, privilege changes and their stacks, port I/O, and the
// control-register, debug-register and table instructions.
#include <algorithm>

#include "simcore/x86/cpu.h"

namespace citcat::x86 {
namespace {}  // namespace

void Cpu::Unmodelled() { exception_ = {true, 0, 0, eip_, false, false, true}; }

// ---- segmentation ----

// Limit and type checks of an access through a segment register. Real mode keeps the limits a
// segment had; protected mode also checks the type (no writes to code or read-only data, no reads
// of execute-only code) and that the register holds a usable selector.
bool Cpu::CheckSegment(int seg, uint32_t offset, int size, bool write) {
  const Segment& s = seg_[seg];
  const uint8_t fault = seg == kSs ? kVecStackFault : kVecGeneralProtection;
  if (!real_mode()) {
    const bool code = s.access & 0x08;
    if (s.access == 0 || (write && (code || !(s.access & 0x02))) ||
        (!write && code && !(s.access & 0x02))) {
      Raise(fault, 0);
      return false;
    }
  }
  const bool ok = WithinLimit(s, offset, size);
  if (!ok) Raise(fault, 0);
  return ok;
}

// Whether `size` bytes from `offset` lie within a segment's limit (expand-down included).
bool Cpu::WithinLimit(const Segment& s, uint32_t offset, int size) {
  const uint32_t last = offset + static_cast<uint32_t>(size) - 1;
  if ((s.access & 0x1C) == 0x14) {  // expand-down data
    const uint32_t upper = s.big ? 0xFFFFFFFFu : 0xFFFF;
    return offset > s.limit && last <= upper && last >= offset;
  }
  return last <= s.limit && last >= offset;
}

bool Cpu::ReadDescriptor(uint16_t selector, Descriptor* d, uint8_t fault, uint32_t ext) {
  const TableRegister& table = (selector & 4) ? ldtr_ : gdtr_;
  const uint32_t index = selector & ~7u;
  if (((selector & 4) && ldtr_.selector == 0) || index + 7 > table.limit) {
    Raise(fault, (selector & ~3u) | ext);
    return false;
  }
  uint32_t low, high;
  system_access_ = true;
  const bool ok =
      ReadLinear(table.base + index, 4, &low) && ReadLinear(table.base + index + 4, 4, &high);
  system_access_ = false;
  if (!ok) return false;
  d->base = (low >> 16) | ((high & 0xFF) << 16) | (high & 0xFF000000u);
  d->limit = (low & 0xFFFF) | (high & 0x000F0000u);
  if (high & (1u << 23)) d->limit = d->limit << 12 | 0xFFF;  // granularity: 4 KB units
  d->access = static_cast<uint8_t>(high >> 8);
  d->big = high & (1u << 22);
  d->low = low;
  d->high = high;
  return true;
}

bool Cpu::LoadSegment(int seg, uint16_t selector) {
  if (real_mode()) {
    // The base is the selector times 16; the limit and attributes stay as they were.
    seg_[seg].selector = selector;
    seg_[seg].base = uint32_t{selector} << 4;
    return true;
  }
  if (eflags_ & flag::kVM) {
    seg_[seg] = V86Segment(selector);
    return true;
  }
  if ((selector & ~3u) == 0) {
    if (seg == kSs) {
      Raise(kVecGeneralProtection, 0);
      return false;
    }
    seg_[seg] = {selector, 0, 0, false, 0};  // a null selector: any access through it is #GP(0)
    return true;
  }
  Descriptor d;
  if (!ReadDescriptor(selector, &d)) return false;
  const int rpl = selector & 3;
  const uint32_t error = selector & ~3u;
  if (seg == kSs) {
    if (rpl != cpl_ || !d.writable() || d.dpl() != cpl_) {
      Raise(kVecGeneralProtection, error);
      return false;
    }
    if (!d.present()) {
      Raise(kVecStackFault, error);
      return false;
    }
  } else {
    if (!d.readable() || ((d.data() || !d.conforming()) && d.dpl() < std::max(cpl_, rpl))) {
      Raise(kVecGeneralProtection, error);
      return false;
    }
    if (!d.present()) {
      Raise(kVecSegmentNotPresent, error);
      return false;
    }
  }
  if (!MarkAccessed(selector, &d)) return false;
  seg_[seg] = SegmentOf(selector, d);
  return true;
}

// The accessed bit is set in the descriptor in memory when a segment register is loaded.
bool Cpu::MarkAccessed(uint16_t selector, Descriptor* d) {
  if (d->access & 1) return true;
  d->access |= 1;
  const TableRegister& table = (selector & 4) ? ldtr_ : gdtr_;
  system_access_ = true;
  const bool ok = WriteLinear(table.base + (selector & ~7u) + 5, 1, d->access);
  system_access_ = false;
  return ok;
}

// Whether a far JMP, CALL, RETF or IRET may go to a code segment at the current privilege.
bool Cpu::CodeAtCpl(uint16_t selector, const Descriptor& d) {
  const uint32_t error = selector & ~3u;
  const int rpl = selector & 3;
  if (!d.code() || (d.conforming() ? d.dpl() > cpl_ : (d.dpl() != cpl_ || rpl > cpl_))) {
    Raise(kVecGeneralProtection, error);
    return false;
  }
  if (!d.present()) {
    Raise(kVecSegmentNotPresent, error);
    return false;
  }
  return true;
}

// ---- interrupts ----

// An interrupt or exception entry: through the real-mode vector table, or through a gate of the
// IDT: an interrupt or trap gate to a handler at the current or a more privileged level (from V86
// mode to ring 0 only), or a task gate to another task. `return_eip` is pushed (or saved in the
// old TSS).
bool Cpu::Interrupt(uint8_t vector, uint32_t return_eip, bool software, bool has_error,
                    uint32_t error_code) {
  // Entering the debug exception handler clears DR7.GD, so that the handler may use the debug
  // registers.
  if (vector == kVecDebug && !software) dr7_ &= ~kDr7Gd;
  if (real_mode()) {
    if (vector * 4u + 3 > idtr_.limit) {
      Raise(kVecGeneralProtection, 0);
      return false;
    }
    uint32_t ip = 0, cs = 0;
    if (!ReadLinear(idtr_.base + vector * 4u, 2, &ip) ||
        !ReadLinear(idtr_.base + vector * 4u + 2, 2, &cs)) {
      return false;
    }
    const uint32_t frame[3] = {EflagsImage(software) & 0xFFFF, seg_[kCs].selector, return_eip};
    if (!PushFrame(cpl_, 2, frame)) return false;
    SetFlags(flag::kIF | flag::kTF | flag::kAC, 0);
    seg_[kCs].selector = static_cast<uint16_t>(cs);
    seg_[kCs].base = cs << 4;
    eip_ = ip;
    jumped_ = true;
    ++branch_count_;
    return true;
  }
  const uint32_t gate_error = vector * 8u + 2;  // IDT, EXT clear (software) or set (faults)
  const uint32_t ext = software ? 0 : 1;
  if (vector * 8u + 7 > idtr_.limit) {
    Raise(kVecGeneralProtection, gate_error | ext);
    return false;
  }
  uint32_t low, high;
  system_access_ = true;
  const bool read = ReadLinear(idtr_.base + vector * 8u, 4, &low) &&
                    ReadLinear(idtr_.base + vector * 8u + 4, 4, &high);
  system_access_ = false;
  if (!read) return false;
  const uint8_t type = (high >> 8) & 0x1F;
  const int dpl = (high >> 13) & 3;
  if (type != 0x05 && type != 0x06 && type != 0x07 && type != 0x0E && type != 0x0F) {
    Raise(kVecGeneralProtection, gate_error | ext);
    return false;
  }
  if (software && dpl < cpl_) {
    Raise(kVecGeneralProtection, gate_error);
    return false;
  }
  if (!(high & 0x8000)) {
    Raise(kVecSegmentNotPresent, gate_error | ext);
    return false;
  }
  const uint16_t selector = static_cast<uint16_t>(low >> 16);
  if (type == 0x05) return TaskGateInterrupt(selector, software, has_error, error_code, return_eip);
  const bool gate32 = type & 0x08;
  const uint32_t offset = gate32 ? (high & 0xFFFF0000u) | (low & 0xFFFF) : low & 0xFFFF;
  if ((selector & ~3u) == 0) {
    Raise(kVecGeneralProtection, ext);
    return false;
  }
  Descriptor d;
  if (!ReadDescriptor(selector, &d, kVecGeneralProtection, ext)) return false;
  if (!d.code() || d.dpl() > cpl_) {
    Raise(kVecGeneralProtection, (selector & ~3u) | ext);
    return false;
  }
  if (!d.present()) {
    Raise(kVecSegmentNotPresent, (selector & ~3u) | ext);
    return false;
  }
  // From V86 mode only to a non-conforming ring 0 handler, on the ring 0 stack.
  const bool from_v86 = eflags_ & flag::kVM;
  if (from_v86 && (d.conforming() || d.dpl() != 0)) {
    Raise(kVecGeneralProtection, (selector & ~3u) | ext);
    return false;
  }
  if (offset > d.limit) {
    Raise(kVecGeneralProtection, ext);
    return false;
  }
  const int size = gate32 ? 4 : 2;
  const uint32_t frame[4] = {EflagsImage(software) & SizeMask(size), seg_[kCs].selector, return_eip,
                             error_code};
  const int new_cpl = d.conforming() ? cpl_ : d.dpl();
  if (!PushFrame(new_cpl, size, std::span<const uint32_t>(frame, has_error ? 4 : 3), ext,
                 from_v86)) {
    return false;
  }
  SetFlags(flag::kTF | flag::kNT | flag::kRF | flag::kVM | ((type & 1) ? 0 : flag::kIF), 0);
  if (from_v86) {
    // The handler finds the V86 data segments on its stack; the registers become null.
    for (int s : {kEs, kDs, kFs, kGs}) seg_[s] = {0, 0, 0, false, 0};
  }
  if (!MarkAccessed(selector, &d)) return false;
  seg_[kCs] = SegmentOf(static_cast<uint16_t>((selector & ~3u) | cpl_), d);
  eip_ = offset;
  jumped_ = true;
  ++branch_count_;
  return true;
}

// The stack of ring `dpl` from the current TSS: SS:ESP of that level, checked as the i486 does
// (#TS with the selector, #SS if not present; `ext`, the EXT bit of the event being delivered, in
// every error code).
bool Cpu::InnerStack(int dpl, uint32_t ext, uint16_t* ss, uint32_t* esp, Descriptor* d) {
  const uint32_t at = tss32_ ? 4 + 8 * dpl : 2 + 4 * dpl;
  const int width = tss32_ ? 4 : 2;
  if (tr_.selector == 0 || at + width + 1 > tr_.limit) {
    Raise(kVecInvalidTss, (tr_.selector & ~3u) | ext);
    return false;
  }
  uint32_t sp = 0, sel = 0;
  system_access_ = true;
  const bool ok =
      ReadLinear(tr_.base + at, width, &sp) && ReadLinear(tr_.base + at + width, 2, &sel);
  system_access_ = false;
  if (!ok) return false;
  *ss = static_cast<uint16_t>(sel);
  *esp = sp;
  const uint32_t error = (sel & ~3u) | ext;
  if ((sel & ~3u) == 0 || (sel & 3) != static_cast<uint32_t>(dpl)) {
    Raise(kVecInvalidTss, error);
    return false;
  }
  if (!ReadDescriptor(*ss, d, kVecInvalidTss, ext)) return false;
  if (!d->writable() || d->dpl() != dpl) {
    Raise(kVecInvalidTss, error);
    return false;
  }
  if (!d->present()) {
    Raise(kVecStackFault, error);
    return false;
  }
  return true;
}

// A far JMP or CALL through a call gate: to the gate's code segment at the same privilege, or for
// CALL to a more privileged non-conforming one on the stack the TSS holds for that ring, with the
// gate's count of parameters copied from the old stack.
bool Cpu::CallGate(const Instruction& in, uint16_t gate_selector, const Descriptor& gate) {
  const uint32_t gate_error = gate_selector & ~3u;
  if (gate.dpl() < std::max(cpl_, static_cast<int>(gate_selector & 3))) {
    Raise(kVecGeneralProtection, gate_error);
    return false;
  }
  if (!gate.present()) {
    Raise(kVecSegmentNotPresent, gate_error);
    return false;
  }
  const bool gate32 = (gate.access & 0x1F) == 0x0C;
  const uint16_t selector = static_cast<uint16_t>(gate.low >> 16);
  const uint32_t offset =
      gate32 ? (gate.high & 0xFFFF0000u) | (gate.low & 0xFFFF) : gate.low & 0xFFFF;
  const int count = static_cast<int>(gate.high & 0x1F);
  if ((selector & ~3u) == 0) {
    Raise(kVecGeneralProtection, 0);
    return false;
  }
  Descriptor d;
  if (!ReadDescriptor(selector, &d)) return false;
  if (!d.code() || d.dpl() > cpl_ || (in.op == Op::kJmpFar && !d.conforming() && d.dpl() != cpl_)) {
    Raise(kVecGeneralProtection, selector & ~3u);
    return false;
  }
  if (!d.present()) {
    Raise(kVecSegmentNotPresent, selector & ~3u);
    return false;
  }
  if (offset > d.limit) {
    Raise(kVecGeneralProtection, 0);
    return false;
  }
  const int size = gate32 ? 4 : 2;
  const uint16_t return_cs = seg_[kCs].selector;
  const int new_cpl = d.conforming() ? cpl_ : d.dpl();
  if (in.op == Op::kCallFar) {
    // To an inner ring the parameters are copied, read from the old stack before it is left:
    // the frame is the parameters (the last pushed first), then the return address.
    uint32_t frame[31 + 2];
    int n = 0;
    if (new_cpl < cpl_) {
      for (int i = count - 1; i >= 0; --i) {
        const uint32_t at = (Sp() + static_cast<uint32_t>(i * size)) & SizeMask(StackSize());
        if (!ReadMem(kSs, at, size, &frame[n++])) return false;
      }
    }
    frame[n++] = return_cs;
    frame[n++] = next_eip_;
    if (!PushFrame(new_cpl, size, std::span<const uint32_t>(frame, n))) return false;
  }
  if (!MarkAccessed(selector, &d)) return false;
  seg_[kCs] = SegmentOf(static_cast<uint16_t>((selector & ~3u) | new_cpl), d);
  eip_ = offset;
  return true;
}

// Pushes `values`, in order, on the stack of ring `new_cpl`: the current stack, or for a more
// privileged ring the TSS's stack for it, with the old SS and ESP pushed first (and CPL changed);
// from V86 mode GS, FS, DS and ES come before them. The stack must have room for the whole frame
// before anything is written (#SS(0), or #SS with the new SS selector; `ext` is the EXT bit of
// the event being delivered), so that a fault finds memory, SS, ESP and CPL as they were.
bool Cpu::PushFrame(int new_cpl, int size, std::span<const uint32_t> values, uint32_t ext,
                    bool from_v86) {
  if (new_cpl >= cpl_) {
    const uint32_t mask = SizeMask(StackSize());
    uint32_t sp = Sp();
    for (size_t i = 0; i < values.size(); ++i) {
      sp = (sp - size) & mask;
      if (!WithinLimit(seg_[kSs], sp, size)) {
        Raise(kVecStackFault, ext);
        return false;
      }
    }
    sp = Sp();
    for (uint32_t v : values) {
      sp = (sp - size) & mask;
      if (!WriteMem(kSs, sp, size, v)) return false;
    }
    SetSp(sp);
    return true;
  }
  uint16_t ss;
  uint32_t esp;
  Descriptor ss_desc;
  if (!InnerStack(new_cpl, ext, &ss, &esp, &ss_desc)) return false;
  const Segment new_ss = SegmentOf(ss, ss_desc);
  uint32_t frame[4 + 2 + 6];
  size_t n = 0;
  if (from_v86) {
    for (int s : {kGs, kFs, kDs, kEs}) frame[n++] = seg_[s].selector;
  }
  frame[n++] = seg_[kSs].selector;
  frame[n++] = gpr_[kEsp];
  for (uint32_t v : values) frame[n++] = v;
  const uint32_t mask = new_ss.big ? 0xFFFFFFFFu : 0xFFFF;
  uint32_t sp = esp & mask;
  for (size_t i = 0; i < n; ++i) {
    sp = (sp - size) & mask;
    if (!WithinLimit(new_ss, sp, size)) {
      Raise(kVecStackFault, (ss & ~3u) | ext);
      return false;
    }
  }
  if (!MarkAccessed(ss, &ss_desc)) return false;
  sp = esp & mask;
  for (size_t i = 0; i < n; ++i) {
    sp = (sp - size) & mask;
    system_access_ = true;  // the inner ring's stack: supervisor accesses
    const bool ok = WriteLinear(new_ss.base + sp, size, frame[i]);
    system_access_ = false;
    if (!ok) return false;
    if (observer_ != nullptr) observer_->OnAccess(new_ss.base + sp, size, true, frame[i]);
  }
  cpl_ = new_cpl;
  seg_[kSs] = SegmentOf(ss, ss_desc);
  gpr_[kEsp] = new_ss.big ? sp : (esp & 0xFFFF0000u) | sp;
  return true;
}

// RETF or IRET to an outer ring at `eip`: after EIP, CS (and EFLAGS) the outer ESP and SS are
// popped (from `sp`: the stack pointer changes only once nothing can fault); the data segment
// registers the outer ring may not use become null.
bool Cpu::ReturnToOuter(uint16_t cs_selector, const Descriptor& cs, uint32_t eip, int size,
                        uint32_t sp) {
  uint32_t esp, ss;
  if (!PopAt(&sp, size, &esp) || !PopAt(&sp, size, &ss)) return false;
  const int new_cpl = cs_selector & 3;
  const uint16_t ss_sel = static_cast<uint16_t>(ss);
  if ((ss_sel & ~3u) == 0) {
    Raise(kVecGeneralProtection, 0);
    return false;
  }
  Descriptor ssd;
  if (!ReadDescriptor(ss_sel, &ssd)) return false;
  if ((ss_sel & 3) != new_cpl || !ssd.writable() || ssd.dpl() != new_cpl) {
    Raise(kVecGeneralProtection, ss_sel & ~3u);
    return false;
  }
  if (!ssd.present()) {
    Raise(kVecStackFault, ss_sel & ~3u);
    return false;
  }
  if (!cs.code() || (cs.conforming() ? cs.dpl() > new_cpl : cs.dpl() != new_cpl)) {
    Raise(kVecGeneralProtection, cs_selector & ~3u);
    return false;
  }
  if (!cs.present()) {
    Raise(kVecSegmentNotPresent, cs_selector & ~3u);
    return false;
  }
  if (eip > cs.limit) {
    Raise(kVecGeneralProtection, 0);
    return false;
  }
  Descriptor code = cs;
  if (!MarkAccessed(cs_selector, &code) || !MarkAccessed(ss_sel, &ssd)) return false;
  cpl_ = new_cpl;
  seg_[kCs] = SegmentOf(cs_selector, code);
  seg_[kSs] = SegmentOf(ss_sel, ssd);
  gpr_[kEsp] = ssd.big ? esp : (gpr_[kEsp] & 0xFFFF0000u) | (esp & 0xFFFF);
  for (int s : {kEs, kDs, kFs, kGs}) {
    const uint8_t a = seg_[s].access;
    const bool conforming_code = (a & 0x1C) == 0x1C;
    if (a != 0 && !conforming_code && static_cast<int>((a >> 5) & 3) < new_cpl) {
      seg_[s] = {0, 0, 0, false, 0};
    }
  }
  return true;
}

// ---- far transfers ----

// A pop or push at `*sp`, a copy of the stack pointer: far transfers change SP itself only once
// nothing can fault any more, since a fault is delivered at once.
bool Cpu::PopAt(uint32_t* sp, int size, uint32_t* value) {
  const uint32_t mask = SizeMask(StackSize());
  if (!ReadMem(kSs, *sp & mask, size, value)) return false;
  *sp = (*sp + size) & mask;
  return true;
}

bool Cpu::PushAt(uint32_t* sp, int size, uint32_t value) {
  const uint32_t at = (*sp - size) & SizeMask(StackSize());
  if (!WriteMem(kSs, at, size, value)) return false;
  *sp = at;
  return true;
}

// Far JMP, CALL, RETF and IRET: real and V86 mode (8086 segments), and protected mode to code at
// the same privilege, through call gates, to other tasks, and back to outer rings or V86 mode.
bool Cpu::FarTransfer(const Instruction& in) {
  const int size = in.opsize;
  const bool v86 = eflags_ & flag::kVM;
  const bool segments_8086 = real_mode() || v86;
  uint32_t sp = Sp();
  uint32_t offset = 0, selector = 0, flags = 0;
  switch (in.op) {
    case Op::kJmpFar:
    case Op::kCallFar:
      if (in.dst == Operand::kFar) {
        offset = in.imm & SizeMask(size);
        selector = in.imm2;
      } else {
        const uint32_t ea = EffectiveAddress(in);
        if (!ReadMem(in.seg, ea, size, &offset) ||
            !ReadMem(in.seg, (ea + size) & SizeMask(in.addrsize), 2, &selector)) {
          return false;
        }
      }
      // With 8086 segments the return address goes on the stack now; in protected mode once the
      // target is known (a call gate pushes it itself, maybe on another stack).
      if (in.op == Op::kCallFar && segments_8086 &&
          (!PushAt(&sp, size, seg_[kCs].selector) || !PushAt(&sp, size, next_eip_))) {
        return false;
      }
      break;
    case Op::kRetFar:
      if (!PopAt(&sp, size, &offset) || !PopAt(&sp, size, &selector)) return false;
      if (in.dst == Operand::kImm) sp += in.imm & 0xFFFF;
      break;
    case Op::kIret:
      if (!V86Iopl()) return false;
      if (!segments_8086 && (eflags_ & flag::kNT)) {
        nmi_blocked_ = false;
        return TaskReturn();
      }
      if (!PopAt(&sp, size, &offset) || !PopAt(&sp, size, &selector) || !PopAt(&sp, size, &flags)) {
        return false;
      }
      nmi_blocked_ = false;
      break;
    default:
      return false;
  }
  if (segments_8086) {
    SetSp(sp);
    seg_[kCs].selector = static_cast<uint16_t>(selector);
    seg_[kCs].base = (selector & 0xFFFF) << 4;
    if (in.op == Op::kIret) {
      // Real mode: IRET loads every flag but VM; a 16-bit IRET the low 16. V86 mode (IOPL 3):
      // IOPL stays too.
      SetFlags((flag::kAll & ~(flag::kVM | (v86 ? flag::kIOPL : 0))) & SizeMask(size), flags);
    }
    ++branch_count_;
    Jump(offset, size);
    return true;
  }
  const uint16_t sel = static_cast<uint16_t>(selector);
  // The target's EIP must lie within its code segment: #GP(0) before anything changes.
  if (size == 2) offset &= 0xFFFF;
  // A 32-bit IRET at CPL 0 whose EFLAGS image has VM set returns to V86 mode.
  if (in.op == Op::kIret && size == 4 && (flags & flag::kVM) && cpl_ == 0) {
    if (!ReturnToV86(offset, selector, flags, sp)) return false;
    ++branch_count_;
    jumped_ = true;
    return true;
  }
  if ((sel & ~3u) == 0) {
    Raise(kVecGeneralProtection, 0);
    return false;
  }
  Descriptor d;
  if (!ReadDescriptor(sel, &d)) return false;
  if (!d.segment()) {
    const uint8_t type = d.access & 0x1F;
    const bool jmp_or_call = in.op == Op::kJmpFar || in.op == Op::kCallFar;
    bool ok;
    if (jmp_or_call && (type == 0x04 || type == 0x0C)) {
      ok = CallGate(in, sel, d);
    } else if (jmp_or_call && (type == 0x01 || type == 0x05 || type == 0x09)) {
      ok = TaskTransfer(sel, d, in.op == Op::kCallFar);
    } else {
      Raise(kVecGeneralProtection, sel & ~3u);  // a busy TSS, an LDT, an interrupt gate...
      ok = false;
    }
    if (!ok) return false;
    ++branch_count_;
    jumped_ = true;
    return true;
  }
  const int old_cpl = cpl_;
  if ((in.op == Op::kRetFar || in.op == Op::kIret) && (sel & 3) > cpl_) {
    if (!ReturnToOuter(sel, d, offset, size, sp)) return false;
    // RETF imm16 releases the parameters on the outer stack too.
    if (in.op == Op::kRetFar && in.dst == Operand::kImm) SetSp(Sp() + (in.imm & 0xFFFF));
  } else {
    if (!CodeAtCpl(sel, d)) return false;
    if (offset > d.limit) {
      Raise(kVecGeneralProtection, 0);
      return false;
    }
    if (in.op == Op::kCallFar &&
        (!PushAt(&sp, size, seg_[kCs].selector) || !PushAt(&sp, size, next_eip_))) {
      return false;
    }
    if (!MarkAccessed(sel, &d)) return false;
    seg_[kCs] = SegmentOf(static_cast<uint16_t>((sel & ~3u) | cpl_), d);
    SetSp(sp);
  }
  if (in.op == Op::kIret) {
    // IOPL changes only at CPL 0, IF only where CPL <= IOPL; VM only by the return to V86 mode.
    uint32_t writable = (flag::kAll & ~flag::kVM) & SizeMask(size);
    if (old_cpl > 0) writable &= ~flag::kIOPL;
    if (old_cpl > static_cast<int>((eflags_ & flag::kIOPL) >> 12)) writable &= ~flag::kIF;
    SetFlags(writable, flags);
  }
  ++branch_count_;
  Jump(offset, size);
  return true;
}

// ---- virtual-8086 mode ----

// PUSHF, POPF, INT n and IRET in V86 mode with IOPL below 3: #GP(0), for the V86 monitor.
bool Cpu::V86Iopl() {
  if (!(eflags_ & flag::kVM) || (eflags_ & flag::kIOPL) == flag::kIOPL) return true;
  Raise(kVecGeneralProtection, 0);
  return false;
}

// IRET from ring 0 to V86 mode: after EIP, CS and EFLAGS, the V86 task's ESP, SS, ES, DS, FS and
// GS are popped (32 bits each, from `sp`), EFLAGS loaded whole, every segment register loaded as
// in real mode, and CPL becomes 3. An EIP beyond the 64 KB of a V86 code segment is #GP(0).
bool Cpu::ReturnToV86(uint32_t eip, uint32_t cs, uint32_t eflags, uint32_t sp) {
  if (eip > 0xFFFF) {
    Raise(kVecGeneralProtection, 0);
    return false;
  }
  uint32_t v[6];  // ESP, SS, ES, DS, FS, GS
  for (uint32_t& x : v) {
    if (!PopAt(&sp, 4, &x)) return false;
  }
  set_eflags(eflags);
  cpl_ = 3;
  seg_[kCs] = V86Segment(static_cast<uint16_t>(cs));
  gpr_[kEsp] = v[0];
  const int segs[5] = {kSs, kEs, kDs, kFs, kGs};
  for (int i = 0; i < 5; ++i) seg_[segs[i]] = V86Segment(static_cast<uint16_t>(v[i + 1]));
  eip_ = eip;
  return true;
}

// ---- control registers, tables and the rest of the system instructions ----

bool Cpu::System(const Instruction& in) {
  const int size = in.opsize;
  if ((Facts(in.op).attrs & attr::kPrivileged) && !real_mode() && cpl_ != 0 && in.op != Op::kCli &&
      in.op != Op::kSti) {
    Raise(kVecGeneralProtection, 0);
    return false;
  }
  uint32_t a = 0;
  switch (in.op) {
    case Op::kMovDr: {
      // With DR7.GD set any access is a #DB fault before it, with DR6.BD set (general detect).
      if (dr7_ & kDr7Gd) {
        dr6_ |= kDr6Bd;
        Raise(kVecDebug, 0);
        return false;
      }
      // DR4 and DR5 are DR6 and DR7 on the i486; reserved bits read as the manual gives them.
      const int n = (in.reg == 4 || in.reg == 5) ? in.reg + 2 : in.reg;
      if (in.dst == Operand::kDreg) {
        a = gpr_[in.rm];
        if (n < 4) dr_[n] = a;
        if (n == 6) dr6_ = (a & 0x0000E00Fu) | 0xFFFF0FF0u;
        if (n == 7) dr7_ = (a & 0xFFFF23FFu) | 0x400u;
        return true;
      }
      gpr_[in.rm] = n < 4 ? dr_[n] : n == 6 ? dr6_ : dr7_;
      return true;
    }
    case Op::kMovCr:
      if (in.dst == Operand::kCreg) {
        a = gpr_[in.rm];
        switch (in.reg) {
          case 0:
            if (((a & kCr0Pg) && !(a & kCr0Pe)) || ((a & kCr0Nw) && !(a & kCr0Cd))) {
              Raise(kVecGeneralProtection, 0);
              return false;
            }
            set_cr0(a | kCr0Et);
            return true;
          case 2:
            cr2_ = a;
            return true;
          case 3:
            paging_.LoadCr3(a);
            return true;
        }
        return false;
      }
      gpr_[in.rm] = in.reg == 0 ? cr0_ : in.reg == 2 ? cr2_ : paging_.cr3();
      return true;
    case Op::kLgdt:
    case Op::kLidt: {
      const uint32_t ea = EffectiveAddress(in);
      uint32_t limit, base;
      if (!ReadMem(in.seg, ea, 2, &limit) ||
          !ReadMem(in.seg, (ea + 2) & SizeMask(in.addrsize), 4, &base)) {
        return false;
      }
      if (size == 2) base &= 0x00FFFFFF;  // a 16-bit operand loads a 24-bit base
      (in.op == Op::kLgdt ? gdtr_ : idtr_) = {base, limit, 0};
      return true;
    }
    case Op::kSgdt:
    case Op::kSidt: {
      const TableRegister& t = in.op == Op::kSgdt ? gdtr_ : idtr_;
      const uint32_t ea = EffectiveAddress(in);
      // A 16-bit operand stores the base's top byte as FFh on the i486 (as on the 80286).
      const uint32_t base = size == 2 ? (t.base & 0x00FFFFFF) | 0xFF000000u : t.base;
      return WriteMem(in.seg, ea, 2, t.limit) &&
             WriteMem(in.seg, (ea + 2) & SizeMask(in.addrsize), 4, base);
    }
    case Op::kSmsw:
      // Into a 32-bit register the i486 writes all of CR0 (the manual: the upper half is
      // undefined; measured on the chip, in real and protected mode).
      return in.IsRegisterForm() ? WriteRm(in, size, size == 4 ? cr0_ : cr0_ & 0xFFFF)
                                 : WriteRm(in, 2, cr0_ & 0xFFFF);
    case Op::kLmsw:
      if (!ReadRm(in, 2, &a)) return false;
      // LMSW loads PE, MP, EM and TS, and cannot clear PE.
      set_cr0((cr0_ & ~0xEu) | (a & 0xF) | (cr0_ & kCr0Pe));
      return true;
    case Op::kClts:
      set_cr0(cr0_ & ~kCr0Ts);
      return true;
    case Op::kCli:
    case Op::kSti:
      if (!real_mode() && cpl_ > static_cast<int>((eflags_ & flag::kIOPL) >> 12)) {
        Raise(kVecGeneralProtection, 0);
        return false;
      }
      // STI holds interrupts off until after the next instruction.
      if (in.op == Op::kSti && !(eflags_ & flag::kIF)) shadow_ = true;
      SetFlags(flag::kIF, in.op == Op::kSti ? flag::kIF : 0);
      return true;
    case Op::kHlt:
      halted_ = true;
      return true;
    case Op::kInvlpg:
      paging_.tlb().Invalidate(Linear(in.seg, EffectiveAddress(in)));
      return true;
    case Op::kInvd:
    case Op::kWbinvd:
      cache_.InvalidateAll();
      return true;
    default:
      return false;
  }
}

// LLDT and LTR load the LDTR and TR from GDT descriptors (LTR marks the TSS busy); SLDT and STR
// store their selectors. All four are #UD in real and V86 mode.
bool Cpu::Tables(const Instruction& in) {
  if (real_mode() || (eflags_ & flag::kVM)) {
    Raise(kVecInvalidOpcode);
    return false;
  }
  uint32_t a = 0;
  switch (in.op) {
    case Op::kSldt:
      return WriteRm(in, in.IsRegisterForm() ? in.opsize : 2, ldtr_.selector);
    case Op::kStr:
      return WriteRm(in, in.IsRegisterForm() ? in.opsize : 2, tr_.selector);
    case Op::kLldt:
    case Op::kLtr: {
      if (cpl_ != 0) {
        Raise(kVecGeneralProtection, 0);
        return false;
      }
      if (!ReadRm(in, 2, &a)) return false;
      const uint16_t sel = static_cast<uint16_t>(a);
      if (in.op == Op::kLldt && (sel & ~3u) == 0) {
        ldtr_ = {0, 0, 0};
        return true;
      }
      if ((sel & 4) || (sel & ~3u) == 0) {
        Raise(kVecGeneralProtection, sel & ~3u);
        return false;
      }
      Descriptor d;
      if (!ReadDescriptor(sel, &d)) return false;
      const uint8_t type = d.access & 0x1F;
      const bool ok = in.op == Op::kLldt ? type == 0x02 : (type == 0x01 || type == 0x09);
      if (!ok) {
        Raise(kVecGeneralProtection, sel & ~3u);
        return false;
      }
      if (!d.present()) {
        Raise(kVecSegmentNotPresent, sel & ~3u);
        return false;
      }
      if (in.op == Op::kLldt) {
        ldtr_ = {d.base, d.limit, sel};
        return true;
      }
      // The TSS descriptor becomes busy (type 3 or B) in memory.
      system_access_ = true;
      const bool marked =
          WriteLinear(gdtr_.base + (sel & ~7u) + 5, 1, static_cast<uint32_t>(d.access | 0x02));
      system_access_ = false;
      if (!marked) return false;
      tr_ = {d.base, d.limit, sel};
      tss32_ = type == 0x09;
      return true;
    }
    default:
      return false;
  }
}

// Port I/O is allowed at CPL <= IOPL; above it and always in V86 mode, by the I/O permission
// bitmap of a 32-bit TSS (the bits of every accessed port clear), else #GP(0).
bool Cpu::IoAllowed(uint32_t port, int size) {
  if (real_mode() ||
      (!(eflags_ & flag::kVM) && cpl_ <= static_cast<int>((eflags_ & flag::kIOPL) >> 12))) {
    return true;
  }
  bool allowed = false;
  if (tss32_ && tr_.selector != 0 && tr_.limit >= 0x67) {
    uint32_t base = 0, bits = 0;
    system_access_ = true;
    bool ok = ReadLinear(tr_.base + 0x66, 2, &base);
    const uint32_t at = base + port / 8;
    if (ok && at + 1 <= tr_.limit) {
      ok = ReadLinear(tr_.base + at, 2, &bits);
      allowed = ok && ((bits >> (port % 8)) & ((1u << size) - 1)) == 0;
    }
    system_access_ = false;
    if (!ok) return false;
  }
  if (!allowed) Raise(kVecGeneralProtection, 0);
  return allowed;
}

// One port cycle on the bus: kPortRead or kPortWrite, never through the cache.
bool Cpu::Port(bool write, uint32_t port, int size, uint32_t* value) {
  uint8_t bytes[4] = {};
  cat::BusRecord r;
  r.kind = write ? cat::RecordKind::kPortWrite : cat::RecordKind::kPortRead;
  r.address = port & 0xFFFF;
  r.branch_count = branch_count_;
  if (write) {
    for (int i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(*value >> (8 * i));
    r.data = std::span<const uint8_t>(bytes, size);
    bus_.Write(r);
    return true;
  }
  r.data = std::span<const uint8_t>(bytes, size);
  bus_.Read(r, std::span<uint8_t>(bytes, size));
  uint32_t v = 0;
  for (int i = size - 1; i >= 0; --i) v = v << 8 | bytes[i];
  *value = v;
  return true;
}

bool Cpu::PortIo(const Instruction& in) {
  const int size = in.opsize;
  const bool dx =
      in.op == Op::kIns || in.op == Op::kOuts || in.src == Operand::kDx || in.dst == Operand::kDx;
  const uint32_t port = dx ? gpr_[kEdx] & 0xFFFF : in.imm & 0xFF;
  if (!IoAllowed(port, size)) return false;
  uint32_t v = 0;
  switch (in.op) {
    case Op::kIn:
      Port(false, port, size, &v);
      WriteReg(kEax, size, v);
      return true;
    case Op::kOut:
      v = gpr_[kEax] & SizeMask(size);
      return Port(true, port, size, &v);
    case Op::kIns:
    case Op::kOuts: {
      // One transfer per step under REP, as the other string instructions.
      const int as = in.addrsize;
      const uint32_t am = SizeMask(as);
      const bool rep = in.prefixes & (prefix::kRep | prefix::kRepne);
      if (rep && (gpr_[kEcx] & am) == 0) return true;
      const int r = in.op == Op::kIns ? kEdi : kEsi;
      const uint32_t offset = gpr_[r] & am;
      if (in.op == Op::kIns) {
        // The destination is checked before the port cycle.
        if (!CheckSegment(kEs, offset, size, true)) return false;
        Port(false, port, size, &v);
        if (!WriteMem(kEs, offset, size, v)) return false;
      } else {
        if (!ReadMem(in.seg, offset, size, &v)) return false;
        Port(true, port, size, &v);
      }
      AdvanceIndex(r, in);
      if (rep) CountIteration(in);
      return true;
    }
    default:
      return false;
  }
}

// LAR, LSL, VERR, VERW: whether a selector names a descriptor the current privilege may see (ZF),
// and its access rights or limit; they never fault on the selector itself. ARPL raises an RPL.
// All five are #UD in real and V86 mode.
bool Cpu::Probe(const Instruction& in) {
  if (real_mode() || (eflags_ & flag::kVM)) {
    Raise(kVecInvalidOpcode);
    return false;
  }
  uint32_t a = 0;
  if (in.op == Op::kArpl) {
    if (!ReadRm(in, 2, &a)) return false;
    const uint32_t rpl = ReadReg(in.reg, 2) & 3;
    if ((a & 3) < rpl) {
      if (!WriteRm(in, 2, (a & ~3u) | rpl)) return false;
      SetFlags(flag::kZF, flag::kZF);
    } else {
      SetFlags(flag::kZF, 0);
    }
    return true;
  }
  if (!ReadRm(in, 2, &a)) return false;
  const uint16_t sel = static_cast<uint16_t>(a);
  const TableRegister& table = (sel & 4) ? ldtr_ : gdtr_;
  bool ok = (sel & ~3u) != 0 && (sel & ~7u) + 7 <= table.limit && (!(sel & 4) || ldtr_.selector);
  uint32_t low = 0, high = 0;
  if (ok) {
    system_access_ = true;
    const bool read = ReadLinear(table.base + (sel & ~7u), 4, &low) &&
                      ReadLinear(table.base + (sel & ~7u) + 4, 4, &high);
    system_access_ = false;
    if (!read) return false;
  }
  const uint8_t access = static_cast<uint8_t>(high >> 8);
  const uint8_t type = access & 0x1F;
  const int dpl = (access >> 5) & 3;
  const bool segment = access & 0x10, code = segment && (access & 0x08);
  const bool conforming = code && (access & 0x04);
  // Visible at this privilege: DPL >= max(CPL, RPL), except conforming code.
  const bool visible = conforming || dpl >= std::max(cpl_, static_cast<int>(sel & 3));
  switch (in.op) {
    case Op::kLar:
      ok = ok && visible &&
           (segment || type == 0x01 || type == 0x02 || type == 0x03 || type == 0x04 ||
            type == 0x05 || type == 0x09 || type == 0x0B || type == 0x0C);
      break;
    case Op::kLsl:
      ok =
          ok && visible &&
          (segment || type == 0x01 || type == 0x02 || type == 0x03 || type == 0x09 || type == 0x0B);
      break;
    case Op::kVerr:
      ok = ok && segment && (!code || (access & 0x02)) && (conforming || visible);
      break;
    case Op::kVerw:
      ok = ok && segment && !code && (access & 0x02) && visible;
      break;
    default:
      return false;
  }
  SetFlags(flag::kZF, ok ? flag::kZF : 0);
  if (!ok) return true;
  if (in.op == Op::kLar) {
    WriteReg(in.reg, in.opsize, high & (in.opsize == 4 ? 0x00F0FF00u : 0xFF00u));
  } else if (in.op == Op::kLsl) {
    uint32_t limit = (low & 0xFFFF) | (high & 0x000F0000u);
    if (high & (1u << 23)) limit = limit << 12 | 0xFFF;
    WriteReg(in.reg, in.opsize, limit);
  }
  return true;
}

}  // namespace citcat::x86
