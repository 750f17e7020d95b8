// Hardware task switches of the i486: far JMP and CALL to a TSS descriptor or a task gate, INT n,
// exceptions and external interrupts through a task gate of the IDT, and IRET with EFLAGS.NT back
// to the task in the back link; 32-bit (type 9/B) and 16-bit (type 1/3) TSS formats. The rules
// and their order: docs/machines/i486-core.md, "Task switches".
#include <algorithm>

#include "simcore/x86/cpu.h"

namespace citcat::x86 {
namespace {

// TSS types (the low five bits of the access byte): available and busy, 16- and 32-bit.
constexpr uint8_t kTss16 = 0x01, kTss16Busy = 0x03, kTss32 = 0x09, kTss32Busy = 0x0B;
constexpr uint8_t kBusyBit = 0x02;
constexpr uint32_t kLocalBreakpoints = 0x55;  // DR7 L0-L3, cleared by every task switch

}  // namespace

// What a TSS gives the task it describes.
struct Cpu::TaskState {
  uint32_t cr3 = 0, eip = 0, eflags = 0;
  uint32_t gpr[8] = {};
  uint16_t seg[6] = {};  // ES, CS, SS, DS, FS, GS
  uint16_t ldt = 0;
  bool trap = false;  // the T bit: a #DB trap once the task has been switched to
};

// Far JMP or CALL whose selector names an available TSS or a task gate (the selector's DPL
// checks as for data; a task gate names the TSS). Faults here are the old task's.
bool Cpu::TaskTransfer(uint16_t selector, const Descriptor& d, bool call) {
  const uint32_t error = selector & ~3u;
  if (d.dpl() < std::max(cpl_, static_cast<int>(selector & 3))) {
    Raise(kVecGeneralProtection, error);
    return false;
  }
  if (!d.present()) {
    Raise(kVecSegmentNotPresent, error);
    return false;
  }
  uint16_t tss_selector = selector;
  Descriptor tss = d;
  if ((d.access & 0x1F) == 0x05) {
    tss_selector = static_cast<uint16_t>(d.low >> 16);
    if (!AvailableTss(tss_selector, 0, &tss)) return false;
  }
  const Switch done =
      SwitchTasks(tss_selector, tss, call ? TaskSource::kCall : TaskSource::kJmp, next_eip_, 0);
  if (done == Switch::kFailed) return false;
  if (done == Switch::kDone) TaskTrap(true);
  return true;
}

// An exception, external interrupt or INT n through a task gate of the IDT (its DPL and presence
// already checked): a switch with nesting, then the exception's error code pushed on the new
// task's stack (a doubleword for a 32-bit TSS, a word for a 16-bit one).
bool Cpu::TaskGateInterrupt(uint16_t tss_selector, bool software, bool has_error,
                            uint32_t error_code, uint32_t return_eip) {
  const uint32_t ext = software ? 0 : 1;
  Descriptor tss;
  if (!AvailableTss(tss_selector, ext, &tss)) return false;
  const Switch done = SwitchTasks(tss_selector, tss, TaskSource::kInterrupt, return_eip, ext);
  if (done == Switch::kFailed) return false;
  jumped_ = true;
  ++branch_count_;
  if (done == Switch::kFaultedInNewTask) return true;
  if (has_error && !Push(tss32_ ? 4 : 2, error_code)) return true;
  TaskTrap(software);
  return true;
}

// IRET with NT set: back to the task named by the current TSS's back link, which must be a busy
// TSS in the GDT (else #TS with its selector; #NP if not present).
bool Cpu::TaskReturn() {
  uint32_t link = 0;
  system_access_ = true;
  const bool read = ReadLinear(tr_.base, 2, &link);
  system_access_ = false;
  if (!read) return false;
  const uint16_t selector = static_cast<uint16_t>(link);
  const uint32_t error = selector & ~3u;
  if (selector & 4) {
    Raise(kVecInvalidTss, error);
    return false;
  }
  Descriptor d;
  if (!ReadDescriptor(selector, &d, kVecInvalidTss)) return false;
  const uint8_t type = d.access & 0x1F;
  if (type != kTss16Busy && type != kTss32Busy) {
    Raise(kVecInvalidTss, error);
    return false;
  }
  if (!d.present()) {
    Raise(kVecSegmentNotPresent, error);
    return false;
  }
  const Switch done = SwitchTasks(selector, d, TaskSource::kIret, next_eip_, 0);
  if (done == Switch::kFailed) return false;
  ++branch_count_;
  jumped_ = true;
  if (done == Switch::kDone) TaskTrap(true);
  return true;
}

// The TSS a task gate names: in the GDT, an available TSS (#GP with its selector otherwise), and
// present (#NP).
bool Cpu::AvailableTss(uint16_t selector, uint32_t ext, Descriptor* d) {
  const uint32_t error = (selector & ~3u) | ext;
  if (selector & 4) {
    Raise(kVecGeneralProtection, error);
    return false;
  }
  if (!ReadDescriptor(selector, d, kVecGeneralProtection, ext)) return false;
  const uint8_t type = d->access & 0x1F;
  if (type != kTss16 && type != kTss32) {
    Raise(kVecGeneralProtection, error);
    return false;
  }
  if (!d->present()) {
    Raise(kVecSegmentNotPresent, error);
    return false;
  }
  return true;
}

// The switch itself, after the checks of what started it. Until the old task's state is saved a
// fault is the old task's and changes nothing (the new TSS's limit, and every page of both TSSs
// touched first); after it, faults (the new task's LDT and segments, its EIP) come in the new
// task, before its first instruction.
Cpu::Switch Cpu::SwitchTasks(uint16_t selector, const Descriptor& tss, TaskSource source,
                             uint32_t return_eip, uint32_t ext) {
  const bool new32 = tss.access & 0x08;
  const uint32_t new_size = new32 ? 0x68 : 0x2C;
  if (tss.limit < new_size - 1) {
    Raise(kVecInvalidTss, (selector & ~3u) | ext);
    return Switch::kFailed;
  }
  const bool nest = source == TaskSource::kCall || source == TaskSource::kInterrupt;
  if (!TouchTss(tr_.base, tss32_ ? 0x60 : 0x2A, true) || !TouchTss(tss.base, new_size, nest)) {
    return Switch::kFailed;
  }

  // The old task: no longer busy after JMP and IRET; its state saved, with NT clear after IRET.
  if (source == TaskSource::kJmp || source == TaskSource::kIret) SetBusy(tr_.selector, false);
  SaveTask(return_eip, source == TaskSource::kIret        ? eflags_ & ~flag::kNT
                       : source == TaskSource::kInterrupt ? EflagsImage(ext == 0)
                                                          : eflags_);

  // The new task: linked back to the old one (CALL, interrupts), busy, and current.
  if (nest) {
    system_access_ = true;
    WriteLinear(tss.base, 2, tr_.selector);
    system_access_ = false;
  }
  if (source != TaskSource::kIret) SetBusy(selector, true);
  tr_ = {tss.base, tss.limit, selector};
  tss32_ = new32;
  set_cr0(cr0_ | kCr0Ts);
  TaskState state;
  ReadTask(tss.base, new32, &state);
  if (new32 && (cr0_ & kCr0Pg)) paging_.LoadCr3(state.cr3);
  // A 16-bit TSS holds FLAGS, IP and the low halves of the general registers: the upper half of
  // EFLAGS becomes 0, the registers keep theirs.
  set_eflags(state.eflags | (nest ? flag::kNT : 0));
  for (int r = 0; r < 8; ++r)
    gpr_[r] = new32 ? state.gpr[r] : (gpr_[r] & 0xFFFF0000u) | state.gpr[r];
  eip_ = state.eip;
  jumped_ = true;
  dr7_ &= ~kLocalBreakpoints;
  if (!LoadTaskSegments(state, ext)) return Switch::kFaultedInNewTask;
  if (!(eflags_ & flag::kVM) && eip_ > seg_[kCs].limit) {
    Raise(kVecGeneralProtection, 0);
    return Switch::kFaultedInNewTask;
  }
  task_trap_ = state.trap;
  return Switch::kDone;
}

// Translates every page of a TSS's `size` bytes from `base` (for writing if `write`), so that a
// page fault comes before the switch changes anything.
bool Cpu::TouchTss(uint32_t base, uint32_t size, bool write) {
  system_access_ = true;
  bool ok = true;
  for (uint32_t page = base & ~0xFFFu; ok && page <= ((base + size - 1) & ~0xFFFu);
       page += 0x1000) {
    uint32_t paddr;
    Access access;
    ok = Physical(std::max(page, base), write, false, &paddr, &access);
  }
  system_access_ = false;
  return ok;
}

// The busy bit (bit 1 of the type) of a TSS descriptor in the GDT, in memory.
bool Cpu::SetBusy(uint16_t selector, bool busy) {
  if ((selector & ~3u) == 0) return true;  // no task register loaded yet
  const uint32_t at = gdtr_.base + (selector & ~7u) + 5;
  uint32_t access = 0;
  system_access_ = true;
  bool ok = ReadLinear(at, 1, &access);
  if (ok) ok = WriteLinear(at, 1, busy ? access | kBusyBit : access & ~uint32_t{kBusyBit});
  system_access_ = false;
  return ok;
}

// The current task's state into its TSS: EIP (the return point), EFLAGS, the general registers
// and the segment selectors. The LDT selector and CR3 are not saved; they do not change.
bool Cpu::SaveTask(uint32_t eip, uint32_t eflags) {
  const uint32_t base = tr_.base;
  system_access_ = true;
  bool ok;
  if (tss32_) {
    ok = WriteLinear(base + 0x20, 4, eip) && WriteLinear(base + 0x24, 4, eflags);
    for (int r = 0; ok && r < 8; ++r) ok = WriteLinear(base + 0x28 + 4 * r, 4, gpr_[r]);
    for (int s = 0; ok && s < 6; ++s) ok = WriteLinear(base + 0x48 + 4 * s, 2, seg_[s].selector);
  } else {
    ok = WriteLinear(base + 0x0E, 2, eip) && WriteLinear(base + 0x10, 2, eflags);
    for (int r = 0; ok && r < 8; ++r) ok = WriteLinear(base + 0x12 + 2 * r, 2, gpr_[r]);
    for (int s = 0; ok && s < 4; ++s) ok = WriteLinear(base + 0x22 + 2 * s, 2, seg_[s].selector);
  }
  system_access_ = false;
  return ok;
}

// The state a TSS holds. A 16-bit TSS has no CR3, FS, GS or T bit: FS and GS are loaded null.
bool Cpu::ReadTask(uint32_t base, bool tss32, TaskState* t) {
  uint32_t v = 0;
  bool ok;
  system_access_ = true;
  if (tss32) {
    ok = ReadLinear(base + 0x1C, 4, &t->cr3) && ReadLinear(base + 0x20, 4, &t->eip) &&
         ReadLinear(base + 0x24, 4, &t->eflags);
    for (int r = 0; ok && r < 8; ++r) ok = ReadLinear(base + 0x28 + 4 * r, 4, &t->gpr[r]);
    for (int s = 0; ok && s < 6; ++s) {
      ok = ReadLinear(base + 0x48 + 4 * s, 2, &v);
      t->seg[s] = static_cast<uint16_t>(v);
    }
    ok = ok && ReadLinear(base + 0x60, 2, &v);
    t->ldt = static_cast<uint16_t>(v);
    ok = ok && ReadLinear(base + 0x64, 2, &v);
    t->trap = v & 1;
  } else {
    ok = ReadLinear(base + 0x0E, 2, &t->eip) && ReadLinear(base + 0x10, 2, &t->eflags);
    for (int r = 0; ok && r < 8; ++r) ok = ReadLinear(base + 0x12 + 2 * r, 2, &t->gpr[r]);
    for (int s = 0; ok && s < 4; ++s) {
      ok = ReadLinear(base + 0x22 + 2 * s, 2, &v);
      t->seg[s] = static_cast<uint16_t>(v);
    }
    ok = ok && ReadLinear(base + 0x2A, 2, &v);
    t->ldt = static_cast<uint16_t>(v);
  }
  system_access_ = false;
  return ok;
}

// The new task's LDT and segment registers, in the new task: every selector is loaded first (with
// an unusable descriptor), then the LDT and the descriptors of CS, SS, ES, DS, FS and GS in turn,
// so that a fault leaves the selectors the TSS gave. In a V86 task they are 8086 segments.
bool Cpu::LoadTaskSegments(const TaskState& t, uint32_t ext) {
  for (int s = 0; s < 6; ++s) seg_[s] = {t.seg[s], 0, 0, false, 0};
  ldtr_ = {0, 0, t.ldt};
  const uint32_t ldt_error = (t.ldt & ~3u) | ext;
  if (t.ldt & 4) {
    Raise(kVecInvalidTss, ldt_error);
    return false;
  }
  if ((t.ldt & ~3u) != 0) {
    Descriptor d;
    if (!ReadDescriptor(t.ldt, &d, kVecInvalidTss, ext)) return false;
    if ((d.access & 0x1F) != 0x02 || !d.present()) {
      Raise(kVecInvalidTss, ldt_error);
      return false;
    }
    ldtr_ = {d.base, d.limit, t.ldt};
  }
  if (eflags_ & flag::kVM) {
    cpl_ = 3;
    for (int s = 0; s < 6; ++s) seg_[s] = V86Segment(t.seg[s]);
    return true;
  }
  cpl_ = t.seg[kCs] & 3;
  for (int s : {kCs, kSs, kEs, kDs, kFs, kGs}) {
    if (!LoadTaskSegment(s, t.seg[s], ext)) return false;
  }
  return true;
}

// One segment register from the new TSS, with the i486's checks: #TS with the selector for what
// is not valid (null CS or SS, beyond the table, wrong type or privilege), #NP (#SS for SS) for a
// descriptor not present.
bool Cpu::LoadTaskSegment(int seg, uint16_t selector, uint32_t ext) {
  const uint32_t error = (selector & ~3u) | ext;
  if ((selector & ~3u) == 0) {
    if (seg != kCs && seg != kSs) return true;  // a null data segment: unusable
    Raise(kVecInvalidTss, error);
    return false;
  }
  Descriptor d;
  if (!ReadDescriptor(selector, &d, kVecInvalidTss, ext)) return false;
  const int rpl = selector & 3;
  bool valid;
  if (seg == kCs) {
    valid = d.code() && (d.conforming() ? d.dpl() <= cpl_ : d.dpl() == cpl_);
  } else if (seg == kSs) {
    valid = d.writable() && rpl == cpl_ && d.dpl() == cpl_;
  } else {
    valid = d.readable() && (d.conforming() || d.dpl() >= std::max(cpl_, rpl));
  }
  if (!valid) {
    Raise(kVecInvalidTss, error);
    return false;
  }
  if (!d.present()) {
    Raise(seg == kSs ? kVecStackFault : kVecSegmentNotPresent, error);
    return false;
  }
  if (!MarkAccessed(selector, &d)) return false;
  seg_[seg] = SegmentOf(selector, d);
  return true;
}

// The T bit of the new TSS: a #DB trap (DR6.BT) before the new task's first instruction; after
// the instruction that switched (JMP, CALL, IRET, INT n), or at once after an exception's or an
// external interrupt's switch.
void Cpu::TaskTrap(bool at_instruction_end) {
  if (!task_trap_) return;
  task_trap_ = false;
  dr6_ |= kDr6Bt;
  if (at_instruction_end) {
    data_breakpoint_ = true;
  } else {
    Deliver(kVecDebug, false, 0, EventKind::kTrap);
  }
}

}  // namespace citcat::x86
