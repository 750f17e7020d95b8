// What a host program does to boot the i486 guest kernel on machine::I486Machine
// (docs/machines/i486-guest.md, "Boot"): the machine gets the boot ROM image and the reserved
// areas of the CITCAT contract in its configuration; then the kernel's ELF goes into RAM and the
// boot block tells the ROM where the kernel starts and the kernel which programs to run.
#ifndef CITCAT_GUEST_I486_TOOLS_BOOT_H_
#define CITCAT_GUEST_I486_TOOLS_BOOT_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "cat_parser/record.h"
#include "machine/elf_loader.h"
#include "machine/i486/machine.h"

namespace citcat::guest::i486 {

// The reserved areas of machine/i486/contract.h, for PcConfig::reserved, in the contract's order.
std::vector<cat::AddressWindow> ReservedWindows();

// Copies the kernel's PT_LOAD segments into RAM at their physical addresses (the bytes past a
// segment's file contents zeroed) and writes the boot block: the magic, the entry point and
// `boot_string` (the programs to run, comma-separated; empty for the kernel's default mix). No
// bus transaction. Fails for an ELF that is not a 32-bit little-endian i386 executable, a kernel
// outside [1 MiB, 4 MiB), or a boot string of more than 255 characters.
absl::Status LoadKernel(machine::I486Machine& machine, const machine::ElfImage& kernel,
                        std::string_view boot_string);

// What a Linux boot needs from the loader (docs/machines/i486-linux.md, "Booting").
struct LinuxBoot {
  std::span<const uint8_t> initramfs;  // a cpio archive, or empty for none
  std::string_view command_line;       // at most kLinuxCommandLineMax characters
};
inline constexpr size_t kLinuxCommandLineMax = 2047;

// Boots Linux by its 32-bit boot protocol, as a boot loader would: the kernel's PT_LOAD segments
// (vmlinux) into RAM at their physical addresses, the initramfs at the top of RAM, the command
// line and boot_params (an e820 map of the machine's memory, the initramfs, the command line),
// then the boot block with the Linux magic for the ROM. No bus transaction. Fails for an ELF
// that is not an i386 kernel loaded at and above 1 MiB, or that does not fit in RAM with the
// initramfs, or for a command line that is too long.
absl::Status LoadLinux(machine::I486Machine& machine, uint64_t memory_bytes,
                       const machine::ElfImage& vmlinux, const LinuxBoot& boot);

}  // namespace citcat::guest::i486

#endif  // CITCAT_GUEST_I486_TOOLS_BOOT_H_
