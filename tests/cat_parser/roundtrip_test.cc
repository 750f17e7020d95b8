// Whatever the writer writes, the reader gives back unchanged.
#include <unistd.h>

#include <filesystem>
#include <vector>

#include "cat_parser/format.h"
#include "cat_parser/reader.h"
#include "cat_parser/synthetic.h"
#include "cat_parser/writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cat_parser/cat_test_util.h"

namespace citcat::cat {

namespace {

using testing::DecodeCat;
using ::testing::ElementsAreArray;
using testing::EncodeCat;
using ::testing::HasSubstr;

class RoundTrip : public ::testing::TestWithParam<Machine> {};

TEST_P(RoundTrip, EveryRecordKind) {
  CatHeader header = SyntheticHeader(GetParam());
  std::vector<OwnedRecord> records = testing::OneOfEachKind(header);
  auto decoded = DecodeCat(EncodeCat(header, records));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_THAT(*decoded, ElementsAreArray(records));
}

TEST_P(RoundTrip, HeaderFields) {
  CatHeader header = SyntheticHeader(GetParam());
  header.producer = "citcat capture --seed 7 --workload sort,hash";
  auto reader = CatReader::Open(io::InputFile::FromMemory("h.cat", EncodeCat(header, {})));
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->header(), header);
  BusRecord r;
  auto more = (*reader)->Next(r);
  ASSERT_TRUE(more.ok()) << more.status();
  EXPECT_FALSE(*more);
}

TEST_P(RoundTrip, ManyChunks) {
  CatHeader header = SyntheticHeader(GetParam());
  SyntheticRecords source(header, 42);
  std::vector<OwnedRecord> records;
  for (int i = 0; i < 20000; ++i) records.emplace_back(source.Next());
  std::vector<uint8_t> bytes = EncodeCat(header, records);
  EXPECT_GT(bytes.size(), 10 * format::kTargetChunkPayload);
  auto decoded = DecodeCat(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_THAT(*decoded, ElementsAreArray(records));
}

INSTANTIATE_TEST_SUITE_P(Machines, RoundTrip, ::testing::Values(Machine::kR4400, Machine::kI486),
                         [](const auto& info) { return std::string(MachineName(info.param)); });

TEST(ReaderPosition, ReportsIndexAndOffsetOfEachRecord) {
  CatHeader header = SyntheticHeader(Machine::kR4400);
  std::vector<OwnedRecord> records = testing::OneOfEachKind(header);
  std::vector<uint8_t> bytes = EncodeCat(header, records);
  auto reader = CatReader::Open(io::InputFile::FromMemory("p.cat", bytes));
  ASSERT_TRUE(reader.ok());
  BusRecord r;
  uint64_t expected_offset = testing::FirstChunkOffset(bytes) + format::kChunkHeaderBytes;
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(*(*reader)->Next(r));
    EXPECT_EQ((*reader)->record_index(), i);
    EXPECT_EQ((*reader)->record_offset(), expected_offset);
    expected_offset += format::kRecordHeaderBytes + r.data.size();
  }
}

// Later minor versions may add optional things; this reader must pass over them.
TEST(ForwardCompatibility, SkipsOptionalKindsChunksAndTagsAndAcceptsNewerMinor) {
  CatHeader header = SyntheticHeader(Machine::kR4400);
  std::vector<OwnedRecord> records = testing::OneOfEachKind(header);
  std::vector<OwnedRecord> with_optional = records;
  OwnedRecord optional;
  optional.kind = static_cast<RecordKind>(0x90);
  optional.data = {1, 2, 3};
  with_optional.insert(with_optional.begin() + 2, optional);
  std::vector<uint8_t> bytes = EncodeCat(header, with_optional);

  // Newer minor version, unknown flag bit and an optional header tag.
  format::Store16(&bytes[10], 7);
  size_t body_end = testing::FirstChunkOffset(bytes) - 4;
  const uint8_t tag[] = {0x00, 0x90, 2, 0, 0, 0, 0xAB, 0xCD};
  bytes.insert(bytes.begin() + body_end, std::begin(tag), std::end(tag));
  format::Store32(&bytes[12], format::Load32(&bytes[12]) + sizeof tag);
  testing::FixHeaderCrc(bytes);
  // An optional chunk ("note") before the first record chunk.
  size_t first = testing::FirstChunkOffset(bytes);
  std::vector<uint8_t> note(format::kChunkHeaderBytes + 5, 0);
  format::Store32(&note[0], 0x65746F6E);  // "note"
  format::Store32(&note[4], 5);
  bytes.insert(bytes.begin() + first, note.begin(), note.end());
  testing::FixChunkCrc(bytes, first);

  auto decoded = DecodeCat(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_THAT(*decoded, ElementsAreArray(records));
}

TEST(Writer, RejectsWhatTheFormatCannotHold) {
  CatHeader header = SyntheticHeader(Machine::kR4400);
  std::string path = testing::TempPath("reject.cat");
  auto writer = CatWriter::Create(path, header);
  ASSERT_TRUE(writer.ok());
  std::vector<uint8_t> big(kMaxRecordData + 1);
  BusRecord r;
  r.data = big;
  EXPECT_THAT(std::string((*writer)->Write(r).message()), HasSubstr("more than 65536"));
  r.data = {};
  r.master = 9;
  EXPECT_THAT(std::string((*writer)->Write(r).message()), HasSubstr("bus master 9"));
  r.master = 0;
  r.kind = static_cast<RecordKind>(0x33);
  EXPECT_THAT(std::string((*writer)->Write(r).message()), HasSubstr("unknown kind"));

  header.magic.push_back({"bad name", WindowKind::kMemoryMapped, 0, 4});
  EXPECT_FALSE(CatWriter::Create(testing::TempPath("bad.cat"), header).ok());
}

TEST(Writer, LeavesNoFileUnlessFinished) {
  std::string path = testing::TempPath("unfinished.cat");
  {
    auto writer = CatWriter::Create(path, SyntheticHeader(Machine::kI486));
    ASSERT_TRUE(writer.ok());
    BusRecord r;
    ASSERT_TRUE((*writer)->Write(r).ok());
  }
  EXPECT_NE(access(path.c_str(), F_OK), 0);
  std::string dir = path.substr(0, path.rfind('/'));
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().string().find(path), std::string::npos) << entry.path();
  }
}

}  // namespace
}  // namespace citcat::cat
