// Full lock-step of the R4400 core (mips::Cpu with its caches, TLB and Fpu) against QEMU user
// mode on the guest programs: before every instruction QEMU executed, PC, all GPRs, HI/LO, the
// FPU registers and FCR31 must be identical.
//
// The guest runs in user mode, as under Linux: two wired 16 MB page pairs map the program's 32 MB
// region and its stack's 32 MB region onto RAM; Status has CU1, UX (64-bit user ops and, for n64,
// 64-bit user addresses) and FR as QEMU reports them. SYSCALL is not executed: QEMU's Linux did
// that work, so the GPRs and PC are taken from the next state. FPU instructions where the R4400
// and QEMU's model differ by design (tests/oracles/fpu_oracle.h classifies them) are taken from
// QEMU as well and counted.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "absl/strings/str_format.h"
#include "machine/elf_loader.h"
#include "simcore/ram_bus.h"
#include "simcore/mips/cpu.h"
#include "simcore/mips/fpu.h"
#include "tests/oracles/fpu_oracle.h"
#include "tests/oracles/lockstep.h"
#include "tests/oracles/qemu_trace.h"

namespace citcat::oracle {
namespace {

#ifdef CITCAT_GUEST_TESTS_AVAILABLE

constexpr uint64_t kRegion = 32 << 20;  // one TLB entry: a pair of 16 MB pages
constexpr uint32_t kPageMask16M = 0x01FFE000;
constexpr uint32_t kSyscall = 0x0000000C;

std::string Guest(const std::string& name) {
  return std::string(CITCAT_GUEST_TEST_DIR) + "/" + name;
}

struct Program {
  const char* name;
  QemuTarget target;
  const char* cpu;
};
// ctest shows the parameter in each test's name: make it the program name.
void PrintTo(const Program& p, std::ostream* os) { *os << p.name; }

// EntryLo for a 16 MB page at `paddr`: cacheable noncoherent (C=3), dirty, valid, global.
uint64_t EntryLo(uint64_t paddr) {
  return ((paddr >> 12) << 6) | (3 << 3) | (1 << 2) | (1 << 1) | 1;
}

struct LockstepResult {
  size_t compared = 0;
  size_t syscalls = 0;
  size_t nullified = 0;
  size_t fpu_from_qemu = 0;
  std::string failure;
};

// `corrupt_at`: for the self-test, disturb the core's state after comparing that state.
LockstepResult RunLockstep(const QemuTrace& trace, const machine::ElfImage& image,
                           size_t corrupt_at = ~size_t{0}, int corrupt_fpr = -1) {
  LockstepResult result;
  const QemuState& first = trace[0];
  const uint64_t code_base = image.entry & ~(kRegion - 1);
  const uint64_t stack_base = first.gpr[29] & ~(kRegion - 1);
  simcore::RamBus bus(2 * kRegion);
  mips::Cpu cpu(bus);
  cpu.Reset();
  for (const machine::ElfSegment& seg : image.segments) {
    if (seg.vaddr < code_base || seg.vaddr + seg.memsz > code_base + kRegion) {
      result.failure = absl::StrFormat("segment at %x outside the mapped region", seg.vaddr);
      return result;
    }
    bus.Poke(seg.vaddr - code_base, seg.data);
  }
  cpu.tlb().Write(0, kPageMask16M, code_base, EntryLo(0), EntryLo(kRegion / 2));
  cpu.tlb().Write(1, kPageMask16M, stack_base, EntryLo(kRegion), EntryLo(kRegion + kRegion / 2));
  cpu.WriteCp0(mips::kCp0Wired, 2);
  cpu.FlushTranslations();
  const uint32_t status = mips::kStatusCu1 | (first.fr ? mips::kStatusFr : 0) |
                          (first.gpr64 ? mips::kStatusUx : 0) | (2u << mips::kStatusKsuShift);
  cpu.WriteCp0(mips::kCp0Status, status);
  for (int r = 1; r < 32; ++r) cpu.set_gpr(r, first.gpr[r]);
  cpu.set_hi(first.hi);
  cpu.set_lo(first.lo);
  SeedFpu(first, cpu.fpu());
  cpu.SetPc(first.pc);

  auto snapshot = [&] {
    ArchSnapshot s;
    s.pc = cpu.pc();
    for (int r = 0; r < 32; ++r) s.gpr[r] = cpu.gpr(r);
    s.hi = cpu.hi();
    s.lo = cpu.lo();
    FillFpu(cpu.fpu(), &s);
    return s;
  };

  for (size_t i = 0; i < trace.size(); ++i) {
    const QemuState& expected = trace[i];
    if (expected.nullified_delay_slot()) {  // the core skipped it with the branch
      ++result.nullified;
      continue;
    }
    const std::string diff = DiffStates(expected, snapshot());
    if (!diff.empty()) {
      const QemuState& prev = trace[i > 0 ? i - 1 : 0];
      const auto prev_insn = image.ReadWord32(prev.pc);
      result.failure =
          absl::StrFormat("state %d (pc %016x), after the instruction at %016x (%08x):\n%s", i,
                          expected.pc, prev.pc, prev_insn.value_or(0), diff);
      return result;
    }
    ++result.compared;
    if (i == corrupt_at) {
      if (corrupt_fpr >= 0) {
        cpu.fpu().set_raw_fgr(corrupt_fpr, cpu.fpu().raw_fgr(corrupt_fpr) ^ 1);
      } else {
        cpu.set_gpr(28, cpu.gpr(28) ^ 0x100);
      }
    }
    if (i + 1 >= trace.size()) break;  // the exit syscall
    const QemuState& next = trace[i + 1];
    const auto insn = image.ReadWord32(expected.pc);
    if (!insn) {
      result.failure = absl::StrFormat("pc %016x outside the program", expected.pc);
      return result;
    }
    if (*insn == kSyscall) {
      ++result.syscalls;
      for (int r = 1; r < 32; ++r) cpu.set_gpr(r, next.gpr[r]);
      cpu.SetPc(next.pc);
      continue;
    }
    if (mips::Fpu::IsComputational(*insn)) {
      // Does the R4400 agree with QEMU on this one? If not (a documented difference), take
      // QEMU's result, as the kernel's FP emulator would have produced a result on hardware.
      mips::Fpu probe(expected.fcr0);
      SeedFpu(expected, probe);
      const mips::FpuOutcome outcome = probe.Execute(*insn);
      ArchSnapshot after;
      FillFpu(probe, &after);
      DiffOptions fpu_only;
      fpu_only.compare_gprs = fpu_only.compare_hilo = false;
      QemuState next_fpu = next;
      next_fpu.pc = 0;
      if (outcome != mips::FpuOutcome::kOk || !DiffStates(next_fpu, after, fpu_only).empty()) {
        ++result.fpu_from_qemu;
        SeedFpu(next, cpu.fpu());
        cpu.SetPc(next.pc);
        continue;
      }
    }
    const uint64_t exceptions = cpu.exceptions();
    cpu.Step();
    if (cpu.exceptions() != exceptions) {
      result.failure = absl::StrFormat(
          "the core took exception %d at %016x (%08x, %s); QEMU went on to %016x",
          (cpu.cause() >> 2) & 31, expected.pc, *insn, Cop1Mnemonic(*insn), next.pc);
      return result;
    }
  }
  return result;
}

class QemuCoreLockstep : public ::testing::TestWithParam<Program> {};

TEST_P(QemuCoreLockstep, CoreMatchesQemu) {
  const Program& p = GetParam();
  if (FindQemu(p.target).empty()) GTEST_SKIP() << QemuBinaryName(p.target) << " not installed";
  auto image = machine::LoadElfFile(Guest(p.name));
  ASSERT_TRUE(image.ok()) << image.status();
  QemuRunOptions options;
  options.target = p.target;
  options.cpu = p.cpu;
  options.binary = Guest(p.name);
  auto run = RunQemu(options);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_EQ(run->exit_code, 0);
  const LockstepResult r = RunLockstep(run->trace, *image);
  std::printf(
      "[%s] %zu states compared, %zu syscalls, %zu nullified delay slots, "
      "%zu FPU instructions taken from QEMU (documented R4400 differences)\n",
      p.name, r.compared, r.syscalls, r.nullified, r.fpu_from_qemu);
  EXPECT_EQ(r.failure, "");
  EXPECT_EQ(r.compared + r.nullified, run->trace.size());
}

// The comparison is real: a one-bit disturbance of the core is reported at the next state.
TEST(QemuCoreLockstepSelfTest, DetectsADivergence) {
  if (FindQemu(QemuTarget::kMipsN32).empty()) GTEST_SKIP() << "qemu-mipsn32 not installed";
  auto image = machine::LoadElfFile(Guest("fp_n32"));
  ASSERT_TRUE(image.ok()) << image.status();
  QemuRunOptions options;
  options.binary = Guest("fp_n32");
  auto run = RunQemu(options);
  ASSERT_TRUE(run.ok()) << run.status();
  const LockstepResult gpr = RunLockstep(run->trace, *image, 1000);
  EXPECT_NE(gpr.failure.find("state 1001"), std::string::npos) << gpr.failure;
  EXPECT_NE(gpr.failure.find("gp: qemu"), std::string::npos) << gpr.failure;
  const LockstepResult fpr = RunLockstep(run->trace, *image, 2000, 30);
  EXPECT_NE(fpr.failure.find("f30: qemu"), std::string::npos) << fpr.failure;
}

INSTANTIATE_TEST_SUITE_P(
    Guests, QemuCoreLockstep,
    ::testing::Values(Program{"int64_n32", QemuTarget::kMipsN32, "R4000"},
                      Program{"int64_n64", QemuTarget::kMips64, "R4000"},
                      Program{"int64_ops_n32", QemuTarget::kMipsN32, "R4000"},
                      Program{"int64_ops_n64", QemuTarget::kMips64, "R4000"},
                      Program{"fp_n32", QemuTarget::kMipsN32, "R4000"},
                      Program{"fp_n64", QemuTarget::kMips64, "R4000"},
                      Program{"fp_random_n32", QemuTarget::kMipsN32, "R4000"},
                      Program{"fp_kernels_n32", QemuTarget::kMipsN32, "R4000"},
                      Program{"fp_kernels_n64", QemuTarget::kMips64, "R4000"},
                      // o32, FR=0, 32-bit user mode; QEMU's 24Kf runs this MIPS II code.
                      Program{"fp_o32", QemuTarget::kMips, "24Kf"},
                      Program{"fp_random_o32", QemuTarget::kMips, "24Kf"}),
    [](const ::testing::TestParamInfo<Program>& info) { return std::string(info.param.name); });

#endif  // CITCAT_GUEST_TESTS_AVAILABLE

}  // namespace
}  // namespace citcat::oracle
