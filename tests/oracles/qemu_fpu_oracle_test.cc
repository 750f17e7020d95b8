// Runs the guest programs under QEMU user mode (R4000 model, per-instruction state log) and
// replays every FPU instruction QEMU executed through mips::Fpu, comparing FPRs, FCR31, moved
// GPRs and branch paths with QEMU's next state. Also checks the 64-bit integer program's trace,
// the part the integer core's lock-step will consume.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <string>

#include "absl/strings/str_format.h"
#include "machine/elf_loader.h"
#include "simcore/mips/fpu.h"
#include "tests/oracles/fpu_oracle.h"
#include "tests/oracles/lockstep.h"
#include "tests/oracles/qemu_trace.h"

namespace citcat::oracle {
namespace {

#ifdef CITCAT_GUEST_TESTS_AVAILABLE

std::string Guest(const std::string& name) {
  return std::string(CITCAT_GUEST_TEST_DIR) + "/" + name;
}

struct Program {
  const char* name;
  QemuTarget target;
  const char* cpu;
  const char* output_prefix;
  bool floating_point;  // an FP workout (else integer only)
};
// ctest shows the parameter in each test's name: make it the program name.
void PrintTo(const Program& p, std::ostream* os) { *os << p.name; }

class QemuProgram : public ::testing::TestWithParam<Program> {};

absl::StatusOr<QemuRun> RunProgram(const Program& p) {
  QemuRunOptions options;
  options.target = p.target;
  options.cpu = p.cpu;
  options.binary = Guest(p.name);
  return RunQemu(options);
}

// The trace as a lock-step user sees it: every PC is program code, the last state is the exit
// syscall, nullified delay slots change nothing.
void CheckTraceAgainstImage(const QemuTrace& trace, const machine::ElfImage& image) {
  // Every logged PC is an instruction of the program, and the last one is the exit syscall.
  for (size_t i = 0; i < trace.size(); ++i) {
    ASSERT_TRUE(image.ReadWord32(trace[i].pc).has_value()) << "state " << i;
  }
  EXPECT_EQ(*image.ReadWord32(trace[trace.size() - 1].pc), 0x0000000Cu);  // syscall
  // Sequential flow: without a branch or jump, the next PC is PC + 4.
  size_t sequential = 0;
  for (size_t i = 0; i + 1 < trace.size(); ++i) {
    if (trace[i + 1].pc == trace[i].pc + 4) ++sequential;
  }
  EXPECT_GT(sequential, trace.size() / 2);
  // $zero is zero throughout; a state diffs clean against itself.
  for (const QemuState& s : trace.states()) ASSERT_EQ(s.gpr[0], 0u);
  EXPECT_EQ(DiffStates(trace[trace.size() / 2], SnapshotFromQemu(trace[trace.size() / 2])), "");
  // A nullified delay slot changes nothing and is followed by the instruction after it.
  for (size_t i = 0; i + 1 < trace.size(); ++i) {
    if (!trace[i].nullified_delay_slot()) continue;
    EXPECT_EQ(trace[i + 1].pc, trace[i].pc + 4);
    EXPECT_EQ(DiffStates(trace[i + 1], SnapshotFromQemu(trace[i]), {.compare_fpu = true}),
              absl::StrFormat("pc: qemu %016x, model %016x\n", trace[i + 1].pc, trace[i].pc));
  }
}

TEST_P(QemuProgram, MatchesQemu) {
  const Program& p = GetParam();
  if (FindQemu(p.target).empty()) GTEST_SKIP() << QemuBinaryName(p.target) << " not installed";
  auto image = machine::LoadElfFile(Guest(p.name));
  ASSERT_TRUE(image.ok()) << image.status();
  const auto run = RunProgram(p);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->exit_code, 0) << "signal " << run->signal;
  EXPECT_EQ(run->guest_stdout.rfind(p.output_prefix, 0), 0u) << run->guest_stdout;
  const QemuTrace& trace = run->trace;
  ASSERT_GT(trace.size(), 100u);
  EXPECT_EQ(trace[0].pc, image->entry);
  EXPECT_TRUE(trace[0].has_fpu);

  CheckTraceAgainstImage(trace, *image);
  const FpuOracleReport report = CheckFpuAgainstQemu(trace, *image);
  std::printf("[%s under %s -cpu %s] %s", p.name, QemuBinaryName(p.target), p.cpu,
              report.Summary().c_str());
  RecordProperty("fpu_compared", static_cast<int>(report.compared));
  RecordProperty("fpu_exact", static_cast<int>(report.exact));
  EXPECT_EQ(report.mismatch_count, 0u) << report.Summary();
  if (!p.floating_point) {
    EXPECT_EQ(report.fpu_instructions, 0u);
    return;
  }
  EXPECT_GT(report.compared, 500u);
  EXPECT_GT(report.exact, report.compared * 9 / 10);
}

INSTANTIATE_TEST_SUITE_P(
    Guests, QemuProgram,
    ::testing::Values(Program{"fp_n32", QemuTarget::kMipsN32, "R4000", "fp ", true},
                      Program{"fp_n64", QemuTarget::kMips64, "R4000", "fp ", true},
                      // qemu-mips has no R4000 model; the 24Kf gives the FR=0 register model.
                      Program{"fp_o32", QemuTarget::kMips, "24Kf", "fp ", true},
                      Program{"fp_random_n32", QemuTarget::kMipsN32, "R4000", "fp_random ", true},
                      Program{"fp_random_o32", QemuTarget::kMips, "24Kf", "fp_random ", true},
                      Program{"fp_kernels_n32", QemuTarget::kMipsN32, "R4000", "fp_kernels ", true},
                      Program{"int64_n32", QemuTarget::kMipsN32, "R4000", "int64 ", false},
                      Program{"int64_n64", QemuTarget::kMips64, "R4000", "int64 ", false},
                      Program{"int64_ops_n32", QemuTarget::kMipsN32, "R4000", "int64_ops ", false}),
    [](const ::testing::TestParamInfo<Program>& info) { return std::string(info.param.name); });

TEST(QemuInt64, SixtyFourBitValuesReachTheRegisters) {
  if (FindQemu(QemuTarget::kMipsN32).empty()) GTEST_SKIP() << "qemu-mipsn32 not installed";
  QemuRunOptions options;
  options.binary = Guest("int64_n32");
  auto run = RunQemu(options);
  ASSERT_TRUE(run.ok()) << run.status();
  // n32 has 64-bit registers: some GPR must hold a value that is not a sign-extended word.
  size_t wide = 0;
  for (const QemuState& s : run->trace.states()) {
    for (uint64_t v : s.gpr) {
      if (static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v))) != v) ++wide;
    }
  }
  EXPECT_GT(wide, 1000u);
  EXPECT_TRUE(run->trace[0].fr);  // n32 processes run with Status.FR = 1
}

// With an exception enabled, QEMU delivers SIGFPE at the trapping instruction (the last state it
// logs); the Fpu, loaded with that state, must trap on the same instruction with the same cause.
TEST(QemuFpuTraps, EnabledExceptionsTrapLikeQemu) {
  if (FindQemu(QemuTarget::kMipsN32).empty()) GTEST_SKIP() << "qemu-mipsn32 not installed";
  auto image = machine::LoadElfFile(Guest("fp_trap_n32"));
  ASSERT_TRUE(image.ok()) << image.status();
  const struct {
    const char* name;
    uint32_t cause;
  } cases[] = {{"invalid", mips::kFpInvalid},
               {"divzero", mips::kFpDivideByZero},
               {"overflow", mips::kFpOverflow | mips::kFpInexact},
               {"inexact", mips::kFpInexact},
               {"ctc1", mips::kFpInvalid},
               {"none", 0}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    QemuRunOptions options;
    options.binary = Guest("fp_trap_n32");
    options.args = {c.name};
    auto run = RunQemu(options);
    ASSERT_TRUE(run.ok()) << run.status();
    if (c.cause == 0) {
      EXPECT_EQ(run->exit_code, 0);
      EXPECT_EQ(run->guest_stdout, "no trap 0000000000000001\n");
      continue;
    }
    EXPECT_EQ(run->signal, SIGFPE);
    const QemuState& last = run->trace[run->trace.size() - 1];
    const auto insn = image->ReadWord32(last.pc);
    ASSERT_TRUE(insn.has_value());
    mips::Fpu fpu(last.fcr0);
    SeedFpu(last, fpu);
    const auto before = fpu.raw_fgrs();
    mips::FpuOutcome outcome;
    if (mips::Fpu::IsComputational(*insn)) {
      outcome = fpu.Execute(*insn);
    } else {
      ASSERT_EQ(Cop1Mnemonic(*insn), "ctc1");
      outcome = fpu.WriteControl(31, static_cast<uint32_t>(last.gpr[(*insn >> 16) & 0x1F]));
    }
    EXPECT_EQ(outcome, mips::FpuOutcome::kFpe) << Cop1Mnemonic(*insn);
    EXPECT_EQ((fpu.fcsr() & mips::kFcsrCauseMask) >> mips::kFcsrCauseShift, c.cause);
    EXPECT_EQ(fpu.raw_fgrs(), before);
    EXPECT_EQ((fpu.fcsr() & mips::kFcsrFlagsMask), (last.fcr31 & mips::kFcsrFlagsMask));
  }
}

#endif  // CITCAT_GUEST_TESTS_AVAILABLE

TEST(QemuRunner, MissingBinaryIsAnError) {
  if (FindQemu(QemuTarget::kMipsN32).empty()) GTEST_SKIP() << "qemu-mipsn32 not installed";
  QemuRunOptions options;
  options.binary = "/nonexistent/guest";
  auto run = RunQemu(options);
  EXPECT_FALSE(run.ok());
}

TEST(Cop1Mnemonic, Names) {
  EXPECT_EQ(Cop1Mnemonic(0x46200100), "add.d");
  EXPECT_EQ(Cop1Mnemonic(0x462021a5), "cvt.l.d");
  EXPECT_EQ(Cop1Mnemonic(0x4624003c), "c.lt.d");
  EXPECT_EQ(Cop1Mnemonic(0x44ac1000), "dmtc1");
  EXPECT_EQ(Cop1Mnemonic(0x44c0f800), "ctc1");
  EXPECT_EQ(Cop1Mnemonic(0x45030004), "bc1tl");
  EXPECT_EQ(Cop1Mnemonic(0xd4200000), "ldc1");
  EXPECT_EQ(Cop1Mnemonic(0x00000000), "");
}

}  // namespace
}  // namespace citcat::oracle
