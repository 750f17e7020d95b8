// Lock-step comparison of the R4400 core against Unicorn (QEMU's MIPS32 4Kc, either byte order).
//
// Unicorn calls a code hook before every instruction it executes (delay slots included); in the
// hook we step our core over the instruction Unicorn executed last and compare PC, $1..$31,
// HI and LO. Unicorn never vectors exceptions: it reports them to an interrupt hook, where our
// core must take the same exception; both then resume after the faulting instruction. Memory is
// compared at the end of each run, through our D-cache (the CPU's view).
//
// Unicorn also calls the code hook for the nullified delay slot of an untaken branch-likely;
// that call is skipped.
//
// Known oracle differences handled here (each proven by its own test):
// - DIV/DIVU by zero: QEMU divides by 1; the R4400 divider gives other values. After such a
//   division our HI/LO are copied into Unicorn.
#ifndef CITCAT_TESTS_SIMCORE_UNICORN_LOCKSTEP_H_
#define CITCAT_TESTS_SIMCORE_UNICORN_LOCKSTEP_H_

#include <unicorn/unicorn.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "simcore/mips/cpu.h"
#include "simcore/ram_bus.h"

namespace citcat::mips {

class UnicornLockstep {
 public:
  static constexpr uint64_t kRamBytes = 8 << 20;

  explicit UnicornLockstep(const CpuConfig& config = {});
  ~UnicornLockstep();
  UnicornLockstep(const UnicornLockstep&) = delete;
  UnicornLockstep& operator=(const UnicornLockstep&) = delete;

  // Copies bytes to physical memory on both sides.
  void Write(uint64_t paddr, std::span<const uint8_t> bytes);
  // Instruction words in the CPU's byte order.
  void WriteWords(uint64_t paddr, std::span<const uint32_t> words);
  // Sets GPR i on both sides (the value as a 32-bit quantity, sign-extended for our core).
  void SetGpr(int i, uint32_t value);

  struct Result {
    uint64_t compared = 0;     // instruction boundaries at which the full state matched
    uint64_t exceptions = 0;   // exceptions both sides took
    uint64_t div_by_zero = 0;  // divisions whose HI/LO were copied over
    std::string mismatch;      // empty when everything matched
  };

  // Runs from `start` (a kseg0/kseg1 address) until the PC reaches `end`, at most `limit`
  // instructions.
  Result Run(uint64_t start, uint64_t end, uint64_t limit);

  // Compares physical memory [paddr, paddr + n) as the CPU sees it (via kseg0 and our D-cache).
  std::string CompareMemory(uint64_t paddr, uint64_t n);

  Cpu& cpu() { return *cpu_; }
  uc_engine* uc() { return uc_; }

 private:
  static void OnCode(uc_engine* uc, uint64_t address, uint32_t size, void* self);
  static void OnInterrupt(uc_engine* uc, uint32_t intno, void* self);
  bool StepOurs();  // steps over one instruction; false (and mismatch set) on divergence
  bool Compare(uint64_t address);

  std::string RecentInstructions() const;
  uint32_t CodeWord(uint64_t vaddr) const;

  simcore::RamBus bus_;
  uint64_t recent_[8] = {};  // PCs of the last instructions our core executed
  uint64_t recent_count_ = 0;
  std::unique_ptr<Cpu> cpu_;
  uc_engine* uc_ = nullptr;
  uc_hook code_hook_ = 0, intr_hook_ = 0;
  bool stepped_first_ = false;
  // Unicorn calls the code hook for the nullified delay slot of an untaken branch-likely; that
  // call is skipped (our core never visits the slot).
  uint64_t nullified_slot_ = ~uint64_t{0};
  bool skip_step_ = false;
  int pending_interrupt_ = -1;
  uint64_t limit_ = 0;
  Result result_;
};

}  // namespace citcat::mips

#endif  // CITCAT_TESTS_SIMCORE_UNICORN_LOCKSTEP_H_
