#include "simcore/mips/secondary_cache.h"

#include <algorithm>
#include <cstring>

namespace citcat::mips {

SecondaryCache::SecondaryCache(simcore::Bus& bus, uint32_t size_bytes, uint32_t line_bytes)
    : bus_(bus), cache_(size_bytes, line_bytes, false) {}

void SecondaryCache::Evict(uint32_t index) {
  if (!cache_.valid(index)) return;
  // Inclusion: the primaries write their dirty copies back into this line and drop them first.
  if (evict_) evict_(cache_.line_address(index), cache_.line_bytes());
  cache_.WriteBack(index, bus_, bc());
  cache_.Invalidate(index);
}

uint32_t SecondaryCache::Ensure(uint64_t paddr) {
  const uint32_t index = cache_.Index(paddr);
  if (!cache_.Hit(paddr, paddr)) {
    Evict(index);
    cache_.Refill(index, paddr, bus_, bc());
  }
  return index;
}

void SecondaryCache::Read(const cat::BusRecord& record, std::span<uint8_t> data) {
  Ensure(record.address);
  std::memcpy(data.data(), cache_.ByteAt(record.address), data.size());
}

void SecondaryCache::Write(const cat::BusRecord& record) {
  const uint32_t index = Ensure(record.address);
  std::memcpy(cache_.ByteAt(record.address), record.data.data(), record.data.size());
  cache_.line(index).dirty = true;
}

bool SecondaryCache::Peek(uint64_t address, std::span<uint8_t> data) const {
  for (size_t i = 0; i < data.size(); ++i) {
    const uint64_t a = address + i;
    const uint32_t index = cache_.Index(a);
    if (cache_.Hit(a, a)) {
      data[i] = cache_.LineData(index)[a & (cache_.line_bytes() - 1)];
    } else if (!bus_.Peek(a, data.subspan(i, 1))) {
      return false;
    }
  }
  return true;
}

void SecondaryCache::Operate(uint32_t kind, uint64_t paddr, uint32_t* tag_lo) {
  const uint32_t index = cache_.Index(paddr);
  Cache::Line& line = cache_.line(index);
  const bool hit = cache_.Hit(paddr, paddr);
  switch (kind) {
    case 0:  // Index_Writeback_Invalidate
      Evict(index);
      break;
    case 1: {  // Index_Load_Tag: STagLo = PA[35:17] in bits 31..13, state in 12..10
      const uint32_t state = cache_.valid(index) ? (line.dirty ? 5 : 4) : 0;
      *tag_lo = static_cast<uint32_t>((cache_.line_address(index) >> 17) << 13) | (state << 10);
      break;
    }
    case 2: {  // Index_Store_Tag
      const uint32_t state = (*tag_lo >> 10) & 7;
      const uint64_t line_pa = (uint64_t{*tag_lo >> 13} << 17) | cache_.LineOf(paddr & 0x1FFFF);
      line.tag = state ? (line_pa | 1) : 0;
      line.dirty = state == 5 || state == 6 || state == 7;
      break;
    }
    case 3:  // Create_Dirty_Exclusive
      if (!hit) {
        Evict(index);
        line.tag = cache_.TagFor(paddr);
      }
      line.dirty = true;
      break;
    case 4:  // Hit_Invalidate: the primaries' copies go too, and nothing reaches memory
      if (hit) {
        if (evict_) evict_(cache_.line_address(index), cache_.line_bytes());
        cache_.Invalidate(index);
      }
      break;
    case 5:  // Hit_Writeback_Invalidate
      if (hit) Evict(index);
      break;
    case 6:  // Hit_Writeback
      if (hit) cache_.WriteBack(index, bus_, bc());
      break;
    default:
      break;
  }
}

}  // namespace citcat::mips
