#include "replay/replay.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "aes/aes_util.h"
#include "ims/ims_util.h"
#include "replay/engine.h"

namespace citcat::replay {
absl::StatusOr<ReplaySummary> Replay(const ReplayMachine& machine,
                                     const ims::InitialMachineState& ims,
                                     const aes::EventSchedule& aes, const ReplayOptions& options) {
  // A version this reader does not know may mean its fields differently (docs/ims-aes.md).
  if (ims.format_version() != ims::kFormatVersion) {
    return InvalidReplayInput(absl::StrCat("the IMS has format version ", ims.format_version(),
                                           "; this citcat reads version ", ims::kFormatVersion));
  }
  if (aes.format_version() != aes::kFormatVersion) {
    return InvalidReplayInput(absl::StrCat("the AES has format version ", aes.format_version(),
                                           "; this citcat reads version ", aes::kFormatVersion));
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
  if (machine.state_dump) {
    absl::StatusOr<std::vector<cat::OwnedRecord>> dump = machine.state_dump(header, ims);
    if (!dump.ok()) return InvalidReplayInput(dump.status().message());
    if (options.regenerated != nullptr) {
      for (const cat::OwnedRecord& r : *dump) {
        if (absl::Status s = options.regenerated->Write(r.view()); !s.ok()) return s;
      }
    }
  }
  const bool observe =
      options.trace != nullptr || options.sink != nullptr || options.on_instruction != nullptr;
  auto engine = std::make_unique<Engine>(ims, aes, options, header, observe);
  if (absl::Status s = engine->Load(machine.make_core); !s.ok()) return s;
  absl::StatusOr<ReplaySummary> result = engine->Run();
  if (result.ok() || !absl::IsAborted(result.status()) || observe) return result;
  // The fast run does not look at single instructions; replay is deterministic, so a second run
  // that does reaches the same divergence and can name the instructions that led to it.
  ReplayOptions quiet;
  auto again = std::make_unique<Engine>(ims, aes, quiet, header, /*observe=*/true);
  if (!again->Load(machine.make_core).ok()) return result;
  absl::StatusOr<ReplaySummary> second = again->Run();
  if (!second.ok() && absl::IsAborted(second.status())) return second.status();
  return result;
}

}  // namespace citcat::replay
