// The traced R4400 system's contract with extraction (docs/machines/r4400-system.md): the begin
// marker, the state dump between it and `state-done`, the interrupt reports and the Count and
// Cause echoes. The numbers are the kernel's, from machine/r4400/contract.h.
#ifndef CITCAT_EXTRACT_R4400_CONTRACT_H_
#define CITCAT_EXTRACT_R4400_CONTRACT_H_

#include <cstdint>
#include <vector>

#include "extract/contract.h"

namespace citcat::extract {

class R4400Contract : public SystemContract {
 public:
  ims::Machine machine() const override { return ims::MACHINE_R4400; }
  absl::string_view name() const override { return "R4400"; }
  absl::Status Start(const cat::CatHeader& header) override;
  absl::Status ResetState(ims::InitialMachineState& ims) const override;
  bool Carries(cat::RecordKind kind) const override;
  bool IsBeginMarker(const cat::BusRecord& record) const override;
  absl::StatusOr<bool> DumpStore(const ReservedStore& store, const ReservedMemory& dump,
                                 ims::InitialMachineState& ims) override;
  absl::Status HookStore(const ReservedStore& store, aes::EventSchedule& aes) override;

  // Whether `record` ends the state dump in a CAT with `header`: the CPU's store to `state-done`
  // (where replay starts, for verify).
  static bool EndsStateDump(const cat::CatHeader& header, const cat::BusRecord& record);
  // The state dump `ims` implies, the inverse of extraction: the begin marker, a store of each
  // value the IMS takes from the dump, and the store to `state-done` (replay writes these ahead of
  // the regenerated records, so verify compares the registers with the original's dump). An IMS
  // the dump cannot express (LL set) is an InvalidArgument error.
  static absl::StatusOr<std::vector<cat::OwnedRecord>> StateDump(
      const cat::CatHeader& header, const ims::InitialMachineState& ims);
  // The R4400's state at power-on in a system with `header` (its caches and byte order set
  // Config), into `ims.mips`: the core's cold reset (docs/machines/r4400-system.md, "Traces from
  // reset"). Extraction fills the IMS of a trace from reset with it, and replay refuses such an
  // IMS whose registers differ from it.
  static absl::Status ResetStateFor(const cat::CatHeader& header, ims::InitialMachineState& ims);

 private:
  void DecodeState(const ReservedMemory& dump, ims::MipsState& s) const;

  const cat::CatHeader* header_ = nullptr;
  const cat::AddressWindow *begin_ = nullptr, *state_ = nullptr, *tlb_ = nullptr, *done_ = nullptr,
                           *exception_ = nullptr, *cause_ = nullptr, *count_ = nullptr;
  uint32_t last_cause_ = 0;
  bool cause_seen_ = false;
};

}  // namespace citcat::extract

#endif  // CITCAT_EXTRACT_R4400_CONTRACT_H_
