// Extraction: one streaming pass over a CAT that fills the IMS and the AES (docs/ims-aes.md).
#ifndef CITCAT_EXTRACT_EXTRACT_H_
#define CITCAT_EXTRACT_EXTRACT_H_

#include <functional>

#include "absl/status/status.h"
#include "aes/aes.pb.h"
#include "cat_parser/reader.h"
#include "ims/ims.pb.h"

namespace citcat::extract {

struct Extraction {
  ims::InitialMachineState ims;
  aes::EventSchedule aes;
};

// Reads every record of `reader` once. `after_record`, if given, is called after each record
// (progress). Errors name the file, the record and what is inconsistent.
absl::StatusOr<Extraction> Extract(cat::CatReader& reader,
                                   const std::function<void()>& after_record = {});

}  // namespace citcat::extract

#endif  // CITCAT_EXTRACT_EXTRACT_H_
