// The i486 core in lock step with a full-system oracle (QEMU, Bochs) on a bare-metal test ROM of
// x86_roms/, from the reset vector: the oracle's log gives the state before every instruction it
// ran, and the core, run one step at a time from RESET on the same ROM, must show the same state
// before each, and what the manual leaves undefined is taken from the oracle (RunLockstep).
#ifndef CITCAT_TESTS_SIMCORE_X86_ROM_LOCKSTEP_H_
#define CITCAT_TESTS_SIMCORE_X86_ROM_LOCKSTEP_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "simcore/x86/cpu.h"
#include "tests/simcore/pc_bus.h"

namespace citcat::x86::testing {

// The state before one instruction, as an oracle logs it.
struct OracleState {
  uint32_t gpr[8] = {};  // EAX ECX EDX EBX ESP EBP ESI EDI
  uint32_t eip = 0, eflags = 0;
  // QEMU logs the rest at every instruction; Bochs's trace shows CS alone (the rest is compared
  // once, where the ROM stops).
  bool has_system = false;
  int cpl = 0;
  uint16_t selector[8] = {};  // ES, CS, SS, DS, FS, GS, LDTR, TR
  uint32_t base[8] = {};
  uint32_t cr0 = 0, cr2 = 0, cr3 = 0, dr6 = 0, dr7 = 0;
};

struct Lockstep {
  std::string error;    // the run could not be compared: the oracle ran nothing, the core stopped
  size_t compared = 0;  // instructions before which both agreed
  std::string difference;  // "EIP is 0x..., QEMU 0x..." before the first one they do not; or ""
  size_t index = 0;        // that instruction's place in the oracle's log
  uint32_t eip = 0;        // and the oracle's CS:EIP before it
  uint16_t cs = 0;
  std::map<std::string, uint32_t> symbols;  // the ROM's labels
};

struct LockstepOptions {
  std::string oracle;  // its name in differences: "QEMU", "Bochs"
  // Writes to the ROM land (QEMU's isapc machine backs its firmware with RAM); else they are lost,
  // as on a PC and on Bochs.
  bool rom_writable = false;
  // The core also runs the oracle's last instruction, and `at_end` then sees the core and its
  // memory (when every state agreed).
  bool run_last = false;
  std::function<void(Cpu&, PcBus&)> at_end;
  // QEMU logs a record of its own for the check that ends a REP string instruction at ECX = 0,
  // after the last iteration: such records are not instructions of the core's.
  bool rep_count_check_records = false;
  // Bytes written over the ROM's image once it is loaded (a generated part of the program).
  uint32_t patch_address = 0;
  std::vector<uint8_t> patch;
};

// Runs `rom` (the path of the ROM's ELF, linked at its addresses) on the core against `oracle`'s
// states. Where the manual leaves a value undefined, the oracle's is taken: flags an instruction
// leaves undefined take the oracle's values until defined again; so do bits 19:16 of a 32-bit LAR's
// result ("AND 00FxFF00H"), a 16-bit BSWAP's register, and after a task switch into a 16-bit TSS
// the upper halves of the general registers ("modified and not maintained", Intel SDM vol. 3,
// 7.6).
Lockstep RunLockstep(const std::string& rom, const std::vector<OracleState>& oracle,
                     const LockstepOptions& options);

// "" when the core and the oracle agreed over the whole run of the ROM `name`, else where they
// first differ (or why the run could not be compared).
std::string Describe(const std::string& name, const Lockstep& run);

// "" when the first difference of `run` is register `what` holding `ours` on the core and
// `theirs` on the oracle (labels of the ROM or numbers "0x..."), after more than 20 instructions
// agreed; else what differs.
std::string FirstDifferenceIs(const Lockstep& run, const std::string& oracle,
                              const std::string& what, const std::string& ours,
                              const std::string& theirs);

}  // namespace citcat::x86::testing

#endif  // CITCAT_TESTS_SIMCORE_X86_ROM_LOCKSTEP_H_
