// What a host program does to boot the i486 guest kernel on machine::I486Machine
// (docs/machines/i486-guest.md, "Boot"): the machine gets the boot ROM image and the reserved
// areas of the CITCAT contract in its configuration; then the kernel's ELF goes into RAM and the
// boot block tells the ROM where the kernel starts and the kernel which programs to run.
#ifndef CITCAT_GUEST_I486_TOOLS_BOOT_H_
#define CITCAT_GUEST_I486_TOOLS_BOOT_H_

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

}  // namespace citcat::guest::i486

#endif  // CITCAT_GUEST_I486_TOOLS_BOOT_H_
