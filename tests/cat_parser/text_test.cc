// The text form: dump and assemble are inverses, and hand-written input gets line-numbered errors.
#include "cat_parser/text.h"

#include <fstream>
#include <iterator>
#include <string>

#include "cat_parser/reader.h"
#include "cat_parser/synthetic.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cat_parser/cat_test_util.h"

namespace citcat::cat {

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string DumpToString(const std::vector<uint8_t>& bytes) {
  auto reader = CatReader::Open(io::InputFile::FromMemory("d.cat", bytes));
  EXPECT_TRUE(reader.ok()) << reader.status();
  std::string path = testing::TempPath("dump.txt");
  auto out = io::OutputFile::Create(path);
  EXPECT_TRUE(DumpText(**reader, **out).ok());
  EXPECT_TRUE((*out)->Commit().ok());
  return Slurp(path);
}

absl::StatusOr<std::vector<uint8_t>> Assemble(const std::string& text, const std::string& out) {
  auto in = io::InputFile::FromMemory("in.txt",
                                      {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  absl::StatusOr<uint64_t> n = AssembleText(*in, out);
  if (!n.ok()) return n.status();
  std::string bytes = Slurp(out);
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

class TextRoundTrip : public ::testing::TestWithParam<Machine> {};

TEST_P(TextRoundTrip, DumpThenAssembleGivesTheSameBytes) {
  CatHeader header = SyntheticHeader(GetParam());
  std::vector<uint8_t> bytes = testing::EncodeCat(header, testing::OneOfEachKind(header));
  auto again = Assemble(DumpToString(bytes), testing::TempPath("again.cat"));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, bytes);
}

INSTANTIATE_TEST_SUITE_P(Machines, TextRoundTrip,
                         ::testing::Values(Machine::kR4400, Machine::kI486),
                         [](const auto& info) { return std::string(MachineName(info.param)); });

constexpr char kHandWritten[] = R"(# a hand-written case
citcat-cat 1.0
machine i486
byte-order little
memory-bytes 0x100000     # 1 MiB
side-band branch-count
cache level=1 type=unified size=8192 line=16 ways=4 policy=write-through
device name=disk kind=port base=0x1f0 size=8
producer a test

records
fill          addr=0x1000 bc=0 flags=code data=000102030405060708090a0b0c0d0e0f
write-through addr=0x2000 bc=3 data=DEADBEEF flags=lock
dma-write     addr=0x3000 bc=4 master=disk data=aa
dma-read      addr=0x3000 bc=5 master=1 data=
interrupt-ack addr=0 bc=9 data=20
)";

TEST(TextAssemble, HandWrittenInput) {
  auto bytes = Assemble(kHandWritten, testing::TempPath("hand.cat"));
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto records = testing::DecodeCat(*bytes);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 5u);
  const OwnedRecord& fill = (*records)[0];
  EXPECT_EQ(fill.kind, RecordKind::kFill);
  EXPECT_EQ(fill.flags, kFlagCode);
  EXPECT_EQ(fill.data.size(), 16u);
  EXPECT_EQ(fill.data[15], 0x0f);
  EXPECT_THAT((*records)[1].data, ElementsAre(0xde, 0xad, 0xbe, 0xef));
  EXPECT_EQ((*records)[1].flags, kFlagLocked);
  EXPECT_EQ((*records)[2].master, 1);
  EXPECT_EQ((*records)[3].master, 1);
  EXPECT_TRUE((*records)[3].data.empty());
  EXPECT_EQ((*records)[4].kind, RecordKind::kInterruptAck);
  EXPECT_EQ((*records)[4].branch_count, 9u);
}

struct BadText {
  std::string name;
  std::string replace, with;  // an edit of kHandWritten
  std::string error;
};

void PrintTo(const BadText& b, std::ostream* os) { *os << b.name; }

class TextErrors : public ::testing::TestWithParam<BadText> {};

TEST_P(TextErrors, NameTheLineAndLeaveNoOutput) {
  std::string text = kHandWritten;
  size_t at = text.find(GetParam().replace);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, GetParam().replace.size(), GetParam().with);
  std::string out = testing::TempPath("bad.cat");
  auto bytes = Assemble(text, out);
  ASSERT_FALSE(bytes.ok());
  EXPECT_THAT(std::string(bytes.status().message()), HasSubstr(GetParam().error));
  EXPECT_FALSE(std::ifstream(out).good()) << "a partial output was left behind";
}

INSTANTIATE_TEST_SUITE_P(
    Table, TextErrors,
    ::testing::Values(
        BadText{"FirstLine", "citcat-cat 1.0", "citcat-cat 2.0", "in.txt:2: expected 'citcat-cat"},
        BadText{"UnknownMachine", "machine i486", "machine z80", "in.txt:3: unknown machine 'z80'"},
        BadText{"MissingRecordsLine", "records", "recs", "in.txt:11: unknown header line 'recs'"},
        BadText{"UnknownKind", "dma-read ", "dma-wrote ", "in.txt:15: unknown record kind"},
        BadText{"OddHex", "data=aa", "data=aaa", "in.txt:14: data must be an even number"},
        BadText{"NotHex", "data=aa", "data=zz", "in.txt:14: data has a character that is not hex"},
        BadText{"NoDevice", "master=disk", "master=net", "in.txt:14: no device 'net'"},
        BadText{"BadNumber", "bc=9", "bc=nine", "in.txt:16: 'bc=nine' is not a valid number"},
        BadText{"MissingAddress", "addr=0 bc=9", "bc=9", "in.txt:16: 'addr=' is missing"},
        BadText{"UnknownFlag", "flags=lock", "flags=lock,fast", "in.txt:13: unknown flag 'fast'"},
        BadText{"UnexpectedField", "bc=3", "bc=3 colour=red", "in.txt:13: unexpected 'colour'"},
        BadText{"BadCache", "ways=4", "ways=3", "cache level 1 geometry is invalid"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace citcat::cat
