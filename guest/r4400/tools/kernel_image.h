// Reads the guest kernel's ELF (kernel.elf, big-endian MIPS ELF32) into what the machine loads:
// each PT_LOAD segment at its physical address (p_paddr), and the entry point as a 64-bit
// (sign-extended) virtual address.
#ifndef CITCAT_GUEST_R4400_TOOLS_KERNEL_IMAGE_H_
#define CITCAT_GUEST_R4400_TOOLS_KERNEL_IMAGE_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"

namespace citcat::guest {

struct KernelSegment {
  uint64_t paddr = 0;
  uint64_t size = 0;            // memory size; bytes beyond `bytes` are zero
  std::vector<uint8_t> bytes;   // file contents
};

struct KernelImage {
  std::vector<KernelSegment> segments;
  uint64_t entry = 0;
};

absl::StatusOr<KernelImage> ReadKernelElf(std::span<const uint8_t> elf);

}  // namespace citcat::guest

#endif  // CITCAT_GUEST_R4400_TOOLS_KERNEL_IMAGE_H_
