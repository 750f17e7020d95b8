// Replay's i486 core adapter (core_adapter.h): the i486 core with its cache, interrupts keyed by
// (branch count, return EIP, ECX) and entered through an interrupt acknowledge cycle that reads
// the schedule's vector.
#ifndef CITCAT_REPLAY_I486_ADAPTER_H_
#define CITCAT_REPLAY_I486_ADAPTER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "cat_parser/record.h"
#include "ims/ims.pb.h"
#include "replay/core_adapter.h"

namespace citcat::replay {

absl::StatusOr<std::unique_ptr<CoreAdapter>> MakeI486Adapter(const ims::InitialMachineState& ims,
                                                             Engine& engine, bool observe);

}  // namespace citcat::replay

#endif  // CITCAT_REPLAY_I486_ADAPTER_H_
