// Verification: the regenerated CAT against the original, record by record (docs/replay.md).
#ifndef CITCAT_REPLAY_VERIFY_H_
#define CITCAT_REPLAY_VERIFY_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cat_parser/reader.h"
#include "cat_parser/record.h"
#include "replay/replay.h"

namespace citcat::replay {

// The index of the first record replay regenerates: the one after the record that ends the
// begin-of-trace state dump (machine.starts_after). Reads `original` up to there; the next
// Next() returns that record.
absl::StatusOr<uint64_t> SkipToReplayStart(const ReplayMachine& machine, cat::CatReader& original);

// Why two records differ ("" if identical): the field, and both records in text form.
std::string RecordDifference(const cat::BusRecord& original, const cat::BusRecord& regenerated,
                             const cat::CatHeader& header);

struct VerifyResult {
  bool identical = false;
  uint64_t compared = 0;          // records compared (equal ones, plus the first differing one)
  uint64_t start = 0;             // index in the original of regenerated record 0
  uint64_t first_difference = 0;  // index in the original of the first difference
  std::string report;             // the first difference, one paragraph ("" when identical)
};

// Compares `original` from its replay start point on with `regenerated`, header and records.
absl::StatusOr<VerifyResult> CompareCats(const ReplayMachine& machine, const std::string& original,
                                         const std::string& regenerated);

// Replays `ims` under `aes` and compares every regenerated record with `original` as it comes
// (no regenerated file): the report names whichever comes first, a replay divergence or a
// differing record. `summary` (may be null) receives the replay's figures.
absl::StatusOr<VerifyResult> ReplayAgainst(const ReplayMachine& machine,
                                           const std::string& original,
                                           const ims::InitialMachineState& ims,
                                           const aes::EventSchedule& aes,
                                           const ReplayOptions& options, ReplaySummary* summary);

}  // namespace citcat::replay

#endif  // CITCAT_REPLAY_VERIFY_H_
