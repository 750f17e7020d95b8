// The traced i486 PC's contract with extraction (docs/machines/i486-system.md, "The reserved
// area"): the begin marker, the state dump between it and `state-done` (registers, selectors
// with the descriptors they were loaded from, table and control registers, debug registers, the
// FSAVE image), and the interrupt reports that, with the interrupt acknowledge record before
// each, key the interrupts. The numbers are the kernel's, from machine/i486/contract.h.
#ifndef CITCAT_EXTRACT_I486_CONTRACT_H_
#define CITCAT_EXTRACT_I486_CONTRACT_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "extract/contract.h"

namespace citcat::extract {

class I486Contract : public SystemContract {
 public:
  ims::Machine machine() const override { return ims::MACHINE_I486; }
  absl::string_view name() const override { return "i486"; }
  absl::Status Start(const cat::CatHeader& header) override;
  bool Carries(cat::RecordKind kind) const override;
  bool IsBeginMarker(const cat::BusRecord& record) const override;
  absl::StatusOr<bool> DumpStore(const ReservedStore& store, const ReservedMemory& dump,
                                 ims::InitialMachineState& ims) override;
  absl::Status HookStore(const ReservedStore& store, aes::EventSchedule& aes) override;
  absl::Status InterruptAck(uint64_t index, const cat::BusRecord& record,
                            aes::EventSchedule& aes) override;
  absl::Status Finish(aes::EventSchedule& aes) override;
  // A trace from reset (docs/machines/i486-system.md, "Traces from reset").
  absl::Status ResetState(ims::InitialMachineState& ims) const override;
  absl::Status ResetTraceRecord(uint64_t index, const cat::BusRecord& record,
                                aes::EventSchedule& aes) override;

  // The i486's state at power-on (ReplayMachine::reset_state): a new core's, which is the
  // Intel486 manuals' state after RESET without self-test.
  static absl::Status ResetStateFor(const cat::CatHeader& header, ims::InitialMachineState& ims);
  // In a trace from reset, an interrupt's return EIP is the data of this CPU store after its
  // interrupt acknowledge, the last of the three an interrupt frame pushes at the same privilege
  // level (FLAGS, CS, IP in real mode; EFLAGS, CS, EIP through a gate).
  static constexpr int kFrameEipStore = 3;

  // Whether `record` ends the state dump in a CAT with `header`: the CPU's store to
  // `state-done` (where replay starts, for verify).
  static bool EndsStateDump(const cat::CatHeader& header, const cat::BusRecord& record);
  // The state dump `ims` implies, the inverse of extraction (ReplayMachine::state_dump): the
  // begin marker, a store of each value the IMS takes from the dump, and the `state-done` store.
  // An IMS the dump cannot express (a segment limit no descriptor can hold) is InvalidArgument.
  static absl::StatusOr<std::vector<cat::OwnedRecord>> StateDump(
      const cat::CatHeader& header, const ims::InitialMachineState& ims);

 private:
  struct Acknowledge {
    uint64_t index, branch_count;
    uint8_t vector;
    int stores = 0;  // from reset: the CPU stores seen since
  };
  bool from_reset_ = false;

  const cat::AddressWindow *begin_ = nullptr, *state_ = nullptr, *done_ = nullptr,
                           *interrupt_ = nullptr;
  std::optional<Acknowledge> ack_;  // waiting for its report
  std::optional<uint32_t> ecx_;     // the report's ECX, waiting for its EIP
};

}  // namespace citcat::extract

#endif  // CITCAT_EXTRACT_I486_CONTRACT_H_
