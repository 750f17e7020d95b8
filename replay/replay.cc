#include "replay/replay.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "aes/aes_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "ims/ims_util.h"
#include "replay/engine.h"

namespace citcat::replay {
namespace {

// A trace from reset starts at the first record with the machine's reset state: the CAT shows no
// dump to compare registers with, so replay compares them here.
absl::Status CheckResetState(const ReplayMachine& machine, const cat::CatHeader& header,
                             const ims::InitialMachineState& ims) {
  const std::string name(ims::MachineName(machine.machine));
  if (!machine.reset_state) {
    return InvalidReplayInput(
        absl::StrCat("the IMS is of a trace from reset, which the ", name, " does not have"));
  }
  if (ims.start().branch_count() != 0 || ims.start().cat_record() != 0) {
    return InvalidReplayInput(
        absl::StrCat("a trace from reset starts at branch count 0 and CAT record 0; the IMS says ",
                     ims.start().branch_count(), " and ", ims.start().cat_record()));
  }
  ims::InitialMachineState expected;
  if (absl::Status s = machine.reset_state(header, expected); !s.ok()) {
    return InvalidReplayInput(s.message());
  }
  // The processor only: description, start point and memory are checked elsewhere.
  ims::InitialMachineState registers = ims;
  registers.clear_format_version();
  registers.clear_description();
  registers.clear_start();
  registers.clear_memory();
  std::string differences;
  google::protobuf::util::MessageDifferencer differ;
  differ.ReportDifferencesToString(&differences);
  if (differ.Compare(expected, registers)) return absl::OkStatus();
  const std::vector<absl::string_view> lines =
      absl::StrSplit(differences, '\n', absl::SkipWhitespace());
  return InvalidReplayInput(absl::StrCat(
      "the IMS of a trace from reset must hold the ", name,
      "'s reset state; it differs: ", lines.empty() ? absl::string_view("?") : lines.front()));
}

}  // namespace

absl::StatusOr<ReplaySummary> Replay(const ReplayMachine& machine,
                                     const ims::InitialMachineState& ims, const aes::Schedule& aes,
                                     const ReplayOptions& options) {
  // A version this reader does not know may mean its fields differently (docs/ims-aes.md).
  if (ims.format_version() != ims::kFormatVersion) {
    return InvalidReplayInput(absl::StrCat("the IMS has format version ", ims.format_version(),
                                           "; this citcat reads version ", ims::kFormatVersion));
  }
  if (aes.format_version() != aes::kFormatVersion &&
      aes.format_version() != aes::kPackedFormatVersion) {
    return InvalidReplayInput(absl::StrCat("the AES has format version ", aes.format_version(),
                                           "; this citcat reads versions ", aes::kFormatVersion,
                                           " and ", aes::kPackedFormatVersion));
  }
  if (ims.description().machine() != machine.machine) {
    return InvalidReplayInput(absl::StrCat("the IMS is a state of the ",
                                           ims::MachineName(ims.description().machine()),
                                           ", not the ", ims::MachineName(machine.machine)));
  }
  if (aes.machine() != machine.machine && aes.machine() != ims::MACHINE_UNSPECIFIED) {
    return InvalidReplayInput(absl::StrCat("the AES is a schedule of the ",
                                           ims::MachineName(aes.machine()), ", not the ",
                                           ims::MachineName(machine.machine)));
  }
  const cat::CatHeader header = machine.header(ims);
  if (ims.start().from_reset()) {
    if (absl::Status s = CheckResetState(machine, header, ims); !s.ok()) return s;
  } else if (machine.state_dump && !ims.start().segment()) {
    absl::StatusOr<std::vector<cat::OwnedRecord>> dump = machine.state_dump(header, ims);
    if (!dump.ok()) return InvalidReplayInput(dump.status().message());
    if (options.regenerated != nullptr) {
      for (const cat::OwnedRecord& r : *dump) {
        if (absl::Status s = options.regenerated->Write(r.view()); !s.ok()) return s;
      }
    }
  }
  const bool observe =
      options.trace != nullptr || options.sink != nullptr || options.on_instructions != nullptr;
  auto engine = std::make_unique<Engine>(ims, aes, options, header, observe);
  if (absl::Status s = engine->Load(machine.make_core); !s.ok()) return s;
  absl::StatusOr<ReplaySummary> result = engine->Run();
  if (result.ok() || !absl::IsAborted(result.status()) || observe) return result;
  // The fast run does not look at single instructions; replay is deterministic, so a second run
  // that does reaches the same divergence and can name the instructions that led to it.
  ReplayOptions quiet;
  quiet.max_instructions = options.max_instructions;  // else it may never reach the divergence
  auto again = std::make_unique<Engine>(ims, aes, quiet, header, /*observe=*/true);
  if (!again->Load(machine.make_core).ok()) return result;
  absl::StatusOr<ReplaySummary> second = again->Run();
  if (!second.ok() && absl::IsAborted(second.status())) return second.status();
  return result;
}

}  // namespace citcat::replay
