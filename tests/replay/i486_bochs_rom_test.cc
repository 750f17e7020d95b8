// The bare-metal i486 programs traced from reset (i486_rom_test.cc) on Bochs, the third model
// (tests/oracles/bochs.h): what each reports is the same on Bochs as in its capture on the traced
// PC. The example self-test prints its results on the console; the ring programs count the timer
// interrupts they took in ring 0, ring 3 and V86 mode, which they write to port 80h on the traced
// PC and Bochs shows in memory. Timer interrupts come at other instructions on Bochs (its PIT
// runs on its own clock), so these compare what the programs report, not every instruction (the
// core's lock step with Bochs is tests/simcore/x86_bochs_lockstep_test.cc).
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/oracles/bochs.h"
#include "tests/support/run_citcat.h"

namespace citcat {
namespace {

namespace fs = std::filesystem;

class I486RomsOnBochs : public ::testing::Test {
 protected:
  void SetUp() override {
    if (oracle::FindBochs().empty()) GTEST_SKIP() << "bochs and vgabios are not installed";
    dir_ = testing::FreshTestDir("rom486-bochs");
  }
  // The capture of `rom` on the traced PC, and its `citcat dump`.
  testing::CommandResult Capture(const std::string& rom, std::string* dump) {
    testing::CommandResult r = testing::RunCitcat(
        dir_,
        absl::StrCat("capture --machine i486 --rom ", rom, " -o ", (dir_ / "rom.cat").string()));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    testing::CommandResult d =
        testing::RunCitcat(dir_, absl::StrCat("dump ", (dir_ / "rom.cat").string()));
    EXPECT_EQ(d.exit_code, 0) << d.err;
    *dump = d.out;
    return r;
  }
  absl::StatusOr<oracle::BochsRun> OnBochs(const std::string& rom,
                                           std::vector<oracle::BochsOptions::Range> dumps = {}) {
    oracle::BochsOptions options;
    options.rom = rom;
    options.work_dir = (dir_ / "bochs").string();
    options.memory_mb = 32;
    options.dumps = std::move(dumps);
    return oracle::RunBochs(options);
  }
  fs::path dir_;
};

TEST_F(I486RomsOnBochs, TheSelfTestPrintsTheSameResults) {
  const std::string rom = absl::StrCat(CITCAT_I486_EXAMPLES, "/selftest.bin");
  std::string dump;
  const testing::CommandResult ours = Capture(rom, &dump);
  const std::string console = ours.out.substr(0, ours.out.find("\ncitcat capture:"));
  ASSERT_NE(console.find("PASS"), std::string::npos) << console;
  absl::StatusOr<oracle::BochsRun> bochs = OnBochs(rom);
  ASSERT_TRUE(bochs.ok()) << bochs.status();
  ASSERT_TRUE(bochs->stopped) << bochs->output.substr(0, 2000);
  EXPECT_EQ(bochs->console, console);
}

// Each program's three counts: port 80h on the traced PC, memory at 7000h on Bochs.
class I486RingRomsOnBochs : public I486RomsOnBochs,
                            public ::testing::WithParamInterface<const char*> {};

TEST_P(I486RingRomsOnBochs, CountTheSameInterruptsByRing) {
  const std::string rom = absl::StrCat(CITCAT_ROM486_TEST_PROGRAMS, "/rings-", GetParam());
  std::string dump;
  Capture(rom + ".elf", &dump);
  std::vector<std::string> codes;  // "data=..." of every port 80h write, little-endian bytes
  for (absl::string_view line : absl::StrSplit(dump, '\n')) {
    if (absl::StartsWith(line, "port-write     addr=0x80 ")) {
      codes.emplace_back(line.substr(line.rfind(' ') + 1));
    }
  }
  ASSERT_EQ(codes.size(), 3u) << dump.substr(0, 2000);
  absl::StatusOr<oracle::BochsRun> bochs = OnBochs(rom + ".bin", {{0x7000, 12}});
  ASSERT_TRUE(bochs.ok()) << bochs.status();
  ASSERT_TRUE(bochs->stopped) << bochs->output.substr(0, 2000);
  ASSERT_EQ(bochs->dumps[0].size(), 12u);
  for (int i = 0; i < 3; ++i) {
    std::string hex = "data=";
    for (int b = 0; b < 4; ++b) {
      absl::StrAppend(&hex, absl::Hex(bochs->dumps[0][4 * i + b], absl::kZeroPad2));
    }
    EXPECT_EQ(hex, codes[i]) << "count " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Rings, I486RingRomsOnBochs, ::testing::Values("ring3", "v86"));

}  // namespace
}  // namespace citcat
