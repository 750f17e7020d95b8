#include "simcore/mips/tlb.h"

namespace citcat::mips {

int Tlb::Lookup(uint64_t vaddr, uint8_t asid, bool* multiple) const {
  int found = -1;
  for (int i = 0; i < kEntries; ++i) {
    const TlbEntry& e = entries_[i];
    uint64_t m = e.vpn2_mask();
    if ((vaddr & m) != (e.entry_hi & m)) continue;
    if (!e.global && static_cast<uint8_t>(e.entry_hi) != asid) continue;
    if (found >= 0) {
      if (multiple) *multiple = true;
      break;
    }
    found = i;
    if (!multiple) break;
  }
  return found;
}

int Tlb::Probe(uint64_t entry_hi) const {
  return Lookup(entry_hi & kEntryHiVpn2Mask, static_cast<uint8_t>(entry_hi));
}

void Tlb::Write(int i, uint32_t page_mask, uint64_t entry_hi, uint64_t lo0, uint64_t lo1) {
  TlbEntry& e = entries_[i];
  e.page_mask = page_mask & kPageMaskMask;
  e.entry_hi = entry_hi & kEntryHiMask & ~uint64_t{e.page_mask};
  e.global = (lo0 & lo1 & 1) != 0;
  e.entry_lo[0] = lo0 & kEntryLoMask & ~uint64_t{1};
  e.entry_lo[1] = lo1 & kEntryLoMask & ~uint64_t{1};
}

}  // namespace citcat::mips
