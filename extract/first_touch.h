// The first-touch memory image: for each physical byte, the value it had when the trace began, if
// the trace ever shows it. A byte's first appearance decides: carried out of memory (a line fill,
// an uncached read, a device's DMA read) means its value is known and kept; written first (a
// write-back, an uncached store, a device's DMA write) means the value at the start was never
// used and is left out. Memory grows with the pages the trace touches, never with its length.
#ifndef CITCAT_EXTRACT_FIRST_TOUCH_H_
#define CITCAT_EXTRACT_FIRST_TOUCH_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace citcat::extract {

class FirstTouchImage {
 public:
  // Bytes read out of memory at `address`.
  void Read(uint64_t address, std::span<const uint8_t> data);
  // `size` bytes written at `address`.
  void Write(uint64_t address, uint64_t size);

  struct Extent {
    uint64_t address;
    std::vector<uint8_t> data;
  };
  // The known bytes as ascending runs of consecutive addresses.
  std::vector<Extent> Extents() const;
  uint64_t known_bytes() const { return known_bytes_; }

 private:
  static constexpr uint64_t kPageBytes = 4096;
  enum State : uint8_t { kUnseen = 0, kKnown = 1, kWrittenFirst = 2 };
  struct Page {
    uint8_t value[kPageBytes] = {};
    uint8_t state[kPageBytes] = {};
  };
  Page& PageAt(uint64_t page);

  absl::flat_hash_map<uint64_t, std::unique_ptr<Page>> pages_;
  uint64_t known_bytes_ = 0;
};

}  // namespace citcat::extract

#endif  // CITCAT_EXTRACT_FIRST_TOUCH_H_
