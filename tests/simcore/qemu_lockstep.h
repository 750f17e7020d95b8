// Lock-step comparison of the core in 64-bit mode against QEMU user mode
// (`qemu-mipsn32 -cpu R4000 -singlestep -d cpu`), which logs the full 64-bit register state
// before every translation block (one instruction, or a branch with its delay slot). Unicorn has
// no 64-bit MIPS, so this is the oracle for MIPS III's 64-bit operations.
//
// The program is a flat image at 0x10000000 (code, then data at `data_offset`); the harness
// wraps it in an n32 ELF for QEMU and runs our core in kernel mode with a TLB entry mapping the
// same addresses (16 MB pages, cached). Execution ends at the exit SYSCALL.
//
// The R4400 leaves 32-bit operations on operands that are not sign-extended 32-bit values
// UNPREDICTABLE (ADDU, SRA, MULT, ...); QEMU computes some of them from all 64 bits. When the two
// disagree on such an instruction the harness takes QEMU's result and counts it separately.
#ifndef CITCAT_TESTS_SIMCORE_QEMU_LOCKSTEP_H_
#define CITCAT_TESTS_SIMCORE_QEMU_LOCKSTEP_H_

#include <cstdint>
#include <string>
#include <vector>

namespace citcat::mips {

struct QemuLockstepResult {
  uint64_t compared = 0;       // boundaries where every GPR, HI, LO and the PC matched
  uint64_t unpredictable = 0;  // UNPREDICTABLE 32-bit operations where QEMU's result was taken
  std::string mismatch;        // empty if none
  std::string error;           // QEMU could not run
};

inline constexpr uint64_t kQemuImageBase = 0x10000000;

// `image` is loaded at kQemuImageBase; execution starts there.
QemuLockstepResult RunAgainstQemu(const std::vector<uint8_t>& image, const std::string& work_dir);

bool QemuAvailable();

}  // namespace citcat::mips

#endif  // CITCAT_TESTS_SIMCORE_QEMU_LOCKSTEP_H_
