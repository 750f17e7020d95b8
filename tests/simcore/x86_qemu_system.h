// Full-system QEMU as an oracle of the i486 core: `qemu-system-i386 -M isapc -cpu 486` runs a
// 64 KiB ROM from the reset vector, deterministic (-icount shift=0,sleep=off), logging the state
// before every instruction (-singlestep -d cpu,exec,nochain); the ROM ends the run by a write to
// the isa-debug-exit port F4h (end_of_run in x86_roms/end.inc). See ../shared/ORACLES.md for what
// QEMU's log shows. isapc backs its firmware with RAM: writes to the ROM land.
#ifndef CITCAT_TESTS_SIMCORE_X86_QEMU_SYSTEM_H_
#define CITCAT_TESTS_SIMCORE_X86_QEMU_SYSTEM_H_

#include <string>
#include <vector>

#include "tests/simcore/x86_rom_lockstep.h"

namespace citcat::x86::testing {

// Runs `rom` (a raw 64 KiB image) under `qemu` and returns the states before the instructions it
// ran, in order (records QEMU logged but did not run left out). `work_dir` holds the log.
std::vector<OracleState> RunQemuSystem(const std::string& qemu, const std::string& rom,
                                       const std::string& work_dir);

}  // namespace citcat::x86::testing

#endif  // CITCAT_TESTS_SIMCORE_X86_QEMU_SYSTEM_H_
