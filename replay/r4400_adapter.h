// Replay's R4400 core adapter (core_adapter.h): the R4400 core with its caches, interrupts
// keyed by (branch count, EPC, delay slot) and the Count and Cause reads the schedule answers.
#ifndef CITCAT_REPLAY_R4400_ADAPTER_H_
#define CITCAT_REPLAY_R4400_ADAPTER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "cat_parser/record.h"
#include "ims/ims.pb.h"
#include "replay/core_adapter.h"

namespace citcat::replay {

absl::StatusOr<std::unique_ptr<CoreAdapter>> MakeR4400Adapter(const ims::InitialMachineState& ims,
                                                              Engine& engine, bool observe);

}  // namespace citcat::replay

#endif  // CITCAT_REPLAY_R4400_ADAPTER_H_
