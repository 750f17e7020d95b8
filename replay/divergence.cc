#include "replay/divergence.h"

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace citcat::replay {
namespace {

constexpr char kRecordPayload[] = "citcat.replay/divergence-record";

}  // namespace

absl::Status DivergenceError(absl::string_view report, uint64_t cat_record) {
  absl::Status s = absl::AbortedError(report);
  s.SetPayload(kRecordPayload, absl::Cord(absl::StrCat(cat_record)));
  return s;
}

std::optional<uint64_t> DivergenceRecord(const absl::Status& status) {
  auto payload = status.GetPayload(kRecordPayload);
  uint64_t record;
  if (!payload || !absl::SimpleAtoi(std::string(*payload), &record)) return std::nullopt;
  return record;
}

absl::Status InvalidReplayInput(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("the IMS/AES cannot be replayed: ", what));
}

}  // namespace citcat::replay
