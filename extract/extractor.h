// The machine-neutral extractor: one streaming pass over a CAT that fills the IMS and the AES
// (docs/ims-aes.md). It owns what every traced system shares: the phases (before the begin
// marker, the state dump, the replayed trace), the first-touch memory image, DMA placed by its
// bus position, the device and port queue in consumption order and the end point. What a
// particular system's hooks mean, it asks the system's contract (contract.h).
#ifndef CITCAT_EXTRACT_EXTRACTOR_H_
#define CITCAT_EXTRACT_EXTRACTOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "aes/aes.pb.h"
#include "aes/schedule.h"
#include "cat_parser/reader.h"
#include "extract/contract.h"
#include "extract/first_touch.h"
#include "ims/ims.pb.h"

namespace citcat::extract {

struct Extraction {
  ims::InitialMachineState ims;
  // With an event writer, the events still to append to it, and the end point.
  aes::EventSchedule aes;
};

class Extractor {
 public:
  // Errors name `path`. The contract must live as long as the extractor.
  static absl::StatusOr<std::unique_ptr<Extractor>> Create(const cat::CatHeader& header,
                                                           std::string path,
                                                           SystemContract& contract);

  // Hands the events over to `events` (not owned) as they come, a batch at a time, so that a
  // long trace's schedule is never held whole.
  void set_event_writer(aes::ScheduleWriter* events) { events_ = events; }
  // Feeds the record with this index; records must come in file order.
  absl::Status Add(uint64_t index, const cat::BusRecord& record);
  // Checks that the trace was complete and returns the IMS and AES.
  absl::StatusOr<Extraction> Finish() &&;

 private:
  enum class Phase { kBeforeBegin, kStateDump, kReplayed };

  Extractor(const cat::CatHeader& header, std::string path, SystemContract& contract)
      : header_(header), path_(std::move(path)), contract_(contract), reserved_(header_) {}
  absl::Status Error(uint64_t index, absl::string_view what) const;
  absl::Status AddStateDump(uint64_t index, const cat::BusRecord& r);
  absl::Status AddReplayed(uint64_t index, const cat::BusRecord& r);
  absl::Status AddDma(uint64_t index, const cat::BusRecord& r);
  void AddRom(const cat::BusRecord& r);
  // The reserved area a CPU store falls in wholly, its bytes updated; nullptr if none.
  const cat::AddressWindow* StoreReserved(const cat::BusRecord& r);
  const cat::AddressWindow* ReservedAt(const cat::BusRecord& r) const;

  const cat::CatHeader header_;
  const std::string path_;
  SystemContract& contract_;
  ReservedMemory reserved_;
  Phase phase_ = Phase::kBeforeBegin;
  FirstTouchImage memory_;
  Extraction out_;
  uint64_t cpu_transactions_ = 0;
  uint64_t replayed_records_ = 0;
  uint64_t last_branch_count_ = 0;
  aes::ScheduleWriter* events_ = nullptr;
};

// Reads every record of `reader` once, the system's hooks read by `contract`. `after_record`, if
// given, is called after each record (progress); `events`, if given, takes the events as they
// come (Extractor::set_event_writer). Errors name the file, the record and what is inconsistent.
absl::StatusOr<Extraction> Extract(cat::CatReader& reader, SystemContract& contract,
                                   const std::function<void()>& after_record = {},
                                   aes::ScheduleWriter* events = nullptr);

}  // namespace citcat::extract

#endif  // CITCAT_EXTRACT_EXTRACTOR_H_
