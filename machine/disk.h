// A traced machine's disk: 512-byte blocks backed by an image held in memory. Both traced systems'
// disk controllers read it; what the blocks hold (the guest's file layout) is the guest's business.
#ifndef CITCAT_MACHINE_DISK_H_
#define CITCAT_MACHINE_DISK_H_

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace citcat::machine {

class Disk {
 public:
  static constexpr uint32_t kBlockBytes = 512;

  Disk() = default;
  explicit Disk(std::vector<uint8_t> image) : image_(std::move(image)) {}

  // An image is a whole number of blocks (none: no disk).
  static absl::Status Check(std::span<const uint8_t> image) {
    if (image.size() % kBlockBytes == 0) return absl::OkStatus();
    return absl::InvalidArgumentError("the disk image is not a whole number of 512-byte blocks");
  }

  uint64_t blocks() const { return image_.size() / kBlockBytes; }
  bool present() const { return !image_.empty(); }
  // Whether blocks [first, first + count) all exist.
  bool Holds(uint64_t first, uint64_t count) const {
    return first <= blocks() && count <= blocks() - first;
  }
  // Block `n` (which must exist).
  std::span<const uint8_t> Block(uint64_t n) const {
    return std::span<const uint8_t>(image_).subspan(n * kBlockBytes, kBlockBytes);
  }

 private:
  std::vector<uint8_t> image_;
};

}  // namespace citcat::machine

#endif  // CITCAT_MACHINE_DISK_H_
