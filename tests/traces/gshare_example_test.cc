// The worked example of docs/trace-formats.md: a gshare branch predictor and a direct-mapped
// data cache fed by a replay in-process, with no trace file. Kept compiled and run here so the
// page's code stays right.
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "systems/system.h"
#include "absl/strings/str_cat.h"
#include "cat_parser/reader.h"
#include "gtest/gtest.h"
#include "replay/replay.h"
#include "tests/replay/r4400_guest.h"
#include "traces/sink.h"

namespace {

using citcat::traces::BranchKind;
using citcat::traces::Record;

// [example]
// gshare: 2^12 two-bit counters indexed by PC bits xor the global history of outcomes.
class Gshare : public citcat::traces::TraceSink {
 public:
  absl::Status Consume(const Record& r) override {
    if (r.branch != BranchKind::kConditional) return absl::OkStatus();
    const uint32_t index = ((r.pc >> 2) ^ history_) & (kEntries - 1);
    const bool predicted = counters_[index] >= 2;
    ++branches_;
    mispredicted_ += predicted != r.taken;
    if (r.taken && counters_[index] < 3) ++counters_[index];
    if (!r.taken && counters_[index] > 0) --counters_[index];
    history_ = (history_ << 1 | r.taken) & (kEntries - 1);
    return absl::OkStatus();
  }
  uint64_t branches() const { return branches_; }
  uint64_t mispredicted() const { return mispredicted_; }

 private:
  static constexpr uint32_t kEntries = 1 << 12;
  std::vector<uint8_t> counters_ = std::vector<uint8_t>(kEntries, 1);
  uint32_t history_ = 0;
  uint64_t branches_ = 0, mispredicted_ = 0;
};

// A 4 KiB direct-mapped data cache with 16-byte lines: hits and misses of loads and stores.
class DirectMappedCache : public citcat::traces::TraceSink {
 public:
  absl::Status Consume(const Record& r) override {
    for (const citcat::traces::MemoryAccess& a : r.accesses) {
      const uint64_t line = a.address >> 4;
      uint64_t& tag = tags_[line % kLines];
      if (tag == line + 1) {
        ++hits_;
      } else {
        ++misses_;
        tag = line + 1;  // 0 is an empty line
      }
    }
    return absl::OkStatus();
  }
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

 private:
  static constexpr int kLines = 4096 / 16;
  std::vector<uint64_t> tags_ = std::vector<uint64_t>(kLines, 0);
  uint64_t hits_ = 0, misses_ = 0;
};

// Two consumers on one replay.
class Both : public citcat::traces::TraceSink {
 public:
  Both(citcat::traces::TraceSink& a, citcat::traces::TraceSink& b) : a_(a), b_(b) {}
  absl::Status Consume(const Record& r) override {
    if (absl::Status s = a_.Consume(r); !s.ok()) return s;
    return b_.Consume(r);
  }

 private:
  citcat::traces::TraceSink &a_, &b_;
};
// [example]

TEST(TraceSinkExample, GshareAndCacheFedByAReplay) {
  const std::string cat_path = absl::StrCat(::testing::TempDir(), "/gshare-", getpid(), ".cat");
  citcat::replay_test::CaptureGuest(5, {}, cat_path);
  auto reader = citcat::cat::CatReader::Open(cat_path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto x = citcat::systems::Extract(**reader);
  ASSERT_TRUE(x.ok()) << x.status();

  // [run]
  Gshare gshare;
  DirectMappedCache cache;
  Both both(gshare, cache);
  citcat::replay::ReplayOptions options;
  options.sink = &both;
  absl::StatusOr<citcat::replay::ReplaySummary> summary =
      citcat::systems::Replay(x->ims, x->aes, options);
  // [run]
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_GT(gshare.branches(), 1000u);
  // The guest's loops are regular: gshare gets most of them right.
  EXPECT_LT(gshare.mispredicted() * 5, gshare.branches());
  EXPECT_GT(cache.hits(), cache.misses());
}

}  // namespace
