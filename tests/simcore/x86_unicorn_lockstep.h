// The i486 core and Unicorn (QEMU's x86 TCG) in lock step, in one Unicorn run: a UC_HOOK_CODE
// callback, called before each instruction Unicorn runs, steps the core through the instruction
// Unicorn has just run and compares the two states. Compared after every instruction (every REP
// iteration): EIP, the eight general registers, the flags the instruction defines (its undefined
// ones, from the decoder's table, are copied from the core to Unicorn), every byte the core wrote
// (its bus writes against Unicorn's RAM, which Unicorn keeps in a buffer of ours) and, after x87
// instructions when asked, the x87 stack, control and status words. The whole RAM is compared
// every kRamCheckInterval instructions and at the end, for what only Unicorn wrote. A mismatch
// stops the run and is reported with the instruction count, EIP, what differs and the last
// instructions.
//
// Unicorn's ways worked around here (docs/machines/i486-core.md, "Checks"):
// - With a UC_HOOK_MEM_WRITE hook installed, a nested ENTER copies wrong frame pointers and a
//   double shift of memory sets wrong flags: the run has no memory hook.
// - EFLAGS written from a code hook are lost when the previous instruction of the same
//   translation block set the flags: to copy undefined flags, the run stops and restarts.
// - A REP string instruction that ends with (E)CX = 0 comes to the code hook once more (QEMU
//   runs it again to see the count is zero); the core has gone on, so that visit is not a step.
// - Unicorn never delivers an exception (UC_HOOK_INTR gets its vector) and reports every later
//   fault as a double fault: a fault ends the run once both sides raised it.
#ifndef CITCAT_TESTS_SIMCORE_X86_UNICORN_LOCKSTEP_H_
#define CITCAT_TESTS_SIMCORE_X86_UNICORN_LOCKSTEP_H_

#include <unicorn/unicorn.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "simcore/bus.h"
#include "simcore/x86/cpu.h"

namespace citcat::x86::testing {

// RAM from physical 0 for the core, recording where each write went.
class RecordingBus final : public simcore::Bus {
 public:
  explicit RecordingBus(size_t bytes) : ram_(bytes, 0) {}
  void Read(const cat::BusRecord& r, std::span<uint8_t> data) override;
  void Write(const cat::BusRecord& r) override;
  std::span<uint8_t> ram() { return ram_; }

  struct Span {
    uint32_t address;
    uint32_t size;
  };
  std::vector<Span>& writes() { return writes_; }

 private:
  std::vector<uint8_t> ram_;
  std::vector<Span> writes_;
};

class UnicornLockstep {
 public:
  static constexpr uint64_t kRamCheckInterval = 1 << 16;
  enum class Mode { kFlat32, kReal16 };
  // `ram_bytes` of RAM at physical 0 on both sides. Flat 32-bit code runs at CPL 0.
  UnicornLockstep(Mode mode, uint32_t ram_bytes);
  ~UnicornLockstep();
  UnicornLockstep(const UnicornLockstep&) = delete;
  UnicornLockstep& operator=(const UnicornLockstep&) = delete;

  // The same state on both sides.
  void Load(uint32_t address, std::span<const uint8_t> bytes);
  void SetReg(int r, uint32_t value);
  void SetEflags(uint32_t value);
  // Real mode: CS, then DS = ES = FS = GS, then SS.
  void SetRealSegments(uint16_t cs, uint16_t ds, uint16_t ss);
  // Also compare the x87 state after each x87 instruction (both start from FNINIT's state).
  void CompareX87();

  struct Result {
    uint64_t compared = 0;      // instructions (REP iterations) compared
    uint64_t x87_compared = 0;  // x87 instructions among them, with the x87 state (CompareX87)
    int fault = -1;             // the vector of the fault both raised that ended the run, if any
    bool halted = false;        // the run ended at a HLT
    std::string mismatch;       // "" when the two agreed
  };
  // Runs from `eip` until EIP reaches `end`, a HLT, a fault, `max` instructions or a mismatch.
  Result Run(uint32_t eip, uint32_t end, uint64_t max);

  Cpu& cpu() { return cpu_; }
  std::span<uint8_t> core_ram() { return bus_.ram(); }
  std::span<uint8_t> unicorn_ram() { return uc_ram_; }

 private:
  static void OnCode(uc_engine* uc, uint64_t address, uint32_t size, void* self);
  static void OnInterrupt(uc_engine* uc, uint32_t vector, void* self);
  void Code(uint32_t linear);
  // Steps the core through the instruction Unicorn ran; false (with mismatch_ set) if they differ.
  bool StepCore();
  void FaultOnCore(int vector);
  bool CompareState(bool compare_eip);
  bool CompareMemory();
  bool SameRam();
  bool CompareFpu();
  bool RepTail(uint32_t linear) const;
  void Fail(const std::string& what);
  std::string History() const;
  uint32_t UcReg(uc_x86_reg r) const;
  uint32_t Linear() const { return cpu_.segment(kCs).base + cpu_.eip(); }

  const Mode mode_;
  RecordingBus bus_;
  Cpu cpu_;
  std::vector<uint8_t> uc_ram_;
  uc_engine* uc_ = nullptr;
  bool compare_x87_ = false;

  // The run in progress.
  uint64_t compared_ = 0, x87_compared_ = 0, max_ = 0;
  std::string mismatch_;
  int uc_vector_ = -1;       // reported by UC_HOOK_INTR since the core last stepped
  bool resume_ = false;      // Unicorn restarted at the instruction the core is at: no step
  bool core_ahead_ = false;  // the core finished a REP that Unicorn visits once more
  bool sync_flags_ = false;  // stopped to copy the core's EFLAGS to Unicorn
  bool stopped_ = false;     // stopped from the code hook (before the instruction ran)
  int fault_ = -1;
  // The last instructions the core ran: linear address and bytes.
  struct Past {
    uint32_t linear = 0;
    std::array<uint8_t, kMaxInstructionLength> bytes{};
  };
  std::array<Past, 12> past_{};
  uint64_t steps_ = 0;
};

// The line a differential test prints for the closing figures, read from the test log:
// "COMPARED <oracle> <what>: <n> instructions (<detail>)".
void PrintCompared(const std::string& oracle, const std::string& what, uint64_t instructions,
                   const std::string& detail);

}  // namespace citcat::x86::testing

#endif  // CITCAT_TESTS_SIMCORE_X86_UNICORN_LOCKSTEP_H_
