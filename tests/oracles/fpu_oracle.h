// Checks mips::Fpu against a QEMU trace, independently of any integer core: every FPU instruction
// QEMU executed is replayed on an Fpu loaded with QEMU's state before it, and the Fpu's state
// after it is compared with QEMU's next state.
//
// Checked: COP1 computational instructions (FPRs and FCR31), MTC1/DMTC1/CTC1 (FPRs, FCR31),
// MFC1/DMFC1/CFC1 (the destination GPR), BC1F/BC1T/BC1FL/BC1TL (the path taken, including
// delay-slot nullification). Loads and stores of FPRs are counted but need memory, which only a
// full core lock-step has.
//
// Where the R4400 and QEMU's R4000 model are known to differ, the difference is classified under
// a named category instead of being a mismatch; each category is documented in
// docs/machines/r4400-fpu.md, and the classification is strict (the rest of the state must match).
#ifndef CITCAT_TESTS_ORACLES_FPU_ORACLE_H_
#define CITCAT_TESTS_ORACLES_FPU_ORACLE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "machine/elf_loader.h"
#include "tests/oracles/qemu_trace.h"

namespace citcat::oracle {

struct FpuOracleReport {
  size_t states = 0;            // instructions in the trace
  size_t fpu_instructions = 0;  // COP1 instructions and FPR loads/stores seen
  size_t compared = 0;          // replayed and compared with the next state
  size_t exact = 0;             // of those, identical to QEMU
  size_t unchecked = 0;         // FPR loads/stores (need memory) or no following state
  std::map<std::string, size_t> known_differences;  // category -> count
  std::map<std::string, size_t> by_mnemonic;        // compared instructions per mnemonic
  // Unimplemented Operations (denormals, underflow) where QEMU's value and flags were checked
  // against the IEEE result computed on the host.
  size_t ieee_verified = 0;
  size_t mismatch_count = 0;
  std::vector<std::string> mismatches;  // the first few, with full context

  std::string Summary() const;
};

FpuOracleReport CheckFpuAgainstQemu(const QemuTrace& trace, const machine::ElfImage& image);

// The mnemonic of a COP1 instruction ("add.d", "c.ult.s", "dmtc1", "bc1tl", ...), or "" if the
// word is not a COP1/LWC1/LDC1/SWC1/SDC1 instruction.
std::string Cop1Mnemonic(uint32_t insn);

}  // namespace citcat::oracle

#endif  // CITCAT_TESTS_ORACLES_FPU_ORACLE_H_
