// The i486's system side: segmentation (real mode, and protected-mode descriptors with their
// checks), paging in the memory path, interrupt and exception delivery (the real-mode vector
// table, protected-mode interrupt and trap gates), far transfers and call gates, privilege
// changes and their stacks, port I/O, and the control-register, debug-register and table
// instructions. What is not modelled yet (task switches, V86 mode) stops the core as `unmodelled`.
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
  const uint32_t last = offset + static_cast<uint32_t>(size) - 1;
  const bool expand_down = (s.access & 0x1C) == 0x14;
  bool ok;
  if (expand_down) {
    const uint32_t upper = s.big ? 0xFFFFFFFFu : 0xFFFF;
    ok = offset > s.limit && last <= upper && last >= offset;
  } else {
    ok = last <= s.limit && last >= offset;
  }
  if (!ok) Raise(fault, 0);
  return ok;
}

bool Cpu::ReadDescriptor(uint16_t selector, Descriptor* d) {
  const TableRegister& table = (selector & 4) ? ldtr_ : gdtr_;
  const uint32_t index = selector & ~7u;
  if ((selector & 4) && ldtr_.selector == 0) {
    Raise(kVecGeneralProtection, selector & ~3u);
    return false;
  }
  if (index + 7 > table.limit) {
    Raise(kVecGeneralProtection, selector & ~3u);
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
  // The accessed bit is set in the descriptor in memory.
  if (!(d.access & 1)) {
    d.access |= 1;
    const TableRegister& table = (selector & 4) ? ldtr_ : gdtr_;
    system_access_ = true;
    const bool ok = WriteLinear(table.base + (selector & ~7u) + 5, 1, d.access);
    system_access_ = false;
    if (!ok) return false;
  }
  seg_[seg] = SegmentOf(selector, d);
  return true;
}

// CS from a code-segment descriptor at the current privilege (JMP, CALL, RETF, IRET, gates).
bool Cpu::LoadCode(uint16_t selector, const Descriptor& d) {
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
  seg_[kCs] = SegmentOf(static_cast<uint16_t>((selector & ~3u) | cpl_), d, 1);
  return true;
}

// ---- interrupts ----

// An interrupt or exception entry: through the real-mode vector table, or through an interrupt
// or trap gate of the IDT to a handler at the current privilege. `return_eip` is pushed.
bool Cpu::Interrupt(uint8_t vector, uint32_t return_eip, bool software, bool has_error,
                    uint32_t error_code) {
  const uint32_t sp = Sp();
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
    if (!Push(2, eflags_ & 0xFFFF) || !Push(2, seg_[kCs].selector) || !Push(2, return_eip)) {
      SetSp(sp);
      return false;
    }
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
  if (type == 0x05) {
    Unmodelled();  // task gates
    return false;
  }
  if (type != 0x06 && type != 0x07 && type != 0x0E && type != 0x0F) {
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
  const bool gate32 = type & 0x08;
  const uint32_t offset = gate32 ? (high & 0xFFFF0000u) | (low & 0xFFFF) : low & 0xFFFF;
  if ((selector & ~3u) == 0) {
    Raise(kVecGeneralProtection, ext);
    return false;
  }
  Descriptor d;
  if (!ReadDescriptor(selector, &d)) return false;
  if (!d.code() || d.dpl() > cpl_) {
    Raise(kVecGeneralProtection, (selector & ~3u) | ext);
    return false;
  }
  if (eflags_ & flag::kVM) {
    Unmodelled();  // interrupts from V86 mode
    return false;
  }
  if (!d.present()) {
    Raise(kVecSegmentNotPresent, (selector & ~3u) | ext);
    return false;
  }
  const int size = gate32 ? 4 : 2;
  const uint32_t frame[4] = {eflags_ & SizeMask(size), seg_[kCs].selector, return_eip, error_code};
  const int new_cpl = d.conforming() ? cpl_ : d.dpl();
  if (!PushFrame(new_cpl, size, std::span<const uint32_t>(frame, has_error ? 4 : 3))) return false;
  SetFlags(flag::kTF | flag::kNT | flag::kRF | flag::kVM | ((type & 1) ? 0 : flag::kIF), 0);
  seg_[kCs] = SegmentOf(static_cast<uint16_t>((selector & ~3u) | cpl_), d, 1);
  eip_ = gate32 ? offset : offset & 0xFFFF;
  jumped_ = true;
  ++branch_count_;
  return true;
}

// The stack of ring `dpl` from the current TSS: SS:ESP of that level, checked as the i486 does
// (#TS with the selector, #SS if not present).
bool Cpu::InnerStack(int dpl, uint16_t* ss, uint32_t* esp, Descriptor* d) {
  const uint32_t at = tss32_ ? 4 + 8 * dpl : 2 + 4 * dpl;
  const int width = tss32_ ? 4 : 2;
  if (tr_.selector == 0 || at + width + 1 > tr_.limit) {
    Raise(kVecInvalidTss, tr_.selector & ~3u);
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
  const uint32_t error = sel & ~3u;
  if ((sel & ~3u) == 0 || (sel & 3) != static_cast<uint32_t>(dpl)) {
    Raise(kVecInvalidTss, error);
    return false;
  }
  if (!ReadDescriptor(*ss, d)) return false;
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
  seg_[kCs] = SegmentOf(static_cast<uint16_t>((selector & ~3u) | new_cpl), d, 1);
  eip_ = gate32 ? offset : offset & 0xFFFF;
  return true;
}

// Pushes `values`, in order, on the stack of ring `new_cpl`: the current stack, or for a more
// privileged ring the TSS's stack for it, with the old SS and ESP pushed first (and CPL changed).
// All or nothing: a fault leaves SS, ESP and CPL as they were.
bool Cpu::PushFrame(int new_cpl, int size, std::span<const uint32_t> values) {
  const Segment old_ss = seg_[kSs];
  const uint32_t old_esp = gpr_[kEsp];
  const int old_cpl = cpl_;
  bool ok = true;
  if (new_cpl < cpl_) {
    uint16_t ss;
    uint32_t esp;
    Descriptor ss_desc;
    if (!InnerStack(new_cpl, &ss, &esp, &ss_desc)) return false;
    cpl_ = new_cpl;
    seg_[kSs] = SegmentOf(ss, ss_desc);
    gpr_[kEsp] = esp;
    ok = Push(size, old_ss.selector) && Push(size, old_esp);
  }
  for (size_t i = 0; ok && i < values.size(); ++i) ok = Push(size, values[i]);
  if (!ok) {
    cpl_ = old_cpl;
    seg_[kSs] = old_ss;
    gpr_[kEsp] = old_esp;
  }
  return ok;
}

// RETF or IRET to an outer ring: after EIP, CS (and EFLAGS) the outer ESP and SS are popped; the
// data segment registers the outer ring may not use become null.
bool Cpu::ReturnToOuter(uint16_t cs_selector, const Descriptor& cs, int size) {
  uint32_t esp, ss;
  if (!Pop(size, &esp) || !Pop(size, &ss)) return false;
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
  cpl_ = new_cpl;
  seg_[kCs] = SegmentOf(cs_selector, cs, 1);
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

// Far JMP, CALL, RETF and IRET: real mode, and protected mode to code at the same privilege.
bool Cpu::FarTransfer(const Instruction& in) {
  const int size = in.opsize;
  const uint32_t sp = Sp();
  const auto undo = [&] {
    SetSp(sp);
    return false;
  };
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
      // In real mode the return address goes on the stack now; in protected mode once the
      // target is known (a call gate pushes it itself, maybe on another stack).
      if (in.op == Op::kCallFar && real_mode() &&
          (!Push(size, seg_[kCs].selector) || !Push(size, next_eip_))) {
        return undo();
      }
      break;
    case Op::kRetFar:
      if (!Pop(size, &offset) || !Pop(size, &selector)) return undo();
      if (in.dst == Operand::kImm) SetSp(Sp() + (in.imm & 0xFFFF));
      break;
    case Op::kIret:
      nmi_blocked_ = false;
      if (!real_mode() && (eflags_ & flag::kNT)) {
        Unmodelled();  // a return from a nested task
        return false;
      }
      if (!Pop(size, &offset) || !Pop(size, &selector) || !Pop(size, &flags)) return undo();
      break;
    default:
      return false;
  }
  if (real_mode()) {
    seg_[kCs].selector = static_cast<uint16_t>(selector);
    seg_[kCs].base = (selector & 0xFFFF) << 4;
  } else {
    const uint16_t sel = static_cast<uint16_t>(selector);
    if ((in.op == Op::kIret) && (flags & flag::kVM)) {
      undo();
      Unmodelled();  // a return to V86 mode
      return false;
    }
    if ((sel & ~3u) == 0) {
      undo();
      Raise(kVecGeneralProtection, 0);
      return false;
    }
    Descriptor d;
    if (!ReadDescriptor(sel, &d)) return undo();
    if (!d.segment()) {
      const uint8_t type = d.access & 0x1F;
      if ((type == 0x04 || type == 0x0C) && (in.op == Op::kJmpFar || in.op == Op::kCallFar)) {
        if (!CallGate(in, sel, d)) return undo();
        ++branch_count_;
        jumped_ = true;
        return true;
      }
      undo();
      Unmodelled();  // task gates and TSS descriptors: task switches
      return false;
    }
    const int old_cpl = cpl_;
    if ((in.op == Op::kRetFar || in.op == Op::kIret) && (sel & 3) > cpl_) {
      if (!ReturnToOuter(sel, d, size)) return undo();
      // RETF imm16 releases the parameters on the outer stack too.
      if (in.op == Op::kRetFar && in.dst == Operand::kImm) SetSp(Sp() + (in.imm & 0xFFFF));
    } else {
      const Segment old_cs = seg_[kCs];
      if (!LoadCode(sel, d)) return undo();
      if (in.op == Op::kCallFar && (!Push(size, old_cs.selector) || !Push(size, next_eip_))) {
        seg_[kCs] = old_cs;
        return undo();
      }
    }
    if (in.op == Op::kIret) {
      // IOPL changes only at CPL 0, IF only where CPL <= IOPL; VM stays (V86 is not modelled).
      uint32_t writable = (flag::kAll & ~flag::kVM) & SizeMask(size);
      if (old_cpl > 0) writable &= ~flag::kIOPL;
      if (old_cpl > static_cast<int>((eflags_ & flag::kIOPL) >> 12)) writable &= ~flag::kIF;
      SetFlags(writable, flags);
    }
    ++branch_count_;
    Jump(offset, size);
    return true;
  }
  if (in.op == Op::kIret) {
    // Real mode: IRET loads every flag but VM; a 16-bit IRET the low 16.
    SetFlags((flag::kAll & ~flag::kVM) & SizeMask(size), flags);
  }
  ++branch_count_;
  Jump(offset, size);
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
      return WriteRm(in, in.IsRegisterForm() ? size : 2, cr0_ & 0xFFFF);
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
// store their selectors. All four are #UD in real mode.
bool Cpu::Tables(const Instruction& in) {
  if (real_mode()) {
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

// Port I/O is allowed at CPL <= IOPL; above it, by the I/O permission bitmap of a 32-bit TSS
// (the bits of every accessed port clear), else #GP(0).
bool Cpu::IoAllowed(uint32_t port, int size) {
  if (real_mode() || cpl_ <= static_cast<int>((eflags_ & flag::kIOPL) >> 12)) return true;
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
bool Cpu::Probe(const Instruction& in) {
  if (real_mode()) {
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
