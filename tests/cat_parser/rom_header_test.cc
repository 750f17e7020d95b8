// The header fields of CAT 1.2: read-only memory outside RAM and the trace from reset. Both survive
// the binary and the text form, make the file a 1.2 file (and only they do), are required fields
// a reader without them refuses, and bad values are refused in one line; RomAt finds ROM exactly
// at its edges, and IsMemory never counts it as RAM.
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cat_parser/format.h"
#include "cat_parser/reader.h"
#include "cat_parser/synthetic.h"
#include "cat_parser/text.h"
#include "cat_parser/writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cat_parser/cat_test_util.h"

namespace citcat::cat {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

static_assert(format::kTagRom < format::kFirstOptionalTag &&
              format::kTagFromReset < format::kFirstOptionalTag);

// A PC-like header traced from reset: 16 MiB with the 0xA0000-0xFFFFF hole, a frame buffer in the
// hole, the boot ROM at the top of 4 GiB and its copy below 1 MiB, a reserved area above RAM.
CatHeader RomHeader() {
  CatHeader h = SyntheticHeader(Machine::kI486);
  h.memory_bytes = 16 << 20;
  h.holes = {{0xA0000, 0x60000}};
  h.roms = {{0xE0000, 0x20000}, {0xFFFF0000, 0x10000}};
  h.from_reset = true;
  h.devices = {{"uart", WindowKind::kPort, 0x3f8, 8},
               {"vga", WindowKind::kMemoryMapped, 0xA0000, 0x20000}};
  h.magic = {{"report", WindowKind::kMemoryMapped, 0xFEE00000, 8}};
  return h;
}

// The offset of the first ROM field's value: after the machine, byte order and memory size fields
// and the one hole, which the writer puts first.
constexpr size_t kFirstRomValue = format::kFileHeaderPrefix + 7 + 7 + 14 + 22 + 6;
// The from-reset field's tag: after both ROM fields.
constexpr size_t kFromResetTag = kFirstRomValue - 6 + 2 * 22;

TEST(RomHeader, RoundTripsInTheBinaryFormAsVersionOneTwo) {
  const CatHeader header = RomHeader();
  std::vector<uint8_t> bytes = testing::EncodeCat(header, testing::OneOfEachKind(header));
  EXPECT_EQ(format::Load16(&bytes[10]), format::kMinorVersionRom);
  EXPECT_EQ(format::Load16(&bytes[kFirstRomValue - 6]), format::kTagRom);
  EXPECT_EQ(format::Load16(&bytes[kFromResetTag]), format::kTagFromReset);
  EXPECT_EQ(format::Load32(&bytes[kFromResetTag + 2]), 0u);  // no value
  auto reader = CatReader::Open(io::InputFile::FromMemory("r.cat", bytes));
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->header(), header);
}

TEST(RomHeader, EachFieldAloneMakesAOneTwoFileAndHolesAloneAOneOne) {
  auto minor = [](const CatHeader& h) { return format::Load16(&testing::EncodeCat(h, {})[10]); };
  CatHeader h = RomHeader();
  EXPECT_EQ(minor(h), 2);
  h.from_reset = false;
  EXPECT_EQ(minor(h), 2);
  h.roms.clear();
  EXPECT_EQ(minor(h), 1);
  h.from_reset = true;
  EXPECT_EQ(minor(h), 2);
  h.holes.clear();
  EXPECT_EQ(minor(h), 2);
  h.from_reset = false;
  EXPECT_EQ(minor(h), 0);
}

TEST(RomHeader, RoundTripsInTheTextForm) {
  const CatHeader header = RomHeader();
  std::vector<uint8_t> bytes = testing::EncodeCat(header, testing::OneOfEachKind(header));
  std::string text = HeaderToText(header);
  EXPECT_THAT(text, HasSubstr("\nrom base=0xe0000 size=0x20000\nrom base=0xffff0000 size=0x10000\n"
                              "from-reset\n"));
  auto reader = CatReader::Open(io::InputFile::FromMemory("r.cat", bytes));
  ASSERT_TRUE(reader.ok());
  BusRecord r;
  while (*(*reader)->Next(r)) text += RecordToText(r, header);
  auto in = io::InputFile::FromMemory("in.txt",
                                      {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  std::string path = testing::TempPath("rom.cat");
  ASSERT_TRUE(AssembleText(*in, path).ok());
  std::ifstream again(path, std::ios::binary);
  EXPECT_EQ(std::vector<uint8_t>(std::istreambuf_iterator<char>(again), {}), bytes);
}

// What a reader that does not know the fields does: it refuses the file, since they are required
// (tags below 0x8000), here shown with the tags moved to ones this reader does not know.
TEST(RomHeader, AReaderWithoutTheFieldsRefusesTheFile) {
  for (size_t at : {kFirstRomValue - 6, kFromResetTag}) {
    std::vector<uint8_t> bytes = testing::EncodeCat(RomHeader(), {});
    format::Store16(&bytes[at], 0x0042);
    testing::FixHeaderCrc(bytes);
    auto decoded = testing::DecodeCat(bytes);
    ASSERT_FALSE(decoded.ok());
    EXPECT_THAT(std::string(decoded.status().message()), HasSubstr("header has unknown field 66"));
  }
}

struct BadRom {
  std::string name;
  uint64_t base, size;
  std::string error;
};
void PrintTo(const BadRom& b, std::ostream* os) { *os << b.name; }

class BadRoms : public ::testing::TestWithParam<BadRom> {};

// The first ROM rewritten in the file: the reader refuses it in one line, and so do the writer
// and the text form.
TEST_P(BadRoms, AreRefusedInOneLine) {
  CatHeader header = RomHeader();
  std::vector<uint8_t> bytes = testing::EncodeCat(header, {});
  ASSERT_EQ(format::Load16(&bytes[kFirstRomValue - 6]), format::kTagRom);
  format::Store64(&bytes[kFirstRomValue], GetParam().base);
  format::Store64(&bytes[kFirstRomValue + 8], GetParam().size);
  testing::FixHeaderCrc(bytes);
  auto decoded = testing::DecodeCat(bytes);
  ASSERT_FALSE(decoded.ok());
  std::string message(decoded.status().message());
  EXPECT_THAT(message, HasSubstr(GetParam().error));
  EXPECT_THAT(message, HasSubstr("test.cat: offset "));
  EXPECT_THAT(message, Not(HasSubstr("\n")));

  header.roms[0] = {GetParam().base, GetParam().size};
  EXPECT_THAT(std::string(CatWriter::Create(testing::TempPath("w.cat"), header).status().message()),
              HasSubstr(GetParam().error));
  std::string text = HeaderToText(header);
  auto in = io::InputFile::FromMemory("in.txt",
                                      {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  EXPECT_THAT(std::string(AssembleText(*in, testing::TempPath("t.cat")).status().message()),
              HasSubstr(GetParam().error));
}

INSTANTIATE_TEST_SUITE_P(
    Table, BadRoms,
    ::testing::Values(
        BadRom{"Empty", 0xE0000, 0, "ROM at 0xe0000 of 0x0 bytes is empty"},
        BadRom{"Wrapping", 0xFFFFFFFFFFFFF000, 0x2000, "runs past the address space"},
        BadRom{"InRam", 0x10000, 0x1000, "overlaps main memory outside its holes"},
        BadRom{"PartlyInTheHole", 0xF0000, 0x20000, "overlaps main memory outside its holes"},
        BadRom{"AcrossTheEndOfMemory", 0xFFF000, 0x2000, "overlaps main memory outside its holes"},
        BadRom{"OverlapsTheNext", 0xFFFEF000, 0x2000,
               "ROM at 0xffff0000 of 0x10000 bytes overlaps the one before"},
        BadRom{"OutOfOrder", 0xFFFFF000, 0x10, "out of address order"},
        BadRom{"OverADevice", 0xBF000, 0x2000, "overlaps 'vga'"},
        BadRom{"OverAReservedArea", 0xFEDFFFFC, 8, "overlaps 'report'"}),
    [](const auto& info) { return info.param.name; });

TEST(RomHeader, FieldsOfTheWrongShapeAreRefused) {
  {
    std::vector<uint8_t> bytes = testing::EncodeCat(RomHeader(), {});
    format::Store32(&bytes[kFirstRomValue - 4], 15);
    testing::FixHeaderCrc(bytes);
    auto decoded = testing::DecodeCat(bytes);
    ASSERT_FALSE(decoded.ok());
    EXPECT_THAT(std::string(decoded.status().message()),
                HasSubstr("ROM field has the wrong length"));
  }
  {
    // The from-reset field given a value (the byte after it in the body becomes the value).
    std::vector<uint8_t> bytes = testing::EncodeCat(RomHeader(), {});
    format::Store32(&bytes[kFromResetTag + 2], 1);
    testing::FixHeaderCrc(bytes);
    auto decoded = testing::DecodeCat(bytes);
    ASSERT_FALSE(decoded.ok());
    EXPECT_THAT(std::string(decoded.status().message()), HasSubstr("field 11 has length 1"));
  }
  {
    // A second empty from-reset field.
    std::vector<uint8_t> bytes = testing::EncodeCat(RomHeader(), {});
    const uint8_t twice[] = {0x0B, 0x00, 0, 0, 0, 0};
    bytes.insert(bytes.begin() + kFromResetTag, std::begin(twice), std::end(twice));
    format::Store32(&bytes[12], format::Load32(&bytes[12]) + sizeof twice);
    testing::FixHeaderCrc(bytes);
    auto decoded = testing::DecodeCat(bytes);
    ASSERT_FALSE(decoded.ok());
    EXPECT_THAT(std::string(decoded.status().message()), HasSubstr("field 11 repeated"));
  }
}

TEST(RomHeader, TheTextFormRefusesAFromResetLineWithAValueOrTwice) {
  for (const auto& [line, error] : std::vector<std::pair<std::string, std::string>>{
           {"from-reset yes\n", "takes no value"}, {"from-reset\nfrom-reset\n", "repeated"}}) {
    std::string text = HeaderToText(SyntheticHeader(Machine::kR4400));
    text.insert(text.find("records"), line);
    auto in = io::InputFile::FromMemory(
        "in.txt", {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
    auto assembled = AssembleText(*in, testing::TempPath("fr.cat"));
    ASSERT_FALSE(assembled.ok());
    EXPECT_THAT(std::string(assembled.status().message()), HasSubstr(error));
  }
}

TEST(RomAt, HoldsTheAccessWhollyOrNotAtAll) {
  const CatHeader h = RomHeader();
  EXPECT_EQ(h.RomAt(0xE0000, 0), &h.roms[0]);
  EXPECT_EQ(h.RomAt(0xFFFF0, 16), &h.roms[0]);
  EXPECT_EQ(h.RomAt(0xFFFF0, 17), nullptr);  // runs past its end
  EXPECT_EQ(h.RomAt(0xDFFFF, 1), nullptr);
  EXPECT_EQ(h.RomAt(0xDFFFF, 2), nullptr);  // starts before it
  EXPECT_EQ(h.RomAt(0xFFFFFFF0, 16), &h.roms[1]);
  EXPECT_EQ(h.RomAt(0xFFFFFFFF, 1), &h.roms[1]);
  EXPECT_EQ(h.RomAt(0xFFFFFFFF, 2), nullptr);
  EXPECT_EQ(h.RomAt(UINT64_MAX, 1), nullptr);
  // ROM is memory that is not RAM.
  EXPECT_FALSE(h.IsMemory(0xE0000, 4));
  EXPECT_FALSE(h.IsMemory(0xFFFF0000, 4));
}

}  // namespace
}  // namespace citcat::cat
