// R4400 primary cache model: direct-mapped, virtually indexed, physically tagged, holding the real
// line data. The D-cache is write-back with write allocate; the I-cache is never dirty. Lines are
// moved to and from the Bus as whole-line kFill / kWriteBack records, so memory written behind
// the cache's back (DMA) stays invisible until the guest invalidates, exactly as on hardware.
#ifndef CITCAT_SIMCORE_MIPS_CACHE_H_
#define CITCAT_SIMCORE_MIPS_CACHE_H_

#include <cstdint>
#include <vector>

#include "simcore/bus.h"

namespace citcat::mips {

class Cache {
 public:
  // `size_bytes` and `line_bytes` must be powers of two; the R4400 has 16 or 32-byte lines.
  Cache(uint32_t size_bytes, uint32_t line_bytes, bool instruction);

  struct Line {
    uint64_t tag = 0;  // physical address of the line | 1 when valid; 0 when invalid
    bool dirty = false;
  };

  uint32_t size() const { return size_; }
  uint32_t line_bytes() const { return line_bytes_; }
  uint32_t line_shift() const { return line_shift_; }  // log2(line_bytes())
  uint32_t num_lines() const { return num_lines_; }
  bool instruction() const { return instruction_; }

  // The line a virtual address indexes (bits 13..line_shift for a 16 KB cache).
  uint32_t Index(uint64_t vaddr) const {
    return static_cast<uint32_t>(vaddr >> line_shift_) & index_mask_;
  }
  // The address of the line holding `addr` (its low bits cleared).
  uint64_t LineOf(uint64_t addr) const { return addr & line_mask_; }
  uint64_t TagFor(uint64_t paddr) const { return LineOf(paddr) | 1; }
  bool Hit(uint64_t vaddr, uint64_t paddr) const {
    return lines_[Index(vaddr)].tag == TagFor(paddr);
  }
  // The byte `vaddr` selects inside its line (valid after a hit or a refill).
  uint8_t* ByteAt(uint64_t vaddr) { return data_.data() + (vaddr & offset_mask_); }
  uint8_t* LineData(uint32_t index) { return data_.data() + index * line_bytes_; }
  const uint8_t* LineData(uint32_t index) const { return data_.data() + index * line_bytes_; }

  Line& line(uint32_t index) { return lines_[index]; }
  const Line& line(uint32_t index) const { return lines_[index]; }
  bool valid(uint32_t index) const { return lines_[index].tag & 1; }
  uint64_t line_address(uint32_t index) const { return lines_[index].tag & ~uint64_t{1}; }

  // Replaces line `index` with the line holding `paddr`: writes the old line back if dirty, then
  // fills the new one from the bus.
  void Refill(uint32_t index, uint64_t paddr, simcore::Bus& bus, uint64_t branch_count);
  // Writes line `index` to the bus if it is valid (and, unless `force`, dirty); clears dirty.
  void WriteBack(uint32_t index, simcore::Bus& bus, uint64_t branch_count, bool force = false);
  void Invalidate(uint32_t index) { lines_[index] = Line{}; }
  void InvalidateAll();

 private:
  uint32_t size_;
  uint32_t line_bytes_;
  uint32_t line_shift_;
  uint32_t num_lines_;
  // Precomputed for the hit paths: num_lines_ - 1, size_ - 1, ~(line_bytes_ - 1).
  uint32_t index_mask_;
  uint32_t offset_mask_;
  uint64_t line_mask_;
  bool instruction_;
  std::vector<Line> lines_;
  std::vector<uint8_t> data_;
};

}  // namespace citcat::mips

#endif  // CITCAT_SIMCORE_MIPS_CACHE_H_
