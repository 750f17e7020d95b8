// A replay of the real R4400 guest kernel cut into segments (docs/replay.md, "Segments"): each
// segment replays alone from its own IMS (the core's registers, TLB, caches with their dirty
// lines, a pending delay slot) and AES, and the segments' regenerated records and instruction
// traces, concatenated, are those of the whole replay, byte for byte.
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "archive/archive.h"
#include "archive/segment_starts.h"
#include "cat_parser/reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "replay/replay.h"
#include "systems/system.h"
#include "tests/support/guest_capture.h"
#include "tests/support/replay_output.h"
#include "traces/output.h"
#include "traces/sink.h"
#include "traces/writers.h"

namespace citcat::replay {
namespace {

using ::testing::HasSubstr;

using citcat::testing::ReplayOf;
using Output = citcat::testing::ReplayOutput;

// A replay's regenerated records and text trace.
Output TextReplayOf(const ims::InitialMachineState& ims, const aes::EventSchedule& aes,
                    ReplayOptions options = {}) {
  return ReplayOf(ims, aes, std::move(options), {traces::Format::kText});
}

std::vector<Segment> Cut(const extract::Extraction& x, uint64_t every, uint64_t instructions,
                         const Output& whole) {
  std::vector<Segment> segments;
  ReplayOptions cutting;
  for (uint64_t at = every; at < instructions; at += every) {
    cutting.cut_at_instructions.push_back(at);
  }
  cutting.on_segment = [&](Segment s) {
    segments.push_back(std::move(s));
    return absl::OkStatus();
  };
  const Output cut = TextReplayOf(x.ims, x.aes, cutting);
  EXPECT_TRUE(cut.status.ok()) << cut.status;
  // Cutting changes nothing in the replay that cuts.
  EXPECT_TRUE(cut.records == whole.records);
  EXPECT_TRUE(cut.traces == whole.traces);
  EXPECT_EQ(segments.size(), cutting.cut_at_instructions.size() + 1);
  for (size_t i = 1; i < segments.size() && i <= cutting.cut_at_instructions.size(); ++i) {
    EXPECT_GE(segments[i].ims.start().instructions(), cutting.cut_at_instructions[i - 1]);
  }
  return segments;
}

// Each segment replays alone, and the concatenation is the whole.
void ExpectConcatenationIsTheWhole(const std::vector<Segment>& segments, const Output& whole) {
  std::string records, trace;
  for (size_t i = 0; i < segments.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("segment ", i));
    const Segment& s = segments[i];
    EXPECT_EQ(s.ims.start().segment(), i > 0);
    const Output part = TextReplayOf(s.ims, s.aes);
    EXPECT_TRUE(part.status.ok()) << part.status;
    records += part.records;
    trace += part.traces[0];
  }
  EXPECT_EQ(records.size(), whole.records.size());
  EXPECT_TRUE(records == whole.records);
  EXPECT_EQ(trace.size(), whole.traces[0].size());
  EXPECT_TRUE(trace == whole.traces[0]);
}

struct Carried {
  uint64_t ilines = 0, dlines = 0, dirty = 0, tlb_changed = 0, delay_slots = 0;
};

Carried WhatSegmentsCarry(const std::vector<Segment>& segments) {
  Carried c;
  const ims::MipsState& first = segments.front().ims.mips();
  for (size_t i = 1; i < segments.size(); ++i) {
    const ims::MipsState& m = segments[i].ims.mips();
    c.ilines += m.primary_icache().lines_size();
    c.dlines += m.primary_dcache().lines_size();
    for (const ims::CacheLine& l : m.primary_dcache().lines()) c.dirty += l.dirty();
    bool changed = false;
    for (int e = 0; e < m.tlb_size(); ++e) {
      changed |= m.tlb(e).SerializeAsString() != first.tlb(e).SerializeAsString();
    }
    c.tlb_changed += changed;
    c.delay_slots += m.delay_slot();
  }
  return c;
}

const extract::Extraction& Kernel() {
  // Sorting in user mode, the disk's DMA and interrupts, the FPU: TLB refills, dirty lines and
  // pending interrupts at every cut.
  static const extract::Extraction* x =
      new extract::Extraction(citcat::testing::CaptureGuest("r4400", "sort,io,fp", 3, 4'000'000).x);
  return *x;
}

const Output& Whole() {
  static const Output* whole = new Output(TextReplayOf(Kernel().ims, Kernel().aes));
  return *whole;
}

// The second segment of the replay cut at `at` and 2 * `at`, without replaying on to the end.
Segment SecondSegment(uint64_t at) {
  std::vector<Segment> segments;
  ReplayOptions cutting;
  cutting.cut_at_instructions = {at, 2 * at};
  cutting.on_segment = [&](Segment s) {
    segments.push_back(std::move(s));
    return segments.size() < 2 ? absl::OkStatus() : absl::CancelledError("enough segments");
  };
  auto summary = systems::Replay(Kernel().ims, Kernel().aes, cutting);
  EXPECT_TRUE(absl::IsCancelled(summary.status())) << summary.status();
  EXPECT_EQ(segments.size(), 2u);
  return segments.size() == 2 ? segments[1] : Segment();
}

TEST(R4400Segments, ConcatenatedSegmentsAreTheWhole) {
  const Output& whole = Whole();
  ASSERT_TRUE(whole.status.ok()) << whole.status;
  ASSERT_GT(whole.instructions, 3'000'000u);
  const std::vector<Segment> segments = Cut(Kernel(), 350'000, whole.instructions, whole);
  ASSERT_GE(segments.size(), 9u);
  const Carried c = WhatSegmentsCarry(segments);
  EXPECT_GT(c.ilines, 1000u);
  EXPECT_GT(c.dlines, 1000u);
  EXPECT_GT(c.dirty, 100u);  // newer than memory: the segment's image cannot hold them
  EXPECT_GT(c.tlb_changed, 0u);
  ExpectConcatenationIsTheWhole(segments, whole);
}

// A cut asked for just before an interrupt is taken waits for the instruction after its entry:
// the trace shows the entry with that instruction, which a segment that began after the entry
// would not (the text trace would lose its "! interrupt" line).
TEST(R4400Segments, CutsWaitForTheInstructionAfterAnInterrupt) {
  const Output& whole = Whole();
  ASSERT_TRUE(whole.status.ok()) << whole.status;
  const std::vector<uint64_t> after =
      citcat::testing::InstructionsAfterInterrupts(whole.traces[0], 8);
  ASSERT_GE(after.size(), 4u);
  std::vector<Segment> segments;
  ReplayOptions cutting;
  for (uint64_t i : after) cutting.cut_at_instructions.push_back(i - 1);
  cutting.on_segment = [&](Segment s) {
    segments.push_back(std::move(s));
    return absl::OkStatus();
  };
  ASSERT_TRUE(TextReplayOf(Kernel().ims, Kernel().aes, cutting).status.ok());
  ASSERT_GE(segments.size(), 4u);
  for (size_t i = 1; i < segments.size(); ++i) {
    EXPECT_EQ(std::count(after.begin(), after.end(), segments[i].ims.start().instructions()), 0)
        << "segment " << i << " begins at a handler's first instruction";
  }
  ExpectConcatenationIsTheWhole(segments, whole);
}

// The segment starts an archive records (docs/archive-format.md, "Segment starts"): each segment
// made from the whole and its start replays alone, the concatenation is the whole, and a start
// holds only the memory that the whole's IMS does not (a cut segment holds all it reads).
TEST(R4400Segments, ArchivedStartsMakeSegmentsThatAreTheWhole) {
  const Output& whole = Whole();
  ASSERT_TRUE(whole.status.ok()) << whole.status;
  absl::StatusOr<archive::Archive> packed = archive::Pack(Kernel().ims, Kernel().aes, 6);
  ASSERT_TRUE(packed.ok()) << packed.status();
  const ims::SegmentStarts& starts = packed->segment_starts;
  ASSERT_EQ(starts.starts_size(), 5);
  absl::StatusOr<aes::Schedule> schedule = archive::ScheduleOf(*packed);  // the packed AES
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_TRUE(archive::CheckSegmentStarts(starts, packed->manifest, Kernel().ims, *schedule).ok());

  std::vector<Segment> segments;
  archive::SegmentMaker maker(Kernel().ims, *schedule, starts);
  ASSERT_EQ(maker.count(), 6u);
  for (size_t k = 0; k < maker.count(); ++k) {
    absl::StatusOr<Segment> s = maker.Next();
    ASSERT_TRUE(s.ok()) << s.status();
    segments.push_back(*std::move(s));
  }
  ExpectConcatenationIsTheWhole(segments, whole);

  // The same cuts made by a replay: the same states and events, and more memory.
  std::vector<Segment> cut;
  ReplayOptions cutting;
  cutting.cut_at_cpu_transactions =
      archive::SegmentCuts(Kernel().ims, Kernel().aes.end(), starts.starts_size() + 1);
  cutting.on_segment = [&](Segment s) {
    cut.push_back(std::move(s));
    return absl::OkStatus();
  };
  ASSERT_TRUE(systems::Replay(Kernel().ims, Kernel().aes, cutting).ok());
  ASSERT_EQ(cut.size(), segments.size());
  uint64_t start_bytes = 0, cut_bytes = 0;
  for (size_t k = 1; k < cut.size(); ++k) {
    SCOPED_TRACE(absl::StrCat("segment ", k));
    EXPECT_EQ(segments[k].ims.mips().SerializeAsString(), cut[k].ims.mips().SerializeAsString());
    EXPECT_EQ(segments[k].aes.interrupts_size(), cut[k].aes.interrupts_size());
    EXPECT_EQ(segments[k].aes.dma_size(), cut[k].aes.dma_size());
    EXPECT_EQ(segments[k].aes.device_io_size(), cut[k].aes.device_io_size());
    EXPECT_EQ(segments[k].aes.end().SerializeAsString(), cut[k].aes.end().SerializeAsString());
    for (const ims::MemoryExtent& e : starts.starts(k - 1).state().memory()) {
      start_bytes += e.data().size();
    }
    for (const ims::MemoryExtent& e : cut[k].ims.memory()) cut_bytes += e.data().size();
  }
  EXPECT_GT(start_bytes, 0u);
  EXPECT_LT(start_bytes, cut_bytes);

  // Starts that cannot be this replay's are refused, naming the start.
  ims::SegmentStarts wrong = starts;
  wrong.mutable_starts(2)->mutable_state()->mutable_start()->set_instructions(
      starts.starts(0).state().start().instructions());
  EXPECT_THAT(
      archive::CheckSegmentStarts(wrong, packed->manifest, Kernel().ims, *schedule).message(),
      HasSubstr("segment start 4 (section 'segs'): out of order"));
  wrong = starts;
  wrong.mutable_starts(4)->set_interrupts_before(schedule->interrupts() + 1);
  EXPECT_THAT(
      archive::CheckSegmentStarts(wrong, packed->manifest, Kernel().ims, *schedule).message(),
      HasSubstr("more of it than there is"));
  // Packing without starts records none; nor does an IMS whose memory is out of order, against
  // which no start's memory could be found.
  absl::StatusOr<archive::Archive> plain = archive::Pack(Kernel().ims, Kernel().aes);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->segment_starts.starts_size(), 0);
  ims::InitialMachineState unordered = Kernel().ims;
  ASSERT_GE(unordered.memory_size(), 2);
  unordered.mutable_memory()->SwapElements(0, 1);
  absl::StatusOr<archive::Archive> none = archive::Pack(unordered, Kernel().aes, 6);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->segment_starts.starts_size(), 0);
}

// Where the branches are that have a delay slot, by instruction index.
class BranchSink final : public traces::TraceSink {
 public:
  absl::Status Consume(const traces::Record& r) override {
    if (r.delay_slot) {
      if (branches.size() <= r.index) branches.resize(r.index + 1);
      branches[r.index] = true;
    }
    return absl::OkStatus();
  }
  std::vector<bool> branches;
};

// A cut asked for right at a branch with a delay slot (a branch whose own fetch missed the I-cache:
// the transaction that passes the cut is the branch's) moves on to the first flow break: never
// between the branch and its slot, and after the slot only where the branch was taken.
TEST(R4400Segments, CutsWaitForTheDelaySlot) {
  const Output& whole = Whole();
  ASSERT_TRUE(whole.status.ok()) << whole.status;
  BranchSink sink;
  std::vector<uint64_t> fetches;  // the instruction counts at code fills
  ReplayOptions scan;
  scan.sink = &sink;
  scan.on_record_retired = [&](const cat::BusRecord& r, uint64_t retired) {
    if (r.kind == cat::RecordKind::kFill && (r.flags & cat::kFlagCode)) fetches.push_back(retired);
  };
  ASSERT_TRUE(systems::Replay(Kernel().ims, Kernel().aes, scan).ok());
  std::vector<uint64_t> cuts;
  for (uint64_t at : fetches) {
    const bool branch = at < sink.branches.size() && sink.branches[at];
    if (branch && (cuts.empty() || at >= cuts.back() + 50'000)) cuts.push_back(at);
  }
  ASSERT_GE(cuts.size(), 30u);

  std::vector<Segment> segments;
  ReplayOptions cutting;
  cutting.cut_at_instructions = cuts;
  cutting.on_segment = [&](Segment s) {
    segments.push_back(std::move(s));
    return absl::OkStatus();
  };
  const Output cut = TextReplayOf(Kernel().ims, Kernel().aes, cutting);
  ASSERT_TRUE(cut.status.ok()) << cut.status;
  ASSERT_EQ(segments.size(), cuts.size() + 1);
  const Carried c = WhatSegmentsCarry(segments);
  EXPECT_EQ(c.delay_slots, 0u);
  for (size_t i = 1; i < segments.size(); ++i) {
    EXPECT_FALSE(segments[i].ims.mips().delay_slot());
    EXPECT_GT(segments[i].ims.start().instructions(), cuts[i - 1]);
  }
  ExpectConcatenationIsTheWhole(segments, whole);
}

// The D-cache's lines and their dirty bits are part of the state: a segment without them replays
// something else (stale memory, write-backs missing) or diverges.
TEST(R4400Segments, TheDataCacheIsPartOfTheState) {
  const Segment s = SecondSegment(350'000);
  ASSERT_TRUE(s.ims.start().segment());
  int dirty = 0;
  for (const ims::CacheLine& l : s.ims.mips().primary_dcache().lines()) dirty += l.dirty();
  ASSERT_GT(dirty, 0);
  const Output kept = TextReplayOf(s.ims, s.aes);
  ASSERT_TRUE(kept.status.ok()) << kept.status;
  auto differs = [&](const std::function<void(ims::MipsState&)>& edit) {
    ims::InitialMachineState ims = s.ims;
    edit(*ims.mutable_mips());
    const Output edited = TextReplayOf(ims, s.aes);
    return !edited.status.ok() || edited.records != kept.records || edited.traces != kept.traces;
  };
  EXPECT_TRUE(differs([](ims::MipsState& m) { m.clear_primary_dcache(); }));
  EXPECT_TRUE(differs([](ims::MipsState& m) {
    for (ims::CacheLine& l : *m.mutable_primary_dcache()->mutable_lines()) l.set_dirty(false);
  }));
}

TEST(R4400Segments, ACacheLineOutsideTheGeometryIsRefused) {
  const Segment s = SecondSegment(350'000);
  ASSERT_TRUE(s.ims.start().segment());
  ASSERT_GT(s.ims.mips().primary_dcache().lines_size(), 0);
  ASSERT_GT(s.ims.mips().primary_icache().lines_size(), 0);
  auto refused = [&](const std::function<void(ims::MipsState&)>& edit) {
    ims::InitialMachineState ims = s.ims;
    edit(*ims.mutable_mips());
    auto summary = systems::Replay(ims, s.aes, {});
    EXPECT_FALSE(summary.ok());
    EXPECT_TRUE(absl::IsInvalidArgument(summary.status())) << summary.status();
    return std::string(summary.status().message());
  };
  // 16 KB of 32-byte lines: 512 sets.
  EXPECT_THAT(refused([](ims::MipsState& m) {
                m.mutable_primary_dcache()->mutable_lines(0)->set_set(512);
              }),
              AllOf(HasSubstr("mips.primary_dcache"), HasSubstr("set 512"), HasSubstr("outside it"),
                    HasSubstr("512 lines of 32 bytes")));
  EXPECT_THAT(
      refused([](ims::MipsState& m) { m.mutable_primary_dcache()->mutable_lines(0)->set_way(1); }),
      HasSubstr("outside it"));
  EXPECT_THAT(refused([](ims::MipsState& m) {
                m.mutable_primary_icache()->mutable_lines(0)->mutable_data()->resize(16);
              }),
              AllOf(HasSubstr("mips.primary_icache"), HasSubstr("has 16 bytes")));
  EXPECT_THAT(refused([](ims::MipsState& m) {
                ims::CacheLine& l = *m.mutable_primary_dcache()->mutable_lines(0);
                l.set_address(l.address() ^ 0x20);  // another set's line
              }),
              HasSubstr("does not belong in that set"));
  EXPECT_THAT(refused([](ims::MipsState& m) {
                m.mutable_primary_icache()->mutable_lines(0)->set_dirty(true);
              }),
              HasSubstr("is dirty"));
  EXPECT_THAT(refused([](ims::MipsState& m) {
                *m.mutable_primary_dcache()->add_lines() = m.primary_dcache().lines(0);
              }),
              HasSubstr("the second in its set"));
  EXPECT_THAT(refused([](ims::MipsState& m) {
                *m.mutable_secondary_cache()->add_lines() = m.primary_dcache().lines(0);
              }),
              HasSubstr("no secondary cache"));
  EXPECT_THAT(refused([](ims::MipsState& m) { m.set_branch_target(m.pc() + 8); }),
              HasSubstr("branch_target is set without mips.delay_slot"));
  // A begin-of-trace IMS holds none of what a cut keeps.
  ims::InitialMachineState begin = Kernel().ims;
  *begin.mutable_mips()->mutable_primary_dcache() = s.ims.mips().primary_dcache();
  auto summary = systems::Replay(begin, Kernel().aes, {});
  EXPECT_TRUE(absl::IsInvalidArgument(summary.status())) << summary.status();
  EXPECT_THAT(summary.status().message(), HasSubstr("only a segment's start"));
  begin = Kernel().ims;
  begin.mutable_start()->set_instructions(1);
  summary = systems::Replay(begin, Kernel().aes, {});
  EXPECT_THAT(summary.status().message(), HasSubstr("only a segment's start"));
}

}  // namespace
}  // namespace citcat::replay
