// The guest software through the whole pipeline, as a user runs it: `citcat capture` of each
// workload (and mixes, and the fault path) under a few seeds, then `citcat verify`, which
// extracts, replays and must regenerate the capture exactly. A kernel change that breaks a CITCAT
// hook (an unechoed Count or Cause read, a misplaced interrupt report, a driver dump that does
// not match the resume point) shows up here as a divergence.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/run_citcat.h"

namespace {

using ::testing::HasSubstr;

struct Case {
  const char* name;
  const char* workload;
  int seed;
};

class Pipeline : public ::testing::TestWithParam<Case> {};

TEST_P(Pipeline, CaptureReplaysExactly) {
  const Case& c = GetParam();
  std::filesystem::path dir = citcat::testing::FreshTestDir(absl::StrCat("pipeline-", c.name));
  std::string cat = (dir / "capture.cat").string();
  auto capture = citcat::testing::RunCitcat(
      dir, absl::StrCat("capture --machine r4400",
                        // No --workload: the default mix (an empty value is refused).
                        *c.workload == '\0' ? "" : absl::StrCat(" --workload '", c.workload, "'"),
                        " --seed ", c.seed, " --quiet -o ", cat));
  ASSERT_EQ(capture.exit_code, 0) << capture.err;
  auto verify = citcat::testing::RunCitcat(dir, absl::StrCat("verify ", cat));
  std::filesystem::remove_all(dir);
  EXPECT_EQ(verify.exit_code, 0) << verify.err;
  EXPECT_THAT(verify.out + verify.err, HasSubstr("identical")) << verify.err;
}

INSTANTIATE_TEST_SUITE_P(
    Guest, Pipeline,
    ::testing::Values(Case{"sort", "sort", 1}, Case{"hash", "hash", 2},
                      Case{"compress", "compress", 3}, Case{"int64", "int64", 4},
                      Case{"fp", "fp", 5}, Case{"memcpy", "memcpy", 6}, Case{"chase", "chase", 7},
                      Case{"io", "io", 8}, Case{"crash", "crash,io", 9},
                      Case{"fpu_and_64bit_switching", "fp,int64,fp,int64", 12},
                      Case{"default_mix", "", 10},
                      Case{"all", "sort,hash,compress,int64,fp,memcpy,chase,io", 11}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
