// How replay reports what it cannot match: a divergence is an Aborted status of one paragraph
// that carries the CAT record it names; input that cannot be replayed at all is InvalidArgument.
#ifndef CITCAT_REPLAY_DIVERGENCE_H_
#define CITCAT_REPLAY_DIVERGENCE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace citcat::replay {

absl::Status DivergenceError(absl::string_view report, uint64_t cat_record);

// The CAT record index a divergence status names, if it is one.
std::optional<uint64_t> DivergenceRecord(const absl::Status& status);

// "the IMS/AES cannot be replayed: <what>".
absl::Status InvalidReplayInput(absl::string_view what);

}  // namespace citcat::replay

#endif  // CITCAT_REPLAY_DIVERGENCE_H_
