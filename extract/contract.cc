#include "extract/contract.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace citcat::extract {

ReservedMemory::ReservedMemory(const cat::CatHeader& header) : header_(header) {
  for (const cat::AddressWindow& w : header.magic) bytes_.emplace_back(w.size);
}

std::span<const uint8_t> ReservedMemory::Bytes(const cat::AddressWindow& area) const {
  return bytes_[&area - header_.magic.data()];
}

void ReservedMemory::Store(const cat::AddressWindow& area, uint64_t offset,
                           std::span<const uint8_t> data) {
  std::copy(data.begin(), data.end(), bytes_[&area - header_.magic.data()].begin() + offset);
}

absl::Status SystemContract::InterruptAck(uint64_t, const cat::BusRecord&, aes::EventSchedule&) {
  return absl::FailedPreconditionError(
      absl::StrCat("an interrupt acknowledge the ", name(), " contract does not expect"));
}

absl::Status SystemContract::ResetState(ims::InitialMachineState&) const {
  return absl::UnimplementedError(
      absl::StrCat("a trace from reset, which the ", name(), " contract does not know"));
}

absl::Status SystemContract::ResetTraceRecord(uint64_t, const cat::BusRecord&,
                                              aes::EventSchedule&) {
  return absl::OkStatus();
}

absl::Status SystemContract::Finish(aes::EventSchedule&) { return absl::OkStatus(); }

}  // namespace citcat::extract
