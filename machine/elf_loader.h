// Minimal loader for static executables of any machine (ELF32 and ELF64, either byte order): the
// loadable segments, the entry point and the symbol table, enough to put a kernel or test program
// into a simulated memory and to find code by name. No relocation, no dynamic linking. It says
// what the file is built for (e_machine, class, byte order); each caller decides what it accepts.
#ifndef CITCAT_MACHINE_ELF_LOADER_H_
#define CITCAT_MACHINE_ELF_LOADER_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace citcat::machine {

// e_machine values the project meets.
inline constexpr uint16_t kElfMachine386 = 3;
inline constexpr uint16_t kElfMachineMips = 8;
inline constexpr uint16_t kElfMachineX86_64 = 62;

struct ElfSegment {
  uint64_t vaddr = 0;
  uint64_t paddr = 0;
  uint64_t memsz = 0;         // bytes in memory; those past data.size() are zero
  uint32_t flags = 0;         // PF_X = 1, PF_W = 2, PF_R = 4
  std::vector<uint8_t> data;  // the file contents (p_filesz bytes)
};

struct ElfSymbol {
  std::string name;
  uint64_t value = 0;
  uint64_t size = 0;
  uint8_t type = 0;  // STT_*: 1 object, 2 function
};

struct ElfImage {
  bool is64 = false;
  bool big_endian = true;
  uint16_t machine = 0;  // e_machine: kElfMachine386, kElfMachineMips, ...
  uint32_t e_flags = 0;  // machine-specific; on MIPS, EF_MIPS_ABI2 (0x20) marks n32
  uint64_t entry = 0;
  std::vector<ElfSegment> segments;  // PT_LOAD only, in file order
  std::vector<ElfSymbol> symbols;    // from .symtab, if present

  // The segment that contains [vaddr, vaddr + size), if any.
  const ElfSegment* FindSegment(uint64_t vaddr, uint64_t size = 1) const;
  // Reads `size` bytes at vaddr (bss reads as zero). Fails if not inside one segment.
  bool Read(uint64_t vaddr, void* out, uint64_t size) const;
  // A 32-bit word at vaddr in the image's byte order (instruction fetch).
  std::optional<uint32_t> ReadWord32(uint64_t vaddr) const;
  const ElfSymbol* FindSymbol(std::string_view name) const;
  // What the file is built for, for error messages: "i386 (e_machine 3), ELF32 little-endian".
  std::string Describe() const;
};

// Parses an ELF executable held in memory. Rejects anything that is not a static executable, and
// any header, segment or symbol that points outside the file or past the address space; each error
// is one line starting "ELF: ".
absl::StatusOr<ElfImage> ParseElf(std::span<const uint8_t> file);
// Whether `file` starts with the ELF magic number (\x7F "ELF"): an image to parse, not raw bytes.
bool IsElf(std::span<const uint8_t> file);
absl::StatusOr<ElfImage> LoadElfFile(const std::string& path);

}  // namespace citcat::machine

#endif  // CITCAT_MACHINE_ELF_LOADER_H_
