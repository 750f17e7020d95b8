// The form tests (form_test.cc) on a replay of the real guest kernel running workloads: user and
// kernel mode, TLB refills, system calls, timer interrupts, exceptions that re-execute. Every
// format, unfiltered and by mode, written from forms and from copies without one, must give the
// same bytes, and every form must keep its promise.
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "cat_parser/reader.h"
#include "gtest/gtest.h"
#include "guest/r4400/guest_paths.h"
#include "machine/r4400/capture.h"
#include "replay/replay.h"
#include "systems/system.h"
#include "tests/traces/memoized_and_not.h"

namespace citcat::traces {
namespace {

extract::Extraction Capture(const std::string& workloads, uint64_t seed, uint64_t instructions) {
  machine::CaptureSettings settings;
  settings.max_traced = instructions;
  settings.kernel_path = CITCAT_R4400_KERNEL_ELF;
  std::ifstream disk(CITCAT_R4400_DISK_IMAGE, std::ios::binary);
  settings.disk.assign(std::istreambuf_iterator<char>(disk), std::istreambuf_iterator<char>());
  settings.workloads = workloads;
  settings.seed = seed;
  const std::string path =
      absl::StrCat(::testing::TempDir(), "/kernel-forms-", getpid(), "-", seed, ".cat");
  auto result = machine::CaptureR4400(settings, path);
  EXPECT_TRUE(result.ok()) << result.status();
  auto reader = cat::CatReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  auto x = systems::Extract(**reader);
  EXPECT_TRUE(x.ok()) << x.status();
  std::remove(path.c_str());
  return *std::move(x);
}

// Counts what the records hold, so that the test knows it saw each case.
class Census final : public TraceSink {
 public:
  absl::Status Consume(const Record& r) override {
    ++(r.mode == Mode::kUser ? user : kernel);
    raised += r.raised.present;
    interrupts += r.taken_before.present && r.taken_before.code == 0;
    return absl::OkStatus();
  }
  uint64_t user = 0, kernel = 0, raised = 0, interrupts = 0;
};

class Tee final : public TraceSink {
 public:
  explicit Tee(std::vector<TraceSink*> sinks) : sinks_(std::move(sinks)) {}
  absl::Status Consume(const Record& r) override {
    for (TraceSink* s : sinks_) {
      if (absl::Status st = s->Consume(r); !st.ok()) return st;
    }
    return absl::OkStatus();
  }
  absl::Status Finish() override {
    for (TraceSink* s : sinks_) {
      if (absl::Status st = s->Finish(); !st.ok()) return st;
    }
    return absl::OkStatus();
  }

 private:
  std::vector<TraceSink*> sinks_;
};

TEST(TraceKernelForms, EveryFormatTheSameWithAndWithoutForms) {
  // chase walks 512 KB through the TLB (each refill raised by a load that runs again after
  // it); sort and chase share the timer and make system calls.
  const extract::Extraction x = Capture("sort,chase", 3, 400'000);
  MemoizedAndNot all({}, /*keep=*/false), users({Mode::kUser}, false),
      kernels({Mode::kKernel}, false);
  FormChecker checker;
  Census census;
  Tee tee({&all, &users, &kernels, &checker, &census});
  replay::ReplayOptions options;
  options.sink = &tee;
  auto summary = systems::Replay(x.ims, x.aes, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_TRUE(tee.Finish().ok());
  EXPECT_GT(census.user, 0u);
  EXPECT_GT(census.kernel, 0u);
  EXPECT_GT(census.raised, 0u);
  EXPECT_GT(census.interrupts, 0u);
  EXPECT_GT(checker.forms(), 100u);
  EXPECT_EQ(checker.broken(), 0u);
  for (const MemoizedAndNot* m : {&all, &users, &kernels}) m->ExpectSame();
}

}  // namespace
}  // namespace citcat::traces
