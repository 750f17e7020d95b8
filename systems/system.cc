#include "systems/system.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cat_parser/reader.h"
#include "systems/i486.h"
#include "systems/r4400.h"

namespace citcat::systems {
namespace {

const System kSystems[] = {
    R4400(),
    I486(),
};

}  // namespace

std::span<const System> All() { return kSystems; }

std::string Names() {
  return absl::StrJoin(kSystems, ", ",
                       [](std::string* out, const System& s) { absl::StrAppend(out, s.name); });
}

absl::StatusOr<const System*> ByName(absl::string_view name) {
  for (const System& s : kSystems) {
    if (name == s.name) return &s;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown machine '", name, "' (machines: ", Names(), ")"));
}

absl::StatusOr<const System*> ForCat(cat::Machine machine) {
  for (const System& s : kSystems) {
    if (machine == s.cat_machine) return &s;
  }
  return absl::UnimplementedError(
      absl::StrCat("the ", cat::MachineName(machine), " is not supported yet"));
}

absl::StatusOr<const System*> ForIms(const ims::InitialMachineState& ims) {
  for (const System& s : kSystems) {
    if (ims.description().machine() == s.ims_machine) return &s;
  }
  return absl::InvalidArgumentError(absl::StrCat("the IMS names no machine this build supports (",
                                                 ims::Machine_Name(ims.description().machine()),
                                                 ")"));
}

absl::StatusOr<replay::ReplaySummary> Replay(const ims::InitialMachineState& ims,
                                             const aes::Schedule& aes,
                                             const replay::ReplayOptions& options) {
  absl::StatusOr<const System*> system = ForIms(ims);
  if (!system.ok()) return replay::InvalidReplayInput(system.status().message());
  return replay::Replay((*system)->replay, ims, aes, options);
}

absl::StatusOr<replay::VerifyResult> ReplayAgainst(const std::string& original,
                                                   const ims::InitialMachineState& ims,
                                                   const aes::Schedule& aes,
                                                   const replay::ReplayOptions& options,
                                                   replay::ReplaySummary* summary) {
  absl::StatusOr<const System*> system = ForIms(ims);
  if (!system.ok()) return replay::InvalidReplayInput(system.status().message());
  return replay::ReplayAgainst((*system)->replay, original, ims, aes, options, summary);
}

absl::StatusOr<replay::VerifyResult> CompareCats(const std::string& original,
                                                 const std::string& regenerated) {
  absl::StatusOr<std::unique_ptr<cat::CatReader>> reader = cat::CatReader::Open(original);
  if (!reader.ok()) return reader.status();
  absl::StatusOr<const System*> system = ForCat((*reader)->header().machine);
  if (!system.ok())
    return absl::Status(system.status().code(),
                        absl::StrCat(original, ": ", system.status().message()));
  return replay::CompareCats((*system)->replay, original, regenerated);
}

absl::StatusOr<extract::Extraction> Extract(cat::CatReader& reader,
                                            const std::function<void()>& after_record,
                                            aes::ScheduleWriter* events) {
  absl::StatusOr<const System*> system = ForCat(reader.header().machine);
  if (!system.ok()) {
    return absl::Status(system.status().code(),
                        absl::StrCat(reader.path(), ": ", system.status().message()));
  }
  std::unique_ptr<extract::SystemContract> contract = (*system)->make_contract();
  return extract::Extract(reader, *contract, after_record, events);
}

absl::StatusOr<cat::CatHeader> CatHeaderFor(const ims::InitialMachineState& ims) {
  absl::StatusOr<const System*> system = ForIms(ims);
  if (!system.ok()) return system.status();
  return (*system)->replay.header(ims);
}

}  // namespace citcat::systems
