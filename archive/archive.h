// The packed trace archive (docs/archive-format.md): one file holding a manifest, the IMS and the
// AES, each zstd-compressed and checksummed, from which replay regenerates the instruction trace
// and the CAT and checks them against the manifest's checksums.
#ifndef CITCAT_ARCHIVE_ARCHIVE_H_
#define CITCAT_ARCHIVE_ARCHIVE_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "aes/aes.pb.h"
#include "aes/schedule.h"
#include "cat_parser/record.h"
#include "ims/ims.pb.h"
#include "io/file.h"
#include "replay/replay.h"

namespace citcat::archive {

// CRC-64/XZ (ECMA-182 polynomial, reflected, initial value and final XOR all ones), the one xz
// uses: Crc64("123456789") is 0x995DC9BBDF1939FA. Extends `crc` (0 to start).
uint64_t Crc64(std::span<const uint8_t> bytes, uint64_t crc = 0);
// Crc64 of two pieces one after the other, from each piece's Crc64 and the second's length.
uint64_t Crc64Combine(uint64_t first, uint64_t second, uint64_t length);

// The format version `Write` puts in the file header and the manifest's first line; `Parse`
// reads versions 1 and 2, which differ only in the canonical instruction stream.
inline constexpr int kFormatVersion = 2;

// What a replay of the archive must reproduce (docs/archive-format.md, "Manifest").
struct Manifest {
  int version = kFormatVersion;  // decides how instruction_crc64 is computed
  std::string machine;           // a machine the IMS schema names (ims::MachineName)
  uint64_t instructions = 0;     // instructions retired by the replay
  uint64_t trace_entries = 0;    // entries of the canonical instruction stream
  uint64_t start_branch_count = 0;
  uint64_t start_pc = 0;
  uint64_t end_branch_count = 0;
  uint64_t records = 0;            // regenerated CAT records
  uint64_t record_bytes = 0;       // their data bytes
  uint64_t instruction_crc64 = 0;  // of the canonical instruction stream
  uint64_t cat_crc64 = 0;          // of the regenerated records, in the CAT record encoding
  uint64_t ims_bytes = 0;          // serialized sizes, uncompressed
  uint64_t aes_bytes = 0;
  std::string producer;  // of the capture, from the IMS
  // A segment of a split trace (docs/archive-format.md, "Segments"): its place, from 1, and the
  // number of segments of the split (0 in segments of older splits, which did not say); both 0
  // for a whole trace.
  uint64_t segment = 0;
  uint64_t segments = 0;

  std::string ToText() const;
  static absl::StatusOr<Manifest> FromText(absl::string_view text);
};

// Accumulates the manifest's checksums and counts during a replay. Attach() sets the callbacks of
// `options` (it makes replay look at single instructions) to compute the canonical instruction
// stream of format `version`; version 1 rebuilds each 4-byte word in the byte order of `ims`.
class ReplayChecksums {
 public:
  void Attach(replay::ReplayOptions& options, const ims::InitialMachineState& ims,
              int version = kFormatVersion);
  // For a replay that `manifest` describes: Attach at its version, and the replay bounded by its
  // instruction count (past it nothing can match, and an end point that lies would keep it going).
  void Attach(replay::ReplayOptions& options, const ims::InitialMachineState& ims,
              const Manifest& manifest);
  // The replay-derived fields of a manifest, once the replay has finished.
  void Fill(const replay::ReplaySummary& summary, Manifest& manifest) const;
  // Fill, compared with `manifest` (CompareWithManifest).
  absl::Status Check(const replay::ReplaySummary& summary, const Manifest& manifest) const;
  // Adds the sums of the replay that went on where this one ended (the next segment): as if
  // one replay had computed both.
  void Append(const ReplayChecksums& next);

 private:
  // The CRC-64 of a stream that comes a few bytes at a time, summed in blocks of 64 KiB: a call
  // per entry would cost more than the sum.
  class StreamCrc {
   public:
    static constexpr size_t kBlock = 64 << 10;
    // Room for up to `most` bytes (at most kBlock); Commit(n) counts the first n of them. A batch
    // of entries is written through one claim, so that the loop keeps its place in a register.
    uint8_t* Claim(size_t most) {
      if (used_ + most > kBlock) Sum();
      return pending_.data() + used_;
    }
    void Commit(size_t n) {
      used_ += n;
      bytes_ += n;
    }
    void Add(std::span<const uint8_t> bytes);
    uint64_t Value() const;  // the sum of everything so far
    void Append(const StreamCrc& next);

   private:
    void Sum();
    std::vector<uint8_t> pending_ = std::vector<uint8_t>(kBlock);
    size_t used_ = 0;  // bytes of pending_ not yet in crc_
    uint64_t crc_ = 0, bytes_ = 0;
  };
  uint64_t entries_ = 0, records_ = 0, record_bytes_ = 0;
  StreamCrc instructions_, cat_;
};

// The manifest's replay-derived fields against what a replay produced: OK, or one line naming
// every field that differs.
absl::Status CompareWithManifest(const Manifest& expected, const Manifest& replayed);

struct Archive {
  Manifest manifest;
  std::string ims;  // serialized ims::InitialMachineState
  // The serialized aes::EventSchedule: in memory, or left in a file (an aes.pb that Pack was
  // given, the archive ReadForReplay read) and read from there as it is used.
  std::shared_ptr<const aes::ScheduleBytes> aes;
  // Where segments 2, 3, ... begin (segment_starts.h), or none.
  ims::SegmentStarts segment_starts;
};

// Replays `state` under `schedule` once and builds the full manifest, at kFormatVersion, and the
// starts of up to `segments` segments (segment_starts.h; fewer on a short capture, none for 0 or
// 1: each costs about the memory the replay has changed and reads on from there). The schedule is
// streamed (aes::Schedule), so memory does not grow with it.
absl::StatusOr<Archive> Pack(const ims::InitialMachineState& state,
                             std::shared_ptr<const aes::ScheduleBytes> schedule,
                             uint64_t segments = 0);
absl::StatusOr<Archive> Pack(const ims::InitialMachineState& state,
                             const aes::EventSchedule& schedule, uint64_t segments = 0);

// Writes `archive` (zstd at `level`) to `out`, the AES streamed from where it is; the caller
// commits.
absl::Status Write(const Archive& archive, io::OutputFile& out, int level = 19);

// Reads and checks a whole archive: magic, version, every section's checksums, sizes and the
// manifest. Any damage is a DataLoss (or InvalidArgument) status of one line naming the offset.
// `max_content` bounds each section's decoded size (4 GiB at most; lower for fuzzing).
absl::StatusOr<Archive> Parse(std::span<const uint8_t> bytes, const std::string& name,
                              uint64_t max_content = uint64_t{4} << 30);
absl::StatusOr<Archive> Read(const std::string& path);
// Read for a replay: every check of Read, but the AES section stays in the file (checked by
// reading it through once), to be streamed from there: memory does not grow with the schedule.
absl::StatusOr<Archive> ReadForReplay(const std::string& path);
// The archive's AES as replay reads it (aes::Schedule::Parse, with the archive's message).
absl::StatusOr<aes::Schedule> ScheduleOf(const Archive& archive);
// Unpack's checks and the IMS alone.
absl::Status UnpackIms(const Archive& archive, ims::InitialMachineState& state);
// Refuses, in one line, a manifest that names a segment's place (docs/archive-format.md,
// "Segments") for an IMS and AES that are not that segment's: Unpack and OpenForReplay check it.
absl::Status CheckSegmentPlace(const Manifest& manifest, const ims::StartPoint& start,
                               const aes::EndPoint& end);

// What a replay of the archive at `path` needs (ReadForReplay, UnpackIms and ScheduleOf): the
// schedule stays in the file and is read as replay goes.
struct ReplayInput {
  Manifest manifest;
  ims::InitialMachineState ims;
  aes::Schedule schedule;
  ims::SegmentStarts segment_starts;  // checked against the rest (CheckSegmentStarts)
};
absl::StatusOr<ReplayInput> OpenForReplay(const std::string& path);

// Whether the file starts with the archive magic (to tell archives from CATs); false for "-".
bool LooksLikeArchive(const std::string& path);

// Parses the IMS and AES of an archive; refuses, in one line, an IMS for another machine than
// the manifest names.
absl::Status Unpack(const Archive& archive, ims::InitialMachineState& state,
                    aes::EventSchedule& schedule);

}  // namespace citcat::archive

#endif  // CITCAT_ARCHIVE_ARCHIVE_H_
