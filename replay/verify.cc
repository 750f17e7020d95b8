#include "replay/verify.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "cat_parser/text.h"

namespace citcat::replay {
namespace {

std::string Text(const cat::BusRecord& r, const cat::CatHeader& header) {
  return std::string(absl::StripSuffix(cat::RecordToText(r, header), "\n"));
}

// A CPU store into a reserved area: part of a state dump.
void AddDumpStore(const cat::CatHeader& header, const cat::BusRecord& r, StateDump& dump) {
  const bool port = r.kind == cat::RecordKind::kPortWrite;
  const bool write = port || r.kind == cat::RecordKind::kUncachedWrite ||
                     r.kind == cat::RecordKind::kWriteThrough ||
                     r.kind == cat::RecordKind::kWriteBack;
  if (r.master != cat::kMasterCpu || !write) return;
  if (header.MagicAt(r.address, r.data.size(),
                     port ? cat::WindowKind::kPort : cat::WindowKind::kMemoryMapped) == nullptr) {
    return;
  }
  for (size_t i = 0; i < r.data.size(); ++i) dump.bytes[r.address + i] = r.data[i];
}

}  // namespace

absl::StatusOr<StateDump> ReadStateDump(const ReplayMachine& machine, cat::CatReader& cat) {
  StateDump dump;
  // A trace from reset has none: replay starts at its first record.
  if (cat.header().from_reset) return dump;
  cat::BusRecord r;
  while (true) {
    absl::StatusOr<bool> more = cat.Next(r);
    if (!more.ok()) return more.status();
    if (!*more) {
      return absl::FailedPreconditionError(
          absl::StrCat(cat.path(), ": no begin-of-trace state dump ends in this CAT"));
    }
    AddDumpStore(cat.header(), r, dump);
    if (machine.starts_after(cat.header(), r)) {
      dump.end = cat.record_index() + 1;
      return dump;
    }
  }
}

std::string StateDumpDifference(const StateDump& original, const StateDump& regenerated,
                                const cat::CatHeader& header) {
  for (const auto& [address, byte] : regenerated.bytes) {
    const auto it = original.bytes.find(address);
    if ((it == original.bytes.end() ? 0 : it->second) == byte) continue;
    // Named by the aligned doubleword around it (a dump slot), shown from both dumps ("--" where
    // a dump stored nothing, which extraction reads as zero).
    const uint64_t slot = address & ~uint64_t{7};
    std::string where = absl::StrCat("0x", absl::Hex(slot));
    for (const cat::AddressWindow& w : header.magic) {
      if (w.Contains(slot)) {
        where = absl::StrCat(w.name, "+0x", absl::Hex(slot - w.base), " (", where, ")");
      }
    }
    std::string a, b;
    for (uint64_t x = slot; x < slot + 8; ++x) {
      const auto in_a = original.bytes.find(x), in_b = regenerated.bytes.find(x);
      absl::StrAppend(&a,
                      in_a == original.bytes.end() ? "--" : absl::StrFormat("%02x", in_a->second));
      absl::StrAppend(
          &b, in_b == regenerated.bytes.end() ? "--" : absl::StrFormat("%02x", in_b->second));
    }
    return absl::StrCat(
        "the state dump differs at ", where,
        ": the IMS does not hold the registers the original dumped\n  original:    ", a,
        "\n  regenerated: ", b);
  }
  return "";
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
  absl::StatusOr<StateDump> dump = ReadStateDump(machine, **original);
  if (!dump.ok()) return dump.status();
  absl::StatusOr<StateDump> regenerated_dump = ReadStateDump(machine, **regenerated);
  if (!regenerated_dump.ok()) return regenerated_dump.status();
  result.start = dump->end;
  if (std::string diff = StateDumpDifference(*dump, *regenerated_dump, header); !diff.empty()) {
    result.first_difference = dump->end - 1;
    result.report = absl::StrCat("record ", result.first_difference, ": ", diff);
    return result;
  }
  const uint64_t* start = &result.start;
  cat::BusRecord a, b;
  while (true) {
    absl::StatusOr<bool> more_a = (*original)->Next(a);
    if (!more_a.ok()) return more_a.status();
    absl::StatusOr<bool> more_b = (*regenerated)->Next(b);
    if (!more_b.ok()) return more_b.status();
    if (!*more_a && !*more_b) break;
    const uint64_t index = *start + result.compared;
    const uint64_t regenerated_index = regenerated_dump->end + result.compared;
    ++result.compared;
    if (*more_a != *more_b) {
      const cat::BusRecord& extra = *more_a ? a : b;
      result.report =
          absl::StrCat("record ", index, " (regenerated record ", regenerated_index, "): only the ",
                       *more_a ? "original" : "regenerated CAT", " has it (branch count ",
                       extra.branch_count, ")\n  ", Text(extra, header));
      return result;
    }
    if (std::string diff = RecordDifference(a, b, header); !diff.empty()) {
      result.report =
          absl::StrCat("record ", index, " (regenerated record ", regenerated_index, "): ", diff);
      return result;
    }
  }
  result.identical = true;
  return result;
}

absl::StatusOr<VerifyResult> ReplayAgainst(const ReplayMachine& machine,
                                           const std::string& original_path,
                                           const ims::InitialMachineState& ims,
                                           const aes::Schedule& aes, const ReplayOptions& options,
                                           ReplaySummary* summary) {
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
  absl::StatusOr<StateDump> dump = ReadStateDump(machine, original);
  if (!dump.ok()) return dump.status();
  result.start = dump->end;
  const uint64_t* start = &result.start;
  if (*start != ims.start().cat_record()) {
    return absl::FailedPreconditionError(absl::StrCat(original_path, ": replay starts at record ",
                                                      *start, ", the IMS says record ",
                                                      ims.start().cat_record()));
  }
  const cat::CatHeader& header = original.header();
  if (machine.state_dump && !ims.start().from_reset()) {
    absl::StatusOr<std::vector<cat::OwnedRecord>> records = machine.state_dump(header, ims);
    if (!records.ok()) return InvalidReplayInput(records.status().message());
    StateDump implied;
    for (const cat::OwnedRecord& r : *records) AddDumpStore(header, r.view(), implied);
    if (std::string diff = StateDumpDifference(*dump, implied, header); !diff.empty()) {
      result.first_difference = dump->end - 1;
      result.report = absl::StrCat("record ", result.first_difference, ": ", diff);
      return result;
    }
  }
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
