#include "guest/i486/tools/boot.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "guest/i486/boot/boot_info.h"
#include "machine/i486/contract.h"

namespace citcat::guest::i486 {

std::vector<cat::AddressWindow> ReservedWindows() {
  std::vector<cat::AddressWindow> windows;
  for (const citcat::i486::ReservedArea& a : citcat::i486::kReservedAreas) {
    windows.push_back({std::string(a.name), cat::WindowKind::kMemoryMapped,
                       citcat::i486::kReservedBase + a.offset, a.size});
  }
  return windows;
}

namespace {

void PutLe32(std::vector<uint8_t>& bytes, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

absl::Status LoadKernel(machine::I486Machine& machine, const machine::ElfImage& kernel,
                        std::string_view boot_string) {
  if (kernel.is64 || kernel.big_endian || kernel.machine != machine::kElfMachine386) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the i486 kernel must be an i386 ELF32 little-endian executable, not ", kernel.Describe()));
  }
  if (boot_string.size() >= I486_BOOT_ARGS_SIZE) {
    return absl::InvalidArgumentError(absl::StrCat("the boot string has ", boot_string.size(),
                                                   " characters, more than ",
                                                   I486_BOOT_ARGS_SIZE - 1));
  }
  if (kernel.entry < I486_KERNEL_MIN || kernel.entry >= I486_KERNEL_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat("the kernel's entry point 0x", absl::Hex(kernel.entry),
                     " is outside 1 MiB .. 4 MiB (the boot ROM maps the first 4 MiB only)"));
  }
  for (const machine::ElfSegment& s : kernel.segments) {
    if (s.paddr < I486_KERNEL_MIN || s.paddr + s.memsz > I486_KERNEL_MAX) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a kernel segment at 0x", absl::Hex(s.paddr), " (", s.memsz,
          " bytes) is outside 1 MiB .. 4 MiB (the boot ROM maps the first 4 MiB only)"));
    }
    std::vector<uint8_t> bytes(s.data);
    bytes.resize(s.memsz, 0);
    if (absl::Status st = machine.LoadRam(s.paddr, bytes); !st.ok()) return st;
  }
  std::vector<uint8_t> block(I486_BOOT_ARGS_OFFSET + I486_BOOT_ARGS_SIZE, 0);
  PutLe32(block, I486_BOOT_MAGIC_OFFSET, I486_BOOT_MAGIC);
  PutLe32(block, I486_BOOT_ENTRY_OFFSET, static_cast<uint32_t>(kernel.entry));
  std::copy(boot_string.begin(), boot_string.end(), block.begin() + I486_BOOT_ARGS_OFFSET);
  return machine.LoadRam(I486_BOOT_BLOCK, block);
}

}  // namespace citcat::guest::i486
