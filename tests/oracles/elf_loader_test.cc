// The ELF loader on cross-compiled programs (MIPS ELF32 n32/o32 and ELF64 n64, big-endian; i386
// ELF32, little-endian) and on damaged and absurd files.
#include "machine/elf_loader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"

namespace citcat::oracle {
namespace {

#if defined(CITCAT_GUEST_TESTS_AVAILABLE) || defined(CITCAT_I386_ELF)
std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

// Every truncation fails (the section headers come last), with one line; byte flips in the
// headers never crash, and any error they give is one line too.
void ExpectDamageFailsCleanly(const std::vector<uint8_t>& good) {
  ASSERT_GT(good.size(), 500u);
  auto one_line = [](const absl::Status& s) {
    return absl::StartsWith(s.message(), "ELF: ") &&
           s.message().find('\n') == std::string_view::npos;
  };
  for (size_t n = 0; n < good.size(); n += (n < 4096 ? 1 : 97)) {
    auto img = machine::ParseElf(std::span(good.data(), n));
    ASSERT_FALSE(img.ok()) << "truncated to " << n;
    ASSERT_TRUE(one_line(img.status())) << n << ": " << img.status();
  }
  for (size_t i = 0; i < 512 && i < good.size(); ++i) {
    std::vector<uint8_t> bad = good;
    bad[i] ^= 0xA5;
    auto img = machine::ParseElf(bad);
    if (!img.ok()) {
      ASSERT_TRUE(one_line(img.status())) << i << ": " << img.status();
    }
  }
}
#endif

#ifdef CITCAT_GUEST_TESTS_AVAILABLE
std::string Guest(const char* name) { return std::string(CITCAT_GUEST_TEST_DIR) + "/" + name; }

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

TEST(ElfLoader, DamagedMipsFilesAreRejectedNotCrashed) {
  const std::vector<uint8_t> good = ReadFile(Guest("fp_n32"));
  ExpectDamageFailsCleanly(good);
  std::vector<uint8_t> wrong_magic = good;
  wrong_magic[1] = 'X';
  EXPECT_EQ(machine::ParseElf(wrong_magic).status().message(), "ELF: not an ELF file");
  // The loader is machine-neutral: another e_machine loads, and says what it is.
  std::vector<uint8_t> other_machine = good;
  other_machine[19] = machine::kElfMachine386;
  auto other = machine::ParseElf(other_machine);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->Describe(), "i386 (e_machine 3), ELF32 big-endian");
}
#endif  // CITCAT_GUEST_TESTS_AVAILABLE

#ifdef CITCAT_I386_ELF
// A static i386 executable (i386_program.c, built with i686-linux-gnu-gcc).
TEST(ElfLoader, I386Executable) {
  auto img = machine::LoadElfFile(CITCAT_I386_ELF);
  ASSERT_TRUE(img.ok()) << img.status();
  EXPECT_EQ(img->machine, machine::kElfMachine386);
  EXPECT_FALSE(img->is64);
  EXPECT_FALSE(img->big_endian);
  EXPECT_EQ(img->Describe(), "i386 (e_machine 3), ELF32 little-endian");
  const machine::ElfSymbol* start = img->FindSymbol("_start");
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->value, img->entry);
  EXPECT_EQ(start->type, 2);  // STT_FUNC
  // Initialised data in the file's byte order; bss reads as zero.
  const machine::ElfSymbol* table = img->FindSymbol("table");
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(img->ReadWord32(table->value + 4), 0x0A0B0C0Du);
  uint8_t first[4] = {};
  ASSERT_TRUE(img->Read(table->value, first, 4));
  EXPECT_EQ(first[0], 0x04);  // 0x01020304, little-endian
  const machine::ElfSymbol* counter = img->FindSymbol("counter");
  ASSERT_NE(counter, nullptr);
  EXPECT_EQ(img->ReadWord32(counter->value), 0u);
}

// Header fields of a 32-bit little-endian file, patched.
void Put32(std::vector<uint8_t>& f, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) f[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t Get32(const std::vector<uint8_t>& f, size_t at) {
  return f[at] | f[at + 1] << 8 | f[at + 2] << 16 | uint32_t{f[at + 3]} << 24;
}

TEST(ElfLoader, DamagedAndAbsurdI386FilesFailWithOneLine) {
  const std::vector<uint8_t> good = ReadFile(CITCAT_I386_ELF);
  ExpectDamageFailsCleanly(good);
  auto error = [](const std::vector<uint8_t>& f) {
    return std::string(machine::ParseElf(f).status().message());
  };
  const uint32_t phoff = Get32(good, 28);
  size_t load = phoff;  // the first PT_LOAD
  while (Get32(good, load) != 1) load += 32;
  std::vector<uint8_t> f = good;
  f[16] = 3;  // ET_DYN
  EXPECT_EQ(error(f), "ELF: not a static executable (e_type != ET_EXEC)");
  f = good;
  Put32(f, 28, 0xFFFFFFF0);  // e_phoff
  EXPECT_EQ(error(f), "ELF: bad program headers");
  f = good;
  Put32(f, load + 4, 0x7FFFFFFF);  // p_offset
  EXPECT_EQ(error(f), "ELF: segment outside the file");
  f = good;
  Put32(f, load + 20, 0xFFFFFFFF);  // p_memsz past the 32-bit address space
  EXPECT_EQ(error(f), "ELF: segment wraps the address space");
  f = good;
  Put32(f, load + 16, Get32(good, load + 20) + 1);  // p_filesz > p_memsz
  EXPECT_EQ(error(f), "ELF: segment file size exceeds memory size");
  f = good;
  f[4] = 7;  // EI_CLASS
  EXPECT_EQ(error(f), "ELF: unknown ELF class");
}
#endif  // CITCAT_I386_ELF

TEST(ElfLoader, TinyInputs) {
  EXPECT_FALSE(machine::ParseElf({}).ok());
  const uint8_t header[] = {0x7F, 'E', 'L', 'F', 1, 2, 1};
  EXPECT_FALSE(machine::ParseElf(header).ok());
  EXPECT_EQ(machine::LoadElfFile("/nonexistent/file").status().message(),
            "cannot open /nonexistent/file");
}

}  // namespace
}  // namespace citcat::oracle
