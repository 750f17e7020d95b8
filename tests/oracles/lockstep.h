// Lock-step comparison of a CPU model against a QEMU trace.
//
// How a core plugs in (qemu_core_lockstep_test.cc does exactly this for mips::Cpu):
//   1. image = machine::LoadElfFile(path); copy every image.segments[i] (data, then zeros up to
//   memsz) into
//      guest memory at its vaddr (there: two wired 16 MB TLB page pairs, user mode). The stack is
//      the region around trace[0].gpr[29]; the guest programs never read argc/argv from it except
//      fp_trap, which is not run in lock-step.
//   2. run = RunQemu({.target = ..., .binary = path}); trace = run.trace.
//   3. Initialise the core from trace[0]: PC (== image.entry), all GPRs, HI/LO, Status.FR =
//      trace[0].fr (UX for 64-bit targets, CU1, KSU = user), and the FPU with SeedFpu().
//   4. For i = 0 .. trace.size() - 1:
//        - if trace[i].nullified_delay_slot(), skip it (the core already skipped the slot);
//        - if (auto d = DiffStates(trace[i], snapshot_of_core); !d.empty()) fail with d and i;
//        - if the instruction is SYSCALL, do not execute it: QEMU's Linux emulation did the work.
//          Load the GPRs and PC from trace[i + 1];
//        - if it is an FPU instruction on which the R4400 and QEMU differ by design (the Fpu,
//          seeded from trace[i], disagrees with trace[i + 1]; fpu_oracle.h proves each case is a
//          documented one), load the FPU and PC from trace[i + 1];
//        - otherwise step the core by one instruction; it must take no exception.
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
