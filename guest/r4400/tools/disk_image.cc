#include "guest/r4400/tools/disk_image.h"

#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

extern "C" {
#include "guest/r4400/workloads/iodata.h"
}

namespace citcat::guest {
namespace {

void PutBE32(std::vector<uint8_t>& v, size_t at, uint32_t x) {
  v[at] = static_cast<uint8_t>(x >> 24);
  v[at + 1] = static_cast<uint8_t>(x >> 16);
  v[at + 2] = static_cast<uint8_t>(x >> 8);
  v[at + 3] = static_cast<uint8_t>(x);
}

uint32_t GetBE32(std::span<const uint8_t> v, size_t at) {
  return uint32_t{v[at]} << 24 | uint32_t{v[at + 1]} << 16 | uint32_t{v[at + 2]} << 8 | v[at + 3];
}

uint64_t Blocks(uint64_t bytes) { return (bytes + kDiskBlockBytes - 1) / kDiskBlockBytes; }

}  // namespace

absl::StatusOr<std::vector<uint8_t>> BuildDiskImage(std::span<const DiskFile> files) {
  if (files.size() > kDiskMaxFiles) {
    return absl::InvalidArgumentError(
        absl::StrCat(files.size(), " files: the directory holds at most ", kDiskMaxFiles));
  }
  std::set<std::string> names;
  for (const DiskFile& f : files) {
    if (f.name.empty() || f.name.size() > kDiskMaxName ||
        f.name.find_first_of(std::string(",\0 ", 3)) != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("bad disk file name '", f.name,
                                                     "' (1 to 23 bytes, no comma or space)"));
    }
    if (!names.insert(f.name).second) {
      return absl::InvalidArgumentError(absl::StrCat("file '", f.name, "' twice on the disk"));
    }
  }
  const uint64_t dir_blocks = Blocks(16 + 32 * files.size());
  uint64_t total = dir_blocks;
  for (const DiskFile& f : files) total += Blocks(f.bytes.size());
  if (total > (uint64_t{1} << 31) / kDiskBlockBytes) {
    return absl::InvalidArgumentError("disk image larger than 2 GiB");
  }
  std::vector<uint8_t> image(total * kDiskBlockBytes, 0);
  PutBE32(image, 0, kDiskMagic);
  PutBE32(image, 4, kDiskVersion);
  PutBE32(image, 8, static_cast<uint32_t>(files.size()));
  PutBE32(image, 12, static_cast<uint32_t>(dir_blocks));
  uint64_t block = dir_blocks;
  for (size_t i = 0; i < files.size(); ++i) {
    const DiskFile& f = files[i];
    size_t e = 16 + 32 * i;
    std::copy(f.name.begin(), f.name.end(), image.begin() + static_cast<ptrdiff_t>(e));
    PutBE32(image, e + 24, static_cast<uint32_t>(block));
    PutBE32(image, e + 28, static_cast<uint32_t>(f.bytes.size()));
    std::copy(f.bytes.begin(), f.bytes.end(),
              image.begin() + static_cast<ptrdiff_t>(block * kDiskBlockBytes));
    block += Blocks(f.bytes.size());
  }
  return image;
}

absl::StatusOr<std::vector<DiskFile>> ReadDiskImage(std::span<const uint8_t> image) {
  if (image.size() < kDiskBlockBytes || image.size() % kDiskBlockBytes != 0) {
    return absl::InvalidArgumentError("a disk image is a non-empty whole number of 512-byte blocks");
  }
  if (GetBE32(image, 0) != kDiskMagic || GetBE32(image, 4) != kDiskVersion) {
    return absl::InvalidArgumentError("not a CITCAT R4400 disk image (no CTDK directory)");
  }
  const uint32_t count = GetBE32(image, 8), dir_blocks = GetBE32(image, 12);
  if (count > kDiskMaxFiles || dir_blocks != Blocks(16 + 32 * uint64_t{count})) {
    return absl::InvalidArgumentError("corrupt disk directory header");
  }
  std::vector<DiskFile> files;
  for (uint32_t i = 0; i < count; ++i) {
    size_t e = 16 + 32 * size_t{i};
    const char* name = reinterpret_cast<const char*>(&image[e]);
    size_t len = 0;
    while (len < 24 && name[len] != 0) ++len;
    uint64_t first = GetBE32(image, e + 24), size = GetBE32(image, e + 28);
    if (len == 0 || len > kDiskMaxName || first < dir_blocks ||
        (first + Blocks(size)) * kDiskBlockBytes > image.size()) {
      return absl::InvalidArgumentError(absl::StrCat("corrupt disk directory entry ", i));
    }
    const uint8_t* data = &image[first * kDiskBlockBytes];
    files.push_back({std::string(name, len), std::vector<uint8_t>(data, data + size)});
  }
  return files;
}

void AddOrReplace(std::vector<DiskFile>& files, DiskFile file) {
  for (DiskFile& f : files) {
    if (f.name == file.name) {
      f = std::move(file);
      return;
    }
  }
  files.push_back(std::move(file));
}

std::vector<uint8_t> IoData() {
  std::vector<uint8_t> data(IODATA_SIZE);
  iodata_generate(data.data(), IODATA_SIZE);
  return data;
}

}  // namespace citcat::guest
