#include "tests/oracles/lockstep.h"

#include "absl/strings/str_format.h"

namespace citcat::oracle {
namespace {

constexpr const char* kGprNames[32] = {"zero", "at", "v0",  "v1",  "a0",  "a1",  "a2",  "a3",
                                       "r8",   "r9", "r10", "r11", "r12", "r13", "r14", "r15",
                                       "s0",   "s1", "s2",  "s3",  "s4",  "s5",  "s6",  "s7",
                                       "t8",   "t9", "k0",  "k1",  "gp",  "sp",  "s8",  "ra"};

}  // namespace

ArchSnapshot SnapshotFromQemu(const QemuState& state) {
  ArchSnapshot s;
  s.pc = state.pc;
  s.gpr = state.gpr;
  s.hi = state.hi;
  s.lo = state.lo;
  s.has_fpu = state.has_fpu;
  s.fr = state.fr;
  s.fcr31 = state.fcr31;
  s.fgr = state.fgr;
  return s;
}

void FillFpu(const mips::Fpu& fpu, ArchSnapshot* snapshot) {
  snapshot->has_fpu = true;
  snapshot->fr = fpu.fr();
  snapshot->fcr31 = fpu.fcsr();
  snapshot->fgr = fpu.raw_fgrs();
}

void SeedFpu(const QemuState& state, mips::Fpu& fpu) {
  fpu.set_fr(state.fr);
  for (int i = 0; i < 32; ++i) fpu.set_raw_fgr(i, state.fgr[i]);
  fpu.set_fcsr(state.fcr31);
}

std::string DiffStates(const QemuState& expected, const ArchSnapshot& actual,
                       const DiffOptions& options) {
  std::string out;
  const uint64_t mask = expected.gpr64 ? ~uint64_t{0} : 0xFFFFFFFFull;
  auto check = [&](const char* what, uint64_t want, uint64_t got, uint64_t m) {
    if ((want & m) != (got & m)) {
      absl::StrAppendFormat(&out, "%s: qemu %016x, model %016x\n", what, want & m, got & m);
    }
  };
  check("pc", expected.pc, actual.pc, mask);
  if (options.compare_gprs) {
    for (int i = 1; i < 32; ++i) check(kGprNames[i], expected.gpr[i], actual.gpr[i], mask);
  }
  if (options.compare_hilo) {
    check("hi", expected.hi, actual.hi, mask);
    check("lo", expected.lo, actual.lo, mask);
  }
  if (options.compare_fpu && expected.has_fpu && actual.has_fpu) {
    if (expected.fr != actual.fr) {
      absl::StrAppendFormat(&out, "Status.FR: qemu %d, model %d\n", expected.fr, actual.fr);
    }
    check("fcr31", expected.fcr31, actual.fcr31, ~uint64_t{0});
    const uint64_t fmask = expected.fr ? ~uint64_t{0} : 0xFFFFFFFFull;
    for (int i = 0; i < 32; ++i) {
      const std::string name = absl::StrFormat("f%d", i);
      check(name.c_str(), expected.fgr[i], actual.fgr[i], fmask);
    }
  }
  return out;
}

}  // namespace citcat::oracle
