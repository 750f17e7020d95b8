#include "guest/r4400/tools/kernel_image.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace citcat::guest {
namespace {

uint32_t BE32(std::span<const uint8_t> v, size_t at) {
  return uint32_t{v[at]} << 24 | uint32_t{v[at + 1]} << 16 | uint32_t{v[at + 2]} << 8 | v[at + 3];
}
uint16_t BE16(std::span<const uint8_t> v, size_t at) {
  return static_cast<uint16_t>(v[at] << 8 | v[at + 1]);
}

}  // namespace

absl::StatusOr<KernelImage> ReadKernelElf(std::span<const uint8_t> elf) {
  static const uint8_t kIdent[6] = {0x7F, 'E', 'L', 'F', 1, 2};
  if (elf.size() < 52 || !std::equal(kIdent, kIdent + 6, elf.begin())) {
    return absl::InvalidArgumentError("not a big-endian ELF32 file");
  }
  if (BE16(elf, 18) != 8) return absl::InvalidArgumentError("not a MIPS ELF file");
  const uint32_t phoff = BE32(elf, 28);
  const uint16_t phentsize = BE16(elf, 42), phnum = BE16(elf, 44);
  if (phentsize != 32 || uint64_t{phoff} + uint64_t{phnum} * 32 > elf.size()) {
    return absl::InvalidArgumentError("bad ELF program header table");
  }
  KernelImage image;
  image.entry = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(BE32(elf, 24))));
  for (uint16_t i = 0; i < phnum; ++i) {
    size_t ph = phoff + 32 * size_t{i};
    if (BE32(elf, ph) != 1) continue;  // PT_LOAD
    uint32_t offset = BE32(elf, ph + 4), paddr = BE32(elf, ph + 12), filesz = BE32(elf, ph + 16),
             memsz = BE32(elf, ph + 20);
    if (filesz > memsz || uint64_t{offset} + filesz > elf.size()) {
      return absl::InvalidArgumentError(absl::StrCat("bad ELF segment ", i));
    }
    KernelSegment s;
    s.paddr = paddr;
    s.size = memsz;
    s.bytes.assign(elf.begin() + offset, elf.begin() + offset + filesz);
    image.segments.push_back(std::move(s));
  }
  if (image.segments.empty()) return absl::InvalidArgumentError("ELF file without PT_LOAD");
  return image;
}

}  // namespace citcat::guest
