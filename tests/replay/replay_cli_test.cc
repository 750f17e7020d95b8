// `citcat replay` and `citcat verify` as a user runs them: exit codes, one-line errors, no partial
// outputs after a divergence, and the two ways of verifying.

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/replay/guest_cli_fixture.h"
#include "tests/support/run_citcat.h"

namespace citcat {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using Result = testing::CommandResult;
using testing::ReadFile;

class ReplayCli : public replay_test::GuestCliTest<ReplayCli> {
 protected:
  static void SetUpTestSuite() { CaptureAndExtract("replay-cli", 4); }
};

TEST_F(ReplayCli, ReplayWritesTraceAndCatThenVerifyFindsThemIdentical) {
  Result r = Run(
      absl::StrCat(ReplayArgs(), " -o ", Path("trace.txt"), " --cat ", Path("regenerated.cat")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("instructions replayed"));
  EXPECT_THAT(ReadFile(Path("trace.txt")), HasSubstr(" - interrupt"));
  r = Run(absl::StrCat("verify ", Path("capture.cat"), " ", Path("regenerated.cat")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("identical"));
}

TEST_F(ReplayCli, VerifyInOneGo) {
  Result r = Run(absl::StrCat("verify ", Path("capture.cat")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("identical"));
  EXPECT_THAT(r.err, HasSubstr("M instructions/s"));
  r = Run(absl::StrCat("verify ", Path("capture.cat"), " --quiet"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST_F(ReplayCli, VerifyNamesTheFirstDifference) {
  // The capture against itself: record 0 (the begin marker) is not a replayed record.
  Result r = Run(absl::StrCat("verify ", Path("capture.cat"), " ", Path("capture.cat")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("citcat verify: not identical: record "));
  EXPECT_THAT(r.err, HasSubstr("original:"));
  EXPECT_THAT(r.err, HasSubstr("regenerated:"));
}

TEST_F(ReplayCli, DivergenceLeavesNoOutputs) {
  // An AES of nothing but its format version: replay diverges at once.
  std::ofstream(Path("empty.pb")) << std::string("\x08\x01", 2);
  Result r = Run(absl::StrCat("replay --ims ", Path("x/ims.pb"), " --aes ", Path("empty.pb"),
                              " -o ", Path("diverged.txt"), " --cat ", Path("diverged.cat")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("citcat replay: divergence at CAT record "));
  EXPECT_FALSE(fs::exists(Path("diverged.txt")));
  EXPECT_FALSE(fs::exists(Path("diverged.cat")));
}

TEST_F(ReplayCli, BadInputIsOneLine) {
  Result r = Run("replay");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("usage: citcat replay"));
  r = Run(absl::StrCat("replay --ims ", Path("nonexistent.pb"), " --aes ", Path("x/aes.pb")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  // The AES where the IMS belongs.
  r = Run(absl::StrCat("replay --ims ", Path("x/aes.pb"), " --aes ", Path("x/aes.pb")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  std::ofstream(Path("garbage.pb")) << "\xff\xff\xff\xff not protobuf";
  r = Run(absl::StrCat("replay --ims ", Path("garbage.pb"), " --aes ", Path("x/aes.pb")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("not a citcat.ims.InitialMachineState message"));
  r = Run("verify");
  EXPECT_EQ(r.exit_code, 2);
  r = Run(absl::StrCat("verify ", Path("nonexistent.cat")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace citcat
