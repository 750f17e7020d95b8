#include "replay/verify.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cat_parser/text.h"

namespace citcat::replay {
namespace {

std::string Text(const cat::BusRecord& r, const cat::CatHeader& header) {
  return std::string(absl::StripSuffix(cat::RecordToText(r, header), "\n"));
}

}  // namespace

absl::StatusOr<uint64_t> SkipToReplayStart(const ReplayMachine& machine, cat::CatReader& original) {
  cat::BusRecord r;
  while (true) {
    absl::StatusOr<bool> more = original.Next(r);
    if (!more.ok()) return more.status();
    if (!*more) {
      return absl::FailedPreconditionError(
          absl::StrCat(original.path(), ": no begin-of-trace state dump ends in this CAT"));
    }
    if (machine.starts_after(original.header(), r)) return original.record_index() + 1;
  }
}

std::string RecordDifference(const cat::BusRecord& a, const cat::BusRecord& b,
                             const cat::CatHeader& header) {
  const char* field = nullptr;
  if (a.kind != b.kind) {
    field = "kind";
  } else if (a.address != b.address) {
    field = "address";
  } else if (a.master != b.master) {
    field = "bus master";
  } else if (a.flags != b.flags) {
    field = "flags";
  } else if (a.data.size() != b.data.size()) {
    field = "size";
  } else if (!std::equal(a.data.begin(), a.data.end(), b.data.begin())) {
    field = "data";
  } else if (a.branch_count != b.branch_count) {
    field = "branch count";
  } else {
    return "";
  }
  return absl::StrCat(field, " differs (branch counts ", a.branch_count, " and ", b.branch_count,
                      ")\n  original:    ", Text(a, header), "\n  regenerated: ", Text(b, header));
}

absl::StatusOr<VerifyResult> CompareCats(const ReplayMachine& machine,
                                         const std::string& original_path,
                                         const std::string& regenerated_path) {
  absl::StatusOr<std::unique_ptr<cat::CatReader>> original = cat::CatReader::Open(original_path);
  if (!original.ok()) return original.status();
  absl::StatusOr<std::unique_ptr<cat::CatReader>> regenerated =
      cat::CatReader::Open(regenerated_path);
  if (!regenerated.ok()) return regenerated.status();
  VerifyResult result;
  const cat::CatHeader& header = (*original)->header();
  if (!(header == (*regenerated)->header())) {
    result.report = absl::StrCat("the headers differ\n  original:\n", cat::HeaderToText(header),
                                 "  regenerated:\n", cat::HeaderToText((*regenerated)->header()));
    return result;
  }
  absl::StatusOr<uint64_t> start = SkipToReplayStart(machine, **original);
  if (!start.ok()) return start.status();
  result.start = *start;
  cat::BusRecord a, b;
  while (true) {
    absl::StatusOr<bool> more_a = (*original)->Next(a);
    if (!more_a.ok()) return more_a.status();
    absl::StatusOr<bool> more_b = (*regenerated)->Next(b);
    if (!more_b.ok()) return more_b.status();
    if (!*more_a && !*more_b) break;
    const uint64_t index = *start + result.compared;
    ++result.compared;
    if (*more_a != *more_b) {
      const cat::BusRecord& extra = *more_a ? a : b;
      result.report =
          absl::StrCat("record ", index, " (regenerated record ", result.compared - 1,
                       "): only the ", *more_a ? "original" : "regenerated CAT",
                       " has it (branch count ", extra.branch_count, ")\n  ", Text(extra, header));
      return result;
    }
    if (std::string diff = RecordDifference(a, b, header); !diff.empty()) {
      result.report =
          absl::StrCat("record ", index, " (regenerated record ", result.compared - 1, "): ", diff);
      return result;
    }
  }
  result.identical = true;
  return result;
}

absl::StatusOr<VerifyResult> ReplayAgainst(const ReplayMachine& machine,
                                           const std::string& original_path,
                                           const ims::InitialMachineState& ims,
                                           const aes::EventSchedule& aes,
                                           const ReplayOptions& options, ReplaySummary* summary) {
  absl::StatusOr<std::unique_ptr<cat::CatReader>> reader = cat::CatReader::Open(original_path);
  if (!reader.ok()) return reader.status();
  cat::CatReader& original = **reader;
  VerifyResult result;
  if (const cat::CatHeader header = machine.header(ims); !(original.header() == header)) {
    result.report =
        absl::StrCat("the headers differ\n  original:\n", cat::HeaderToText(original.header()),
                     "  regenerated:\n", cat::HeaderToText(header));
    return result;
  }
  absl::StatusOr<uint64_t> start = SkipToReplayStart(machine, original);
  if (!start.ok()) return start.status();
  result.start = *start;
  if (*start != ims.start().cat_record()) {
    return absl::FailedPreconditionError(absl::StrCat(original_path, ": replay starts at record ",
                                                      *start, ", the IMS says record ",
                                                      ims.start().cat_record()));
  }
  const cat::CatHeader& header = original.header();
  bool differs = false;
  ReplayOptions compare = options;
  compare.on_record = [&](const cat::BusRecord& b) -> absl::Status {
    if (options.on_record) {
      if (absl::Status s = options.on_record(b); !s.ok()) return s;
    }
    const uint64_t index = *start + result.compared++;
    cat::BusRecord a;
    absl::StatusOr<bool> more = original.Next(a);
    if (!more.ok()) return more.status();
    if (!*more) {
      result.report =
          absl::StrCat("record ", index, ": only the regenerated CAT has it\n  ", Text(b, header));
    } else if (std::string diff = RecordDifference(a, b, header); !diff.empty()) {
      result.report =
          absl::StrCat("record ", index, " (regenerated record ", result.compared - 1, "): ", diff);
    } else {
      return absl::OkStatus();
    }
    differs = true;
    result.first_difference = index;
    return absl::CancelledError("the regenerated record differs");
  };
  absl::StatusOr<ReplaySummary> replayed = Replay(machine, ims, aes, compare);
  if (differs) return result;
  if (!replayed.ok()) {
    std::optional<uint64_t> record = DivergenceRecord(replayed.status());
    if (!record) return replayed.status();
    result.first_difference = *record;
    result.report = std::string(replayed.status().message());
    return result;
  }
  if (summary != nullptr) *summary = *replayed;
  cat::BusRecord a;
  absl::StatusOr<bool> more = original.Next(a);
  if (!more.ok()) return more.status();
  if (*more) {
    result.first_difference = original.record_index();
    result.report = absl::StrCat("record ", original.record_index(),
                                 ": only the original has it\n  ", Text(a, header));
    return result;
  }
  result.identical = true;
  return result;
}

}  // namespace citcat::replay
