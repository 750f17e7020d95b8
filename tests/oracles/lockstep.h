// Lock-step comparison of a CPU model against a QEMU trace.
//
// How a core plugs in (the integer core's runner does this; see also qemu_fpu_oracle_test.cc):
//   1. image = LoadElfFile(path); copy every image.segments[i] (data, then zeros up to memsz) into
//      guest memory at its vaddr. Map a zeroed stack of a few pages below trace[0].gpr[29] (the
//      programs in guest/tests never read argc/argv/auxv from it).
//   2. run = RunQemu({.target = ..., .binary = path}); trace = run.trace.
//   3. Initialise the core from trace[0]: PC (== image.entry), all GPRs, HI/LO, Status.FR =
//      trace[0].fr, and the FPU with SeedFpu(trace[0], fpu).
//   4. For i = 0 .. trace.size() - 2:
//        - if (auto d = DiffStates(trace[i], core_snapshot); !d.empty()) fail with d and i;
//        - if the instruction at core PC is SYSCALL, do not execute it: QEMU's Linux emulation did
//          the work. Load GPRs (v0, a3, ...) and PC from trace[i + 1] and continue;
//        - otherwise step the core by exactly one instruction (a branch and its delay slot are
//          two steps, as in the trace; a nullified likely-branch delay slot is not logged).
//   5. The last state is the one before the exit syscall.
#ifndef CITCAT_TESTS_ORACLES_LOCKSTEP_H_
#define CITCAT_TESTS_ORACLES_LOCKSTEP_H_

#include <array>
#include <cstdint>
#include <string>

#include "simcore/mips/fpu.h"
#include "tests/oracles/qemu_trace.h"

namespace citcat::oracle {

// The architectural state a core exposes for comparison.
struct ArchSnapshot {
  uint64_t pc = 0;
  std::array<uint64_t, 32> gpr{};
  uint64_t hi = 0;
  uint64_t lo = 0;
  bool has_fpu = false;
  bool fr = false;
  uint32_t fcr31 = 0;
  std::array<uint64_t, 32> fgr{};  // raw FGRs, as mips::Fpu::raw_fgr()
};

struct DiffOptions {
  bool compare_gprs = true;
  bool compare_hilo = true;
  bool compare_fpu = true;  // FPRs and FCR31, when both sides have an FPU
};

ArchSnapshot SnapshotFromQemu(const QemuState& state);
// The FPU part of a snapshot, from an Fpu.
void FillFpu(const mips::Fpu& fpu, ArchSnapshot* snapshot);
// Loads an Fpu with QEMU's view: FR, FPRs and FCR31 (R4400-writable bits). FCR0 is not loaded.
void SeedFpu(const QemuState& state, mips::Fpu& fpu);

// "" if `actual` matches `expected`; otherwise one line per difference. With FR=0 only the
// visible low halves of the FGRs are compared; with a 32-bit QEMU target only the low 32 bits of
// GPRs, HI and LO.
std::string DiffStates(const QemuState& expected, const ArchSnapshot& actual,
                       const DiffOptions& options = {});

}  // namespace citcat::oracle

#endif  // CITCAT_TESTS_ORACLES_LOCKSTEP_H_
