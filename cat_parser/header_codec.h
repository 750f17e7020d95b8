// Encoding and decoding of the CAT header body (the tagged fields of docs/cat-format.md).
#ifndef CITCAT_CAT_PARSER_HEADER_CODEC_H_
#define CITCAT_CAT_PARSER_HEADER_CODEC_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cat_parser/record.h"

namespace citcat::cat {

// Checks what the format requires of a header (known enums, window names, cache geometry).
absl::Status ValidateHeader(const CatHeader& header);

std::vector<uint8_t> EncodeHeaderBody(const CatHeader& header);

// `path` and `body_offset` (the body's offset in the file) place errors.
absl::StatusOr<CatHeader> DecodeHeaderBody(std::span<const uint8_t> body, absl::string_view path,
                                           uint64_t body_offset);

}  // namespace citcat::cat

#endif  // CITCAT_CAT_PARSER_HEADER_CODEC_H_
