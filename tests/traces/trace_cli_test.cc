// `citcat replay --format F -o FILE` as a user runs it: every format, compression by suffix,
// filters, and one-line errors with no partial output.
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/replay/guest_cli_fixture.h"
#include "tests/support/run_citcat.h"
#include "traces/output.h"

namespace citcat {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Result = testing::CommandResult;

class TraceCli : public replay_test::GuestCliTest<TraceCli> {
 protected:
  static void SetUpTestSuite() { CaptureAndExtract("trace-cli", 6); }
  static std::string Replay(const std::string& rest) {
    return absl::StrCat(ReplayArgs(), " --quiet ", rest);
  }
};

TEST_F(TraceCli, EveryFormat) {
  for (const char* f : {"text", "champsim", "penn", "din", "idtrace", "idtrace-exec"}) {
    const std::string out = Path(absl::StrCat("t.", f));
    Result r = Run(Replay(absl::StrCat("--format ", f, " -o ", out)));
    ASSERT_EQ(r.exit_code, 0) << f << ": " << r.err;
    EXPECT_GT(fs::file_size(out), 10000u) << f;
  }
  EXPECT_EQ(fs::file_size(Path("t.champsim")) % 64, 0u);
  EXPECT_THAT(testing::ReadFile(Path("t.din")), StartsWith("2 "));
}

TEST_F(TraceCli, CompressedChampSim) {
  ASSERT_EQ(Run(Replay("--format champsim -o " + Path("c.champsim"))).exit_code, 0);
  for (const char* suffix : {".xz", ".zst"}) {
    const std::string path = Path(absl::StrCat("c.champsim", suffix));
    Result r = Run(Replay(absl::StrCat("--format champsim -o ", path)));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto back = traces::ReadDecompressed(path);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, testing::ReadFile(Path("c.champsim")));
    EXPECT_LT(fs::file_size(path), fs::file_size(Path("c.champsim")) / 5);
  }
}

TEST_F(TraceCli, Filters) {
  ASSERT_EQ(Run(Replay("--format din -o " + Path("all.din"))).exit_code, 0);
  ASSERT_EQ(Run(Replay("--format din --mode kernel -o " + Path("kernel.din"))).exit_code, 0);
  ASSERT_EQ(Run(Replay("--format din --mode user -o " + Path("user.din"))).exit_code, 0);
  EXPECT_EQ(fs::file_size(Path("kernel.din")) + fs::file_size(Path("user.din")),
            fs::file_size(Path("all.din")));
  // The whole kernel segment as the "idle" range leaves the user part.
  ASSERT_EQ(Run(Replay("--format din --idle-range ffffffff80000000:ffffffffc0000000 -o " +
                       Path("noidle.din")))
                .exit_code,
            0);
  EXPECT_LE(fs::file_size(Path("noidle.din")), fs::file_size(Path("all.din")));
}

TEST_F(TraceCli, Errors) {
  Result r = Run(Replay("--format pin -o " + Path("pin.out")));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("unknown trace format"));
  EXPECT_FALSE(fs::exists(Path("pin.out")));
  r = Run(Replay("--format din"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("-o"));
  r = Run(Replay("--format din --mode super -o " + Path("m.din")));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("user or kernel"));
  r = Run(Replay("--format din --idle-range 10 -o " + Path("i.din")));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("START:END"));
  EXPECT_FALSE(fs::exists(Path("m.din")));
  EXPECT_FALSE(fs::exists(Path("i.din")));
}

// --filter-idle reads the kernel named by --kernel; a missing one is one line, and no trace.
TEST_F(TraceCli, FilterIdleWithAMissingKernel) {
  const std::string missing = Path("no/such/kernel.elf");
  Result r =
      Run(Replay("--format text -o " + Path("k.txt") + " --filter-idle --kernel " + missing));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "citcat replay: cannot open " + missing + "\n");
  EXPECT_FALSE(fs::exists(Path("k.txt")));
}

TEST_F(TraceCli, DivergenceLeavesNoTrace) {
  // An AES of nothing but its format version: replay diverges at once.
  std::ofstream(Path("empty.pb")) << std::string("\x08\x01", 2);
  Result r = Run(absl::StrCat("replay --quiet --ims ", Path("x/ims.pb"), " --aes ",
                              Path("empty.pb"), " --format champsim -o ", Path("bad.champsim.xz")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("citcat replay: divergence at CAT record "));
  EXPECT_FALSE(fs::exists(Path("bad.champsim.xz")));
}

}  // namespace
}  // namespace citcat
