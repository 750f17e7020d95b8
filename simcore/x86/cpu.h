// The Intel i486DX core: the architectural state, the memory path from a
// segment offset through the on-chip cache to the bus, and the interpreter for the instructions
// of 16- and 32-bit code in every mode: see docs/machines/i486-core.md, "Interpreter".
//
// Invariants:
// - The core knows no file format and no system: everything beyond the cache is simcore::Bus.
// - Exceptions are control-flow state, never C++ throws: an instruction that faults leaves the
//   registers as they were before it (the i486's faults are restartable) and sets exception().
// - branch_count() counts every retired control transfer (taken or not: each Jcc, JMP, CALL,
//   RET, LOOP, JCXZ, far transfer and IRET retires one) and every exception or interrupt entry:
//   the side band the bus monitor samples with each record.
#ifndef CITCAT_SIMCORE_X86_CPU_H_
#define CITCAT_SIMCORE_X86_CPU_H_

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <vector>

#include "simcore/bus.h"
#include "simcore/instruction_log.h"
#include "simcore/observer.h"
#include "simcore/x86/alu.h"
#include "simcore/x86/cache.h"
#include "simcore/x86/decoder.h"
#include "simcore/x86/paging.h"
#include "simcore/x86/test_registers.h"
#include "simcore/x86/x87.h"

namespace citcat::x86 {

// Interrupt and exception vectors.
enum Vector : uint8_t {
  kVecDivide = 0,
  kVecDebug = 1,
  kVecBreakpoint = 3,
  kVecOverflow = 4,
  kVecBound = 5,
  kVecInvalidOpcode = 6,
  kVecNoMath = 7,
  kVecDoubleFault = 8,
  kVecInvalidTss = 10,
  kVecSegmentNotPresent = 11,
  kVecStackFault = 12,
  kVecGeneralProtection = 13,
  kVecPageFault = 14,
  kVecMathFault = 16,
  kVecAlignment = 17,
};

// DR6: a debug register access with DR7.GD set (BD), a single step (BS), a task switch to a TSS
// with its T bit set (BT). DR7.GD: general detect.
inline constexpr uint32_t kDr6Bd = 1u << 13, kDr6Bs = 1u << 14, kDr6Bt = 1u << 15;
inline constexpr uint32_t kDr7Gd = 1u << 13;
inline constexpr uint32_t kCr0Pe = 1u << 0, kCr0Mp = 1u << 1, kCr0Em = 1u << 2, kCr0Ts = 1u << 3,
                          kCr0Et = 1u << 4, kCr0Ne = 1u << 5, kCr0Wp = 1u << 16, kCr0Am = 1u << 18,
                          kCr0Nw = 1u << 29, kCr0Cd = 1u << 30, kCr0Pg = 1u << 31;

struct Exception {
  bool pending = false;
  uint8_t vector = 0;
  uint32_t error_code = 0;
  uint32_t eip = 0;         // of the faulting instruction (of the next one for a trap)
  bool trap = false;        // a trap or software interrupt: the instruction completed
  bool shutdown = false;    // a fault while delivering a double fault: the processor stopped
  bool unmodelled = false;  // not an i486 fault: a result the i486 leaves undefined (x87)
};

// A segment register with its hidden descriptor cache.
struct Segment {
  uint16_t selector = 0;
  uint32_t base = 0;
  uint32_t limit = 0xFFFF;
  bool big = false;       // D/B: 32-bit code or stack segment
  uint8_t access = 0x93;  // the descriptor's access byte: P, DPL, S, type (0: unusable)
};

// A descriptor table register (GDTR, IDTR) or the LDTR's cache.
struct TableRegister {
  uint32_t base = 0;
  uint32_t limit = 0xFFFF;
  uint16_t selector = 0;  // LDTR only
};

// "page fault", "interrupt", ...: the name of an event in messages and traces.
const char* EventName(uint8_t vector, simcore::EventKind kind);

class Cpu {
 public:
  explicit Cpu(simcore::Bus& bus);

  // ---- architectural state ----
  uint32_t reg(int r) const { return gpr_[r]; }
  void set_reg(int r, uint32_t v) { gpr_[r] = v; }
  uint32_t eip() const { return eip_; }
  void set_eip(uint32_t v) { eip_ = v; }
  uint32_t eflags() const { return eflags_; }
  void set_eflags(uint32_t v) { eflags_ = (v & flag::kAll) | 2; }
  const Segment& segment(int s) const { return seg_[s]; }
  void set_segment(int s, const Segment& v) { seg_[s] = v; }
  // CR0; CD and NW go to the cache.
  uint32_t cr0() const { return cr0_; }
  void set_cr0(uint32_t v);
  bool real_mode() const { return !(cr0_ & kCr0Pe); }
  uint32_t cr2() const { return cr2_; }
  uint32_t dr6() const { return dr6_; }
  uint32_t dr7() const { return dr7_; }
  uint32_t cr3() const { return paging_.cr3(); }
  int cpl() const { return cpl_; }
  // Virtual-8086 mode: EFLAGS.VM in protected mode (CPL 3, segments as in real mode).
  bool v86() const { return eflags_ & flag::kVM; }
  const TableRegister& gdtr() const { return gdtr_; }
  const TableRegister& idtr() const { return idtr_; }
  const TableRegister& ldtr() const { return ldtr_; }
  const TableRegister& tr() const { return tr_; }
  bool tss32() const { return tss32_; }  // the current TSS is a 32-bit one
  const std::array<uint32_t, 4>& dr() const { return dr_; }
  bool halted() const { return halted_; }

  // The rest of a saved state (replay loads an IMS with these): CPL follows CS (its RPL in
  // protected mode, 0 in real mode, 3 in V86 mode); a CR3 load flushes the TLB.
  void set_gdtr(const TableRegister& t) { gdtr_ = t; }
  void set_idtr(const TableRegister& t) { idtr_ = t; }
  void set_ldtr(const TableRegister& t) { ldtr_ = t; }
  void set_tr(const TableRegister& t, bool tss32) {
    tr_ = t;
    tss32_ = tss32;
  }
  void set_cr2(uint32_t v) { cr2_ = v; }
  void set_cr3(uint32_t v) { paging_.LoadCr3(v); }
  void set_debug(const std::array<uint32_t, 4>& dr, uint32_t dr6, uint32_t dr7) {
    dr_ = dr;
    dr6_ = dr6;
    dr7_ = dr7;
  }
  void set_cpl(int cpl) { cpl_ = cpl; }
  void set_branch_count(uint64_t v) { branch_count_ = v; }
  // What lasts from one instruction boundary to the next without being architectural (a
  // segment's start holds it): the STI / MOV SS shadow, HLT's wait, an NMI handler's block.
  bool interrupt_shadow() const { return shadow_; }
  void set_interrupt_shadow(bool on) { shadow_ = on; }
  void set_halted(bool on) { halted_ = on; }
  bool nmi_blocked() const { return nmi_blocked_; }
  void set_nmi_blocked(bool on) { nmi_blocked_ = on; }
  Tlb& tlb() { return paging_.tlb(); }
  // Real mode from a given state: CR0.PE clear, the caches on, segment bases selector * 16.
  void SetReal(uint16_t cs, uint16_t ds, uint16_t ss);
  // Flat 32-bit protected mode (every segment base 0, limit 4 GB, 32-bit code and stack) at
  // privilege `cpl`: the state of a flat operating system's kernel (0) or user code (3). The
  // selectors are those of such a system's GDT (code 08h/1Bh, data 10h/23h).
  void SetFlat32(int cpl = 0);

  // ---- running ----
  // With delivery on, exceptions and software interrupts (INT n, INT3, INTO) are delivered as
  // the i486 does: through the interrupt vector table in real mode, through the IDT in protected
  // mode. With it off they stop the core with the exception pending (an outside model that does
  // not vector them can then be compared).
  void set_deliver_interrupts(bool on) { deliver_ = on; }

  // The INTR line: while asserted and EFLAGS.IF set, the core takes an external interrupt at the
  // next instruction boundary (a REP string instruction has one between iterations), reading its
  // vector in an interrupt acknowledge bus cycle; HLT ends. Needs delivery on.
  void SetIntr(bool asserted) { intr_ = asserted; }
  // Whether an asserted INTR would be taken at the next boundary: IF set, and not right after
  // STI or a load of SS.
  bool CanTakeIntr() const { return (eflags_ & flag::kIF) && !shadow_; }
  // The NMI input (edge): vector 2 at the next boundary, whatever IF; further NMIs wait for IRET.
  void RaiseNmi() { nmi_ = true; }

  // Runs at most `steps` instructions; stops early at an exception (exception() says which; the
  // faulting instruction did not retire), at HLT, or after the step during which RequestStop()
  // was called (from the bus: a device changed what the machine plans). Returns the instructions
  // retired.
  uint64_t Run(uint64_t steps);
  void RequestStop() { stop_ = true; }
  // The next instruction is not the one after the instruction that ran last (a jump went
  // elsewhere, or an event's handler comes next) and no REP iteration is pending: where a replay
  // may be cut into segments without a trace writer seeing the difference. Not right after an
  // event's entry, which a trace shows with the instruction that follows it. False where unsure.
  bool AtFlowBreak() const { return !repeat_ && eip_ != next_eip_ && event_retired_ != retired_; }
  // Run also ends after the step that brings the branch count to `count` or beyond.
  void set_stop_branch_count(uint64_t count) { stop_branch_count_ = count; }
  // Steps taken: instructions, REP iterations, and exception and interrupt entries.
  uint64_t steps() const { return steps_; }

  using EventKind = simcore::EventKind;
  // May be null (the fast path): see simcore/observer.h. The i486 tells EIP as the PC, each REP
  // iteration as an instruction, and an event just before it delivers it, with the EIP the
  // handler returns to (the faulting instruction's for a fault).
  void set_observer(simcore::Observer* observer) {
    observer_ = observer;
    report_registers_ = observer != nullptr && observer->WantsRegisters();
  }
  // May be null. Each instruction the observer would be told of, written into `log` by the run
  // loops themselves, fast paths included (simcore/instruction_log.h); for a core with no
  // observer.
  void set_instruction_log(simcore::InstructionLog* log) { log_ = log; }
  // The instruction told to the observer last, as decoded (valid while it runs).
  const Instruction& observed() const { return *observed_; }
  // Whether condition code `cond` (Jcc's tttn) holds on the current flags.
  bool Condition(uint8_t cond) const { return x86::Condition(eflags_, cond); }
  // Whether `in`, about to run, transfers control: the condition of Jcc, LOOPcc, JCXZ and INTO on
  // the state before it; true for every other branch.
  bool BranchTaken(const Instruction& in) const;
  const Exception& exception() const { return exception_; }
  void ClearException() { exception_ = {}; }

  uint64_t retired() const { return retired_; }
  void set_retired(uint64_t v) { retired_ = v; }  // where a replay starts counting
  uint64_t branch_count() const { return branch_count_; }

  // Off: every fetch takes the full path (translation, tag lookup, decode) instead of a
  // predecoded line. The result is the same either way; tests use this to prove it.
  void set_fast_paths(bool on) { fast_paths_ = on; }

  // Whether a physical address may be cached (KEN#): device windows may not. Default: all may.
  // Asked for the first byte of a 4 KB page, which it decides as a whole (a PC decodes KEN# on
  // coarser boundaries), so that the last page's answer serves every access until another page.
  void set_cacheable(std::function<bool(uint32_t page_address)> cacheable) {
    cacheable_ = std::move(cacheable);
    cacheable_page_ = kNoPage;
  }
  Cache& cache() { return cache_; }
  const Cache& cache() const { return cache_; }
  // The paging unit with its TLB, for inspection (what a dump left in the TLB).
  const Paging& paging() const { return paging_; }
  // The on-chip x87; the machine reads FERR# (fpu().ferr()) and drives IGNNE# (fpu().set_ignne()).
  const Fpu& fpu() const { return fpu_; }
  Fpu& fpu() { return fpu_; }
  // TR3-TR7 and the cache test buffers (test_registers.h).
  const TestRegisters& test_registers() const { return test_registers_; }
  void set_test_registers(const TestRegisters& v) { test_registers_ = v; }

 private:
  void Step();
  struct Predecoded;
  const Predecoded* FetchAndDecode(uint32_t linear, bool code32);
  const Predecoded* FetchFromLine(uint32_t linear, bool code32);
  // The step after the fetch: the instruction's checks, its execution (a short path for the
  // common forms, see Straight) and what follows it (EIP, RF, #DB traps).
  void Complete(const Predecoded& p);
  bool Execute(const Instruction& in);
  // Runs steps as Step does, without looking again at what only a few instructions change
  // (breakpoints, the interrupt shadow, HLT): Run uses it while CanRunStraight() holds.
  uint64_t RunStraight(uint64_t steps);
  bool CanRunStraight() const { return fast_paths_ && !halted_ && !shadow_ && !(dr7_ & 0xFF); }
  void DeliverPendingFault();
  // An NMI or an INTR the processor would take at this boundary (the interrupt shadow aside).
  bool InterruptDue() const { return (nmi_ && !nmi_blocked_) || (intr_ && (eflags_ & flag::kIF)); }
  // A near control transfer; a target beyond the CS limit is a #GP(0) of the branch itself.
  bool Branch(bool taken, uint32_t target, int size);
  bool NearCall(uint32_t target, int size);
  bool NearReturn(const Instruction& in, int size);
  void Raise(uint8_t vector, uint32_t error_code = 0);

  // Memory through segmentation and the cache; false once a fault is pending. The observer is
  // told of each access unless `report` is false (the x87 tells of its operand as a whole).
  uint32_t Linear(int seg, uint32_t offset) const { return seg_[seg].base + offset; }
  bool ReadMem(int seg, uint32_t offset, int size, uint32_t* value, bool report = true);
  bool WriteMem(int seg, uint32_t offset, int size, uint32_t value, bool report = true);
  bool Fetch(uint32_t linear, uint8_t* bytes, int size);
  Access DataAccess(uint32_t paddr);

  // Operands.
  uint32_t EffectiveAddress(const Instruction& in) const;
  bool ReadRm(const Instruction& in, int size, uint32_t* value);
  bool WriteRm(const Instruction& in, int size, uint32_t value);
  uint32_t ReadReg(int r, int size) const;
  void WriteReg(int r, int size, uint32_t value);
  bool Push(int size, uint32_t value);
  bool PushSegment(int size, uint16_t selector);
  bool Pop(int size, uint32_t* value);
  int StackSize() const { return seg_[kSs].big ? 4 : 2; }
  uint32_t Sp() const { return StackSize() == 4 ? gpr_[kEsp] : gpr_[kEsp] & 0xFFFF; }
  void SetSp(uint32_t v);

  // Flags.
  void SetFlags(uint32_t mask, uint32_t values) { x86::SetFlags(eflags_, mask, values); }
  uint32_t Alu(Op op, int size, uint32_t a, uint32_t b);
  uint32_t Shift(Op op, int size, uint32_t value, uint32_t count);
  bool MulDiv(const Instruction& in, uint32_t src);
  uint32_t DoubleShift(bool left, int size, uint32_t value, uint32_t fill, uint32_t count);
  bool BitTest(const Instruction& in);
  bool Decimal(const Instruction& in);
  bool Enter(const Instruction& in);
  bool String(const Instruction& in);
  void CountIteration(const Instruction& in);
  // A trap at the end of the instruction: INT n, INT3, INTO (`software`: the gate's DPL is
  // checked against CPL) and ICEBP.
  bool Trap(uint8_t vector, bool software = true);
  bool TakeExternalInterrupt();
  void Deliver(uint8_t vector, bool has_error, uint32_t error_code, EventKind kind);
  // The EFLAGS image an event pushes or saves in the old TSS, RF as the manual sets it.
  uint32_t EflagsImage(bool software) const;
  enum class FaultClass : uint8_t { kBenign, kContributory, kPageFault, kDoubleFault };
  static FaultClass ClassOf(uint8_t vector, bool exception);
  void StepInstruction();
  void AdvanceIndex(int r, const Instruction& in);
  void SingleStepTrap(uint32_t dr6_bits);
  bool InstructionBreakpoint(uint32_t linear);
  void DataBreakpoint(uint32_t linear, int size, bool write);
  bool LoadSegment(int seg, uint16_t selector);
  bool FarTransfer(const Instruction& in);
  bool Interrupt(uint8_t vector, uint32_t return_eip, bool software, bool has_error,
                 uint32_t error_code);
  bool System(const Instruction& in);  // control registers, tables, CLI/STI, HLT, TLB, cache
  bool Tables(const Instruction& in);  // LLDT, LTR, SLDT, STR
  bool Probe(const Instruction& in);   // LAR, LSL, VERR, VERW, ARPL
  bool PortIo(const Instruction& in);  // IN, OUT, INS, OUTS
  bool X87(const Instruction& in);     // ESC and WAIT (cpu_x87.cc)
  // Tells the observer of the x87 memory operand `bytes` (cpu_x87.cc).
  void ReportX87Operand(int seg, uint32_t offset, int size, bool write, const uint8_t* bytes);
  bool MoveTestRegister(const Instruction& in);  // MOV to and from TRn (cpu_test_registers.cc)
  bool IoAllowed(uint32_t port, int size);
  bool Port(bool write, uint32_t port, int size, uint32_t* value);

  // Protected mode (system.cc).
  struct Descriptor {
    uint32_t base = 0, limit = 0;
    uint8_t access = 0;
    bool big = false;
    uint32_t low = 0, high = 0;  // the raw words (gates read their fields from them)
    int dpl() const { return (access >> 5) & 3; }
    bool present() const { return access & 0x80; }
    bool segment() const { return access & 0x10; }  // code or data, not a system descriptor
    bool code() const { return segment() && (access & 0x08); }
    bool data() const { return segment() && !(access & 0x08); }
    bool conforming() const { return code() && (access & 0x04); }
    bool readable() const { return data() || (access & 0x02); }
    bool writable() const { return data() && (access & 0x02); }
  };
  // A selector beyond its table (or in an absent LDT) raises `fault` (#GP, or #TS in a task
  // switch) with the selector and `ext`.
  bool ReadDescriptor(uint16_t selector, Descriptor* d, uint8_t fault = kVecGeneralProtection,
                      uint32_t ext = 0);
  bool MarkAccessed(uint16_t selector, Descriptor* d);
  bool InnerStack(int dpl, uint32_t ext, uint16_t* ss, uint32_t* esp, Descriptor* ss_desc);
  bool PushFrame(int new_cpl, int size, std::span<const uint32_t> values, uint32_t ext = 0,
                 bool from_v86 = false);
  static Segment SegmentOf(uint16_t selector, const Descriptor& d) {
    return {selector, d.base, d.limit, d.big, d.access};
  }
  bool ReturnToOuter(uint16_t cs_selector, const Descriptor& cs, uint32_t eip, int size,
                     uint32_t sp);
  bool PopAt(uint32_t* sp, int size, uint32_t* value);
  bool PushAt(uint32_t* sp, int size, uint32_t value);
  bool CallGate(const Instruction& in, uint16_t gate_selector, const Descriptor& gate);

  // Task switches (task.cc). What starts one decides the busy bits, NT and the back link.
  enum class TaskSource : uint8_t { kJmp, kCall, kIret, kInterrupt };
  enum class Switch : uint8_t { kFailed, kDone, kFaultedInNewTask };
  struct TaskState;
  bool TaskTransfer(uint16_t selector, const Descriptor& d, bool call);  // far JMP or CALL
  bool TaskGateInterrupt(uint16_t tss_selector, bool software, bool has_error, uint32_t error_code,
                         uint32_t return_eip);
  bool TaskReturn();  // IRET with NT set
  bool AvailableTss(uint16_t selector, uint32_t ext, Descriptor* d);
  Switch SwitchTasks(uint16_t selector, const Descriptor& tss, TaskSource source,
                     uint32_t return_eip, uint32_t ext);
  bool TouchTss(uint32_t base, uint32_t size, bool write);
  bool SetBusy(uint16_t selector, bool busy);
  bool SaveTask(uint32_t eip, uint32_t eflags);
  bool ReadTask(uint32_t base, bool tss32, TaskState* state);
  bool LoadTaskSegments(const TaskState& state, uint32_t ext);
  bool LoadTaskSegment(int seg, uint16_t selector, uint32_t ext);
  void TaskTrap(bool at_instruction_end);

  // Virtual-8086 mode (system.cc). PUSHF, POPF, INT n and IRET there need IOPL 3: else #GP(0).
  bool V86Iopl();
  static Segment V86Segment(uint16_t selector) {
    return {selector, uint32_t{selector} << 4, 0xFFFF, false, 0xF3};
  }
  bool ReturnToV86(uint32_t eip, uint32_t cs, uint32_t eflags, uint32_t sp);
  void Unmodelled();  // stop: the current instruction's result is undefined on the i486
  bool CodeAtCpl(uint16_t selector, const Descriptor& d);
  bool CheckSegment(int seg, uint32_t offset, int size, bool write);
  // The faults a write of `size` bytes at seg:offset would raise (segment, then pages), without
  // writing: instructions that must not change anything when their store would fault.
  bool CheckWritable(int seg, uint32_t offset, int size);
  // CheckSegment's common case without the call: a usable expand-up segment of the right type,
  // the access inside its limit. False means "ask CheckSegment", not "fault".
  static bool PlainAccess(const Segment& s, uint32_t offset, int size, bool write) {
    const uint32_t last = offset + static_cast<uint32_t>(size) - 1;
    const bool type_ok = write ? (s.access & 0x1E) == 0x12  // writable expand-up data
                               : (s.access & 0x1C) == 0x10 || (s.access & 0x1A) == 0x1A;
    return type_ok && last >= offset && last <= s.limit;
  }
  static bool WithinLimit(const Segment& s, uint32_t offset, int size);
  bool CheckAlignment(int seg, uint32_t offset, int size);
  // The physical address of an access (a #PF raised when there is none) and the page's PCD.
  bool Translate(uint32_t linear, bool write, uint32_t* paddr, bool* pcd);
  // The same with the access's kind (cacheable, PCD, code).
  bool Physical(uint32_t linear, bool write, bool code, uint32_t* paddr, Access* access);
  bool ReadLinear(uint32_t linear, int size, uint32_t* value);
  bool WriteLinear(uint32_t linear, int size, uint32_t value);
  bool ReadAcrossPages(uint32_t linear, int size, uint32_t* value);
  bool WriteAcrossPages(uint32_t linear, int size, uint32_t value);

  // Control flow.
  bool InCodeLimit(uint32_t target, int opsize) const {
    return (opsize == 2 ? target & 0xFFFF : target) <= seg_[kCs].limit;
  }
  void Jump(uint32_t target, int opsize) {
    eip_ = opsize == 2 ? target & 0xFFFF : target;
    jumped_ = true;
  }

  simcore::Bus& bus_;
  uint64_t branch_count_ = 0;
  Cache cache_;
  std::function<bool(uint32_t)> cacheable_;
  // The page cacheable_ was asked for last (its number), and its answer.
  static constexpr uint32_t kNoPage = ~uint32_t{0};
  uint32_t cacheable_page_ = kNoPage;
  bool page_cacheable_ = true;

  std::array<uint32_t, 8> gpr_{};
  uint32_t eip_ = 0;
  uint32_t eflags_ = 2;
  uint32_t cr0_ = kCr0Cd | kCr0Nw | kCr0Et;  // as after RESET
  uint32_t cr2_ = 0;
  uint32_t dr6_ = 0xFFFF0FF0u;  // as after RESET
  uint32_t dr7_ = 0x400;
  std::array<uint32_t, 4> dr_{};
  // A data breakpoint matched during this instruction, or it switched to a task whose TSS has
  // the T bit: a #DB trap follows it.
  bool data_breakpoint_ = false;
  bool task_trap_ = false;  // the task switch just made went to a TSS with the T bit set
  int cpl_ = 0;
  TableRegister gdtr_, idtr_{0, 0x3FF, 0}, ldtr_;
  TableRegister tr_;   // the task register's cache: the current TSS
  bool tss32_ = true;  // the current TSS is a 32-bit one
  CachedPageTables page_tables_{cache_};
  Paging paging_{page_tables_};
  bool halted_ = false;
  bool system_access_ = false;  // descriptor-table and gate reads: supervisor accesses
  bool faulted_ = false;        // the current step raised an exception
  // The common forms of compiled code, each run by a handler made for its operation and
  // operand size (straight.cc) instead of Execute's general operand handling. Decided once per
  // predecoded instruction.
  enum class Straight : uint8_t {
    kGeneric,  // Execute
    // Forms that touch no memory, cache or TLB: a run of them fetches from one line with
    // nothing in between to change its replacement state (see RunStraight).
    kAluRegReg,  // ADD ... CMP, TEST reg, reg
    kAluRegImm,  // ADD ... CMP, TEST reg, imm
    kUnaryReg,   // INC, DEC, NEG, NOT reg
    kShiftReg,   // ROL ... SAR reg, imm8 or 1 or CL
    kMovRegReg,  // MOV reg, reg
    kMovRegImm,  // MOV reg, imm
    kLea,        // LEA reg, [mem]
    kNop,        // NOP
    kJcc,        // Jcc rel
    kJmp,        // JMP rel
    // Forms with a memory operand or a stack access.
    kAluRegMem,  // ADD ... CMP, TEST reg, [mem]
    kAluMemReg,  // ADD ... CMP, TEST [mem], reg
    kAluMemImm,  // ADD ... CMP, TEST [mem], imm
    kUnaryMem,   // INC, DEC, NEG, NOT [mem]
    kLoad,       // MOV reg, [mem]
    kStore,      // MOV [mem], reg
    kStoreImm,   // MOV [mem], imm
    kPushReg,    // PUSH reg
    kPopReg,     // POP reg
    kCall,       // CALL rel
    kRet,        // RET
  };
  static bool RegisterOnly(Straight form) {
    return form != Straight::kGeneric && form < Straight::kAluRegMem;
  }
  // Register-only and no branch: ends with EIP at the next instruction, raises nothing.
  static bool Pure(Straight form) { return form != Straight::kGeneric && form < Straight::kJcc; }
  // Predecoded::pure of a pure form that ends in its line, for code of this size (never 0).
  static uint8_t PureKey(bool code32) { return code32 ? 2 : 1; }
  // Every byte of the instruction at `eip` lies inside the CS limit.
  static bool InLimit(const Segment& cs, uint32_t eip, const Predecoded& p) {
    const uint32_t last = eip + p.in.length - 1;
    return last <= cs.limit && last >= eip;
  }
  struct FetchLine;
  bool RunForms(const Predecoded* p, const FetchLine** line, bool* retouch, uint64_t steps,
                uint64_t* done, const Predecoded** fetched);
  void RepeatIterations(const Predecoded& p, uint64_t steps, uint64_t* done, const FetchLine* line,
                        const Predecoded** fetched);
  // Runs a predecoded instruction's operation; false when it raised an exception.
  using Handler = bool (*)(Cpu& cpu, const Predecoded& p);
  friend struct StraightForms;  // the handlers (straight.cc)
  static bool RunGeneric(Cpu& cpu, const Predecoded& p);
  // The form of `p.in`, the registers it names and its handler (straight.cc).
  static void ChooseForm(Predecoded& p);
  static Straight FormOf(const Instruction& in, uint8_t* dst_reg, uint8_t* src_reg);
  // Decoded instructions kept per byte of each cache line slot, valid while the slot's
  // generation is the one they were decoded from (and, for one that runs into the next line,
  // while that line is the one it was decoded from).
  struct Predecoded {
    Handler run = &RunGeneric;
    uint32_t generation = ~0u;
    bool code32 = false;
    bool valid = false;
    Straight form = Straight::kGeneric;
    uint8_t dst_reg = 0, src_reg = 0;  // the general registers the straight form names
    bool crosses = false;              // it runs into the next line
    uint8_t pure = 0;                  // PureKey(code32) when valid, Pure(form) and not crosses
    // In 32-bit code, 1 + how many pure forms followed this one along its line, current, when
    // it last ran (RunForms); 0 when not counted.
    mutable uint8_t run_after = 0;
    Cache::LineRef next_line;
    Instruction in;
  };
  std::vector<Predecoded> predecoded_ = std::vector<Predecoded>(Cache::kSlots * Cache::kLineBytes);
  // Lines recent fetches used, by linear address, and what their translation depended on
  // (FetchFromLine).
  struct FetchLine {
    uint32_t linear = 1;  // never a line address: no line yet
    Cache::LineRef ref;
    uint32_t cr0 = 0;
    int cpl = 0;
    uint32_t tlb_epoch = 0;
    uint32_t tlb_way = 0;  // with paging on, the TLB way translating the line, and its entry
    TlbEntry tlb_entry;
  };
  static constexpr uint32_t kFetchLines = 256;
  std::array<FetchLine, kFetchLines> fetch_lines_{};
  // Instructions decoded before, by physical address, kept across their lines' refills: the
  // 8 KB cache refills a kernel's code lines all the time, and every refill starts a line's
  // predecoded copies afresh. An entry serves while the bytes at its address are those it was
  // decoded from (compared whole), for code of the same size; only instructions that decoded
  // without fault are kept (one that runs into the next line takes that line's reference anew).
  // Allocated once the core has decoded as many instructions as it holds; not with the fast
  // paths off.
  struct KnownInstruction {
    uint32_t paddr = 0;
    uint8_t bytes[kMaxInstructionLength] = {};
    Predecoded p;  // p.valid: the entry is in use
  };
  static constexpr int kKnownBits = 14;
  std::vector<KnownInstruction> known_;
  uint32_t decodes_ = 0;  // before known_ is allocated
  KnownInstruction& KnownAt(uint32_t paddr) {
    return known_[(paddr * 0x9E3779B1u) >> (32 - kKnownBits)];  // (Fibonacci hashing)
  }
  // The decoded instruction `bytes` (`have` of them) hold at `paddr`, if it is known.
  const Predecoded* Known(uint32_t paddr, const uint8_t* bytes, int have, bool code32);
  void Remember(uint32_t paddr, const Predecoded& p, const uint8_t* bytes);
  Predecoded decode_scratch_;  // an instruction decoded outside the predecoded lines
  uint8_t decode_scratch_bytes_[kMaxInstructionLength] = {};  // and its bytes
  // The bytes of a predecoded instruction just fetched (`buffer` holds them when they span two
  // lines). A predecoded copy's index is that of its first byte among the cache's slots.
  std::span<const uint8_t> BytesOf(const Predecoded& p, uint8_t* buffer) const {
    if (&p == &decode_scratch_) return {decode_scratch_bytes_, p.in.length};
    const size_t index = static_cast<size_t>(&p - predecoded_.data());
    if (!p.crosses) return {cache_.slot_bytes() + index, p.in.length};
    return BytesAcross(p, index, buffer);
  }
  std::span<const uint8_t> BytesAcross(const Predecoded& p, size_t index, uint8_t* buffer) const;
  // Tells the observer of the instruction at `eip`, about to run.
  void Observe(uint32_t eip, const Predecoded& p) {
    uint8_t buffer[kMaxInstructionLength];
    observed_ = &p.in;
    observer_->OnInstruction(eip, BytesOf(p, buffer));
  }
  // Writes the instruction at `eip`, about to run with `retired` instructions before it, into the
  // instruction log.
  [[gnu::always_inline]] void Log(uint32_t eip, uint64_t retired, const Predecoded& p) {
    uint8_t buffer[kMaxInstructionLength];
    log_->Add(retired, eip, BytesOf(p, buffer));
  }
  // Tells the observer the registers `in` wrote, once it completed (simcore::Observer::OnRegister).
  void ReportRegisters(const Instruction& in);
  FetchLine& FetchLineOf(uint32_t linear) {
    return fetch_lines_[(linear / Cache::kLineBytes) % kFetchLines];
  }
  // The instruction predecoded at `offset` of the line `f` names, if it was decoded from the
  // bytes the line holds now, for code of this size.
  const Predecoded* KeptIn(const FetchLine& f, uint32_t offset, bool code32) const {
    const Predecoded& p = predecoded_[f.ref.slot * Cache::kLineBytes + offset];
    return p.generation == f.ref.generation && p.code32 == code32 && p.valid ? &p : nullptr;
  }
  // FetchFromLine of an instruction at `offset` of the line `f` names, for a caller that knows
  // CR0 and the CPL are what they were when `f` was made.
  [[gnu::always_inline]] const Predecoded* Refetch(const FetchLine& f, uint32_t offset,
                                                   bool code32) {
    Tlb& tlb = paging_.tlb();
    const bool paged = cr0_ & kCr0Pg;
    if (!cache_.Current(f.ref) || f.tlb_epoch != tlb.epoch() ||
        (paged && !tlb.Holds(f.linear, f.tlb_way, f.tlb_entry))) {
      return nullptr;
    }
    const Predecoded* p = KeptIn(f, offset, code32);
    if (p == nullptr || (p->crosses && !cache_.Current(p->next_line))) return nullptr;
    if (paged) tlb.Touch(f.linear, f.tlb_way);
    cache_.Touch(f.ref);
    if (p->crosses) cache_.Touch(p->next_line);
    return p;
  }
  // The next instruction of the straight loops, at `linear`: from `*line`, the line the last one
  // came from, when it is the same line (touched again only when `retouch`: a data access came
  // between; one that runs into the next line is kept for FetchFromLine, which touches both),
  // else through the line table, `*line` then naming that line's entry (only when it gave the
  // instruction: `*line` must be a line fetched from, with its touches made).
  [[gnu::always_inline]] const Predecoded* FetchNext(uint32_t linear, bool code32, bool retouch,
                                                     const FetchLine** line) {
    const uint32_t offset = linear & (Cache::kLineBytes - 1);
    if (const FetchLine* f = *line; f != nullptr && linear - offset == f->linear) {
      const Predecoded* p = retouch ? Refetch(*f, offset, code32) : KeptIn(*f, offset, code32);
      if (p != nullptr && (retouch || !p->crosses)) return p;
    }
    const Predecoded* p = FetchFromLine(linear, code32);
    if (p != nullptr) *line = &FetchLineOf(linear);
    return p;
  }
  bool delivering_ = false;  // an event is being delivered (a fault now may be a double fault)
  FaultClass delivering_class_ = FaultClass::kBenign;
  // A fault raised during the current step, delivered at its end.
  struct PendingFault {
    bool pending = false;
    uint8_t vector = 0;
    bool has_error = false;
    uint32_t error_code = 0;
    bool breakpoint = false;  // an instruction breakpoint's #DB: it saves RF as it is
  };
  PendingFault fault_;
  std::array<Segment, 6> seg_{};
  uint32_t next_eip_ = 0;  // after the instruction being executed
  bool jumped_ = false;    // it set eip_ itself
  bool repeat_ = false;    // a REP string instruction has iterations left
  // The last step was such an iteration: an event taken now saves RF set (EflagsImage).
  bool between_iterations_ = false;
  // RF of the EFLAGS image the event being delivered saves (EflagsImage).
  uint32_t event_rf_ = 0;
  bool intr_ = false, nmi_ = false, nmi_blocked_ = false;
  bool shadow_ = false;  // STI, MOV SS, POP SS: no interrupt before the next instruction
  bool deliver_ = false;
  bool fast_paths_ = true;
  bool stop_ = false;  // RequestStop: end the current Run after this step
  uint64_t stop_branch_count_ = ~uint64_t{0};
  uint64_t steps_ = 0;
  uint64_t event_retired_ = ~uint64_t{0};  // retired_ at the last event's entry
  simcore::Observer* observer_ = nullptr;
  bool report_registers_ = false;  // the observer WantsRegisters
  simcore::InstructionLog* log_ = nullptr;
  const Instruction* observed_ = nullptr;
  Exception exception_;
  uint64_t retired_ = 0;
  Fpu fpu_;
  TestRegisters test_registers_;
};

// ---- the memory path, inline: every data access takes it ----

// (On a little-endian host, one load or store where the size is known where it is inlined.)
inline uint32_t LittleEndian(const uint8_t* bytes, int size) {
  uint32_t v = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&v, bytes, static_cast<size_t>(size));
  } else {
    for (int i = size - 1; i >= 0; --i) v = v << 8 | bytes[i];
  }
  return v;
}

inline void ToLittleEndian(uint32_t value, uint8_t* bytes, int size) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(bytes, &value, static_cast<size_t>(size));
  } else {
    for (int i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(value >> (8 * i));
  }
}

[[gnu::always_inline]] inline Access Cpu::DataAccess(uint32_t paddr) {
  Access a;
  if (cacheable_ && paddr >> 12 != cacheable_page_) [[unlikely]] {
    cacheable_page_ = paddr >> 12;
    page_cacheable_ = cacheable_(paddr & ~uint32_t{0xFFF});
  }
  a.cacheable = page_cacheable_;
  return a;
}

[[gnu::always_inline]] inline bool Cpu::Translate(uint32_t linear, bool write, uint32_t* paddr,
                                                  bool* pcd) {
  if (!(cr0_ & kCr0Pg)) {
    *paddr = linear;
    *pcd = false;
    return true;
  }
  const Translation t = paging_.Translate(linear, write, cpl_ == 3 && !system_access_);
  if (!t.ok) {
    cr2_ = linear;
    Raise(kVecPageFault, t.error_code);
    return false;
  }
  *paddr = t.paddr;
  *pcd = t.pcd;
  return true;
}

[[gnu::always_inline]] inline bool Cpu::Physical(uint32_t linear, bool write, bool code,
                                                 uint32_t* paddr, Access* access) {
  bool pcd;
  if (!Translate(linear, write, paddr, &pcd)) return false;
  *access = DataAccess(*paddr);
  access->pcd = pcd;
  access->code = code;
  return true;
}

// #AC(0): a misaligned data access at CPL 3 with CR0.AM and EFLAGS.AC set (words on even,
// doublewords on multiple-of-four addresses).
[[gnu::always_inline]] inline bool Cpu::CheckAlignment(int seg, uint32_t offset, int size) {
  if (size == 1 || !(cr0_ & kCr0Am) || !(eflags_ & flag::kAC) || cpl_ != 3 || system_access_) {
    return true;
  }
  if ((Linear(seg, offset) & static_cast<uint32_t>(size - 1)) == 0) return true;
  Raise(kVecAlignment, 0);
  return false;
}

[[gnu::always_inline]] inline bool Cpu::ReadLinear(uint32_t linear, int size, uint32_t* value) {
  if ((linear & 0xFFF) + static_cast<uint32_t>(size) > 0x1000) {
    return ReadAcrossPages(linear, size, value);
  }
  uint32_t paddr;
  bool pcd;
  if (!Translate(linear, false, &paddr, &pcd)) return false;
  uint8_t bytes[4];
  const std::span<uint8_t> data(bytes, size);
  // Whether the address may be cached matters only when the read misses.
  if (!cache_.ReadHit(paddr, data)) {
    Access a = DataAccess(paddr);
    a.pcd = pcd;
    cache_.ReadSlow(paddr, data, a);
  }
  *value = LittleEndian(bytes, size);
  return true;
}

[[gnu::always_inline]] inline bool Cpu::WriteLinear(uint32_t linear, int size, uint32_t value) {
  if ((linear & 0xFFF) + static_cast<uint32_t>(size) > 0x1000) {
    return WriteAcrossPages(linear, size, value);
  }
  uint32_t paddr;
  Access a;
  if (!Physical(linear, true, false, &paddr, &a)) return false;
  uint8_t bytes[4];
  ToLittleEndian(value, bytes, size);
  cache_.Write(paddr, std::span<const uint8_t>(bytes, size), a);
  return true;
}

[[gnu::always_inline]] inline bool Cpu::ReadMem(int seg, uint32_t offset, int size, uint32_t* value,
                                                bool report) {
  if (!PlainAccess(seg_[seg], offset, size, false) && !CheckSegment(seg, offset, size, false)) {
    return false;
  }
  if (!CheckAlignment(seg, offset, size)) return false;
  if (!ReadLinear(Linear(seg, offset), size, value)) return false;
  if (dr7_ & 0xFF) DataBreakpoint(Linear(seg, offset), size, false);
  if (observer_ != nullptr && report) observer_->OnAccess(Linear(seg, offset), size, false, *value);
  return true;
}

[[gnu::always_inline]] inline bool Cpu::WriteMem(int seg, uint32_t offset, int size, uint32_t value,
                                                 bool report) {
  if (!PlainAccess(seg_[seg], offset, size, true) && !CheckSegment(seg, offset, size, true)) {
    return false;
  }
  if (!CheckAlignment(seg, offset, size)) return false;
  if (!WriteLinear(Linear(seg, offset), size, value)) return false;
  if (dr7_ & 0xFF) DataBreakpoint(Linear(seg, offset), size, true);
  if (observer_ != nullptr && report) observer_->OnAccess(Linear(seg, offset), size, true, value);
  return true;
}

// ---- the fetch from a predecoded line, inline: the straight loop takes it at every new line ----

// The fast path of FetchAndDecode: the instruction lies in a line a recent fetch used, which
// still holds the same bytes through the same translation (the same CR0 and CPL, and the same TLB
// entry in the way that translated it), and it was predecoded. The TLB and line touches are those
// of the full path, so the replacement state stays exact.
[[gnu::always_inline]] inline const Cpu::Predecoded* Cpu::FetchFromLine(uint32_t linear,
                                                                        bool code32) {
  const uint32_t offset = linear & (Cache::kLineBytes - 1);
  const FetchLine& f = FetchLineOf(linear);
  if (!fast_paths_ || linear - offset != f.linear || f.cr0 != cr0_ || f.cpl != cpl_) {
    return nullptr;
  }
  return Refetch(f, offset, code32);
}

// ---- operands, the stack and near branches, inline: the predecoded forms take them ----

[[gnu::always_inline]] inline uint32_t Cpu::EffectiveAddress(const Instruction& in) const {
  uint32_t ea = static_cast<uint32_t>(in.disp);
  if (in.base != kNoReg) ea += gpr_[in.base];
  if (in.index != kNoReg) ea += gpr_[in.index] << in.scale;
  return in.addrsize == 2 ? ea & 0xFFFF : ea;
}

[[gnu::always_inline]] inline uint32_t Cpu::ReadReg(int r, int size) const {
  if (size == 1) return r < 4 ? gpr_[r] & 0xFF : (gpr_[r - 4] >> 8) & 0xFF;
  return gpr_[r] & SizeMask(size);
}

[[gnu::always_inline]] inline void Cpu::WriteReg(int r, int size, uint32_t value) {
  if (size == 4) {
    gpr_[r] = value;
  } else if (size == 2) {
    gpr_[r] = (gpr_[r] & 0xFFFF0000u) | (value & 0xFFFF);
  } else if (r < 4) {
    gpr_[r] = (gpr_[r] & ~0xFFu) | (value & 0xFF);
  } else {
    gpr_[r - 4] = (gpr_[r - 4] & ~0xFF00u) | (value & 0xFF) << 8;
  }
}

inline bool Cpu::BranchTaken(const Instruction& in) const {
  switch (in.op) {
    case Op::kJcc:
      return Condition(in.cond);
    case Op::kJcxz:
      return ReadReg(kEcx, in.addrsize) == 0;
    case Op::kLoop:
    case Op::kLoope:
    case Op::kLoopne: {
      const bool more = ReadReg(kEcx, in.addrsize) != 1;  // the count after the decrement != 0
      if (in.op == Op::kLoope) return more && (eflags_ & flag::kZF);
      if (in.op == Op::kLoopne) return more && !(eflags_ & flag::kZF);
      return more;
    }
    case Op::kInto:
      return eflags_ & flag::kOF;
    default:
      return true;
  }
}

inline void Cpu::SetSp(uint32_t v) {
  if (StackSize() == 4) {
    gpr_[kEsp] = v;
  } else {
    gpr_[kEsp] = (gpr_[kEsp] & 0xFFFF0000u) | (v & 0xFFFF);
  }
}

inline bool Cpu::Push(int size, uint32_t value) {
  const uint32_t sp = (Sp() - size) & SizeMask(StackSize());
  if (!WriteMem(kSs, sp, size, value)) return false;
  SetSp(sp);
  return true;
}

// PUSH of a segment register with a 32-bit operand size moves the stack pointer by 4 but writes
// the selector alone, a word: the 80386 and the i486 leave the upper half of the slot as it was
// (measured on both chips; the later Intel manuals allow it: "the segment selector is written on
// the stack using a 16-bit move").
inline bool Cpu::PushSegment(int size, uint16_t selector) {
  const uint32_t sp = (Sp() - size) & SizeMask(StackSize());
  if (!WriteMem(kSs, sp, 2, selector)) return false;
  SetSp(sp);
  return true;
}

inline bool Cpu::Pop(int size, uint32_t* value) {
  if (!ReadMem(kSs, Sp(), size, value)) return false;
  SetSp(Sp() + size);
  return true;
}

inline bool Cpu::Branch(bool taken, uint32_t target, int size) {
  if (taken && !InCodeLimit(target, size)) return Raise(kVecGeneralProtection, 0), false;
  ++branch_count_;
  if (taken) Jump(target, size);
  return true;
}

}  // namespace citcat::x86

#endif  // CITCAT_SIMCORE_X86_CPU_H_
