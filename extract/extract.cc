#include "extract/extract.h"

#include "absl/strings/str_cat.h"
#include "extract/r4400_contract.h"

namespace citcat::extract {

absl::StatusOr<std::unique_ptr<SystemContract>> ContractFor(const cat::CatHeader& header,
                                                            absl::string_view path) {
  if (header.machine == cat::Machine::kR4400) return std::make_unique<R4400Contract>();
  return absl::UnimplementedError(absl::StrCat(
      path, ": extraction for the ", cat::MachineName(header.machine), " is not available yet"));
}

absl::StatusOr<Extraction> Extract(cat::CatReader& reader,
                                   const std::function<void()>& after_record) {
  absl::StatusOr<std::unique_ptr<SystemContract>> contract =
      ContractFor(reader.header(), reader.path());
  if (!contract.ok()) return contract.status();
  return Extract(reader, **contract, after_record);
}

}  // namespace citcat::extract
