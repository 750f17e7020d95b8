#include "simcore/x86/cache.h"

#include <cstring>

namespace citcat::x86 {

Cache::Cache(simcore::Bus& bus, const uint64_t& branch_count)
    : bus_(bus), branch_count_(&branch_count) {}

int Cache::WayOf(uint32_t paddr) const { return Find(SetOf(paddr), TagOf(paddr)); }

void Cache::ReadSlow(uint32_t paddr, std::span<uint8_t> bytes, Access access) {
  const uint32_t last = paddr + static_cast<uint32_t>(bytes.size()) - 1;
  if (((paddr ^ last) & ~uint32_t{3}) == 0) {
    ReadPiece(paddr, bytes, access);
    return;
  }
  // The i486 transfers the higher-addressed part of a misaligned operand first.
  const uint32_t split = (paddr | 3) + 1;
  const size_t low = split - paddr;
  ReadPiece(split, bytes.subspan(low), access);
  ReadPiece(paddr, bytes.first(low), access);
}

void Cache::Write(uint32_t paddr, std::span<const uint8_t> bytes, Access access) {
  const uint32_t last = paddr + static_cast<uint32_t>(bytes.size()) - 1;
  if (((paddr ^ last) & ~uint32_t{3}) == 0) {
    WritePiece(paddr, bytes, access);
    return;
  }
  const uint32_t split = (paddr | 3) + 1;
  const size_t low = split - paddr;
  WritePiece(split, bytes.subspan(low), access);
  WritePiece(paddr, bytes.first(low), access);
}

void Cache::ReadPiece(uint32_t paddr, std::span<uint8_t> bytes, Access a) {
  const uint32_t set = SetOf(paddr);
  int way = Find(set, TagOf(paddr));
  if (a.locked) {
    // A locked cycle must reach memory: drop the cached copy and read on the bus.
    if (way >= 0) InvalidateSlot(set * kWays + way);
    way = -1;
  } else if (way < 0 && Fillable(a)) {
    way = static_cast<int>(Fill(set, paddr, a));
  }
  if (way >= 0) {
    lru_[set] = PlruTouch(lru_[set], way);
    std::memcpy(bytes.data(), &data_[set * kWays + way][paddr % kLineBytes], bytes.size());
    return;
  }
  cat::BusRecord rec;
  rec.kind = cat::RecordKind::kUncachedRead;
  rec.flags = Flags(a);
  rec.address = paddr;
  rec.branch_count = *branch_count_;
  rec.data = bytes;
  bus_.Read(rec, bytes);
}

void Cache::WritePiece(uint32_t paddr, std::span<const uint8_t> bytes, Access a) {
  const uint32_t set = SetOf(paddr);
  const int way = Find(set, TagOf(paddr));
  if (way >= 0) {
    const uint32_t slot = set * kWays + way;
    std::memcpy(&data_[slot][paddr % kLineBytes], bytes.data(), bytes.size());
    lru_[set] = PlruTouch(lru_[set], way);
    ++generation_[slot];
    if (observer_) observer_->OnLineChanged(line_address(set, way));
    if (cd_ && nw_) return;  // write-throughs disabled: the hit stays in the cache
  }
  cat::BusRecord rec;
  rec.kind = Fillable(a) ? cat::RecordKind::kWriteThrough : cat::RecordKind::kUncachedWrite;
  rec.flags = Flags(a);
  rec.address = paddr;
  rec.branch_count = *branch_count_;
  rec.data = bytes;
  bus_.Write(rec);
}

uint32_t Cache::Fill(uint32_t set, uint32_t paddr, Access a) {
  uint8_t valid = 0;
  for (uint32_t w = 0; w < kWays; ++w) {
    if (tag_[set * kWays + w] & 1) valid |= static_cast<uint8_t>(1u << w);
  }
  const uint32_t way = PlruChoose(valid, lru_[set]);
  const uint32_t slot = set * kWays + way;
  if (tag_[slot] & 1) InvalidateSlot(slot);
  const uint32_t line = paddr & ~(kLineBytes - 1);
  std::span<uint8_t> bytes(data_[slot]);
  cat::BusRecord rec;
  rec.kind = cat::RecordKind::kFill;
  rec.flags = Flags(a);
  rec.address = line;
  rec.branch_count = *branch_count_;
  rec.data = bytes;
  bus_.Read(rec, bytes);
  tag_[slot] = line | 1;
  ++generation_[slot];
  return way;
}

const uint8_t* Cache::FetchLine(uint32_t paddr, Access access, LineRef* ref) {
  const uint32_t set = SetOf(paddr);
  int way = Find(set, TagOf(paddr));
  if (way < 0) {
    if (!Fillable(access) || access.locked) return nullptr;
    way = static_cast<int>(Fill(set, paddr, access));
  }
  lru_[set] = PlruTouch(lru_[set], way);
  const uint32_t slot = set * kWays + way;
  *ref = {slot, generation_[slot]};
  return data_[slot].data();
}

void Cache::InvalidateSlot(uint32_t slot) {
  const uint32_t line = tag_[slot] & ~uint32_t{1};
  tag_[slot] = 0;
  ++generation_[slot];
  if (observer_) observer_->OnLineChanged(line);
}

void Cache::InvalidateAll() {
  for (uint32_t slot = 0; slot < kSlots; ++slot) {
    if (tag_[slot] & 1) ++generation_[slot];
    tag_[slot] = 0;
  }
  // No observable effect (every way is refilled before the bits are consulted again), but it
  // keeps the state after a flush a function of nothing that came before.
  lru_.fill(0);
  if (observer_) observer_->OnAllInvalidated();
}

void Cache::WriteLine(uint32_t set, uint32_t way, uint32_t tag, bool valid,
                      std::span<const uint8_t, kLineBytes> data) {
  const uint32_t slot = set * kWays + way;
  const uint32_t before = tag_[slot];
  const uint32_t line = (tag & ~(kSets * kLineBytes - 1)) | set * kLineBytes;
  std::memcpy(data_[slot].data(), data.data(), kLineBytes);
  tag_[slot] = valid ? line | 1 : 0;
  ++generation_[slot];
  lru_[set] = PlruTouch(lru_[set], way);
  if (observer_ == nullptr) return;
  if (before & 1) observer_->OnLineChanged(before & ~uint32_t{1});
  if (valid && (before & ~uint32_t{1}) != line) observer_->OnLineChanged(line);
}

void Cache::SnoopInvalidate(uint32_t paddr) {
  if (cd_ && nw_) return;
  const int way = WayOf(paddr);
  if (way >= 0) InvalidateSlot(SetOf(paddr) * kWays + way);
}

}  // namespace citcat::x86
