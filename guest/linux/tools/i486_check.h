// The i486 instruction check (i486_check): every executable section of an ELF32 i386 file, or of
// each member of a static archive, disassembled linearly with Capstone; every instruction an
// Intel i486DX does not have (CMOVcc, FCOMI, RDTSC, CPUID, multi-byte NOPs, MMX/SSE, ...) is a
// finding. Guest binaries for the traced i486 PC must have none (docs/machines/i486-linux.md,
// "The userland"); a caller may allow some by name, for code that runs them only behind a
// feature check (the kernel's CPUID, for one).
#ifndef CITCAT_GUEST_LINUX_TOOLS_I486_CHECK_H_
#define CITCAT_GUEST_LINUX_TOOLS_I486_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace citcat::i486check {

struct Options {
  // Names an instruction may have and still pass: a mnemonic ("rdtsc", "cmovne") or the name of
  // a class of findings ("cmov", "fcmov", "fcomi", "nopl", "mmx", "sse", "avx", "undecodable";
  // every finding names its class, Finding::name).
  std::vector<std::string> allow;
  // Executable sections not to check (by name, e.g. ".altinstr_replacement").
  std::vector<std::string> skip_sections;
};

struct Finding {
  std::string where;        // "FILE" or "FILE(member)", and " SECTION" for a relocatable object
  uint64_t address = 0;     // virtual address (section offset in a relocatable object)
  std::string instruction;  // "cmovne eax, ecx"
  std::string name;         // the class an --allow names: "cmov", "rdtsc", "nopl", "sse", ...
  std::string why;          // "an i486 has no CMOVcc (P6)"
};

struct Result {
  std::vector<Finding> findings;
  uint64_t instructions = 0;  // decoded
  uint64_t allowed = 0;       // findings the allow list let pass
  int sections = 0;           // executable sections checked
  int members = 0;            // ELF files checked (1, or an archive's ELF members)
};

// Checks `size` bytes of 32-bit code at `address`; findings get `where`.
void CheckCode(const uint8_t* code, size_t size, uint64_t address, const std::string& where,
               const Options& options, Result* result);

// Checks an ELF32 i386 image (its SHF_EXECINSTR sections; without section headers its
// executable PT_LOAD segments) held in `image`. Errors: not ELF32 little-endian i386, truncated.
absl::Status CheckElf(const std::string& image, const std::string& where, const Options& options,
                      Result* result);

// Checks a file: an ELF32 i386 file or a static archive (`ar`) of them.
absl::StatusOr<Result> CheckFile(const std::string& path, const Options& options);

// "FILE: 0xADDR: insn (why)" for a finding.
std::string Describe(const Finding& finding);

}  // namespace citcat::i486check

#endif  // CITCAT_GUEST_LINUX_TOOLS_I486_CHECK_H_
