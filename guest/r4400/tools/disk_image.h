// The disk image of the CITCAT R4400 guest (docs/machines/r4400-guest.md, "Disk layout"):
// a directory at block 0 and the files, each starting on a 512-byte block boundary.
//
//   directory header, 16 bytes: "CTDK", version 1, file count, directory blocks (all BE32)
//   entry, 32 bytes each:       name (24 bytes, NUL-terminated), first block, byte size (BE32)
//
// `citcat capture --elf prog.elf` reads the built image, adds the user's program as `elf`, and
// writes the result: ReadDiskImage + AddOrReplace + BuildDiskImage.
#ifndef CITCAT_GUEST_R4400_TOOLS_DISK_IMAGE_H_
#define CITCAT_GUEST_R4400_TOOLS_DISK_IMAGE_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace citcat::guest {

inline constexpr uint32_t kDiskBlockBytes = 512;
inline constexpr uint32_t kDiskMagic = 0x4354444B;  // "CTDK"
inline constexpr uint32_t kDiskVersion = 1;
inline constexpr size_t kDiskMaxName = 23;
inline constexpr size_t kDiskMaxFiles = 64;         // the kernel's directory table
inline constexpr uint32_t kDiskMaxProgramBytes = 2u << 20;  // the kernel's load area

struct DiskFile {
  std::string name;
  std::vector<uint8_t> bytes;
};

absl::StatusOr<std::vector<uint8_t>> BuildDiskImage(std::span<const DiskFile> files);
absl::StatusOr<std::vector<DiskFile>> ReadDiskImage(std::span<const uint8_t> image);
// Replaces the file of the same name, or appends it.
void AddOrReplace(std::vector<DiskFile>& files, DiskFile file);

// The generated content of the io workload's data file `iodata`.
std::vector<uint8_t> IoData();

}  // namespace citcat::guest

#endif  // CITCAT_GUEST_R4400_TOOLS_DISK_IMAGE_H_
