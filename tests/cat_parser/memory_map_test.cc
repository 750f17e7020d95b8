// The header's memory map: holes in main memory survive the binary and the text form, bad holes
// are refused in one line, and IsMemory / MagicAt draw the line between RAM, holes, devices and
// reserved areas exactly at their edges.
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

// A PC-like header: 16 MiB with the 0xA0000-0xFFFFF hole, a frame buffer window inside the hole,
// a memory-mapped device and a reserved area inside RAM's range, a port device.
CatHeader PcHeader() {
  CatHeader h = SyntheticHeader(Machine::kI486);
  h.memory_bytes = 16 << 20;
  h.holes = {{0xA0000, 0x60000}, {0xF00000, 0x1000}};
  h.devices = {{"uart", WindowKind::kPort, 0x3f8, 8},
               {"vga", WindowKind::kMemoryMapped, 0xA0000, 0x20000},
               {"nic", WindowKind::kMemoryMapped, 0x800000, 0x1000}};
  h.magic = {{"trace-begin", WindowKind::kMemoryMapped, 0xE00000, 8},
             {"cpu-state", WindowKind::kMemoryMapped, 0xE01000, 0x100},
             {"report", WindowKind::kPort, 0xE01000, 4}};
  return h;
}

// The offset of the first hole field's value: after the machine, byte order and memory size
// fields, which the writer puts first.
constexpr size_t kFirstHoleValue = format::kFileHeaderPrefix + 7 + 7 + 14 + 6;

TEST(MemoryHoles, RoundTripInTheBinaryForm) {
  CatHeader header = PcHeader();
  std::vector<uint8_t> bytes = testing::EncodeCat(header, testing::OneOfEachKind(header));
  EXPECT_EQ(format::Load16(&bytes[10]), format::kMinorVersionHoles);
  auto reader = CatReader::Open(io::InputFile::FromMemory("h.cat", bytes));
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->header(), header);
}

TEST(MemoryHoles, AHeaderWithoutHolesStaysVersionOneZero) {
  CatHeader header = SyntheticHeader(Machine::kR4400);
  std::vector<uint8_t> bytes = testing::EncodeCat(header, {});
  EXPECT_EQ(format::Load16(&bytes[10]), 0);
  const std::string hole_field("\x09\x00\x10\x00\x00\x00", 6);
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()).find(hole_field), std::string::npos);
}

TEST(MemoryHoles, RoundTripInTheTextForm) {
  CatHeader header = PcHeader();
  std::vector<uint8_t> bytes = testing::EncodeCat(header, testing::OneOfEachKind(header));
  std::string text = HeaderToText(header);
  EXPECT_THAT(text,
              HasSubstr("\nhole base=0xa0000 size=0x60000\nhole base=0xf00000 size=0x1000\n"));
  auto reader = CatReader::Open(io::InputFile::FromMemory("h.cat", bytes));
  ASSERT_TRUE(reader.ok());
  BusRecord r;
  while (*(*reader)->Next(r)) text += RecordToText(r, header);
  auto in = io::InputFile::FromMemory("in.txt",
                                      {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  std::string path = testing::TempPath("holes.cat");
  ASSERT_TRUE(AssembleText(*in, path).ok());
  std::ifstream again(path, std::ios::binary);
  EXPECT_EQ(std::vector<uint8_t>(std::istreambuf_iterator<char>(again), {}), bytes);
}

struct BadHole {
  std::string name;
  uint64_t base, size;
  std::string error;
};
void PrintTo(const BadHole& b, std::ostream* os) { *os << b.name; }

class BadHoles : public ::testing::TestWithParam<BadHole> {};

// The first of the two holes rewritten in the file: the reader refuses it in one line.
TEST_P(BadHoles, AreRefusedInOneLine) {
  CatHeader header = PcHeader();
  std::vector<uint8_t> bytes = testing::EncodeCat(header, {});
  ASSERT_EQ(format::Load16(&bytes[kFirstHoleValue - 6]), format::kTagMemoryHole);
  format::Store64(&bytes[kFirstHoleValue], GetParam().base);
  format::Store64(&bytes[kFirstHoleValue + 8], GetParam().size);
  testing::FixHeaderCrc(bytes);
  auto decoded = testing::DecodeCat(bytes);
  ASSERT_FALSE(decoded.ok());
  std::string message(decoded.status().message());
  EXPECT_THAT(message, HasSubstr(GetParam().error));
  EXPECT_THAT(message, HasSubstr("test.cat: offset "));
  EXPECT_THAT(message, Not(HasSubstr("\n")));

  // The writer and the text form refuse the same header.
  header.holes[0] = {GetParam().base, GetParam().size};
  EXPECT_THAT(std::string(CatWriter::Create(testing::TempPath("w.cat"), header).status().message()),
              HasSubstr(GetParam().error));
  std::string text = HeaderToText(header);
  auto in = io::InputFile::FromMemory("in.txt",
                                      {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  EXPECT_THAT(std::string(AssembleText(*in, testing::TempPath("t.cat")).status().message()),
              HasSubstr(GetParam().error));
}

INSTANTIATE_TEST_SUITE_P(
    Table, BadHoles,
    ::testing::Values(BadHole{"Empty", 0xA0000, 0, "memory hole at 0xa0000 of 0x0 bytes is empty"},
                      BadHole{"PastTheEnd", 0xFFF000, 0x1001, "lies outside main memory"},
                      BadHole{"AboveMemory", 0x1000000, 0x10, "lies outside main memory"},
                      BadHole{"Wrapping", 0xFFFFFFFFFFFFF000, 0x2000, "lies outside main memory"},
                      BadHole{"OverlapsTheNext", 0xEFF000, 0x2000,
                              "memory hole at 0xf00000 of 0x1000 bytes "
                              "overlaps the one before"},
                      BadHole{"OutOfOrder", 0xF80000, 0x10, "out of address order"}),
    [](const auto& info) { return info.param.name; });

TEST(MemoryHoles, AFieldOfTheWrongLengthIsRefused) {
  std::vector<uint8_t> bytes = testing::EncodeCat(PcHeader(), {});
  format::Store32(&bytes[kFirstHoleValue - 4], 15);
  testing::FixHeaderCrc(bytes);
  auto decoded = testing::DecodeCat(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_THAT(std::string(decoded.status().message()),
              HasSubstr("memory hole field has the wrong length"));
}

TEST(IsMemory, EdgesOfHolesDevicesReservedAreasAndMemory) {
  const CatHeader h = PcHeader();
  EXPECT_TRUE(h.IsMemory(0, 0));
  EXPECT_TRUE(h.IsMemory(0x9FFFC, 4));
  EXPECT_FALSE(h.IsMemory(0x9FFFC, 5));  // its last byte is the hole's first
  EXPECT_FALSE(h.IsMemory(0xA0000, 1));
  EXPECT_FALSE(h.IsMemory(0xFFFFF, 1));
  EXPECT_FALSE(h.IsMemory(0xC0000, 0));  // in the hole, past the frame buffer
  EXPECT_TRUE(h.IsMemory(0x100000, 4096));
  EXPECT_FALSE(h.IsMemory(0x9F000, 0x62000));  // spans the hole
  EXPECT_TRUE(h.IsMemory(0x7FFFF0, 16));
  EXPECT_FALSE(h.IsMemory(0x7FFFF0, 17));  // the nic window
  EXPECT_FALSE(h.IsMemory(0x800FFF, 1));
  EXPECT_TRUE(h.IsMemory(0x801000, 1));
  EXPECT_FALSE(h.IsMemory(0xE00004, 4));  // a reserved area
  EXPECT_TRUE(h.IsMemory(0xE00008, 8));
  EXPECT_TRUE(h.IsMemory(0x3F8, 4));      // a port number is no memory address
  EXPECT_FALSE(h.IsMemory(0xE01000, 4));  // the memory-mapped area at the port area's number
  EXPECT_TRUE(h.IsMemory(h.memory_bytes - 1, 1));
  EXPECT_FALSE(h.IsMemory(h.memory_bytes - 1, 2));
  EXPECT_FALSE(h.IsMemory(h.memory_bytes, 0));
  EXPECT_FALSE(h.IsMemory(UINT64_MAX, 2));
}

TEST(IsMemory, WithoutHolesItIsTheMemorySize) {
  const CatHeader h = SyntheticHeader(Machine::kR4400);
  for (uint64_t size : {1, 4, 32}) {
    EXPECT_TRUE(h.IsMemory(h.memory_bytes - size, size));
    EXPECT_FALSE(h.IsMemory(h.memory_bytes - size + 1, size));
  }
  EXPECT_FALSE(h.IsMemory(0x1f100010, 4));  // the disk, above memory
}

// The page map answers as the header does: around the hole, the nic window (not page aligned),
// the reserved areas and the end of memory, for accesses inside a page and across two.
TEST(MemoryPages, AnswersAsTheHeaderDoes) {
  const CatHeader h = PcHeader();
  const MemoryPages pages(h);
  int compared = 0;
  for (uint64_t edge :
       {uint64_t{0}, uint64_t{0xA0000}, uint64_t{0x100000}, uint64_t{0x800000}, uint64_t{0x801000},
        uint64_t{0xE00000}, uint64_t{0xE01000}, h.memory_bytes, uint64_t{1} << 32}) {
    for (uint64_t a = edge < 0x20 ? 0 : edge - 0x20; a < edge + 0x20; ++a) {
      for (uint64_t size : {0, 1, 2, 4, 16, 4096}) {
        ASSERT_EQ(pages.IsMemory(a, size), h.IsMemory(a, size)) << std::hex << a << " " << size;
        ++compared;
      }
    }
  }
  for (uint64_t a = 0x7FF000; a < 0x802000; a += 4) {  // the pages around the nic window
    ASSERT_EQ(pages.IsMemory(a, 4), h.IsMemory(a, 4)) << std::hex << a;
  }
  EXPECT_GT(compared, 2000);
}

TEST(MagicAt, HoldsTheAccessWhollyOrNotAtAll) {
  const CatHeader h = PcHeader();
  ASSERT_NE(h.MagicAt(0xE01000, 8), nullptr);
  EXPECT_EQ(h.MagicAt(0xE01000, 8)->name, "cpu-state");
  EXPECT_EQ(h.MagicAt(0xE010F8, 8), &h.magic[1]);
  EXPECT_EQ(h.MagicAt(0xE010FC, 8), nullptr);  // runs past the end
  EXPECT_EQ(h.MagicAt(0xE00FFF, 1), nullptr);
  EXPECT_EQ(h.MagicAt(0xE01100, 1), nullptr);
  EXPECT_EQ(h.MagicAt(0xE00000, 0), &h.magic[0]);
  EXPECT_EQ(h.MagicAt(0xE01000, 4, WindowKind::kPort), &h.magic[2]);  // ports: another space
  EXPECT_EQ(h.MagicAt(0xE01002, 4, WindowKind::kPort), nullptr);
}

}  // namespace
}  // namespace citcat::cat
