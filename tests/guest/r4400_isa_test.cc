// Everything the R4400 SDK links into a user's program must run on an R4400: newlib, the SDK
// runtime and the programs are compiled for MIPS III (-march=r4000), and nothing built for a later
// MIPS (Debian's libgcc is MIPS32r2: CLZ, MUL, MTHC1) may slip in. Every word of every executable
// section of the SDK's libraries and of programs built with it is decoded as the R4400 core
// decodes it (simcore/mips), the coprocessor 1 operations by the R4400 FPU model.
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simcore/mips/decoder.h"
#include "simcore/mips/fpu.h"

namespace citcat {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

uint32_t Be32(const std::string& b, size_t at) {
  return static_cast<uint32_t>(static_cast<uint8_t>(b[at])) << 24 |
         static_cast<uint32_t>(static_cast<uint8_t>(b[at + 1])) << 16 |
         static_cast<uint32_t>(static_cast<uint8_t>(b[at + 2])) << 8 |
         static_cast<uint8_t>(b[at + 3]);
}
uint16_t Be16(const std::string& b, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(b[at]) << 8 | static_cast<uint8_t>(b[at + 1]));
}

// Why an R4400 user program cannot execute `word`; "" if it can.
std::string Missing(uint32_t word) {
  const mips::InstructionInfo info = mips::Describe(word);
  switch (info.op) {
    case mips::Op::kReserved:
      return "not an R4400 instruction";
    case mips::Op::kCop2:
    case mips::Op::kCop3:
      return "coprocessor 2/3 (COP1X or a later ISA's encoding)";
    case mips::Op::kCop1Arith: {
      mips::Fpu fpu;
      if (fpu.Execute(word) == mips::FpuOutcome::kReservedInstruction) {
        return "not an R4400 floating-point operation";
      }
      return "";
    }
    default:
      return info.cop0 ? "privileged (coprocessor 0)" : "";
  }
}

struct Finding {
  std::string where;
  uint32_t word = 0;
  std::string why;
};

// Scans the executable sections of one big-endian ELF32 file (an object or a program).
void ScanElf(const std::string& elf, const std::string& name, std::vector<Finding>& findings,
             uint64_t& words) {
  ASSERT_GE(elf.size(), 52u) << name;
  ASSERT_EQ(elf.substr(0, 6), std::string("\177ELF\1\2", 6)) << name << ": not ELF32 big-endian";
  // e_flags' architecture field: MIPS I..III only (0x20000000 is MIPS III).
  if (const uint32_t arch = Be32(elf, 36) & 0xF0000000u; arch > 0x20000000u) {
    findings.push_back({name, arch, "built for a later MIPS than MIPS III (ELF e_flags)"});
  }
  const uint32_t shoff = Be32(elf, 32);
  const uint16_t shentsize = Be16(elf, 46), shnum = Be16(elf, 48);
  for (uint16_t i = 0; i < shnum; ++i) {
    const size_t sh = shoff + size_t{i} * shentsize;
    ASSERT_LE(sh + 40, elf.size()) << name;
    const uint32_t type = Be32(elf, sh + 4), flags = Be32(elf, sh + 8);
    const uint32_t offset = Be32(elf, sh + 16), size = Be32(elf, sh + 20);
    if (type != 1 /* SHT_PROGBITS */ || !(flags & 4) /* SHF_EXECINSTR */) continue;
    ASSERT_LE(uint64_t{offset} + size, elf.size()) << name;
    for (uint32_t at = 0; at + 4 <= size; at += 4) {
      const uint32_t word = Be32(elf, offset + at);
      ++words;
      if (std::string why = Missing(word); !why.empty()) {
        findings.push_back({absl::StrFormat("%s section %d +%#x", name, i, at), word, why});
      }
    }
  }
}

// An `ar` archive: every ELF member.
void ScanArchive(const std::string& path, std::vector<Finding>& findings, uint64_t& words,
                 int& members) {
  const std::string a = ReadFile(path);
  ASSERT_EQ(a.substr(0, 8), "!<arch>\n") << path;
  for (size_t at = 8; at + 60 <= a.size();) {
    const std::string name = a.substr(at, 16);
    const size_t size = std::stoul(a.substr(at + 48, 10));
    const std::string body = a.substr(at + 60, size);
    if (body.compare(0, 4, "\177ELF") == 0) {
      ScanElf(body, absl::StrCat(path, "(", absl::StripTrailingAsciiWhitespace(name), ")"),
              findings, words);
      ++members;
    }
    at += 60 + size + (size & 1);
  }
}

std::string Report(const std::vector<Finding>& findings) {
  std::string out;
  for (size_t i = 0; i < findings.size() && i < 20; ++i) {
    absl::StrAppendFormat(&out, "%s: %08x %s: %s\n", findings[i].where, findings[i].word,
                          std::string(mips::OpName(mips::DecodeOp(findings[i].word))),
                          findings[i].why);
  }
  return out;
}

// The checker itself: what MIPS32r2 and MIPS IV add is caught, what the R4400 has is not.
TEST(R4400Isa, TheCheckerKnowsWhatAnR4400Lacks) {
  EXPECT_NE(Missing(0x70821020), "");  // clz $2, $4 (MIPS32)
  EXPECT_NE(Missing(0x70a41002), "");  // mul $2, $5, $4 (MIPS32)
  EXPECT_NE(Missing(0x44e20000), "");  // mthc1 $2, $f0 (MIPS32r2)
  EXPECT_NE(Missing(0x0085100b), "");  // movn $2, $4, $5 (MIPS IV)
  EXPECT_NE(Missing(0x4c020021), "");  // madd.d (COP1X, MIPS IV)
  EXPECT_NE(Missing(0x7c0210a0), "");  // seb / SPECIAL3 (MIPS32r2)
  EXPECT_EQ(Missing(0x00851021), "");  // addu
  EXPECT_EQ(Missing(0x46241000), "");  // add.d $f0, $f2, $f4
  EXPECT_EQ(Missing(0x46200024), "");  // cvt.w.d
  EXPECT_EQ(Missing(0xdc820000), "");  // ld (MIPS III, user mode with UX)
}

// And on real code: Debian's MIPS libgcc, which the SDK must not link, is caught.
TEST(R4400Isa, TheCheckerCatchesDebiansMips32r2Libgcc) {
  const std::string libgcc = CITCAT_R4400_DEBIAN_LIBGCC;
  if (libgcc.empty() || !std::ifstream(libgcc)) GTEST_SKIP() << "no libgcc.a of the cross compiler";
  std::vector<Finding> findings;
  uint64_t words = 0;
  int members = 0;
  ScanArchive(libgcc, findings, words, members);
  EXPECT_GT(members, 10);
  int instructions = 0;
  for (const Finding& f : findings) instructions += absl::StrContains(f.why, "not an R4400");
  EXPECT_GT(instructions, 10);
}

TEST(R4400Isa, TheSdkLibrariesHoldOnlyR4400Instructions) {
  std::vector<Finding> findings;
  uint64_t words = 0;
  int members = 0;
  for (absl::string_view path : absl::StrSplit(CITCAT_R4400_SDK_ARCHIVES, ';')) {
    ScanArchive(std::string(path), findings, words, members);
  }
  ScanElf(ReadFile(CITCAT_R4400_SDK_CRT0), CITCAT_R4400_SDK_CRT0, findings, words);
  EXPECT_GT(members, 500);  // libc, libm and the runtime, not an empty stand-in
  EXPECT_GT(words, 100'000u);
  EXPECT_TRUE(findings.empty()) << findings.size() << " instructions an R4400 lacks:\n"
                                << Report(findings);
}

TEST(R4400Isa, ProgramsBuiltWithTheSdkHoldOnlyR4400Instructions) {
  int programs = 0;
  for (absl::string_view path : absl::StrSplit(CITCAT_R4400_SDK_PROGRAMS, ';')) {
    std::vector<Finding> findings;
    uint64_t words = 0;
    ScanElf(ReadFile(std::string(path)), std::string(path), findings, words);
    EXPECT_GT(words, 1000u) << path;
    EXPECT_TRUE(findings.empty()) << Report(findings);
    ++programs;
  }
  EXPECT_GE(programs, 2);
}

}  // namespace
}  // namespace citcat
