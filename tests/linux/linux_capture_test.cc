// Linux on the traced i486 PC, end to end as a user runs it (docs/machines/i486-linux.md):
// capture with the kernel and userland this build made, verify, the statistics' privilege
// split, the archive, and a trace of the boot itself.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/run_citcat.h"

namespace citcat {
namespace {

using testing::CommandResult;
using ::testing::HasSubstr;

class LinuxCaptureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  CommandResult Run(const std::string& args) { return testing::RunCitcat(dir_, args); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

TEST_F(LinuxCaptureTest, WorkloadsUnderLinuxReplayExactly) {
  const std::string cat = Path("linux.cat");
  CommandResult capture = Run(absl::StrCat(
      "capture --machine i486 --linux --memory-mb 64 --workload ostest,disk -o ", cat));
  ASSERT_EQ(capture.exit_code, 0) << capture.err;
  // The kernel's banner, the userland's lines, and the trace's end at power-off.
  EXPECT_THAT(capture.out, HasSubstr("Linux version 6.1"));
  EXPECT_THAT(capture.out, HasSubstr("citcat: running ostest,disk"));
  EXPECT_THAT(capture.out, HasSubstr("disk: md5sum -c ok"));  // the ext2 disk, by PIO
  EXPECT_THAT(capture.out, HasSubstr("citcat: 2 workloads done, 0 failed"));
  EXPECT_THAT(capture.out, HasSubstr("reboot: Power down"));
  EXPECT_THAT(capture.out, HasSubstr("the guest halted"));

  CommandResult verify = Run(absl::StrCat("verify ", cat));
  ASSERT_EQ(verify.exit_code, 0) << verify.err;
  EXPECT_THAT(verify.out + verify.err, HasSubstr("identical"));

  // Kernel and user code, each a real part of the run.
  CommandResult stats = Run(absl::StrCat("stats ", cat));
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_THAT(stats.out,
              HasSubstr("instructions by privilege, as the instruction trace lists them: kernel "));
  EXPECT_THAT(stats.out, ::testing::Not(HasSubstr("kernel 0 (")));
  EXPECT_THAT(stats.out, ::testing::Not(HasSubstr("user 0 (")));

  // The archive replays to the same bus records.
  const std::string extracted = Path("extracted"), archive = Path("linux.citcat");
  ASSERT_EQ(Run(absl::StrCat("extract ", cat, " -o ", extracted)).exit_code, 0);
  ASSERT_EQ(Run(absl::StrCat("pack ", extracted, " -o ", archive)).exit_code, 0);
  const std::string regenerated = Path("regenerated.cat");
  CommandResult replay = Run(absl::StrCat("replay ", archive, " --cat ", regenerated));
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  CommandResult from_archive = Run(absl::StrCat("verify ", cat, " ", regenerated));
  EXPECT_EQ(from_archive.exit_code, 0) << from_archive.err;
}

TEST_F(LinuxCaptureTest, TheBootItselfReplaysExactly) {
  const std::string cat = Path("boot.cat");
  CommandResult capture = Run(absl::StrCat(
      "capture --machine i486 --linux --from-boot --memory-mb 64 --workload ostest -o ", cat));
  ASSERT_EQ(capture.exit_code, 0) << capture.err;
  EXPECT_THAT(capture.out, HasSubstr("citcat: 1 workloads done, 0 failed"));
  CommandResult verify = Run(absl::StrCat("verify ", cat));
  ASSERT_EQ(verify.exit_code, 0) << verify.err;
  EXPECT_THAT(verify.out + verify.err, HasSubstr("identical"));
}

TEST_F(LinuxCaptureTest, UnknownWorkloadsAndOtherMachinesAreRefused) {
  CommandResult unknown =
      Run(absl::StrCat("capture --machine i486 --linux --workload nosuch -o ", Path("x.cat")));
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("no Linux workload 'nosuch'"));
  CommandResult r4400 = Run(absl::StrCat("capture --machine r4400 --linux -o ", Path("x.cat")));
  EXPECT_EQ(r4400.exit_code, 2);
  EXPECT_THAT(r4400.err, HasSubstr("--linux runs on the i486"));
  CommandResult list = Run("capture --machine i486 --linux --list-workloads");
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_THAT(list.out, HasSubstr("i486 workloads under Linux:"));
  EXPECT_THAT(list.out, HasSubstr("ostest"));
  EXPECT_FALSE(std::filesystem::exists(Path("x.cat")));
}

}  // namespace
}  // namespace citcat
