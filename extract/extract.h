// `citcat extract`'s entry point until the CLI has its registry of machines: the extractor
// (extractor.h) with the contract of the CAT's machine, picked here by the header. The one place
// in extract/ that names a machine; a registry passes the contract to extractor.h's Extract.
#ifndef CITCAT_EXTRACT_EXTRACT_H_
#define CITCAT_EXTRACT_EXTRACT_H_

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "cat_parser/reader.h"
#include "extract/contract.h"
#include "extract/extractor.h"

namespace citcat::extract {

// The contract of the traced system `header` names; Unimplemented for a machine without one.
absl::StatusOr<std::unique_ptr<SystemContract>> ContractFor(const cat::CatHeader& header,
                                                            absl::string_view path);

// Extract(reader, *ContractFor(reader.header()), after_record).
absl::StatusOr<Extraction> Extract(cat::CatReader& reader,
                                   const std::function<void()>& after_record = {});

}  // namespace citcat::extract

#endif  // CITCAT_EXTRACT_EXTRACT_H_
