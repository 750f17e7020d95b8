// Helpers for tests that build CAT files in memory and read them back.
#ifndef CITCAT_TESTS_CAT_PARSER_CAT_TEST_UTIL_H_
#define CITCAT_TESTS_CAT_PARSER_CAT_TEST_UTIL_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cat_parser/record.h"

namespace citcat::cat {

// ctest shows a test's parameter in its name: make a machine print as its name.
inline void PrintTo(Machine m, std::ostream* os) { *os << MachineName(m); }

}  // namespace citcat::cat

namespace citcat::cat::testing {

// A fresh path in the test's temporary directory.
std::string TempPath(const std::string& name);

// The bytes of a CAT file holding `records` under `header`.
std::vector<uint8_t> EncodeCat(const CatHeader& header, const std::vector<OwnedRecord>& records);

// Reads every record of a CAT held in memory.
absl::StatusOr<std::vector<OwnedRecord>> DecodeCat(const std::vector<uint8_t>& bytes);

// Offset of the first chunk (just past the file header).
size_t FirstChunkOffset(const std::vector<uint8_t>& bytes);
// Recomputes the checksum of the file header / of the chunk at `offset` after an edit.
void FixHeaderCrc(std::vector<uint8_t>& bytes);
void FixChunkCrc(std::vector<uint8_t>& bytes, size_t chunk_offset);

// One record of each kind, with sizes and masters that make sense for it.
std::vector<OwnedRecord> OneOfEachKind(const CatHeader& header);

}  // namespace citcat::cat::testing

#endif  // CITCAT_TESTS_CAT_PARSER_CAT_TEST_UTIL_H_
