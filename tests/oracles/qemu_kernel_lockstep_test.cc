// The R4400 core in kernel mode, in lock-step with full-system QEMU from the reset vector
// (kernel_lockstep.h): the bare-metal programs of guest/tests/kernel/, seeded random kernel-mode
// programs (kernel_random_program.h), and one test per documented way in which QEMU is not an
// R4400 (docs/machines/r4400-core.md, "Checking against full-system QEMU").
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_format.h"
#include "tests/oracles/kernel_lockstep.h"
#include "tests/oracles/kernel_random_program.h"
#include "tests/oracles/qemu_system.h"

namespace citcat::oracle {
namespace {

std::string WorkDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/qemu_kernel_" + name;
  std::filesystem::create_directories(dir);
  return dir;
}

void Report(const std::string& name, const KernelLockstepResult& r) {
  std::string codes;
  for (int c = 0; c < 32; ++c) {
    if (r.by_code[c] != 0) absl::StrAppendFormat(&codes, " %d:%d", c, r.by_code[c]);
  }
  std::printf(
      "[%s] %llu states compared, %llu exception entries (ExcCode:count%s; %llu refills, %llu "
      "XTLB refills), %llu Random draws from QEMU's sequence, %llu nullified slots\n",
      name.c_str(), static_cast<unsigned long long>(r.compared),
      static_cast<unsigned long long>(r.exceptions), codes.c_str(),
      static_cast<unsigned long long>(r.refills), static_cast<unsigned long long>(r.xtlb_refills),
      static_cast<unsigned long long>(r.random_draws),
      static_cast<unsigned long long>(r.nullified));
}

#define SKIP_WITHOUT_QEMU()                             \
  if (FindQemuSystemMips().empty()) {                   \
    GTEST_SKIP() << "qemu-system-mips64 not installed"; \
  }

// ---- hand-written programs ----

#ifdef CITCAT_KERNEL_TEST_DIR
std::vector<uint8_t> Rom(const std::string& name) {
  std::ifstream in(std::string(CITCAT_KERNEL_TEST_DIR) + "/" + name + ".bin", std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

KernelLockstepResult RunProgram(const std::string& name) {
  KernelLockstepOptions options;
  options.rom = Rom(name);
  options.work_dir = WorkDir(name);
  return RunKernelLockstep(options);
}

class KernelProgram : public ::testing::TestWithParam<const char*> {};

TEST_P(KernelProgram, CoreMatchesQemu) {
  SKIP_WITHOUT_QEMU();
  const KernelLockstepResult r = RunProgram(GetParam());
  Report(GetParam(), r);
  EXPECT_EQ(r.failure, "");
  EXPECT_GT(r.compared, 10000u);
}

INSTANTIATE_TEST_SUITE_P(Programs, KernelProgram, ::testing::Values("cp0", "modes", "tlb"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });
// Where QEMU is not an R4400: each program ends in the difference, and the harness must report
// exactly it (docs/machines/r4400-core.md, "Checking against full-system QEMU").
struct Difference {
  const char* program;
  const char* report;  // a line of the harness's failure report
};
void PrintTo(const Difference& d, std::ostream* os) { *os << d.program; }

class QemuDifference : public ::testing::TestWithParam<Difference> {};

TEST_P(QemuDifference, IsReported) {
  SKIP_WITHOUT_QEMU();
  const KernelLockstepResult r = RunProgram(GetParam().program);
  EXPECT_NE(r.failure.find(GetParam().report), std::string::npos) << r.failure;
}

INSTANTIATE_TEST_SUITE_P(
    Programs, QemuDifference,
    ::testing::Values(
        Difference{"diff_index", "r8: qemu 0000000000000000, model 000000000000003f"},
        Difference{"diff_pagemask", "r8: qemu 000000001fffe000, model 0000000001ffe000"},
        Difference{"diff_wired", "r8: qemu 0000000000000002, model 0000000000000032"},
        Difference{"diff_cause", "Cause: qemu 0000000000c00000, model 0000000000000000"},
        Difference{"diff_status", "Status: qemu 0000000000400004, model 0000000088470004"},
        Difference{"diff_tlbr_vpn2", "r8: qemu 0000000000412000, model 0000000000000000"},
        Difference{"diff_tlbr_pfn", "r8: qemu 000000000004001e, model 000000000004011e"},
        Difference{"diff_bne_same", "EPC: qemu ffffffffbfc00414, model ffffffffbfc00410"},
        Difference{"diff_kernel_xsseg", "QEMU took exception (Cause 00000010), the core none"},
        Difference{"diff_mul", "the core took exception 10 at ffffffffbfc00418, QEMU none"},
        Difference{"diff_lladdr", "r9: qemu 0000000000000000, model 0000000000000010"},
        Difference{"diff_watch", "the core took exception 23 at ffffffffbfc0042c, QEMU none"},
        Difference{"diff_re", "r9: qemu 0000000000440000, model 0000000000004400"},
        Difference{"diff_super64", "the core took exception 10 at ffffffffc0000410, QEMU none"},
        Difference{"diff_shadow", "the core took exception 2 at ffffffffbfc00454, QEMU none"},
        Difference{"diff_fetch_badvaddr", "BadVAddr at the exception: qemu 0000000000000001"}),
    [](const ::testing::TestParamInfo<Difference>& info) {
      return std::string(info.param.program);
    });
#endif  // CITCAT_KERNEL_TEST_DIR

// ---- random kernel-mode programs ----

class RandomKernelProgram : public ::testing::TestWithParam<uint32_t> {};

TEST_P(RandomKernelProgram, CoreMatchesQemu) {
  SKIP_WITHOUT_QEMU();
  KernelProgramOptions program;
  program.seed = GetParam();
  KernelLockstepOptions options;
  options.rom = GenerateKernelProgram(program);
  options.work_dir = WorkDir(absl::StrFormat("random%d", program.seed));
  const KernelLockstepResult r = RunKernelLockstep(options);
  Report(absl::StrFormat("seed %d", program.seed), r);
  EXPECT_EQ(r.failure, "");
  // Every seed runs its body many times over: far more than a smoke test.
  EXPECT_GT(r.compared, 150000u);
  EXPECT_GT(r.exceptions, 5000u);
  EXPECT_GT(r.refills, 100u);
  EXPECT_GT(r.xtlb_refills, 100u);
  EXPECT_GT(r.random_draws, 500u);
}

// Five seeds: about 1.1 M instructions compared in all.
INSTANTIATE_TEST_SUITE_P(Seeds, RandomKernelProgram, ::testing::Range(1u, 6u));

// The comparison is real: one flipped bit in the core is reported at the next state.
TEST(KernelLockstepSelfTest, DetectsADivergence) {
  SKIP_WITHOUT_QEMU();
  KernelProgramOptions program;
  program.items = 100;
  program.iterations = 1;
  KernelLockstepOptions options;
  options.rom = GenerateKernelProgram(program);
  options.work_dir = WorkDir("selftest");
  options.corrupt_at = 500;
  const KernelLockstepResult r = RunKernelLockstep(options);
  EXPECT_EQ(r.compared, 501u);
  EXPECT_NE(r.failure.find("s0: qemu"), std::string::npos) << r.failure;
}

// QEMU's Random is its own pseudo-random sequence, which the harness reproduces.
TEST(QemuRandom, IsTheSequenceQemuDraws) {
  QemuRandom random;
  // The first draws with Wired = 0; QEMU 7.2's third MFC0 Random after reset reads 33.
  for (uint32_t want : {38u, 30u, 33u, 27u, 43u}) {
    const uint32_t peeked = random.Peek(0);
    EXPECT_EQ(peeked, want);
    EXPECT_EQ(random.Next(0), want);
  }
  QemuRandom again;
  uint32_t prev = 99;
  for (int i = 0; i < 1000; ++i) {
    const uint32_t v = again.Next(i % 5 == 0 ? 40 : 0);
    EXPECT_LE(v, 47u);
    EXPECT_NE(v, prev);
    prev = v;
  }
  EXPECT_EQ(QemuRandom().Next(47), 47u);  // one random entry left: always it
}

}  // namespace
}  // namespace citcat::oracle
