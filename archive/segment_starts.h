// Segment starts (docs/archive-format.md, "Segment starts"): where the segments of an archive's
// replay begin, recorded by the replay that packs it, so that `citcat replay --jobs N` starts
// every segment at once instead of cutting them out of a replay of the whole.
#ifndef CITCAT_ARCHIVE_SEGMENT_STARTS_H_
#define CITCAT_ARCHIVE_SEGMENT_STARTS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "aes/aes.pb.h"
#include "aes/schedule.h"
#include "ims/ims.pb.h"
#include "replay/replay.h"

namespace citcat::archive {

struct Manifest;

// The most starts an archive may hold (each is one segment's state, replayed by itself).
inline constexpr uint64_t kMaxSegmentStarts = 4096;

// Where a replay of `whole` under a schedule ending at `end` cuts to record `segments` starts
// (ReplayOptions::cut_at_cpu_transactions): at equal counts of CPU bus transactions, fewer
// (none) when the capture is too short for a segment to be worth its start.
std::vector<uint64_t> SegmentCuts(const ims::InitialMachineState& whole, const aes::EndPoint& end,
                                  uint64_t segments);

// Turns the segments a cutting replay of `whole` hands over (ReplayOptions::on_segment) into the
// starts of segments 2, 3, ...: each state without its description, its memory only where it
// differs from what `whole` leaves in memory.
class SegmentStartsBuilder {
 public:
  explicit SegmentStartsBuilder(const ims::InitialMachineState& whole);
  absl::Status Add(replay::Segment segment);
  const ims::SegmentStarts& starts() const { return starts_; }

 private:
  // What the whole's IMS leaves in memory at `address`.
  char WholeByte(uint64_t address) const;

  const ims::InitialMachineState& whole_;
  ims::SegmentStarts starts_;
  ims::SegmentStart next_;  // the counts so far, for the next segment's start
  bool first_ = true;
};

// Refuses, in one line, starts that cannot be the segments of the replay that `manifest` and
// `schedule` describe: out of order, outside it, or using more of the schedule than it has.
absl::Status CheckSegmentStarts(const ims::SegmentStarts& starts, const Manifest& manifest,
                                const ims::InitialMachineState& whole,
                                const aes::Schedule& schedule);

// The segments of `whole` under `schedule`, one after the other, as replay takes them: the first
// begins at `whole`, the others at their starts, each with its IMS (`whole`'s memory with the
// start's on top) and its events, read from the schedule once for all of them.
class SegmentMaker {
 public:
  SegmentMaker(const ims::InitialMachineState& whole, const aes::Schedule& schedule,
               const ims::SegmentStarts& starts);
  size_t count() const { return starts_.starts_size() + 1; }
  // The next segment; at most count() of them.
  absl::StatusOr<replay::Segment> Next();

 private:
  const ims::InitialMachineState& whole_;
  const aes::Schedule& schedule_;
  const ims::SegmentStarts& starts_;
  std::unique_ptr<aes::ScheduleReader> events_;
  size_t next_ = 0;
};

}  // namespace citcat::archive

#endif  // CITCAT_ARCHIVE_SEGMENT_STARTS_H_
