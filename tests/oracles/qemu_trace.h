// QEMU user-mode as an instruction-by-instruction oracle for MIPS code.
//
// `qemu-mipsn32 -cpu R4000 -singlestep -d cpu,fpu,nochain -D log prog` (likewise qemu-mips64 and
// qemu-mips) writes the architectural state before every executed instruction. QemuTrace parses
// that log into one QemuState per instruction: trace[i] is the state before the i-th executed
// instruction, so the effect of instruction i is the step from trace[i] to trace[i + 1]. The last
// instruction (the exit syscall, or the one that killed the process) has no following state.
//
// A not-taken branch-likely shows its nullified delay slot as a state; see nullified_delay_slot().
//
// Full-system QEMU (`-d cpu,exec,int,nochain`, see qemu_system.h) adds two things the parser
// understands: an exception entry (`mips_cpu_do_interrupt: PC ... EPC ... cause N` and its
// `S .. C .. A .. D ..` line) is attached to the state that follows it, and a state followed by
// `Stopped execution of TB chain before` was not executed (icount ended the slice) and is dropped.
//
// A syscall is executed by QEMU's Linux emulation: the step across a `syscall` instruction changes
// v0/a3 (and memory) in ways no CPU model can reproduce; take them from the next state.
#ifndef CITCAT_TESTS_ORACLES_QEMU_TRACE_H_
#define CITCAT_TESTS_ORACLES_QEMU_TRACE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace citcat::oracle {

// An exception entry as `-d int` logs it: the state after the switch to the handler.
struct QemuException {
  int qemu_code = 0;    // QEMU's EXCP_* number ("cause N")
  uint64_t vector = 0;  // the handler's PC
  uint64_t epc = 0;
  uint32_t status = 0;     // "S"
  uint32_t cause = 0;      // "C"
  uint64_t bad_vaddr = 0;  // "A": BadVAddr, which the per-instruction state does not show
};

struct QemuState {
  uint64_t pc = 0;
  uint64_t hi = 0;
  uint64_t lo = 0;
  std::array<uint64_t, 32> gpr{};  // 32-bit targets: the printed 32-bit value, zero-extended
  bool gpr64 = true;               // false for 32-bit targets (qemu-mips): compare low halves only
  uint32_t hflags = 0;             // QEMU's translation flags ("ds" field): delay slot etc.
  uint64_t btarget = 0;            // pending branch target
  uint32_t bcond = 0;              // pending branch condition (1 = taken)
  uint64_t cp0_status = 0;
  uint64_t cp0_cause = 0;
  uint64_t cp0_epc = 0;

  // An exception was entered between the previous state and this one (full-system logs only).
  bool exception_before = false;
  QemuException exception;

  bool has_fpu = false;  // a "CP1" block was present
  uint32_t fcr0 = 0;
  uint32_t fcr31 = 0;
  bool fr = false;  // Status.FR as QEMU saw it
  // The FPU registers in the layout of mips::Fpu::raw_fgr(): with FR=1 the 32 64-bit FGRs; with
  // FR=0 QEMU prints only even/odd pairs, so fgr[2n] and fgr[2n+1] hold the pair's low and high
  // words in their low halves and the (invisible) high halves are zero.
  std::array<uint64_t, 32> fgr{};

  // QEMU logs the delay slot of a not-taken branch-likely as a state of its own (at the branch
  // PC + 4) although the instruction is nullified: the next state is at PC + 4 with nothing
  // changed. A CPU model must not execute anything for such a state; skip it.
  bool nullified_delay_slot() const {
    return (hflags & kHflagBranchMask) == kHflagBranchLikely && bcond == 0;
  }
  // The instruction is a delay slot (taken or not).
  bool in_delay_slot() const { return (hflags & kHflagBranchMask) != 0; }
  static constexpr uint32_t kHflagBranchMask = 0x3800;    // MIPS_HFLAG_BMASK_BASE branch kinds
  static constexpr uint32_t kHflagBranchLikely = 0x1800;  // MIPS_HFLAG_BL

  // Architectural views, as mips::Fpu::ReadWord / ReadDouble give them.
  uint32_t FprWord(int reg) const { return static_cast<uint32_t>(fgr[reg & 31]); }
  uint64_t FprDouble(int reg) const {
    if (fr) return fgr[reg & 31];
    const int even = reg & 30;
    return (fgr[even + 1] << 32) | (fgr[even] & 0xFFFFFFFFull);
  }
};

// Parses a QEMU log incrementally, line by line, handing each completed state to a callback: for
// logs too large to keep (full-system runs log about 1 KB per instruction).
class QemuLogParser {
 public:
  // Called with each state once complete; returning false stops the parse (Line() then returns
  // a Cancelled status).
  using Sink = std::function<bool(const QemuState&)>;
  explicit QemuLogParser(Sink sink);
  ~QemuLogParser();
  QemuLogParser(const QemuLogParser&) = delete;
  QemuLogParser& operator=(const QemuLogParser&) = delete;

  // One line without its newline.
  absl::Status Line(std::string_view line);
  // The end of the log: completes the last state.
  absl::Status Finish();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

class QemuTrace {
 public:
  // Parses the text of a QEMU `-d cpu[,fpu]` log. Lines that belong to no state block (QEMU's own
  // messages) are ignored; a state block that is incomplete or malformed is an error naming the
  // line.
  static absl::StatusOr<QemuTrace> Parse(std::string_view log);
  static absl::StatusOr<QemuTrace> ParseFile(const std::string& path);

  size_t size() const { return states_.size(); }
  bool empty() const { return states_.empty(); }
  const QemuState& operator[](size_t i) const { return states_[i]; }
  const std::vector<QemuState>& states() const { return states_; }

 private:
  std::vector<QemuState> states_;
};

enum class QemuTarget {
  kMipsN32,  // qemu-mipsn32: n32 ABI, 64-bit registers, 32-bit addresses
  kMips64,   // qemu-mips64: n64 ABI
  kMips,     // qemu-mips: o32 ABI, 32-bit registers (no R4000 model; use e.g. -cpu 24Kf)
};

struct QemuRunOptions {
  QemuTarget target = QemuTarget::kMipsN32;
  std::string cpu = "R4000";
  std::string binary;
  std::vector<std::string> args;  // guest arguments
  // Where the log goes; empty = a temporary file that is deleted after parsing.
  std::string log_path;
};

struct QemuRun {
  int exit_code = -1;  // guest exit status, or -1 if it died from a signal
  int signal = 0;      // the signal that ended QEMU, if any
  std::string guest_stdout;
  QemuTrace trace;
};

// The qemu-user binary for a target ("qemu-mipsn32", ...).
const char* QemuBinaryName(QemuTarget target);
// Full path of the qemu-user binary if it is on PATH, else empty.
std::string FindQemu(QemuTarget target);
// Full path of an executable named `name` on PATH, else empty.
std::string FindOnPath(std::string_view name);

// Runs a guest under QEMU with per-instruction state logging and parses the log. Fails if QEMU
// cannot be started or the log cannot be parsed; a guest that exits non-zero or dies is reported
// in QemuRun, not as an error.
absl::StatusOr<QemuRun> RunQemu(const QemuRunOptions& options);

}  // namespace citcat::oracle

#endif  // CITCAT_TESTS_ORACLES_QEMU_TRACE_H_
