// What `citcat extract` knows of the traced R4400 system (docs/machines/r4400-system.md): the
// begin-of-trace driver's state dump, the interrupt reports and the Count and Cause echoes.
#ifndef CITCAT_EXTRACT_R4400_H_
#define CITCAT_EXTRACT_R4400_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "extract/extract.h"
#include "extract/first_touch.h"

namespace citcat::extract {

// Instructions the driver retires from its `dmfc0 Random` (included) to the resume point
// (docs/machines/r4400-guest.md, "Driver end"): the dumped Random is this many steps ahead of
// the value replay starts with.
inline constexpr uint32_t kR4400RandomReadToResume = 37;

class R4400Extractor {
 public:
  static absl::StatusOr<std::unique_ptr<R4400Extractor>> Create(const cat::CatHeader& header,
                                                                std::string path);

  // Feeds the record with this index; records must come in file order.
  absl::Status Add(uint64_t index, const cat::BusRecord& record);
  // Checks that the trace was complete and returns the IMS and AES.
  absl::StatusOr<Extraction> Finish() &&;

 private:
  enum class Phase { kBeforeBegin, kStateDump, kReplayed };
  struct Window {
    cat::AddressWindow area;
    std::vector<uint8_t> bytes;  // the last value stored to each byte
  };

  R4400Extractor(const cat::CatHeader& header, std::string path) : header_(header), path_(path) {}
  absl::Status Error(uint64_t index, absl::string_view what) const;
  absl::Status AddStateDump(uint64_t index, const cat::BusRecord& r);
  absl::Status AddReplayed(uint64_t index, const cat::BusRecord& r);
  void DecodeState();
  bool InRam(const cat::BusRecord& r) const {
    return r.address < header_.memory_bytes && r.data.size() <= header_.memory_bytes - r.address;
  }
  // The reserved area a store falls in, or nullptr.
  Window* Area(const cat::BusRecord& r);
  uint64_t Slot(const Window& w, uint64_t offset) const;

  cat::CatHeader header_;
  std::string path_;
  Phase phase_ = Phase::kBeforeBegin;
  Window begin_, state_, tlb_, done_, exception_, cause_, count_, console_;
  FirstTouchImage memory_;
  Extraction out_;
  uint64_t cpu_transactions_ = 0;
  uint64_t replayed_records_ = 0;
  uint64_t last_branch_count_ = 0;
  uint32_t last_cause_ = 0;
  bool cause_seen_ = false;
};

}  // namespace citcat::extract

#endif  // CITCAT_EXTRACT_R4400_H_
