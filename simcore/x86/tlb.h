// The i486 TLB: 32 entries, 4-way set-associative, 8 sets indexed by linear address bits 14:12,
// pseudo-LRU replacement as in the cache (plru.h). An entry caches one 4 KB translation: the
// physical page and the rights of the page directory and page table entries combined (user only
// if both allow user, writable only if both allow writes), the page table entry's PCD, PWT and
// whether its dirty bit was set. Flushed whole by a CR3 load or task switch, one page by INVLPG.
#ifndef CITCAT_SIMCORE_X86_TLB_H_
#define CITCAT_SIMCORE_X86_TLB_H_

#include <array>
#include <cstdint>

#include "simcore/x86/plru.h"

namespace citcat::x86 {

// Page table entry bits (Intel486 manual, "page table entries").
inline constexpr uint32_t kPtePresent = 1u << 0;
inline constexpr uint32_t kPteWritable = 1u << 1;
inline constexpr uint32_t kPteUser = 1u << 2;
inline constexpr uint32_t kPtePwt = 1u << 3;
inline constexpr uint32_t kPtePcd = 1u << 4;
inline constexpr uint32_t kPteAccessed = 1u << 5;
inline constexpr uint32_t kPteDirty = 1u << 6;
inline constexpr uint32_t kPteFrame = 0xFFFFF000u;

struct TlbEntry {
  uint32_t page = 0;  // linear address of the page | 1 when valid; 0 when invalid
  uint32_t pte = 0;   // frame | kPteWritable/kPteUser (combined) | kPtePwt | kPtePcd | kPteDirty

  bool valid() const { return page & 1; }
  uint32_t frame() const { return pte & kPteFrame; }
  bool writable() const { return pte & kPteWritable; }
  bool user() const { return pte & kPteUser; }
  bool pwt() const { return pte & kPtePwt; }
  bool pcd() const { return pte & kPtePcd; }
  bool dirty() const { return pte & kPteDirty; }
};

class Tlb {
 public:
  static constexpr uint32_t kSets = 8;
  static constexpr uint32_t kWays = 4;

  static constexpr uint32_t SetOf(uint32_t linear) { return (linear >> 12) & (kSets - 1); }

  // The entry translating `linear`, or nullptr; a hit updates the set's replacement bits.
  const TlbEntry* Lookup(uint32_t linear) {
    const int way = WayOf(linear);
    if (way < 0) return nullptr;
    Touch(linear, static_cast<uint32_t>(way));
    return &entries_[SetOf(linear)][way];
  }
  // The way holding the page of `linear` (the lowest, if a test write made two), or -1; touches
  // nothing.
  int WayOf(uint32_t linear) const {
    const uint32_t tag = (linear & kPteFrame) | 1;
#pragma GCC unroll 4
    for (uint32_t w = 0; w < kWays; ++w) {
      if (entries_[SetOf(linear)][w].page == tag) return static_cast<int>(w);
    }
    return -1;
  }
  // Whether `way` of the set of `linear` still holds `entry`, as WayOf found it: then, while the
  // epoch is the same, Lookup(linear) finds the same translation in that way.
  bool Holds(uint32_t linear, uint32_t way, const TlbEntry& entry) const {
    const TlbEntry& e = entries_[SetOf(linear)][way];
    return e.page == entry.page && e.pte == entry.pte;
  }
  // Lookup again of a page that Holds says is where it was: the same replacement-bit update,
  // without the search.
  void Touch(uint32_t linear, uint32_t way) {
    lru_[SetOf(linear)] = PlruTouch(lru_[SetOf(linear)], way);
  }
  // Caches a translation of the page holding `linear`: over the entry already holding that page,
  // else into the first invalid way, else the pseudo-LRU victim. `pte` as in TlbEntry. Returns
  // the way used.
  uint32_t Insert(uint32_t linear, uint32_t pte);

  // The TLB write of the test interface (TR6 with C = 0, test_registers.h): `way` of the set of
  // `linear` holds the page of `linear` with `pte` (as in TlbEntry), or nothing when `valid` is
  // false; the set's replacement bits are updated as for an access to the way, and the epoch
  // changes. Another way of the set may already hold the page (the manual leaves lookups then
  // undefined; Lookup takes the lowest such way).
  void WriteEntry(uint32_t way, uint32_t linear, bool valid, uint32_t pte);

  void FlushAll();                   // CR3 load, task switch
  void Invalidate(uint32_t linear);  // INVLPG

  // Changes on a flush, an invalidation and a test write, not on an insert, which changes only
  // the entry it writes: a translation found in a way is still the answer while the epoch is the
  // same and that way Holds the same entry (an insert never makes a second entry for a page,
  // a test write may).
  uint32_t epoch() const { return epoch_; }

  // Inspection, for tests and the i486 TLB test registers.
  const TlbEntry& entry(uint32_t set, uint32_t way) const { return entries_[set][way]; }
  uint8_t lru_bits(uint32_t set) const { return lru_[set]; }
  // A set's replacement bits, as a saved state (a segment's start) had them.
  void set_lru_bits(uint32_t set, uint8_t bits) { lru_[set] = bits; }

 private:
  std::array<std::array<TlbEntry, kWays>, kSets> entries_{};
  std::array<uint8_t, kSets> lru_{};
  uint32_t epoch_ = 0;
};

}  // namespace citcat::x86

#endif  // CITCAT_SIMCORE_X86_TLB_H_
