// The R4400 joint TLB: 48 entries, each mapping an even/odd pair of pages of 4 KB to 16 MB, with
// an 8-bit ASID and a global bit. Lookup is a linear search; the core keeps its own small cache of
// recent translations in front of it, so this is off the hot path.
#ifndef CITCAT_SIMCORE_MIPS_TLB_H_
#define CITCAT_SIMCORE_MIPS_TLB_H_

#include <array>
#include <cstdint>

namespace citcat::mips {

// Field masks of the CP0 registers that describe a TLB entry.
inline constexpr uint64_t kEntryHiMask = 0xC00000FFFFFFE0FFull;  // R, VPN2 (39:13), ASID
inline constexpr uint64_t kEntryHiVpn2Mask = 0xC00000FFFFFFE000ull;
inline constexpr uint64_t kEntryLoMask = 0x3FFFFFFFull;  // PFN (29:6), C, D, V, G
inline constexpr uint32_t kPageMaskMask = 0x01FFE000u;   // MASK (24:13)

struct TlbEntry {
  uint32_t page_mask = 0;         // PageMask value
  uint64_t entry_hi = 0;          // R, VPN2 (masked by page_mask) and ASID
  uint64_t entry_lo[2] = {0, 0};  // EntryLo0 / EntryLo1 without G
  bool global = false;

  uint64_t vpn2_mask() const { return kEntryHiVpn2Mask & ~uint64_t{page_mask}; }
  // Bytes in one of the two pages.
  uint64_t page_bytes() const { return (uint64_t{page_mask} >> 1) + 0x1000; }
};

class Tlb {
 public:
  static constexpr int kEntries = 48;

  // The entry matching `vaddr` for `asid`, or -1 (a refill). Several matches on the R4400 shut
  // the TLB down (Status.TS); we take the lowest index and let the core set TS.
  int Lookup(uint64_t vaddr, uint8_t asid, bool* multiple = nullptr) const;

  // Probe by EntryHi (TLBP): matches on VPN2, R and ASID/G.
  int Probe(uint64_t entry_hi) const;

  TlbEntry& entry(int i) { return entries_[i]; }
  const TlbEntry& entry(int i) const { return entries_[i]; }

  void Write(int i, uint32_t page_mask, uint64_t entry_hi, uint64_t lo0, uint64_t lo1);

 private:
  std::array<TlbEntry, kEntries> entries_{};
};

}  // namespace citcat::mips

#endif  // CITCAT_SIMCORE_MIPS_TLB_H_
