// Bochs (tests/oracles/bochs.h) as an oracle of the i486 core in the ROM lock step
// (x86_rom_lockstep.h): its trace as oracle states, and its memory against the core's.
#ifndef CITCAT_TESTS_SIMCORE_X86_BOCHS_SYSTEM_H_
#define CITCAT_TESTS_SIMCORE_X86_BOCHS_SYSTEM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tests/oracles/bochs.h"
#include "tests/simcore/x86_rom_lockstep.h"

namespace citcat::x86::testing {

// The states before the instructions Bochs traced: EIP, the general registers, EFLAGS and CS.
std::vector<OracleState> BochsStates(const oracle::BochsRun& run);

// "" when the core's memory from `address` holds `theirs` (a Bochs dump), else the first dword
// that differs: "the dword at 8fffc is 0x10046, Bochs 0x46".
std::string FirstMemoryDifference(PcBus& bus, uint32_t address, const std::vector<uint8_t>& theirs);

}  // namespace citcat::x86::testing

#endif  // CITCAT_TESTS_SIMCORE_X86_BOCHS_SYSTEM_H_
