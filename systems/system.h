// The registry of traced systems: everything the pipeline's shared code needs to know of one
// machine, found by the machine a CAT or an IMS names. Adding a machine is adding one entry
// (docs/adding-a-machine.md); extract, replay, traces, archive and the CLI name no machine.
#ifndef CITCAT_SYSTEMS_SYSTEM_H_
#define CITCAT_SYSTEMS_SYSTEM_H_

#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "aes/aes.pb.h"
#include "cat_parser/record.h"
#include "ims/ims.pb.h"
#include "replay/replay.h"
#include "replay/verify.h"

namespace citcat::systems {

struct System {
  const char* name;         // "r4400": --machine, messages
  const char* description;  // one line for --help
  cat::Machine cat_machine;
  ims::Machine ims_machine;
  replay::ReplayMachine replay;
};

// Every system, in the order --help lists them.
std::span<const System> All();
// The system a --machine name, a CAT header or an IMS names; a one-line error if none.
absl::StatusOr<const System*> ByName(absl::string_view name);
absl::StatusOr<const System*> ForCat(cat::Machine machine);
absl::StatusOr<const System*> ForIms(const ims::InitialMachineState& ims);
// "r4400, i486": the names, for usage lines.
std::string Names();

// Replay of an IMS under an AES on the system the IMS names (replay::Replay).
absl::StatusOr<replay::ReplaySummary> Replay(const ims::InitialMachineState& ims,
                                             const aes::EventSchedule& aes,
                                             const replay::ReplayOptions& options);

// replay::ReplayAgainst and replay::CompareCats on the system the IMS or the original CAT names.
absl::StatusOr<replay::VerifyResult> ReplayAgainst(const std::string& original,
                                                   const ims::InitialMachineState& ims,
                                                   const aes::EventSchedule& aes,
                                                   const replay::ReplayOptions& options,
                                                   replay::ReplaySummary* summary);
absl::StatusOr<replay::VerifyResult> CompareCats(const std::string& original,
                                                 const std::string& regenerated);

// The CAT header the system the IMS names writes.
absl::StatusOr<cat::CatHeader> CatHeaderFor(const ims::InitialMachineState& ims);

}  // namespace citcat::systems

#endif  // CITCAT_SYSTEMS_SYSTEM_H_
