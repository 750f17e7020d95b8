// Lock-step of the R4400 core (mips::Cpu) against full-system QEMU in kernel mode, from the reset
// vector. Both run the same ROM image (qemu_system.h); before every instruction QEMU executed the
// core's PC, GPRs, HI/LO, Status, Cause and EPC must be QEMU's, and every exception entry must be
// taken by both at the same instruction with the same BadVAddr. Registers QEMU does not log
// (EntryHi, EntryLo, Index, PageMask, Context, BadVAddr, ErrorEPC, ...) are checked by the test
// programs copying them into GPRs.
//
// The core's machine: 64 MB of RAM at physical 0 and the ROM at 0x1FC00000 (writes to it are
// dropped, as on QEMU's mipssim). QEMU's caches are not modelled: programs must not alias one
// physical line through a cached and an uncached address.
//
// Where QEMU is not an R4400 the harness follows QEMU and says so
// (docs/machines/r4400-core.md, "Checking against full-system QEMU"):
//   - Random: QEMU draws TLBWR's index and MFC0 Random from a pseudo-random sequence
//     (QemuRandom); the core's Random is loaded with QEMU's value before each such instruction.
//   - Cause.CE is undefined after exceptions other than Coprocessor Unusable: it is not compared
//     then, and an MFC0 of Cause takes QEMU's CE bits.
//   - Context's and XContext's BadVPN2 and EntryHi's VPN2 are undefined after an address error;
//     QEMU sets them as for a TLB miss when the address is outside every segment (not when it is
//     misaligned), and so does the harness to the core's copies.
#ifndef CITCAT_TESTS_ORACLES_KERNEL_LOCKSTEP_H_
#define CITCAT_TESTS_ORACLES_KERNEL_LOCKSTEP_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace citcat::oracle {

// QEMU 7.2's Random: the C standard's example linear congruential generator, never the same
// index twice in a row, one draw per TLBWR or MFC0 Random (mips::Cpu counts down instead).
class QemuRandom {
 public:
  // The value the next draw returns, without drawing.
  uint32_t Peek(uint32_t wired) const;
  // Draws: the value Peek returned.
  uint32_t Next(uint32_t wired);

 private:
  uint32_t Draw(uint32_t wired, uint32_t* seed, uint32_t* prev) const;
  uint32_t seed_ = 1;
  uint32_t prev_ = 0;
};

struct KernelLockstepOptions {
  std::vector<uint8_t> rom;
  std::string work_dir;
  uint64_t max_states = 2'000'000;  // a runaway program fails instead of running forever
  // For the self-test: after comparing state `corrupt_at`, flip a bit of the core's GPR 16.
  uint64_t corrupt_at = ~uint64_t{0};
};

struct KernelLockstepResult {
  uint64_t compared = 0;    // states where PC, GPRs, HI/LO, Status, Cause and EPC matched
  uint64_t exceptions = 0;  // exception entries both took identically
  std::array<uint64_t, 32> by_code{};  // exception entries by ExcCode
  uint64_t refills = 0;                // of them, through the TLB refill vector (0x000)
  uint64_t xtlb_refills = 0;           // through the XTLB refill vector (0x080)
  uint64_t random_draws = 0;           // TLBWR / MFC0 Random given QEMU's Random
  uint64_t nullified = 0;              // nullified branch-likely delay slots QEMU logged
  // Undefined R4400 state given QEMU's value: MFC0 Cause's CE field, and Context, XContext and
  // EntryHi after an address error.
  uint64_t undefined_from_qemu = 0;
  std::string failure;  // the first difference, with context; empty if none
};

// Runs the ROM on both and compares. A failure to run QEMU is reported in `failure` too.
KernelLockstepResult RunKernelLockstep(const KernelLockstepOptions& options);

}  // namespace citcat::oracle

#endif  // CITCAT_TESTS_ORACLES_KERNEL_LOCKSTEP_H_
