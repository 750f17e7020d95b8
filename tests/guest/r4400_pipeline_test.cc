// The guest software through the whole pipeline, as a user runs it: `citcat capture` of each
// workload (and mixes, and the fault path) under a few seeds, then `citcat verify`, which
// extracts, replays and must regenerate the capture exactly. A kernel change that breaks a CITCAT
// hook (an unechoed Count or Cause read, a misplaced interrupt report, a driver dump that does
// not match the resume point) shows up here as a divergence.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

using ::testing::HasSubstr;

struct Result {
  int status = -1;
  std::string output;
};

Result Shell(const std::string& command) {
  Result r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  r.status = pclose(p);
  return r;
}

struct Case {
  const char* name;
  const char* workload;
  int seed;
};

class Pipeline : public ::testing::TestWithParam<Case> {};

TEST_P(Pipeline, CaptureReplaysExactly) {
  const Case& c = GetParam();
  std::string cat = absl::StrCat(::testing::TempDir(), "/pipeline-", getpid(), "-", c.name, ".cat");
  Result capture = Shell(absl::StrCat(CITCAT_BINARY, " capture --machine r4400 --workload '",
                                      c.workload, "' --seed ", c.seed, " --quiet -o ", cat));
  ASSERT_EQ(capture.status, 0) << capture.output;
  Result verify = Shell(absl::StrCat(CITCAT_BINARY, " verify ", cat));
  std::remove(cat.c_str());
  EXPECT_EQ(verify.status, 0) << verify.output;
  EXPECT_THAT(verify.output, HasSubstr("identical")) << verify.output;
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
