// i486_check (guest/linux/tools/i486_check.h): instructions an i486 lacks are found, whatever
// extension they come from; i486 code, PAUSE and UD2 pass; --allow lets named ones through;
// only executable sections of an ELF32 i386 file or of an archive's members are read.
#include "guest/linux/tools/i486_check.h"

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace citcat::i486check {
namespace {

using ::testing::HasSubstr;

Result Check(const std::vector<uint8_t>& code, const Options& options = {}) {
  Result result;
  CheckCode(code.data(), code.size(), 0x1000, "code", options, &result);
  return result;
}

TEST(I486Check, CmovIsRefused) {
  const Result r = Check({0x0F, 0x44, 0xC1});  // cmove eax, ecx
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].name, "cmov");
  EXPECT_EQ(r.findings[0].address, 0x1000u);
  EXPECT_EQ(Describe(r.findings[0]),
            "code: 0x00001000: cmove eax, ecx (an i486 has no CMOVcc (P6))");
}

TEST(I486Check, I486CodePasses) {
  const Result r = Check({
      0x55,                    // push ebp
      0x89, 0xE5,              // mov ebp, esp
      0x0F, 0xC8,              // bswap eax (i486)
      0x0F, 0xB1, 0x11,        // cmpxchg [ecx], edx (i486)
      0x0F, 0xC1, 0xD0,        // xadd eax, edx (i486)
      0x0F, 0x08,              // invd
      0x0F, 0x01, 0x38,        // invlpg [eax]
      0xD9, 0xE8,              // fld1
      0xD9, 0xFA,              // fsqrt
      0xDD, 0xD9,              // fstp st(1)
      0xDF, 0xE0,              // fnstsw ax
      0x9E,                    // sahf
      0xF3, 0x90,              // pause: REP NOP, a NOP on an i486
      0xF3, 0xA5,              // rep movsd
      0x0F, 0xBC, 0xC1,        // bsf eax, ecx
      0x66, 0x90,              // xchg ax, ax
      0x8D, 0x74, 0x26, 0x00,  // lea esi, [esi]: the i486's padding
      0xCD, 0x80,              // int 0x80
      0xC9,                    // leave
      0x0F, 0x0B,              // ud2: a trap on purpose
      0xC3,                    // ret
  });
  EXPECT_TRUE(r.findings.empty()) << Describe(r.findings[0]);
  EXPECT_EQ(r.instructions, 21u);
}

struct Missing {
  std::vector<uint8_t> bytes;
  const char* name;
};

TEST(I486Check, EveryLaterInstructionIsRefused) {
  const Missing cases[] = {
      {{0x0F, 0x4D, 0xC1}, "cmov"},       // cmovge
      {{0xDA, 0xC1}, "fcmov"},            // fcmovb st(1)
      {{0xDB, 0xF1}, "fcomi"},            // fcomi st(1)
      {{0xDF, 0xE9}, "fcomi"},            // fucomip st(1)
      {{0x0F, 0x31}, "rdtsc"},            // rdtsc
      {{0x0F, 0x33}, "rdpmc"},            // rdpmc
      {{0x0F, 0xA2}, "cpuid"},            // cpuid
      {{0x0F, 0x32}, "rdmsr"},            // rdmsr
      {{0x0F, 0x30}, "wrmsr"},            // wrmsr
      {{0x0F, 0xC7, 0x08}, "cmpxchg8b"},  // cmpxchg8b [eax]
      {{0x0F, 0x34}, "sysenter"},         // sysenter
      {{0x0F, 0x05}, "syscall"},          // syscall
      {{0x0F, 0x1F, 0x00}, "nopl"},       // nop dword ptr [eax]
      {{0x66, 0x0F, 0x1F, 0x44, 0x00, 0x00}, "nopl"},
      {{0xF3, 0x0F, 0x1E, 0xFB}, "nopl"},    // endbr32 (0F 1E)
      {{0x0F, 0x18, 0x00}, "nopl"},          // prefetchnta [eax]
      {{0x0F, 0x0D, 0x08}, "prefetch"},      // prefetchw [eax] (3DNow!)
      {{0x0F, 0xAE, 0x00}, "fxsave"},        // fxsave [eax]
      {{0x0F, 0xAE, 0x08}, "fxrstor"},       // fxrstor [eax]
      {{0x0F, 0xAE, 0xE8}, "fence"},         // lfence
      {{0x0F, 0xAE, 0xF0}, "fence"},         // mfence
      {{0x0F, 0xAE, 0x38}, "clflush"},       // clflush [eax]
      {{0x0F, 0xAE, 0x10}, "sse"},           // ldmxcsr [eax]
      {{0x0F, 0x6E, 0xC0}, "mmx"},           // movd mm0, eax
      {{0x0F, 0x77}, "mmx"},                 // emms
      {{0x0F, 0x57, 0xC0}, "sse"},           // xorps xmm0, xmm0
      {{0xF2, 0x0F, 0x10, 0x00}, "sse"},     // movsd xmm0, [eax]
      {{0xC5, 0xF8, 0x77}, "avx"},           // vzeroupper
      {{0xF3, 0x0F, 0xB8, 0xC1}, "popcnt"},  // popcnt eax, ecx
      {{0xF3, 0x0F, 0xBD, 0xC1}, "lzcnt"},   // lzcnt eax, ecx
      {{0xF3, 0x0F, 0xBC, 0xC1}, "tzcnt"},   // tzcnt eax, ecx
      {{0x0F, 0x38, 0xF0, 0x00}, "movbe"},   // movbe eax, [eax]
      {{0xDF, 0x08}, "fisttp"},              // fisttp word ptr [eax]
      {{0x0F, 0x01, 0xD0}, "xgetbv"},        // xgetbv
      {{0x0F, 0xC7, 0xF0}, "rdrand"},        // rdrand eax
  };
  for (const Missing& m : cases) {
    const Result r = Check(m.bytes);
    ASSERT_EQ(r.findings.size(), 1u) << m.name;
    EXPECT_EQ(r.findings[0].name, m.name) << r.findings[0].instruction;
    EXPECT_THAT(r.findings[0].why, HasSubstr("i486"));
  }
}

TEST(I486Check, AllowLetsNamedInstructionsThrough) {
  Options options;
  options.allow = {"cpuid", "cmov", "rdmsr"};
  const Result r = Check({0x0F, 0xA2, 0x0F, 0x45, 0xC1, 0x0F, 0x32, 0x0F, 0x31}, options);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].name, "rdtsc");
  EXPECT_EQ(r.findings[0].address, 0x1007u);
  EXPECT_EQ(r.allowed, 3u);
  options.allow = {"cmovne"};  // a mnemonic, not the class: cmove still fails
  EXPECT_EQ(Check({0x0F, 0x45, 0xC1, 0x0F, 0x44, 0xC1}, options).findings.size(), 1u);
}

TEST(I486Check, UndecodableBytesAreFindings) {
  const Result r = Check({0x90, 0x0F, 0xFF, 0xC3});  // 0F FF: ud0 (or nothing at all)
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].address, 0x1001u);
}

// A minimal ELF32 i386 executable: .text (executable) and .data (not), and the section names.
std::string TinyElf(const std::vector<uint8_t>& text, const std::vector<uint8_t>& data,
                    uint16_t machine = 3) {
  const std::string names = std::string("\0.text\0.data\0.shstrtab\0", 24);
  std::string elf(52, '\0');
  auto put32 = [](std::string& s, size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>(v >> (8 * i));
  };
  auto put16 = [](std::string& s, size_t at, uint16_t v) {
    s[at] = static_cast<char>(v);
    s[at + 1] = static_cast<char>(v >> 8);
  };
  elf[0] = '\x7F';
  elf.replace(1, 3, "ELF");
  elf[4] = 1;  // ELFCLASS32
  elf[5] = 1;  // little-endian
  elf[6] = 1;
  put16(elf, 16, 2);  // ET_EXEC
  put16(elf, 18, machine);
  const size_t text_off = elf.size();
  elf.append(text.begin(), text.end());
  const size_t data_off = elf.size();
  elf.append(data.begin(), data.end());
  const size_t names_off = elf.size();
  elf += names;
  while (elf.size() % 4) elf.push_back('\0');
  const size_t shoff = elf.size();
  elf.append(4 * 40, '\0');
  auto section = [&](int i, uint32_t name, uint32_t type, uint32_t flags, uint32_t addr, size_t off,
                     size_t size) {
    const size_t sh = shoff + 40 * i;
    put32(elf, sh, name);
    put32(elf, sh + 4, type);
    put32(elf, sh + 8, flags);
    put32(elf, sh + 12, addr);
    put32(elf, sh + 16, static_cast<uint32_t>(off));
    put32(elf, sh + 20, static_cast<uint32_t>(size));
  };
  section(1, 1, 1, 0x6, 0x08049000, text_off, text.size());  // .text: SHF_ALLOC | EXECINSTR
  section(2, 7, 1, 0x3, 0x0804A000, data_off, data.size());  // .data: SHF_WRITE | ALLOC
  section(3, 13, 3, 0, 0, names_off, names.size());          // .shstrtab
  put32(elf, 32, static_cast<uint32_t>(shoff));
  put16(elf, 46, 40);
  put16(elf, 48, 4);
  put16(elf, 50, 3);
  return elf;
}

TEST(I486Check, ElfExecutableSectionsOnly) {
  const std::vector<uint8_t> cmov = {0x0F, 0x44, 0xC1};
  Result result;
  ASSERT_TRUE(CheckElf(TinyElf({0x90, 0x0F, 0x44, 0xC1, 0xC3}, cmov), "tiny", {}, &result).ok());
  ASSERT_EQ(result.findings.size(), 1u);
  EXPECT_EQ(Describe(result.findings[0]),
            "tiny: 0x08049001: cmove eax, ecx (an i486 has no CMOVcc (P6))");
  EXPECT_EQ(result.sections, 1);

  Result clean;
  ASSERT_TRUE(CheckElf(TinyElf({0x90, 0xC3}, cmov), "tiny", {}, &clean).ok());
  EXPECT_TRUE(clean.findings.empty());

  Options skip;
  skip.skip_sections = {".text"};
  Result skipped;
  ASSERT_TRUE(CheckElf(TinyElf(cmov, {}), "tiny", skip, &skipped).ok());
  EXPECT_TRUE(skipped.findings.empty());
  EXPECT_EQ(skipped.sections, 0);
}

TEST(I486Check, RefusesWhatIsNotElf32I386) {
  Result result;
  EXPECT_FALSE(
      CheckElf("not an elf at all, but long enough to have a header.....", "x", {}, &result).ok());
  EXPECT_FALSE(CheckElf(TinyElf({0x90}, {}, /*machine=*/62), "x86-64", {}, &result).ok());
  EXPECT_FALSE(CheckFile("/nonexistent/file", {}).ok());
}

TEST(I486Check, ArchiveMembersAreNamed) {
  const std::string member = TinyElf({0x0F, 0xA2}, {});
  std::string ar = "!<arch>\n";
  std::string header = absl::StrCat("cpuid.o/");
  header.resize(48, ' ');
  header += absl::StrCat(member.size());
  header.resize(58, ' ');
  header += "`\n";
  ar += header + member;
  if (ar.size() % 2) ar.push_back('\n');
  const std::string path = ::testing::TempDir() + "/cpuid.a";
  std::ofstream(path, std::ios::binary) << ar;
  absl::StatusOr<Result> r = CheckFile(path, {});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->findings.size(), 1u);
  EXPECT_EQ(r->findings[0].where, path + "(cpuid.o)");
  EXPECT_EQ(r->members, 1);
}

TEST(I486Check, DebiansI686LibgccIsRefused) {
  const std::string libgcc = CITCAT_I686_DEBIAN_LIBGCC;
  if (libgcc.empty()) GTEST_SKIP() << "no i686 cross compiler";
  absl::StatusOr<Result> r = CheckFile(libgcc, {});
  ASSERT_TRUE(r.ok()) << r.status();
  int cmov = 0;
  for (const Finding& f : r->findings) cmov += f.name == "cmov";
  EXPECT_GT(cmov, 1000);  // over a thousand CMOVs
  EXPECT_GT(r->members, 50);
}

}  // namespace
}  // namespace citcat::i486check
