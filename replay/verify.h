// Verification: the regenerated CAT against the original, record by record (docs/replay.md).
#ifndef CITCAT_REPLAY_VERIFY_H_
#define CITCAT_REPLAY_VERIFY_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cat_parser/reader.h"
#include "cat_parser/record.h"
#include "replay/replay.h"

namespace citcat::replay {

// What a begin-of-trace state dump stored: the bytes of the CPU's writes into the header's
// reserved areas, by address (a later store over an earlier one), and the index of the first
// record after the one that ends the dump (machine.starts_after), where replay starts.
struct StateDump {
  std::map<uint64_t, uint8_t> bytes;
  uint64_t end = 0;
};

// Reads `cat` up to and including the record that ends its state dump; the next Next() returns
// the first record replay regenerates. A trace from reset has no dump: nothing is read, and the
// dump is empty with `end` 0.
absl::StatusOr<StateDump> ReadStateDump(const ReplayMachine& machine, cat::CatReader& cat);

// Why a regenerated dump differs from the original's ("" if it does not): every byte the
// regenerated one stores must be the original's, or zero where the original stored nothing (as
// extraction reads it). The original may store more, such as slots no IMS field holds.
std::string StateDumpDifference(const StateDump& original, const StateDump& regenerated,
                                const cat::CatHeader& header);

// Why two records differ ("" if identical): the field, and both records in text form.
std::string RecordDifference(const cat::BusRecord& original, const cat::BusRecord& regenerated,
                             const cat::CatHeader& header);

struct VerifyResult {
  bool identical = false;
  uint64_t compared = 0;          // records compared (equal ones, plus the first differing one)
  uint64_t start = 0;             // index in the original of the first record replay made
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
                                           const aes::Schedule& aes, const ReplayOptions& options,
                                           ReplaySummary* summary);

}  // namespace citcat::replay

#endif  // CITCAT_REPLAY_VERIFY_H_
