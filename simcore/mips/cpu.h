// The MIPS R4400 CPU core: integer pipeline semantics (MIPS III), CP0 with the JTLB, exceptions
// and interrupts, the primary caches, and COP1 dispatch to the Fpu. Instructions are decoded once
// per I-cache line fill into a compact form and executed through one short handler each.
//
// Run loop invariants (see docs/machines/r4400-core.md; the loop itself is RunStraight in
// interpreter.cc, with RunLoop around it for interrupts and fetches that need the slow path):
//   pc_   the instruction about to execute; in_delay_ says it is a delay slot. While the loop
//         runs, pc_ and retired_ are current whenever anything but a plain ALU handler runs.
//   flow_ kSequential for most instructions; branches, exceptions and ERET set it to say what
//         happens instead. kRecheck, added to it, sends the loop back to look at interrupts,
//         stop requests and the fetch window before the next instruction.
//   branch_count_ counts retired branches/jumps (after their delay slot), exception entries and
//         ERETs, so (branch_count, pc) names each instruction boundary once.
#ifndef CITCAT_SIMCORE_MIPS_CPU_H_
#define CITCAT_SIMCORE_MIPS_CPU_H_

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "simcore/bus.h"
#include "simcore/instruction_log.h"
#include "simcore/mips/cache.h"
#include "simcore/mips/decoder.h"
#include "simcore/mips/fpu.h"
#include "simcore/mips/secondary_cache.h"
#include "simcore/mips/tlb.h"
#include "simcore/observer.h"

namespace citcat::mips {

class Cpu;

// One predecoded instruction. Op::kCount never comes from a word: the run loop uses it as the
// sentinel after the last word of each I-cache line.
inline constexpr Op kLineEnd = Op::kCount;
struct Inst {
  uint32_t word;
  Op op;
  uint8_t rs, rt, rd, sa;
  // What the run loop starts here when nothing is observed: op itself, kLineEnd for a
  // sentinel, or a pair of plain operations fused with the next instruction (FusePairs).
  uint16_t run;
  int32_t imm;  // sign-extended immediate, or zero-extended for ANDI/ORI/XORI
};

// Builds the predecoded form of one instruction word.
Inst Predecode(uint32_t word);
// Fuses each instruction of a predecoded line with the next where the run loop has a label for
// the pair; `count` instructions, the last of which has no next here.
void FusePairs(Inst* insts, uint32_t count);

enum ExcCode : uint8_t {
  kExcInt = 0,
  kExcMod = 1,
  kExcTlbl = 2,
  kExcTlbs = 3,
  kExcAdel = 4,
  kExcAdes = 5,
  kExcIbe = 6,
  kExcDbe = 7,
  kExcSys = 8,
  kExcBp = 9,
  kExcRi = 10,
  kExcCpu = 11,
  kExcOv = 12,
  kExcTr = 13,
  kExcVcei = 14,
  kExcFpe = 15,
  kExcWatch = 23,
  kExcVced = 31,
};
// "TLB load", "syscall", ...: the exception's name in messages and traces.
const char* ExceptionName(ExcCode code);

// CP0 register numbers.
enum Cp0Reg : uint8_t {
  kCp0Index = 0,
  kCp0Random = 1,
  kCp0EntryLo0 = 2,
  kCp0EntryLo1 = 3,
  kCp0Context = 4,
  kCp0PageMask = 5,
  kCp0Wired = 6,
  kCp0BadVAddr = 8,
  kCp0Count = 9,
  kCp0EntryHi = 10,
  kCp0Compare = 11,
  kCp0Status = 12,
  kCp0Cause = 13,
  kCp0Epc = 14,
  kCp0PrId = 15,
  kCp0Config = 16,
  kCp0LLAddr = 17,
  kCp0WatchLo = 18,
  kCp0WatchHi = 19,
  kCp0XContext = 20,
  kCp0Ecc = 26,
  kCp0CacheErr = 27,
  kCp0TagLo = 28,
  kCp0TagHi = 29,
  kCp0ErrorEpc = 30,
};

// Status bits.
inline constexpr uint32_t kStatusIe = 1u << 0;
inline constexpr uint32_t kStatusExl = 1u << 1;
inline constexpr uint32_t kStatusErl = 1u << 2;
inline constexpr uint32_t kStatusKsuShift = 3;
inline constexpr uint32_t kStatusUx = 1u << 5;
inline constexpr uint32_t kStatusSx = 1u << 6;
inline constexpr uint32_t kStatusKx = 1u << 7;
inline constexpr uint32_t kStatusImShift = 8;
inline constexpr uint32_t kStatusDe = 1u << 16;
inline constexpr uint32_t kStatusCe = 1u << 17;
inline constexpr uint32_t kStatusCh = 1u << 18;
inline constexpr uint32_t kStatusSr = 1u << 20;
inline constexpr uint32_t kStatusTs = 1u << 21;
inline constexpr uint32_t kStatusBev = 1u << 22;
inline constexpr uint32_t kStatusRe = 1u << 25;
inline constexpr uint32_t kStatusFr = 1u << 26;
inline constexpr uint32_t kStatusCu0 = 1u << 28;
inline constexpr uint32_t kStatusCu1 = 1u << 29;
inline constexpr uint32_t kCauseBd = 1u << 31;
inline constexpr uint32_t kCauseIpShift = 8;

struct CpuConfig {
  bool big_endian = true;
  uint32_t icache_bytes = 16 * 1024;
  uint32_t dcache_bytes = 16 * 1024;
  uint32_t icache_line = 32;  // 16 or 32
  uint32_t dcache_line = 32;  // 16 or 32
  uint32_t prid = 0x0440;     // R4400, revision 4.0
  // Optional unified secondary cache: 0 = none (the R4400PC configuration).
  uint32_t scache_bytes = 0;
  uint32_t scache_line = 64;  // 16, 32, 64 or 128; raised to the primary line size if smaller
};

// OK, or what is wrong: caches of 4 KB..64 KB with 16 or 32-byte lines, a secondary cache of
// 0 (none) or 16 KB..16 MB with 16..128-byte lines, all powers of two. Geometry can come from a
// CAT header, so callers should check it; Cpu itself replaces invalid fields by the defaults.
absl::Status ValidateCpuConfig(const CpuConfig& config);

// The parts of CP0 that belong to the outside world: the traced machine supplies its seeded
// clock, replay the recorded Count history. The timer interrupt (IP7) is raised by the owner
// through Cpu::SetInterruptLine(7, ...), typically from WriteCompare / its own clock.
class Cp0Hooks {
 public:
  virtual ~Cp0Hooks() = default;
  virtual uint32_t ReadCount(Cpu& cpu) = 0;
  virtual void WriteCount(Cpu& cpu, uint32_t value) = 0;
  virtual void WriteCompare(Cpu& cpu, uint32_t value) = 0;
  // Every MFC0/DMFC0 of Cause: `cause` is the core's value, the result is what the instruction
  // reads. Replay answers with the traced kernel's echo, whose IP bits followed device lines that
  // replay does not model.
  virtual uint32_t ReadCause(Cpu& cpu, uint32_t cause) {
    (void)cpu;
    return cause;
  }
  // Every exception entry (interrupts included), once the state is switched to the handler:
  // the traced machine counts interrupts, replay keys them. `faulting_pc` is the instruction's
  // own PC (not the branch's for a delay slot).
  virtual void ExceptionEntered(Cpu& cpu, ExcCode code, uint64_t faulting_pc) {
    (void)cpu, (void)code, (void)faulting_pc;
  }
};

// The condition a branch tests, on the values before it runs: GPRs rs and rt and the FP condition
// bit (true for a jump). The interpreter's branches and Cpu::BranchTaken both ask it.
template <Op kOp>
constexpr bool BranchCondition(uint64_t rs, uint64_t rt, bool fcc) {
  const auto is = [](auto... ops) { return ((kOp == ops) || ...); };
  const int64_t s = static_cast<int64_t>(rs);
  if constexpr (is(Op::kBeq, Op::kBeql)) return rs == rt;
  if constexpr (is(Op::kBne, Op::kBnel)) return rs != rt;
  if constexpr (is(Op::kBlez, Op::kBlezl)) return s <= 0;
  if constexpr (is(Op::kBgtz, Op::kBgtzl)) return s > 0;
  if constexpr (is(Op::kBltz, Op::kBltzl, Op::kBltzal, Op::kBltzall)) return s < 0;
  if constexpr (is(Op::kBgez, Op::kBgezl, Op::kBgezal, Op::kBgezall)) return s >= 0;
  if constexpr (is(Op::kBc1f, Op::kBc1fl)) return !fcc;
  if constexpr (is(Op::kBc1t, Op::kBc1tl)) return fcc;
  return true;
}

class Cpu {
 public:
  Cpu(simcore::Bus& bus, const CpuConfig& config = {});
  Cpu(const Cpu&) = delete;
  Cpu& operator=(const Cpu&) = delete;

  // Cold reset: PC at the boot vector, BEV=ERL=1, kernel mode, caches invalid.
  void Reset();
  // Soft reset and NMI, taken at the current instruction boundary (call between runs): ErrorEPC
  // = the next instruction (its branch if it is a delay slot), BEV=SR=ERL=1, TS=0, PC at the
  // reset vector 0xBFC00000. Registers, TLB and caches are kept. Counts as an exception entry.
  void SoftReset() { EnterResetVector(); }
  void Nmi() { EnterResetVector(); }

  // Executes up to `n` instruction steps (an exception or interrupt entry counts as a step);
  // returns the number done. Stops early when RequestStop() is called from a hook or the bus.
  // With an observer set, tells it of each instruction, access and exception.
  uint64_t Run(uint64_t n);
  void Step() { Run(1); }
  void RequestStop() {
    stop_ = true;
    flow_ |= kRecheck;
  }
  // Run also stops after the step that brings branch_count() to `count` or beyond (replay's
  // approach to an event boundary). The check costs nothing on sequential instructions: the
  // counter only changes on the non-sequential path.
  void set_stop_branch_count(uint64_t count) { stop_branch_count_ = count; }

  // ---- Architectural state ----
  uint64_t pc() const { return pc_; }
  // Jumps to `pc` (not in a delay slot): for loaders and tests.
  void SetPc(uint64_t pc);
  bool in_delay_slot() const { return in_delay_; }
  // The run stopped at its stop branch count after a step that left the sequential flow: a taken
  // branch whose slot completed, an untaken branch-likely that skipped its slot, an exception
  // entry or ERET. False after any other stop (where a replay may not be cut: replay/engine.h),
  // and right after an exception's entry, which a trace shows with the instruction that follows.
  bool AtFlowBreak() const { return flow_break_ && !in_delay_ && event_retired_ != retired_; }
  // Where the branch before a delay slot goes once the slot completes (its branch target, or the
  // instruction after the slot if not taken); meaningful while in_delay_slot().
  uint64_t branch_target() const { return target_; }
  // Resumes between a branch and its delay slot: `slot` executes next, then `target` (loading a
  // machine state saved at that boundary).
  void SetPcInDelaySlot(uint64_t slot, uint64_t target);
  uint64_t gpr(int i) const { return gpr_[i & 31]; }
  // Whether the branch `word` (decoded as `op`), about to run, is taken (true for a jump).
  bool BranchTaken(Op op, uint32_t word) const;
  // Where the control transfer `word` at `pc`, about to run, goes when taken: its target, the
  // register of JR/JALR, ERET's ErrorEPC or EPC; 0 for anything else. `flow` is
  // Describe(word).flow, which a caller keeps per instruction.
  uint64_t BranchTarget(mips::Flow flow, uint64_t pc, uint32_t word) const;
  // The privilege the running code has: Status.KSU as it applies, 0 kernel (also while EXL or
  // ERL is set, and for the reserved 3), 1 supervisor, 2 user.
  uint8_t privilege() const {
    if (status_ & (kStatusExl | kStatusErl)) return 0;
    const uint8_t ksu = (status_ >> kStatusKsuShift) & 3;
    return ksu == 3 ? 0 : ksu;
  }
  void set_gpr(int i, uint64_t v) {
    if (i & 31) gpr_[i & 31] = v;
  }
  uint64_t hi() const { return hi_; }
  uint64_t lo() const { return lo_; }
  void set_hi(uint64_t v) { hi_ = v; }
  void set_lo(uint64_t v) { lo_ = v; }
  bool ll_bit() const { return ll_bit_; }

  // CP0 as MFC0/DMFC0 and MTC0/DMTC0 see it (write masks applied; Count through the hooks).
  uint64_t ReadCp0(int reg);
  void WriteCp0(int reg, uint64_t value);
  // Loads a CP0 register from a saved machine state: the value as DMFC0 read it, without write
  // masks (read-only fields included) and without hooks. Random is set to `value` at the current
  // retired() count; Count goes to the default clock only.
  void LoadCp0(int reg, uint64_t value);
  // Every CP0 register as stored, the read-only ones included, for machine-state images (IMS)
  // and replay. Count goes through the hooks like MFC0/MTC0; nothing else does.
  struct Cp0State {
    uint32_t index = 0, random = 47, page_mask = 0, wired = 0, count = 0, compare = 0;
    uint32_t status = 0, cause = 0, prid = 0, config = 0, lladdr = 0, watch_lo = 0;
    uint32_t watch_hi = 0, ecc = 0, cache_err = 0, tag_lo = 0, tag_hi = 0;
    uint64_t entry_lo0 = 0, entry_lo1 = 0, context = 0, bad_vaddr = 0, entry_hi = 0;
    uint64_t epc = 0, xcontext = 0, error_epc = 0;
    bool ll_bit = false;
    bool operator==(const Cp0State&) const = default;
  };
  Cp0State SaveCp0();
  void RestoreCp0(const Cp0State& s);
  // SaveCp0 without the hooks: Count is the core's own clock, whatever the hooks would answer
  // (saving a machine state must not consume what the outside world supplies).
  Cp0State StoredCp0() const;

  uint32_t status() const { return status_; }
  uint32_t cause() const { return cause_; }
  uint64_t epc() const { return epc_; }
  uint64_t error_epc() const { return error_epc_; }
  uint64_t bad_vaddr() const { return bad_vaddr_; }
  uint64_t entry_hi() const { return entry_hi_; }
  uint32_t random() const;
  Tlb& tlb() { return tlb_; }
  const Tlb& tlb() const { return tlb_; }
  // After writing the TLB directly (machine-state loading), drop cached translations.
  void FlushTranslations();
  // Drops the cached translations that TLB entry `old` may have produced.
  void ForgetTranslationsOf(const TlbEntry& old);

  // Hardware interrupt lines IP2..IP7 (Cause bits 10..15). Level-sensitive.
  void SetInterruptLine(int line, bool asserted);

  void set_cp0_hooks(Cp0Hooks* hooks) { hooks_ = hooks; }
  // May be null (the fast path): see simcore/observer.h.
  void set_observer(simcore::Observer* observer) {
    observer_ = observer;
    report_registers_ = observer != nullptr && observer->WantsRegisters();
    reported_pending_ = false;
    ForgetDataKeys();  // accesses go the slow way, which tells the observer (Accessed)
  }
  // May be null. Each instruction the observer would be told of, written into `log` by the run
  // loop itself, fused pairs included (simcore/instruction_log.h); for a core with no observer.
  void set_instruction_log(simcore::InstructionLog* log) { log_ = log; }

  // ---- Counters ----
  uint64_t branch_count() const { return branch_count_; }
  void set_branch_count(uint64_t v) { branch_count_ = v; }
  uint64_t steps() const { return retired_ + exceptions_; }
  uint64_t exceptions() const { return exceptions_; }
  // Instructions that completed (steps that were not an exception or interrupt entry). While an
  // instruction executes this counts the ones before it, so Random and the default Count are
  // functions of the instructions retired before the reading instruction.
  uint64_t retired() const { return retired_; }
  // Sets the count (a machine state saved after that many instructions); call before loading
  // Random, which counts from it.
  void set_retired(uint64_t v) { retired_ = v; }

  Fpu& fpu() { return fpu_; }
  const Fpu& fpu() const { return fpu_; }
  // Direct cache access (machine-state loading, tests): call CachesLoaded() after changing lines
  // so that no stale predecoded line, fetch window or data key survives.
  Cache& icache() { return icache_; }
  Cache& dcache() { return dcache_; }
  const Cache& icache() const { return icache_; }
  const Cache& dcache() const { return dcache_; }
  // After writing cache lines directly (loading a machine state that holds them): predecodes the
  // I-cache's valid lines again and drops the fetch window, the data keys and the cached
  // translations, which may name lines that changed.
  void CachesLoaded();
  simcore::Bus& bus() { return bus_; }
  SecondaryCache* scache() { return scache_.get(); }
  const SecondaryCache* scache() const { return scache_.get(); }
  bool big_endian() const { return big_endian_; }

  // Reads memory as the CPU would see it through the current translation and the D-cache,
  // without side effects (no exception, no bus record). False if unmapped or not memory.
  bool PeekVirtual(uint64_t vaddr, std::span<uint8_t> out);
  // Translates without side effects (no exception, no TLB state change).
  bool DebugTranslate(uint64_t vaddr, uint64_t* paddr, bool* cached);

 private:
  friend struct Exec;  // the instruction handlers (interpreter.cc)

  Cpu(simcore::Bus& bus, const CpuConfig& sanitized_config,
      int);  // the config is known to be valid

  enum class Access : uint8_t { kLoad, kStore, kFetch };

  // A cached translation of one 4 KB virtual page for the current privilege mode.
  struct MicroTlbEntry {
    uint64_t vpage = ~uint64_t{0};
    uint64_t pbase = 0;
    bool cached = false;
    bool writable = false;
  };
  static constexpr int kMicroTlbSize = 256;

  // ---- run loop pieces (cpu.cc) ----
  // The predecoded instruction at pc_, or nullptr after raising a fetch exception.
  const Inst* Fetch() {
    if (const Inst* inst = FetchFast(pc_)) [[likely]]
      return inst;
    return FetchSlow();
  }
  // The fast path: the "fetch window" is the 4 KB page of the last cached fetch with its
  // translation, valid until a translation, the mode or the I-cache changes behind the lines'
  // backs (InvalidateFetchWindow); inside it an instruction is one line-tag compare away. Then
  // the micro-TLB, which moves the window. nullptr if only the slow path (an I-cache miss,
  // uncached space, an exception) can tell.
  [[gnu::always_inline]] const Inst* FetchFast(uint64_t pc) {
    const uint64_t off = pc - fetch_page_va_;
    // Rotating keeps a misaligned PC (low bits set) out of the window.
    if (((off >> 2) | (off << 62)) < fetch_page_words_) [[likely]] {
      const uint64_t line = off >> icache_.line_shift();
      if (fetch_page_lines_[line].tag == fetch_page_tag_ + (line << icache_.line_shift()))
          [[likely]] {
        return fetch_page_insts_ + (off >> 2) + line;  // each line's words, then its kLineEnd
      }
      return nullptr;
    }
    const MicroTlbEntry& e = utlb_cur_[(pc >> 12) & (kMicroTlbSize - 1)];
    if (e.vpage == (pc >> 12) && e.cached && (pc & 3) == 0) [[likely]] {
      OpenFetchWindow(pc, e.pbase);
      const uint32_t index = icache_.Index(pc);
      if (icache_.line(index).tag == icache_.TagFor(e.pbase | (pc & 0xFFF))) [[likely]] {
        return InstAt(index, pc);
      }
    }
    return nullptr;
  }
  // Makes the cached page at `pc`, physical page `pbase`, the fetch window. A 4 KB page is a run
  // of consecutive lines in the I-cache (which is at least 4 KB).
  void OpenFetchWindow(uint64_t pc, uint64_t pbase) {
    fetch_page_va_ = pc & ~uint64_t{0xFFF};
    const uint32_t first = icache_.Index(fetch_page_va_);
    fetch_page_lines_ = &icache_.line(first);
    fetch_page_insts_ = LineInsts(first);
    fetch_page_tag_ = pbase | 1;  // Cache::TagFor of the page's first line
    fetch_page_words_ = 0x1000 / 4;
  }
  // The predecoded instruction at `pc` in I-cache line `index`.
  const Inst* InstAt(uint32_t index, uint64_t pc) {
    return LineInsts(index) + ((pc >> 2) & (icache_.line_bytes() / 4 - 1));
  }
  const Inst* FetchSlow();
  void FinishFlow(uint64_t pc);  // the non-sequential part of advancing past an instruction
  // Tells the observer of the instruction at `pc`, about to run.
  void Observe(uint64_t pc, uint32_t word) {
    uint8_t bytes[4];
    WordBytes(word, big_endian_, bytes);
    if (report_registers_) {
      ReportRegisters();
      reported_pending_ = true;
      reported_pc_ = pc;
      reported_word_ = word;
    }
    observer_->OnInstruction(pc, bytes);
  }
  // Writes the instruction at `pc`, about to run with `retired` instructions before it, into the
  // instruction log.
  void Log(uint64_t pc, uint64_t retired, uint32_t word) {
    uint8_t bytes[4];
    WordBytes(word, big_endian_, bytes);
    log_->Add(retired, pc, bytes);
  }
  // Who is told of each instruction the run loop starts: no one, the instruction log, or the
  // observer.
  enum class Watch { kNone, kLog, kObserver };
  // Tells the observer the registers the instruction told last wrote, if it has not yet (an
  // instruction's writes are told once it completed: when the next instruction or an event
  // that did not come from it is told, or when Run returns).
  void ReportRegisters();
  template <Watch kWatch>
  uint64_t RunLoop(uint64_t n);
  template <Watch kWatch>
  uint64_t RunStraight(const Inst* inst, uint64_t n);
  // The predecoded words of I-cache line `index`, followed by a kLineEnd sentinel.
  Inst* LineInsts(uint32_t index) { return &decoded_[index * (icache_.line_bytes() / 4 + 1)]; }
  // An empty window (no word is below zero) never matches, whatever the PC. The run loop
  // executes whole stretches of the window without looking at it again, so it is told to.
  void InvalidateFetchWindow() {
    fetch_page_words_ = 0;
    flow_ |= kRecheck;
  }
  void RefillILine(uint32_t index, uint64_t paddr);
  // Secondary-cache inclusion: write back and drop primary lines inside [paddr, paddr + bytes).
  void PurgePrimaries(uint64_t paddr, uint32_t bytes);
  void TakeInterrupt();
  void UpdateInterruptPending();
  void UpdateMode();

  // ---- exceptions (cpu.cc) ----
  void Exception(ExcCode code, int coprocessor = 0, uint32_t vector_offset = 0x180);
  void AddressError(uint64_t vaddr, Access access);
  void TlbException(ExcCode code, uint64_t vaddr, bool refill);
  void EnterResetVector();
  void ReservedInstruction() { Exception(kExcRi); }
  void CoprocessorUnusable(int cop) { Exception(kExcCpu, cop); }

  // ---- CP0 operations (cp0.cc) ----
  void TlbRead();
  void TlbWriteIndexed();
  void TlbWriteRandom();
  void TlbProbe();
  void Eret();

  // ---- memory (memory.cc) ----
  // The outcome of walking the segment map and the TLB for one address.
  struct Translation {
    bool ok = false;
    uint64_t paddr = 0;
    bool cached = false;
    bool writable = true;
    ExcCode fault = kExcAdel;
    bool refill = false;
  };
  Translation Walk(uint64_t vaddr, Access access) const;
  // Full translation; raises the exception and returns false on failure.
  bool Translate(uint64_t vaddr, Access access, uint64_t* paddr, bool* cached);
  // The D-cache byte for an access, refilling the line on a miss.
  [[gnu::always_inline]] uint8_t* DataLine(uint64_t vaddr, uint64_t paddr, bool write) {
    const uint32_t index = dcache_.Index(vaddr);
    Cache::Line& l = dcache_.line(index);
    if (l.tag != dcache_.TagFor(paddr)) [[unlikely]] {
      data_keys_[index] = DataKey{};
      dcache_.Refill(index, paddr, *line_bus_, branch_count_);
    }
    l.dirty |= write;
    return dcache_.ByteAt(vaddr);
  }

  // The data fast path. Each D-cache line remembers the virtual line that last reached it
  // through the micro-TLB and a tag hit, stamped with the privilege mode, a generation that
  // ForgetDataKeys() advances whenever a translation or a D-cache line changes behind its back,
  // and bit 0 when the line is dirty and its page writable (stores may go straight in). An
  // access whose key matches is one compare away from its byte.
  struct DataKey {
    uint64_t vline = ~uint64_t{0};
    uint64_t stamp = 0;
  };
  [[gnu::always_inline]] uint8_t* DataFast(uint64_t vaddr, bool store) {
    const DataKey& k = data_keys_[dcache_.Index(vaddr)];
    // data_stamp_ keeps bit 0 clear.
    const bool match =
        store ? k.stamp == (data_stamp_ | 1) : (k.stamp & ~uint64_t{1}) == data_stamp_;
    if (k.vline == DataVline(vaddr) && match) [[likely]] {
      return dcache_.ByteAt(vaddr);
    }
    return nullptr;
  }
  uint64_t DataVline(uint64_t vaddr) const { return dcache_.LineOf(vaddr); }
  // Keys the D-cache line at `vaddr` after a full-path access (a store: with stores allowed).
  void RememberDataLine(uint64_t vaddr, bool store);
  void ForgetDataKeys() { data_stamp_ += 8; }
  bool LoadSlow(uint64_t vaddr, uint8_t* bytes, int n);
  bool StoreSlow(uint64_t vaddr, const uint8_t* bytes, int n);
  void UncachedRead(uint64_t paddr, uint8_t* bytes, int n, uint8_t flags = 0);
  void UncachedWrite(uint64_t paddr, const uint8_t* bytes, int n);
  bool CheckWatch(uint64_t paddr, Access access);
  void DecodeILine(uint32_t index);
  void CacheOp(uint32_t op, uint64_t vaddr);

  template <typename T>
  static T ToHost(T v, bool big) {
    if constexpr (sizeof(T) == 1) {
      return v;
    } else {
      if (!big) return v;
      if constexpr (sizeof(T) == 2) return static_cast<T>(__builtin_bswap16(v));
      if constexpr (sizeof(T) == 4) return static_cast<T>(__builtin_bswap32(v));
      if constexpr (sizeof(T) == 8) return static_cast<T>(__builtin_bswap64(v));
    }
  }

  // Translation for a data access, fast path first. Returns false after raising the exception.
  [[gnu::always_inline]] bool TranslateData(uint64_t vaddr, Access access, uint64_t* paddr,
                                            bool* cached) {
    const MicroTlbEntry& e = utlb_cur_[(vaddr >> 12) & (kMicroTlbSize - 1)];
    if (e.vpage == (vaddr >> 12) && (access != Access::kStore || e.writable)) [[likely]] {
      *paddr = e.pbase | (vaddr & 0xFFF);
      *cached = e.cached;
      return true;
    }
    return Translate(vaddr, access, paddr, cached);
  }

 public:
  // Memory access as the running instruction performs it (used by the handlers).
  template <typename T>
  [[gnu::always_inline]] bool Load(uint64_t vaddr, T* out) {
    if (vaddr & (sizeof(T) - 1)) [[unlikely]] {
      AddressError(vaddr, Access::kLoad);
      return false;
    }
    T v;
    if (const uint8_t* p = DataFast(vaddr, false)) [[likely]] {
      std::memcpy(&v, p, sizeof(T));
      *out = ToHost(v, data_big_);
      return true;
    }
    if (!LoadSlow(vaddr, reinterpret_cast<uint8_t*>(&v), sizeof(T))) return false;
    *out = ToHost(v, data_big_);
    Accessed(vaddr, sizeof(T), false, *out);
    return true;
  }

  template <typename T>
  [[gnu::always_inline]] bool Store(uint64_t vaddr, T value) {
    if (vaddr & (sizeof(T) - 1)) [[unlikely]] {
      AddressError(vaddr, Access::kStore);
      return false;
    }
    const T v = ToHost(value, data_big_);
    if (uint8_t* p = DataFast(vaddr, true)) [[likely]] {
      std::memcpy(p, &v, sizeof(T));
      return true;
    }
    if (!StoreSlow(vaddr, reinterpret_cast<const uint8_t*>(&v), sizeof(T))) return false;
    Accessed(vaddr, sizeof(T), true, value);
    return true;
  }

  // Tells the observer of a data access that succeeded (Load, Store; the partial-word handlers
  // themselves, with the whole register). Only the slow paths call it: while an observer is set,
  // no line is keyed for DataFast (RememberDataLine), so every access takes them.
  [[gnu::always_inline]] void Accessed(uint64_t vaddr, int size, bool write, uint64_t value) {
    if (observer_ != nullptr) [[unlikely]]
      observer_->OnAccess(vaddr, size, write, value);
  }

  // Loads the aligned unit containing `vaddr` (LWL/LWR/LDL/LDR), translating `vaddr` itself so
  // that a fault reports the instruction's address.
  template <typename T>
  bool LoadUnit(uint64_t vaddr, T* out) {
    uint64_t pa;
    bool cached;
    if (!TranslateData(vaddr, Access::kLoad, &pa, &cached)) return false;
    vaddr &= ~uint64_t{sizeof(T) - 1};
    pa &= ~uint64_t{sizeof(T) - 1};
    T v;
    if (cached) [[likely]] {
      std::memcpy(&v, DataLine(vaddr, pa, false), sizeof(T));
    } else {
      UncachedRead(pa, reinterpret_cast<uint8_t*>(&v), sizeof(T));
    }
    *out = ToHost(v, data_big_);
    return true;
  }

  // Stores the bytes of the aligned `N`-byte unit containing `vaddr` whose lanes are set in `mask`
  // (value-significance order, like `value`): SWL/SWR/SDL/SDR.
  template <typename T>
  bool StorePartial(uint64_t vaddr, T value, T mask);

 private:
  simcore::Bus& bus_;
  CpuConfig config_;
  std::unique_ptr<SecondaryCache> scache_;
  simcore::Bus*
      line_bus_;  // where primary lines come from and go to: the secondary cache or the bus
  bool big_endian_;
  // Byte order of data accesses: the CPU's, reversed in user mode when Status.RE is set.
  bool data_big_;

  // Integer state.
  std::array<uint64_t, 32> gpr_{};
  uint64_t hi_ = 0, lo_ = 0;
  // What follows the executing instruction.
  enum Flow : uint8_t {
    kSequential = 0,  // pc_ + 4
    kBranch,          // a branch or jump: its delay slot next, then target_
    kDelaySlot,       // this is a delay slot: target_ next, and the branch retires
    kSkipSlot,        // an untaken branch-likely: pc_ + 8
    kRedirected,      // exception entry: pc_ already holds the vector
    kReturned,        // ERET: pc_ already holds EPC or ErrorEPC
    // Added to any of the above: the fetch window, a pending interrupt or a stop request changed,
    // so the run loop must look before the next instruction.
    kRecheck = 0x80,
  };
  uint64_t pc_ = 0;
  uint64_t target_ = 0;  // where a branch goes after its delay slot (pc + 8 if not taken)
  uint8_t flow_ = kSequential;
  bool in_delay_ = false;  // pc_ is in a delay slot
  bool ll_bit_ = false;

  // Mode, derived from Status (UpdateMode).
  bool kernel_ = true;
  bool ops64_ = true;    // 64-bit operations allowed
  bool addr64_ = false;  // 64-bit addressing (KX/SX/UX of the current mode)
  bool cu0_ = true;      // CP0 usable
  int mode_ = 0;         // 0 kernel, 1 supervisor, 2 user
  bool irq_pending_ = false;
  bool stop_ = false;

  // CP0.
  uint32_t index_ = 0, wired_ = 0, page_mask_ = 0, compare_ = 0, status_ = 0, cause_ = 0;
  uint32_t config_reg_ = 0, lladdr_ = 0, watch_lo_ = 0, watch_hi_ = 0, ecc_ = 0;
  uint32_t cache_err_ = 0, tag_lo_ = 0, tag_hi_ = 0;
  uint64_t entry_lo0_ = 0, entry_lo1_ = 0, context_ = 0, bad_vaddr_ = 0, entry_hi_ = 0;
  uint64_t epc_ = 0, xcontext_ = 0, error_epc_ = 0;
  uint32_t mode_key_ = 0;        // Status/Config bits the micro-TLB contents depend on
  uint32_t random_anchor_ = 47;  // Random at retired() == random_anchor_retired_
  uint64_t random_anchor_retired_ = 0;
  uint64_t count_offset_ = 0;  // default Count = count_offset_ + retired() (no hooks)
  Tlb tlb_;

  uint64_t branch_count_ = 0;
  uint64_t stop_branch_count_ = ~uint64_t{0};
  bool flow_break_ = false;  // the step that stopped the run at the branch count broke the flow
  uint64_t retired_ = 0;
  uint64_t exceptions_ = 0;
  uint64_t event_retired_ = ~uint64_t{0};  // retired_ at the last exception's entry

  Cache icache_;
  Cache dcache_;
  std::vector<DataKey> data_keys_;  // one per D-cache line
  uint64_t data_stamp_ = 8;         // generation << 3 | mode << 1 (see DataKey)
  std::vector<Inst> decoded_;       // per I-cache line: its words, valid while it is, and kLineEnd
  std::array<Inst, 2> uncached_inst_{};  // an instruction fetched from uncached space, kLineEnd
  uint64_t fetch_page_va_ = 0;           // the fetch window: virtual page,
  uint64_t fetch_page_tag_ = 0;          // the I-cache tag of its first line,
  uint64_t fetch_page_words_ = 0;        // its size in words (0: closed),
  const Cache::Line* fetch_page_lines_ = nullptr;  // its I-cache lines
  const Inst* fetch_page_insts_ = nullptr;         // and their predecoded instructions
  std::array<std::array<MicroTlbEntry, kMicroTlbSize>, 3> utlb_{};
  MicroTlbEntry* utlb_cur_ = nullptr;

  Fpu fpu_;
  Cp0Hooks* hooks_ = nullptr;
  simcore::Observer* observer_ = nullptr;
  simcore::InstructionLog* log_ = nullptr;
  // The observer WantsRegisters; the instruction told last, whose writes are not told yet.
  bool report_registers_ = false, reported_pending_ = false;
  uint64_t reported_pc_ = 0;
  uint32_t reported_word_ = 0;
};

inline uint64_t Cpu::BranchTarget(mips::Flow flow, uint64_t pc, uint32_t word) const {
  switch (flow) {
    case mips::Flow::kBranch:
    case mips::Flow::kJump:
      return InstructionInfo{.flow = flow}.Target(pc, word);
    case mips::Flow::kJumpRegister:
      return gpr(Rs(word));
    case mips::Flow::kEret:
      return (status_ & kStatusErl) ? error_epc_ : epc_;
    default:
      return 0;
  }
}

inline bool Cpu::BranchTaken(Op op, uint32_t word) const {
  const uint64_t rs = gpr(Rs(word)), rt = gpr(Rt(word));
  const bool fcc = fpu_.condition();
  // Every operation of the table: BranchCondition is true for all but the conditional branches.
  switch (op) {
#define CITCAT_MIPS_BRANCH_CONDITION(name, ...) \
  case Op::k##name:                             \
    return BranchCondition<Op::k##name>(rs, rt, fcc);
    CITCAT_MIPS_OPS(CITCAT_MIPS_BRANCH_CONDITION)
#undef CITCAT_MIPS_BRANCH_CONDITION
    default:
      return true;
  }
}

}  // namespace citcat::mips

#endif  // CITCAT_SIMCORE_MIPS_CPU_H_
