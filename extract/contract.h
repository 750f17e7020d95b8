// What a traced system's kernel hooks promise extraction (DESIGN.md section 2: "one extract
// contract"): how the begin marker looks, how the state dump becomes the IMS, which stores to
// reserved areas are hook reports (interrupt reports, register echoes) and what interrupt
// evidence looks like on the bus. Everything else, the extractor (extractor.h) does the same way
// for every machine. Each system implements this in one file of its own (r4400_contract.h).
#ifndef CITCAT_EXTRACT_CONTRACT_H_
#define CITCAT_EXTRACT_CONTRACT_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "aes/aes.pb.h"
#include "cat_parser/record.h"
#include "ims/ims.pb.h"

namespace citcat::extract {

// The last value the CPU stored to each byte of each reserved area of the header (0 before the
// first store): the state dump, and whatever a hook stored last.
class ReservedMemory {
 public:
  explicit ReservedMemory(const cat::CatHeader& header);
  // `area` is one of the header's reserved areas.
  std::span<const uint8_t> Bytes(const cat::AddressWindow& area) const;
  void Store(const cat::AddressWindow& area, uint64_t offset, std::span<const uint8_t> data);

 private:
  const cat::CatHeader& header_;
  std::vector<std::vector<uint8_t>> bytes_;  // parallel to header_.magic
};

// A CPU store into a reserved area (an uncached store into a memory-mapped area, a port write
// into a port area), the area's bytes already updated.
struct ReservedStore {
  uint64_t index;  // of the CAT record
  const cat::BusRecord& record;
  const cat::AddressWindow& area;  // one of the header's reserved areas
  uint64_t offset;                 // of the store in the area
};

class SystemContract {
 public:
  virtual ~SystemContract() = default;

  // The machine of the IMS and AES, and its name in messages ("a port-read record on an R4400
  // bus").
  virtual ims::Machine machine() const = 0;
  virtual absl::string_view name() const = 0;

  // Checks that the header has what the hooks need (the reserved areas) and may keep pointers
  // into it: `header` outlives every later call. The message of an error says what is missing.
  virtual absl::Status Start(const cat::CatHeader& header) = 0;

  // Whether the CPU's bus has records of this kind (port I/O and interrupt acknowledges are the
  // i486's); a record of another kind is an error.
  virtual bool Carries(cat::RecordKind kind) const = 0;

  // A trace from reset (the header's from-reset field) has no begin marker and no state dump: its
  // IMS holds the processor as it is at power-on, which this fills in (the registers of the
  // `cpu` oneof), as the architecture defines it and the machine's core chooses where the
  // architecture leaves a register undefined. Called after Start. The default refuses: a system
  // that cannot be traced from reset says so.
  virtual absl::Status ResetState(ims::InitialMachineState& ims) const;

  // A trace from reset: every CPU record, before the extractor files it (and before
  // InterruptAck for an acknowledge). A system that keys interrupts from the bus alone looks at
  // what follows an interrupt acknowledge here. The default ignores it.
  virtual absl::Status ResetTraceRecord(uint64_t index, const cat::BusRecord& record,
                                        aes::EventSchedule& aes);

  // Whether the first record of the trace is the begin-of-trace marker.
  virtual bool IsBeginMarker(const cat::BusRecord& record) const = 0;

  // A store of the state dump (between the begin marker and the end of the dump, only the
  // driver runs). Returns true when this store ends the dump, after filling the IMS's processor
  // state and its start branch count from `dump`.
  virtual absl::StatusOr<bool> DumpStore(const ReservedStore& store, const ReservedMemory& dump,
                                         ims::InitialMachineState& ims) = 0;

  // After the dump: a hook report (interrupt report, register echo), into the AES. Not called in
  // a trace from reset, which has no kernel and so no hooks.
  virtual absl::Status HookStore(const ReservedStore& store, aes::EventSchedule& aes) = 0;

  // Interrupt evidence the bus shows itself: an interrupt-acknowledge record carrying the
  // vector, on a bus that `Carries` it. A contract may hold it until the hook report that gives
  // the rest of the interrupt's key (return address, REP count) arrives.
  virtual absl::Status InterruptAck(uint64_t index, const cat::BusRecord& record,
                                    aes::EventSchedule& aes);

  // The end of the trace: evidence still waiting for its other half is an error.
  virtual absl::Status Finish(aes::EventSchedule& aes);
};

}  // namespace citcat::extract

#endif  // CITCAT_EXTRACT_CONTRACT_H_
