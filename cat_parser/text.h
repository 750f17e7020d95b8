// The text form of a CAT (docs/cat-format.md, "Text form"): for people, and for test cases
// written by hand. Both directions stream.
#ifndef CITCAT_CAT_PARSER_TEXT_H_
#define CITCAT_CAT_PARSER_TEXT_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "cat_parser/reader.h"
#include "io/file.h"

namespace citcat::cat {

std::string HeaderToText(const CatHeader& header);
std::string RecordToText(const BusRecord& record, const CatHeader& header);

// Writes the header and up to `limit` records of `reader` as text, calling `after_record` (if
// given) after each one, e.g. to show progress.
absl::Status DumpText(CatReader& reader, io::OutputFile& out,
                      uint64_t limit = std::numeric_limits<uint64_t>::max(),
                      const std::function<void()>& after_record = {});

// Reads the text form from `in` and writes the binary CAT to `out_path`. Errors name the line.
// Returns the number of records written.
absl::StatusOr<uint64_t> AssembleText(io::InputFile& in, const std::string& out_path);

}  // namespace citcat::cat

#endif  // CITCAT_CAT_PARSER_TEXT_H_
