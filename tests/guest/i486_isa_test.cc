// Everything the i486 guest runs must run on an i486DX: the kernel, the workloads, newlib, the SDK
// runtime and programs built with it are compiled for the i486 (-march=i486), and nothing built
// for a later processor (Debian's i686 libgcc: CMOV, multi-byte NOPs; CPUID) may slip in. Every
// executable section is decoded from its start, instruction after instruction, as the i486 core
// decodes it (simcore/x86): an instruction the core would refuse (#UD) is a finding, but UD2,
// GCC's deliberate trap; in code for ring 3 a privileged instruction is one too.
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simcore/x86/decoder.h"
#include "simcore/x86/ops.h"

namespace citcat {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

uint32_t Le32(const std::string& b, size_t at) {
  return static_cast<uint8_t>(b[at]) | static_cast<uint8_t>(b[at + 1]) << 8 |
         static_cast<uint8_t>(b[at + 2]) << 16 | uint32_t{static_cast<uint8_t>(b[at + 3])} << 24;
}
uint16_t Le16(const std::string& b, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(b[at]) | static_cast<uint8_t>(b[at + 1]) << 8);
}

// Why ring-3 (or, with `kernel`, ring-0) code cannot run `bytes` on an i486; "" if it can.
std::string Missing(const uint8_t* bytes, size_t size, bool kernel, int* length,
                    bool code32 = true) {
  const x86::Instruction in = x86::Decode(bytes, size, code32);
  *length = in.ok() ? in.length : 1;
  if (in.fault == x86::Fault::kUD) {
    if (size >= 2 && bytes[0] == 0x0F && bytes[1] == 0x0B) {
      *length = 2;
      return "";  // UD2: a trap on purpose (__builtin_trap)
    }
    return "not an i486 instruction";
  }
  if (!kernel && in.ok() && (x86::Facts(in.op).attrs & x86::attr::kPrivileged)) {
    return "privileged (" + std::string(x86::Mnemonic(in.op)) + ")";
  }
  return "";
}

struct Finding {
  std::string where;
  std::string bytes;
  std::string why;
};

struct Scan {
  std::vector<Finding> findings;
  uint64_t instructions = 0;
  int members = 0;
  int code16 = 0;  // sections decoded as 16-bit code
};

// The name of section `index` (from the section name table), "" if there is none.
std::string SectionName(const std::string& elf, uint32_t shoff, uint16_t shentsize,
                        uint16_t index) {
  const uint16_t names = Le16(elf, 50);
  const size_t table = shoff + size_t{names} * shentsize, sh = shoff + size_t{index} * shentsize;
  if (table + 40 > elf.size() || sh + 40 > elf.size()) return "";
  const size_t at = size_t{Le32(elf, table + 16)} + Le32(elf, sh);
  if (at >= elf.size()) return "";
  return std::string(elf.c_str() + at, strnlen(elf.c_str() + at, elf.size() - at));
}

// The executable sections of one little-endian ELF32 file (an object or a program); a section
// named .text16 holds 16-bit code (workloads/mode16.c) and is decoded as such.
void ScanElf(const std::string& elf, const std::string& name, bool kernel, Scan& scan) {
  ASSERT_GE(elf.size(), 52u) << name;
  ASSERT_EQ(elf.substr(0, 6), std::string("\177ELF\1\1", 6)) << name << ": not ELF32 LE";
  ASSERT_EQ(Le16(elf, 18), 3) << name << ": not i386";
  const uint32_t shoff = Le32(elf, 32);
  const uint16_t shentsize = Le16(elf, 46), shnum = Le16(elf, 48);
  for (uint16_t i = 0; i < shnum; ++i) {
    const size_t sh = shoff + size_t{i} * shentsize;
    ASSERT_LE(sh + 40, elf.size()) << name;
    const uint32_t type = Le32(elf, sh + 4), flags = Le32(elf, sh + 8);
    const uint32_t offset = Le32(elf, sh + 16), size = Le32(elf, sh + 20);
    if (type != 1 /* SHT_PROGBITS */ || !(flags & 4) /* SHF_EXECINSTR */) continue;
    ASSERT_LE(uint64_t{offset} + size, elf.size()) << name;
    const auto* code = reinterpret_cast<const uint8_t*>(elf.data()) + offset;
    const bool code32 = SectionName(elf, shoff, shentsize, i) != ".text16";
    scan.code16 += !code32;
    for (uint32_t at = 0; at < size;) {
      int length = 1;
      const std::string why = Missing(code + at, size - at, kernel, &length, code32);
      if (!why.empty()) {
        std::string bytes;
        for (uint32_t k = at; k < size && k < at + 4; ++k)
          absl::StrAppendFormat(&bytes, "%02x ", code[k]);
        scan.findings.push_back({absl::StrFormat("%s section %d +%#x", name, i, at), bytes, why});
      }
      ++scan.instructions;
      at += static_cast<uint32_t>(length);
    }
  }
}

// An `ar` archive: every ELF member but those named in `skip`.
void ScanArchive(const std::string& path, const std::vector<std::string>& skip, Scan& scan) {
  const std::string a = ReadFile(path);
  ASSERT_EQ(a.substr(0, 8), "!<arch>\n") << path;
  for (size_t at = 8; at + 60 <= a.size();) {
    std::string name(absl::StripTrailingAsciiWhitespace(a.substr(at, 16)));
    if (absl::EndsWith(name, "/")) name.pop_back();
    const size_t size = std::stoul(a.substr(at + 48, 10));
    const std::string body = a.substr(at + 60, size);
    bool skipped = false;
    for (const std::string& s : skip) skipped |= name == s;
    if (body.compare(0, 4, "\177ELF") == 0 && !skipped) {
      ScanElf(body, absl::StrCat(path, "(", name, ")"), false, scan);
      ++scan.members;
    }
    at += 60 + size + (size & 1);
  }
}

std::string Report(const std::vector<Finding>& findings) {
  std::string out;
  for (size_t i = 0; i < findings.size() && i < 20; ++i) {
    absl::StrAppendFormat(&out, "%s: %s%s\n", findings[i].where, findings[i].bytes,
                          findings[i].why);
  }
  return out;
}

std::string WhyNot(std::vector<uint8_t> bytes, bool kernel = false) {
  int length = 0;
  bytes.resize(16, 0x90);
  return Missing(bytes.data(), bytes.size(), kernel, &length);
}

// The checker itself: what the P6 and later add is caught, what an i486 has is not.
TEST(I486Isa, TheCheckerKnowsWhatAnI486Lacks) {
  EXPECT_NE(WhyNot({0x0F, 0x44, 0xC1}), "");        // cmove %ecx, %eax
  EXPECT_NE(WhyNot({0x0F, 0x1F, 0x40, 0x00}), "");  // nopl 0(%eax)
  EXPECT_NE(WhyNot({0x0F, 0xA2}), "");              // cpuid
  EXPECT_NE(WhyNot({0x0F, 0x31}), "");              // rdtsc
  EXPECT_NE(WhyNot({0xDB, 0xF1}), "");              // fcomi
  EXPECT_NE(WhyNot({0xFA}), "");                    // cli in ring 3
  EXPECT_EQ(WhyNot({0xFA}, true), "");              // cli in the kernel
  EXPECT_EQ(WhyNot({0x0F, 0xC8}), "");              // bswap (i486)
  EXPECT_EQ(WhyNot({0x0F, 0xB1, 0x0A}), "");        // cmpxchg (i486)
  EXPECT_EQ(WhyNot({0xD9, 0xFE}), "");              // fsin (i486 x87)
  EXPECT_EQ(WhyNot({0x0F, 0x0B}), "");              // ud2: a trap on purpose
}

// And on real code: Debian's i686 libgcc, which the SDK must not link, is caught.
TEST(I486Isa, TheCheckerCatchesDebiansI686Libgcc) {
  const std::string libgcc = CITCAT_I686_DEBIAN_LIBGCC;
  if (libgcc.empty() || !std::ifstream(libgcc)) GTEST_SKIP() << "no libgcc.a of the cross compiler";
  Scan scan;
  ScanArchive(libgcc, {}, scan);
  EXPECT_GT(scan.members, 10);
  EXPECT_GT(scan.findings.size(), 10u);
}

// newlib's fenv.o asks CPUID about SSE; the SDK links its own (libcitcat.a, first) instead.
TEST(I486Isa, TheSdkLibrariesHoldOnlyI486Instructions) {
  Scan scan;
  for (absl::string_view path : absl::StrSplit(CITCAT_I486_SDK_ARCHIVES, ';')) {
    ScanArchive(std::string(path), {"lib_a-fenv.o"}, scan);
  }
  ScanElf(ReadFile(CITCAT_I486_SDK_CRT0), CITCAT_I486_SDK_CRT0, false, scan);
  EXPECT_GT(scan.members, 500);  // libc, libm and the runtime, not an empty stand-in
  EXPECT_GT(scan.instructions, 100'000u);
  EXPECT_TRUE(scan.findings.empty())
      << scan.findings.size() << " instructions an i486 program cannot run:\n"
      << Report(scan.findings);
}

TEST(I486Isa, TheKernelTheWorkloadsAndSdkProgramsHoldOnlyI486Instructions) {
  int programs = 0;
  for (absl::string_view path : absl::StrSplit(CITCAT_I486_PROGRAMS, ';')) {
    Scan scan;
    const bool kernel = absl::EndsWith(path, "/kernel.elf");
    ScanElf(ReadFile(std::string(path)), std::string(path), kernel, scan);
    EXPECT_GT(scan.instructions, 500u) << path;
    EXPECT_TRUE(scan.findings.empty()) << Report(scan.findings);
    EXPECT_EQ(scan.code16, absl::EndsWith(path, "/mode16.elf") ? 1 : 0) << path;
    ++programs;
  }
  EXPECT_GE(programs, 10);
}

}  // namespace
}  // namespace citcat
