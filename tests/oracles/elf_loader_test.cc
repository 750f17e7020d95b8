// The ELF loader on the cross-compiled guest programs (ELF32 n32/o32, ELF64 n64) and on damaged
// files.
#include "machine/elf_loader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace citcat::oracle {
namespace {

std::string Guest(const char* name) { return std::string(CITCAT_GUEST_TEST_DIR) + "/" + name; }

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

#ifdef CITCAT_GUEST_TESTS_AVAILABLE
TEST(ElfLoader, N32Executable) {
  auto img = machine::LoadElfFile(Guest("fp_n32"));
  ASSERT_TRUE(img.ok()) << img.status();
  EXPECT_FALSE(img->is64);
  EXPECT_TRUE(img->big_endian);
  EXPECT_EQ(img->machine, 8);
  EXPECT_NE(img->e_flags & 0x20, 0u);  // EF_MIPS_ABI2: n32
  const machine::ElfSymbol* start = img->FindSymbol("__start");
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->value, img->entry);
  ASSERT_NE(img->FindSymbol("main"), nullptr);
  // The entry point is code: __start is "move a0, sp; jal main".
  EXPECT_EQ(img->ReadWord32(img->entry), 0x03a02025u);  // or a0, sp, zero
  auto word = img->ReadWord32(img->entry + 4);
  ASSERT_TRUE(word.has_value());
  EXPECT_EQ(*word >> 26, 3u);  // JAL
  EXPECT_EQ(((*word & 0x03FFFFFF) << 2) | (img->entry & 0xF0000000),
            img->FindSymbol("main")->value);
  // bss reads as zero; addresses outside every segment do not read.
  const machine::ElfSymbol* sum = img->FindSymbol("sum");
  ASSERT_NE(sum, nullptr);
  uint64_t v = 1;
  EXPECT_TRUE(img->Read(sum->value, &v, 8));
  EXPECT_EQ(v, 0u);
  EXPECT_FALSE(img->ReadWord32(0).has_value());
  EXPECT_EQ(img->FindSymbol("no_such_symbol"), nullptr);
}

TEST(ElfLoader, N64AndO32Executables) {
  auto n64 = machine::LoadElfFile(Guest("int64_n64"));
  ASSERT_TRUE(n64.ok()) << n64.status();
  EXPECT_TRUE(n64->is64);
  EXPECT_GE(n64->entry, 0x100000000ull);
  ASSERT_NE(n64->FindSymbol("main"), nullptr);
  EXPECT_TRUE(n64->ReadWord32(n64->entry).has_value());
  auto o32 = machine::LoadElfFile(Guest("fp_o32"));
  ASSERT_TRUE(o32.ok()) << o32.status();
  EXPECT_FALSE(o32->is64);
  EXPECT_EQ(o32->e_flags & 0x20, 0u);
}

TEST(ElfLoader, DamagedFilesAreRejectedNotCrashed) {
  const std::vector<uint8_t> good = ReadFile(Guest("fp_n32"));
  ASSERT_GT(good.size(), 1000u);
  // Every truncation point in the headers, and a spread beyond.
  for (size_t n = 0; n < good.size(); n += (n < 4096 ? 1 : 997)) {
    auto img = machine::ParseElf(std::span(good.data(), n));
    (void)img;
  }
  // Byte flips in the headers.
  for (size_t i = 0; i < 512 && i < good.size(); ++i) {
    std::vector<uint8_t> bad = good;
    bad[i] ^= 0xA5;
    auto img = machine::ParseElf(bad);
    (void)img;
  }
  std::vector<uint8_t> wrong_magic = good;
  wrong_magic[1] = 'X';
  EXPECT_FALSE(machine::ParseElf(wrong_magic).ok());
  std::vector<uint8_t> wrong_machine = good;
  wrong_machine[19] = 3;  // EM_386
  EXPECT_FALSE(machine::ParseElf(wrong_machine).ok());
  EXPECT_FALSE(machine::LoadElfFile("/nonexistent/file").ok());
}
#endif

TEST(ElfLoader, TinyInputs) {
  EXPECT_FALSE(machine::ParseElf({}).ok());
  const uint8_t header[] = {0x7F, 'E', 'L', 'F', 1, 2, 1};
  EXPECT_FALSE(machine::ParseElf(header).ok());
}

}  // namespace
}  // namespace citcat::oracle
