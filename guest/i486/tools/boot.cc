#include "guest/i486/tools/boot.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "guest/i486/boot/boot_info.h"
#include "machine/i486/contract.h"
#include "machine/i486/system.h"

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

void PutLe(std::vector<uint8_t>& bytes, size_t at, uint64_t v, int size) {
  for (int i = 0; i < size; ++i) bytes[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

void PutLe32(std::vector<uint8_t>& bytes, size_t at, uint32_t v) { PutLe(bytes, at, v, 4); }

// Where the loader puts Linux's boot data: below the kernel (1 MiB), above the ROM's stack.
constexpr uint32_t kBootParams = 0x10000;
constexpr uint32_t kCommandLine = 0x11000;

// boot_params ("the zero page", Linux's Documentation/arch/x86/zero-page.rst and boot.rst):
// the offsets of the fields the loader fills in.
constexpr size_t kE820Entries = 0x1E8;   // u8
constexpr size_t kBootFlag = 0x1FE;      // u16: AA55h (setup_header starts at 1F1h)
constexpr size_t kHeader = 0x202;        // u32: "HdrS"
constexpr size_t kVersion = 0x206;       // u16: the boot protocol's version
constexpr size_t kTypeOfLoader = 0x210;  // u8: FFh, a loader with no assigned id
constexpr size_t kLoadFlags = 0x211;     // u8: bit 0, LOADED_HIGH (the kernel is at 1 MiB)
constexpr size_t kRamdiskImage = 0x218;  // u32
constexpr size_t kRamdiskSize = 0x21C;   // u32
constexpr size_t kCmdLinePtr = 0x228;    // u32
constexpr size_t kCmdLineSize = 0x238;   // u32
constexpr size_t kE820Table = 0x2D0;     // 20-byte entries: u64 address, u64 size, u32 type
constexpr uint32_t kE820Ram = 1, kE820Reserved = 2;

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

absl::Status LoadLinux(machine::I486Machine& machine, uint64_t memory_bytes,
                       const machine::ElfImage& vmlinux, const LinuxBoot& boot) {
  if (vmlinux.is64 || vmlinux.big_endian || vmlinux.machine != machine::kElfMachine386) {
    return absl::InvalidArgumentError(
        absl::StrCat("the Linux kernel must be an i386 ELF32 vmlinux, not ", vmlinux.Describe()));
  }
  if (boot.command_line.size() > kLinuxCommandLineMax) {
    return absl::InvalidArgumentError(
        absl::StrCat("the kernel command line has ", boot.command_line.size(),
                     " characters, more than ", kLinuxCommandLineMax));
  }
  uint64_t kernel_end = 0;
  for (const machine::ElfSegment& s : vmlinux.segments) {
    if (s.paddr < I486_KERNEL_MIN) {
      return absl::InvalidArgumentError(
          absl::StrCat("a kernel segment at 0x", absl::Hex(s.paddr), " lies below 1 MiB"));
    }
    kernel_end = std::max(kernel_end, s.paddr + s.memsz);
  }
  // The initramfs at the top of RAM, page-aligned, where Linux leaves it alone until it unpacks,
  // with room between it and the kernel for Linux to run in (the userland's needs are small).
  const uint64_t initrd = (memory_bytes - boot.initramfs.size()) & ~uint64_t{0xFFF};
  if (kernel_end > memory_bytes || boot.initramfs.size() > memory_bytes ||
      initrd < kernel_end + (uint64_t{16} << 20)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the kernel (up to 0x", absl::Hex(kernel_end), ") and the initramfs (",
                     boot.initramfs.size(), " bytes) need more than the machine's ",
                     memory_bytes >> 20, " MiB of RAM (16 MiB left between them)"));
  }
  for (const machine::ElfSegment& s : vmlinux.segments) {
    std::vector<uint8_t> bytes(s.data);
    bytes.resize(s.memsz, 0);
    if (absl::Status st = machine.LoadRam(s.paddr, bytes); !st.ok()) return st;
  }
  if (!boot.initramfs.empty()) {
    if (absl::Status st = machine.LoadRam(initrd, boot.initramfs); !st.ok()) return st;
  }
  std::vector<uint8_t> command_line(boot.command_line.begin(), boot.command_line.end());
  command_line.push_back(0);
  if (absl::Status st = machine.LoadRam(kCommandLine, command_line); !st.ok()) return st;

  std::vector<uint8_t> params(0x1000, 0);
  // The e820 map: conventional memory, the ROM's alias below 1 MiB, the rest of RAM.
  const uint64_t e820[][3] = {
      {0, machine::pc::kHoleBase, kE820Ram},
      {machine::pc::kHoleEnd - machine::pc::kRomAliasMax, machine::pc::kRomAliasMax, kE820Reserved},
      {machine::pc::kHoleEnd, memory_bytes - machine::pc::kHoleEnd, kE820Ram}};
  params[kE820Entries] = std::size(e820);
  for (size_t i = 0; i < std::size(e820); ++i) {
    PutLe(params, kE820Table + 20 * i, e820[i][0], 8);
    PutLe(params, kE820Table + 20 * i + 8, e820[i][1], 8);
    PutLe(params, kE820Table + 20 * i + 16, e820[i][2], 4);
  }
  PutLe(params, kBootFlag, 0xAA55, 2);
  PutLe32(params, kHeader, 0x53726448);  // "HdrS"
  PutLe(params, kVersion, 0x020F, 2);
  params[kTypeOfLoader] = 0xFF;
  params[kLoadFlags] = 0x01;
  if (!boot.initramfs.empty()) {
    PutLe32(params, kRamdiskImage, static_cast<uint32_t>(initrd));
    PutLe32(params, kRamdiskSize, static_cast<uint32_t>(boot.initramfs.size()));
  }
  PutLe32(params, kCmdLinePtr, kCommandLine);
  PutLe32(params, kCmdLineSize, kLinuxCommandLineMax);
  if (absl::Status st = machine.LoadRam(kBootParams, params); !st.ok()) return st;

  std::vector<uint8_t> block(I486_LINUX_BOOT_PARAMS_OFFSET + 4, 0);
  PutLe32(block, I486_BOOT_MAGIC_OFFSET, I486_LINUX_MAGIC);
  PutLe32(block, I486_BOOT_ENTRY_OFFSET, static_cast<uint32_t>(vmlinux.entry));
  PutLe32(block, I486_LINUX_BOOT_PARAMS_OFFSET, kBootParams);
  return machine.LoadRam(I486_BOOT_BLOCK, block);
}

}  // namespace citcat::guest::i486
