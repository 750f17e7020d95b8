#include "simcore/x86/tlb.h"

namespace citcat::x86 {

uint32_t Tlb::Insert(uint32_t linear, uint32_t pte) {
  const uint32_t set = SetOf(linear);
  const uint32_t tag = (linear & kPteFrame) | 1;
  uint8_t valid = 0;
  uint32_t way = kWays;
  for (uint32_t w = 0; w < kWays; ++w) {
    if (entries_[set][w].page == tag) way = w;
    if (entries_[set][w].valid()) valid |= static_cast<uint8_t>(1u << w);
  }
  if (way == kWays) way = PlruChoose(valid, lru_[set]);
  entries_[set][way] = {
      tag, pte & (kPteFrame | kPteWritable | kPteUser | kPtePwt | kPtePcd | kPteDirty)};
  lru_[set] = PlruTouch(lru_[set], way);
  return way;
}

void Tlb::WriteEntry(uint32_t way, uint32_t linear, bool valid, uint32_t pte) {
  const uint32_t set = SetOf(linear);
  ++epoch_;
  entries_[set][way] =
      valid ? TlbEntry{(linear & kPteFrame) | 1,
                       pte & (kPteFrame | kPteWritable | kPteUser | kPtePwt | kPtePcd | kPteDirty)}
            : TlbEntry{};
  lru_[set] = PlruTouch(lru_[set], way);
}

void Tlb::FlushAll() {
  ++epoch_;
  for (auto& set : entries_) set.fill(TlbEntry{});
  lru_.fill(0);
}

void Tlb::Invalidate(uint32_t linear) {
  const uint32_t set = SetOf(linear);
  const uint32_t tag = (linear & kPteFrame) | 1;
  ++epoch_;
  for (TlbEntry& e : entries_[set]) {
    if (e.page == tag) e = TlbEntry{};
  }
}

}  // namespace citcat::x86
