// Full-system QEMU as a kernel-mode oracle: `qemu-system-mips64 -M mipssim -cpu R4000` runs a
// bare-metal ROM image from the reset vector (0xBFC00000, physical 0x1FC00000) with 64 MB of RAM
// at physical 0, interrupts never raised (no devices are touched), deterministic
// (`-icount shift=0,sleep=off`), logging the state before every instruction and every exception
// entry (`-singlestep -d cpu,exec,int,nochain`).
//
// The log (about 1 KB per instruction) goes through a named pipe straight into QemuLogParser, so
// a run of millions of instructions needs no disk space and the consumer works while QEMU runs.
//
// A program ends itself with the UHI exit call of QEMU's semihosting: t9 = 1, a0 = 0, then
// `sdbbp 1` (kQemuExitWord). The last state logged is the one before that instruction.
#ifndef CITCAT_TESTS_ORACLES_QEMU_SYSTEM_H_
#define CITCAT_TESTS_ORACLES_QEMU_SYSTEM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/oracles/qemu_trace.h"

namespace citcat::oracle {

inline constexpr uint32_t kQemuExitWord = 0x7000007F;  // sdbbp 1: a UHI call on QEMU
inline constexpr uint64_t kMipssimRomBase = 0x1FC00000;
inline constexpr uint64_t kMipssimRomBytes = 4 << 20;
inline constexpr uint64_t kMipssimRamBytes = 64 << 20;

struct QemuSystemOptions {
  std::vector<uint8_t> rom;  // at most kMipssimRomBytes
  std::string work_dir;      // holds the ROM file and the log pipe
};

struct QemuSystemRun {
  uint64_t states = 0;   // states handed to the sink
  bool stopped = false;  // the sink stopped the run (QEMU was killed)
  int exit_code = -1;    // QEMU's exit status when it ended on its own
  std::string errors;    // QEMU's stderr
};

// Full path of qemu-system-mips64 if it is on PATH, else empty.
std::string FindQemuSystemMips();

// Runs the ROM under QEMU and hands every executed state to `sink` in order; a sink that returns
// false ends the run. Fails if QEMU cannot be started or its log cannot be parsed.
absl::StatusOr<QemuSystemRun> RunQemuSystem(const QemuSystemOptions& options,
                                            const QemuLogParser::Sink& sink);

}  // namespace citcat::oracle

#endif  // CITCAT_TESTS_ORACLES_QEMU_SYSTEM_H_
