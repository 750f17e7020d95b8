// Damaged CATs are refused with one line that says what is wrong and where, never a crash.
#include <functional>
#include <string>
#include <vector>

#include "cat_parser/format.h"
#include "cat_parser/synthetic.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cat_parser/cat_test_util.h"

namespace citcat::cat {
namespace {

using format::Load32;
using format::Store16;
using format::Store32;
using format::Store64;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<uint8_t> ValidFile() {
  CatHeader header = SyntheticHeader(Machine::kR4400);
  return testing::EncodeCat(header, testing::OneOfEachKind(header));
}

struct Damage {
  std::string name;
  std::function<void(std::vector<uint8_t>&, size_t first_chunk)> apply;
  std::string error;  // a part of the message the reader must give
};

void PrintTo(const Damage& d, std::ostream* os) { *os << d.name; }

// Offsets inside the first chunk, whose first record starts at first + 24.
constexpr size_t kRecord = format::kChunkHeaderBytes;

const std::vector<Damage>& Damages() {
  static const auto* damages = new std::vector<Damage>{
      {"EmptyFile", [](auto& b, size_t) { b.clear(); }, "empty file"},
      {"NotACat",
       [](auto& b, size_t) {
         b.assign({'h', 'e', 'l', 'l', 'o', '\n'});
       },
       "offset 0: not a CAT file (wrong magic number)"},
      {"WrongMagic", [](auto& b, size_t) { b[3] = 'X'; }, "wrong magic"},
      {"TruncatedFileHeader", [](auto& b, size_t) { b.resize(12); }, "truncated file header"},
      {"TruncatedHeaderBody", [](auto& b, size_t) { b.resize(40); }, "truncated file header"},
      {"HeaderChecksum", [](auto& b, size_t) { b[20] ^= 0x10; }, "header checksum mismatch"},
      {"MajorVersion", [](auto& b, size_t) { Store16(&b[8], 2); },
       "offset 8: CAT version 2.0 is not supported"},
      {"AbsurdHeaderLength", [](auto& b, size_t) { Store32(&b[12], 0xFFFFFFF0u); },
       "offset 12: header length 4294967280 exceeds the limit"},
      {"UnknownHeaderField",
       [](auto& b, size_t) {
         Store16(&b[16], 0x0042);
         testing::FixHeaderCrc(b);
       },
       "offset 16: header has unknown field 66"},
      {"MissingMachine",
       [](auto& b, size_t) {
         Store16(&b[16], 0x8001);
         testing::FixHeaderCrc(b);
       },
       "header lacks machine"},
      {"UnknownMachine",
       [](auto& b, size_t) {
         b[22] = 7;
         testing::FixHeaderCrc(b);
       },
       "offset 16: header is invalid: unknown machine"},
      {"TruncatedChunkHeader", [](auto& b, size_t f) { b.resize(f + 10); },
       "truncated chunk header"},
      {"TruncatedRecord", [](auto& b, size_t f) { b.resize(f + kRecord + 40); },
       "truncated chunk payload"},
      {"FlippedDataByte", [](auto& b, size_t f) { b[f + kRecord + 30] ^= 0x01; },
       "checksum mismatch in chunk 'RECS' (records from 0)"},
      {"FlippedChunkCount", [](auto& b, size_t f) { b[f + 8] ^= 0x01; }, "checksum mismatch"},
      {"UnknownKind",
       [](auto& b, size_t f) {
         b[f + kRecord] = 0x33;
         testing::FixChunkCrc(b, f);
       },
       "record 0 has unknown kind 51"},
      {"AbsurdRecordSize",
       [](auto& b, size_t f) {
         Store32(&b[f + kRecord + 4], 0x7FFFFFFF);
         testing::FixChunkCrc(b, f);
       },
       "record 0 has 2147483647 data bytes, more than 65536"},
      {"RecordPastChunk",
       [](auto& b, size_t f) {
         Store32(&b[f + kRecord + 4], 60000);
         testing::FixChunkCrc(b, f);
       },
       "record 0 runs past its chunk"},
      {"AbsurdChunkLength", [](auto& b, size_t f) { Store32(&b[f + 4], 0x40000000); },
       "chunk payload length 1073741824 exceeds the limit"},
      {"UnknownBusMaster",
       [](auto& b, size_t f) {
         b[f + kRecord + 2] = 9;
         testing::FixChunkCrc(b, f);
       },
       "record 0 names bus master 9 but the header has 2 devices"},
      {"ChunkCountTooLarge",
       [](auto& b, size_t f) {
         Store32(&b[f + 8], Load32(&b[f + 8]) + 1);
         testing::FixChunkCrc(b, f);
       },
       "runs past its chunk"},
      {"ChunkCountTooSmall",
       [](auto& b, size_t f) {
         Store32(&b[f + 8], Load32(&b[f + 8]) - 1);
         testing::FixChunkCrc(b, f);
       },
       "chunk has bytes after its last record"},
      {"WrongFirstIndex",
       [](auto& b, size_t f) {
         Store64(&b[f + 12], 5);
         testing::FixChunkCrc(b, f);
       },
       "chunk starts at record 5 but record 0 was expected"},
      {"UnknownChunkType",
       [](auto& b, size_t f) {
         Store32(&b[f], 0x58585858);
         testing::FixChunkCrc(b, f);
       },
       "unknown chunk type 'XXXX'"},
      {"MissingEndChunk", [](auto& b, size_t) { b.resize(b.size() - format::kChunkHeaderBytes); },
       "file ends without its end chunk (truncated)"},
      {"WrongTotal",
       [](auto& b, size_t) {
         size_t done = b.size() - format::kChunkHeaderBytes;
         Store64(&b[done + 12], 99);
         testing::FixChunkCrc(b, done);
       },
       "end chunk counts 99 records but 11 were read"},
      {"BytesAfterEnd", [](auto& b, size_t) { b.push_back(0); }, "bytes after the end chunk"},
  };
  return *damages;
}

class DamagedInput : public ::testing::TestWithParam<Damage> {};

TEST_P(DamagedInput, IsRefusedWithOneLineSayingWhatAndWhere) {
  std::vector<uint8_t> bytes = ValidFile();
  GetParam().apply(bytes, testing::FirstChunkOffset(bytes));
  auto decoded = testing::DecodeCat(bytes);
  ASSERT_FALSE(decoded.ok()) << "damage went unnoticed";
  std::string message(decoded.status().message());
  EXPECT_THAT(message, HasSubstr(GetParam().error));
  EXPECT_THAT(message, HasSubstr("test.cat"));
  if (!bytes.empty()) {
    EXPECT_THAT(message, HasSubstr("offset "));
  }
  EXPECT_THAT(message, Not(HasSubstr("\n")));
}

INSTANTIATE_TEST_SUITE_P(Table, DamagedInput, ::testing::ValuesIn(Damages()),
                         [](const auto& info) { return info.param.name; });

TEST(DamagedInputExhaustive, EveryTruncationIsAnError) {
  std::vector<uint8_t> bytes = ValidFile();
  for (size_t length = 0; length < bytes.size(); length += (length < 400 ? 1 : 97)) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + length);
    EXPECT_FALSE(testing::DecodeCat(cut).ok()) << "cut at " << length;
  }
}

TEST(DamagedInputExhaustive, EveryFlippedByteOfASmallFileIsAnError) {
  CatHeader plain = SyntheticHeader(Machine::kI486);
  // And a 1.2 header: a hole, ROM in it and above memory, traced from reset.
  CatHeader from_reset = plain;
  from_reset.holes = {{0xA0000, 0x60000}};
  from_reset.roms = {{0xE0000, 0x20000}, {0xFFFF0000, 0x10000}};
  from_reset.from_reset = true;
  for (const CatHeader& header : {plain, from_reset}) {
    std::vector<OwnedRecord> records = testing::OneOfEachKind(header);
    records.resize(6);  // keep it small: every byte gets flipped
    std::vector<uint8_t> bytes = testing::EncodeCat(header, records);
    for (size_t i = 0; i < bytes.size(); ++i) {
      std::vector<uint8_t> flipped = bytes;
      flipped[i] ^= 0x40;
      EXPECT_FALSE(testing::DecodeCat(flipped).ok()) << "flip at " << i;
    }
  }
}

}  // namespace
}  // namespace citcat::cat
