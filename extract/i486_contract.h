// The traced i486 PC's contract with extraction (docs/machines/i486-system.md, "The reserved
// area"): the begin marker, the state dump between it and `state-done` (registers, selectors
// with the descriptors they were loaded from, table and control registers, debug registers, the
// FSAVE image), and the interrupt reports that, with the interrupt acknowledge record before
// each, key the interrupts. The numbers are the kernel's, from machine/i486/contract.h.
#ifndef CITCAT_EXTRACT_I486_CONTRACT_H_
#define CITCAT_EXTRACT_I486_CONTRACT_H_

#include <cstdint>
#include <optional>
#include <span>
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
  // The frames an external interrupt pushes, in the order of their stores (to descending
  // addresses on one stack, all of the gate's size: words in real mode and through a 16-bit gate):
  // at the handler's privilege level (or in real mode) FLAGS, CS, EIP; from an outer ring SS, ESP,
  // EFLAGS, CS, EIP; from virtual-8086 mode GS, FS, DS, ES, SS, ESP, EFLAGS, CS, EIP (dwords).
  enum class Frame { kSameLevel, kOuterRing, kV86 };
  static constexpr int FrameStores(Frame f) {
    return f == Frame::kSameLevel ? 3 : f == Frame::kOuterRing ? 5 : 9;
  }
  static const char* FrameName(Frame f);
  // A CPU store after an interrupt acknowledge (locked ones, a page table's accessed and dirty
  // bits, are no pushes and are left out).
  struct FrameStore {
    uint64_t address;
    uint32_t value;
    int size;
  };
  static constexpr int kMaxFrameStores = 9;
  // In a trace from reset, the frame that the first CPU stores after an interrupt acknowledge
  // are, from their values alone (docs/machines/i486-system.md, "Traces from reset"): the only
  // frame they fit; nullopt while more stores may still rule one out; an error if none or
  // several fit. `complete`: no store after these belongs to the frame (the next acknowledge,
  // the end of the trace), so frames longer than `stores` do not fit.
  static absl::StatusOr<std::optional<Frame>> FindFrame(std::span<const FrameStore> stores,
                                                        bool complete);

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
    std::vector<FrameStore> stores = {};  // from reset: the first CPU stores since
  };
  // From reset: keys the waiting acknowledge once its stores fit one frame (or, `complete`, once
  // no more can come); an error if they fit none or several.
  absl::Status PlaceFrame(bool complete, aes::EventSchedule& aes);
  bool from_reset_ = false;

  const cat::AddressWindow *begin_ = nullptr, *state_ = nullptr, *done_ = nullptr,
                           *interrupt_ = nullptr;
  std::optional<Acknowledge> ack_;  // waiting for its report
  std::optional<uint32_t> ecx_;     // the report's ECX, waiting for its EIP
};

}  // namespace citcat::extract

#endif  // CITCAT_EXTRACT_I486_CONTRACT_H_
