// A replay of the real i486 guest cut into segments (docs/archive-format.md, "Segments"): each
// segment replays alone from its own IMS and AES, and the segments' regenerated records and
// instruction traces, concatenated, are those of the whole replay, byte for byte.
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cat_parser/reader.h"
#include "gtest/gtest.h"
#include "replay/replay.h"
#include "systems/system.h"
#include "traces/output.h"
#include "traces/writers.h"

namespace citcat::replay {
namespace {

extract::Extraction Capture(const std::string& workloads, uint64_t seed, uint64_t max_traced) {
  auto system = systems::ByName("i486");
  EXPECT_TRUE(system.ok());
  systems::CaptureRequest request;
  request.workloads = workloads;
  request.seed = seed;
  request.max_traced = max_traced;
  const std::string path =
      absl::StrCat(::testing::TempDir(), "/i486-segments-", getpid(), "-", seed, ".cat");
  auto report = (*system)->capture(request, path);
  EXPECT_TRUE(report.ok()) << report.status();
  auto reader = cat::CatReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  auto x = systems::Extract(**reader);
  EXPECT_TRUE(x.ok()) << x.status();
  std::remove(path.c_str());
  return *std::move(x);
}

// A replay's regenerated records and text instruction trace.
struct Output {
  std::string records, trace;
  uint64_t instructions = 0;
};

Output ReplayOf(const ims::InitialMachineState& ims, const aes::EventSchedule& aes,
                ReplayOptions options = {}) {
  Output out;
  options.on_record = [&](const cat::BusRecord& r) {
    absl::StrAppend(&out.records, static_cast<int>(r.kind), " ", r.flags, " ", r.master, " ",
                    r.address, " ", r.branch_count, " ");
    out.records.append(reinterpret_cast<const char*>(r.data.data()), r.data.size());
    out.records += '\n';
    return absl::OkStatus();
  };
  const std::string path = absl::StrCat(::testing::TempDir(), "/segment-trace-", getpid());
  auto writer = traces::OpenWriter(traces::Format::kText, path);
  EXPECT_TRUE(writer.ok());
  options.sink = writer->get();
  auto summary = systems::Replay(ims, aes, options);
  EXPECT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE((*writer)->Finish().ok());
  auto text = traces::ReadDecompressed(path);
  EXPECT_TRUE(text.ok());
  out.trace = *text;
  if (summary.ok()) out.instructions = summary->instructions;
  std::remove(path.c_str());
  return out;
}

TEST(I486Segments, ConcatenatedSegmentsAreTheWhole) {
  // REP strings, the disk's DMA and interrupts, paging, the x87: state in the TLB and the cache
  // at every cut.
  const extract::Extraction x = Capture("rep,io,x87", 3, 4'000'000);
  const Output whole = ReplayOf(x.ims, x.aes);
  ASSERT_GT(whole.instructions, 3'000'000u);

  std::vector<Segment> segments;
  ReplayOptions cutting;
  for (uint64_t at = 350'000; at < whole.instructions; at += 350'000) {
    cutting.cut_at_instructions.push_back(at);
  }
  cutting.on_segment = [&](Segment s) {
    segments.push_back(std::move(s));
    return absl::OkStatus();
  };
  const Output cut = ReplayOf(x.ims, x.aes, cutting);
  // Cutting changes nothing in the replay that cuts.
  EXPECT_EQ(cut.records, whole.records);
  EXPECT_EQ(cut.trace, whole.trace);
  ASSERT_EQ(segments.size(), cutting.cut_at_instructions.size() + 1);

  std::string records, trace;
  uint64_t cached_lines = 0, tlb_entries = 0;
  for (size_t i = 0; i < segments.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("segment ", i));
    const Segment& s = segments[i];
    EXPECT_EQ(s.ims.start().segment(), i > 0);
    if (i > 0) {
      EXPECT_GE(s.ims.start().instructions(), cutting.cut_at_instructions[i - 1]);
    }
    cached_lines += s.ims.x86().cache().lines_size();
    tlb_entries += s.ims.x86().tlb_size();
    const Output part = ReplayOf(s.ims, s.aes);
    records += part.records;
    trace += part.trace;
  }
  EXPECT_GT(cached_lines, 1000u);
  EXPECT_GT(tlb_entries, 50u);
  EXPECT_EQ(records.size(), whole.records.size());
  EXPECT_TRUE(records == whole.records);
  EXPECT_EQ(trace.size(), whole.trace.size());
  EXPECT_TRUE(trace == whole.trace);
}

}  // namespace
}  // namespace citcat::replay
