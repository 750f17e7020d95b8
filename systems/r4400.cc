#include "systems/r4400.h"

#include "replay/r4400_adapter.h"

namespace citcat::systems {
namespace {

// The driver's store to the state-done area ends the state dump (docs/machines/r4400-guest.md).
bool EndsStateDump(const cat::CatHeader& header, const cat::BusRecord& r) {
  const cat::AddressWindow* done = header.FindMagic("state-done");
  return done != nullptr && r.master == cat::kMasterCpu &&
         r.kind == cat::RecordKind::kUncachedWrite && done->Contains(r.address);
}

}  // namespace

System R4400() {
  return {
      .name = "r4400",
      .description = "MIPS R4400: MIPS III, 16 KB I and D caches, write-back, big-endian",
      .cat_machine = cat::Machine::kR4400,
      .ims_machine = ims::MACHINE_R4400,
      .replay = {.machine = ims::MACHINE_R4400,
                 .make_core = replay::MakeR4400Adapter,
                 .header = replay::R4400Header,
                 .starts_after = EndsStateDump},
  };
}

}  // namespace citcat::systems
