// Minimal loader for static MIPS executables (ELF32 for o32/n32, ELF64 for n64, either byte order):
// the loadable segments, the entry point and the symbol table, enough to put a test program into a
// simulated memory and to find code by name. No relocation, no dynamic linking.
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
  uint16_t machine = 0;  // EM_MIPS = 8
  uint32_t e_flags = 0;  // EF_MIPS_ABI2 (0x20) marks n32
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
};

// Parses an ELF executable held in memory. Rejects anything that is not a static MIPS
// executable, and any header, segment or symbol that points outside the file.
absl::StatusOr<ElfImage> ParseElf(std::span<const uint8_t> file);
absl::StatusOr<ElfImage> LoadElfFile(const std::string& path);

}  // namespace citcat::machine

#endif  // CITCAT_MACHINE_ELF_LOADER_H_
