#include "simcore/mips/cache.h"

#include <bit>
#include <span>

namespace citcat::mips {

Cache::Cache(uint32_t size_bytes, uint32_t line_bytes, bool instruction)
    : size_(size_bytes),
      line_bytes_(line_bytes),
      line_shift_(std::countr_zero(line_bytes)),
      num_lines_(size_bytes / line_bytes),
      index_mask_(num_lines_ - 1),
      offset_mask_(size_bytes - 1),
      line_mask_(~uint64_t{line_bytes - 1}),
      instruction_(instruction),
      lines_(num_lines_),
      data_(size_bytes, 0) {}

void Cache::Refill(uint32_t index, uint64_t paddr, simcore::Bus& bus, uint64_t branch_count) {
  // The R4400 moves the victim to its write-back buffer first; we emit the write-back record
  // before the fill so the bus order is always victim, then new line.
  WriteBack(index, bus, branch_count);
  uint64_t line_addr = LineOf(paddr);
  std::span<uint8_t> bytes(LineData(index), line_bytes_);
  cat::BusRecord rec;
  rec.kind = cat::RecordKind::kFill;
  rec.flags = instruction_ ? cat::kFlagCode : 0;
  rec.address = line_addr;
  rec.branch_count = branch_count;
  rec.data = bytes;
  bus.Read(rec, bytes);
  lines_[index] = Line{line_addr | 1, false};
}

void Cache::WriteBack(uint32_t index, simcore::Bus& bus, uint64_t branch_count, bool force) {
  Line& l = lines_[index];
  if (!(l.tag & 1) || (!l.dirty && !force)) return;
  cat::BusRecord rec;
  rec.kind = cat::RecordKind::kWriteBack;
  rec.address = l.tag & ~uint64_t{1};
  rec.branch_count = branch_count;
  rec.data = std::span<const uint8_t>(LineData(index), line_bytes_);
  bus.Write(rec);
  l.dirty = false;
}

void Cache::InvalidateAll() {
  for (Line& l : lines_) l = Line{};
}

}  // namespace citcat::mips
