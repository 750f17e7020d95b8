// Statistics of a capture or an archive, as the thesis presents them (docs/archive-format.md,
// "Statistics"): event counts, the record-size table of Fig. 5 (raw and zstd-compressed size of
// each part of the IMS and AES), the perturbation of the traced kernel's hooks, and the CAT/IT
// curve of Fig. 4 (cumulative bus bytes against instructions executed) as an SVG plot.
#ifndef CITCAT_ARCHIVE_STATS_H_
#define CITCAT_ARCHIVE_STATS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "aes/aes.pb.h"
#include "ims/ims.pb.h"

namespace citcat::archive {

struct PartSize {
  std::string part;
  uint64_t count = 0;  // entries (records, transfers, ...)
  uint64_t raw = 0;    // serialized bytes
  uint64_t zstd = 0;   // zstd level 19
};

struct CurvePoint {
  uint64_t instructions = 0;  // retired when the record appeared on the bus
  uint64_t bus_bytes = 0;     // data bytes of all regenerated records up to this one
};

struct Stats {
  uint64_t instructions = 0;
  uint64_t records = 0;
  uint64_t bus_bytes = 0;
  uint64_t kind_records[256] = {};  // regenerated records by kind
  uint64_t kind_bytes[256] = {};
  uint64_t interrupts = 0, dma = 0, device_io = 0;
  // Replayed instructions by the privilege they ran at (traces::Mode: kernel, supervisor, user).
  uint64_t mode_instructions[3] = {};
  // Register reads the schedule answers, by register ("Count", "Cause"), in schema order.
  std::vector<std::pair<std::string, uint64_t>> register_reads;
  std::vector<PartSize> sizes;     // register echoes, DMA, interrupts, device I/O, AES, IMS, total
  uint64_t hook_instructions = 0;  // of the project's guest kernel, estimated from the events
  bool from_reset = false;         // a bare-metal program traced from reset: no hooks at all
  bool guest_halted = false;       // the run ends with the guest powering the machine off
  std::vector<CurvePoint> curve;   // at most about max_points, first and last record included
};

// Replays `ims` under `aes` (fast: no instruction is looked at) to count and to draw the curve.
absl::StatusOr<Stats> ComputeStats(const ims::InitialMachineState& ims,
                                   const aes::EventSchedule& aes, size_t max_points = 512);

// The statistics as text for a person, `source` naming what they are of.
std::string FormatStats(const Stats& stats, const std::string& source);

// Bytes of `bytes` compressed with zstd at level 19 (0 for nothing, not an empty frame's 9).
uint64_t ZstdSize(const std::string& bytes);

// The CAT/IT curve as a standalone SVG document: one polyline with one point per curve point.
std::string CurveSvg(const std::vector<CurvePoint>& curve, const std::string& title);

}  // namespace citcat::archive

#endif  // CITCAT_ARCHIVE_STATS_H_
