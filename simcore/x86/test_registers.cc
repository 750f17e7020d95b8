#include "simcore/x86/test_registers.h"

namespace citcat::x86 {
namespace {

uint32_t Entry(const TestRegisters& tr) { return (tr.tr5 >> kTr5EntryShift) & 3; }
uint32_t SetSelect(const TestRegisters& tr) {
  return (tr.tr5 >> kTr5SetShift) & (Cache::kSets - 1);
}

// TR5 control 01: the fill buffer, with TR4's tag and V, into the selected way of the set.
void CacheWrite(const TestRegisters& tr, Cache& cache) {
  std::array<uint8_t, Cache::kLineBytes> line;
  for (uint32_t i = 0; i < 4; ++i) {
    for (uint32_t b = 0; b < 4; ++b)
      line[4 * i + b] = static_cast<uint8_t>(tr.fill_buffer[i] >> 8 * b);
  }
  cache.WriteLine(SetSelect(tr), Entry(tr), tr.tr4 & kTr4Tag, tr.tr4 & kTr4Valid, line);
}

// TR5 control 10: the selected way's line into the read buffer; its tag and V, and the set's
// replacement and valid bits, into TR4. The replacement bits are not touched.
void CacheRead(TestRegisters& tr, const Cache& cache) {
  const uint32_t set = SetSelect(tr), way = Entry(tr);
  const uint8_t* data = cache.line_data(set, way);
  for (uint32_t i = 0; i < 4; ++i) {
    uint32_t v = 0;
    for (uint32_t b = 0; b < 4; ++b) v |= uint32_t{data[4 * i + b]} << 8 * b;
    tr.read_buffer[i] = v;
  }
  uint32_t valid_bits = 0;
  for (uint32_t w = 0; w < Cache::kWays; ++w) {
    if (cache.valid(set, w)) valid_bits |= 1u << w;
  }
  tr.tr4 = (cache.line_address(set, way) & kTr4Tag) | (cache.valid(set, way) ? kTr4Valid : 0) |
           uint32_t{cache.lru_bits(set)} << kTr4LruShift | valid_bits << kTr4ValidBitsShift;
}

// Whether an entry's bit agrees with the pair (X, X#) of a lookup: 00 matches nothing, 11
// anything, 10 a set bit and 01 a clear one.
bool AttributeMatches(uint32_t tr6, uint32_t x, uint32_t not_x, bool bit) {
  const bool want_set = tr6 & x, want_clear = tr6 & not_x;
  return bit ? want_set : want_clear;
}

// TR6 with C = 1: the lowest way of the set whose page, validity and attributes match answers,
// in TR7 (physical address, PCD, PWT, REP and PL set); a miss leaves only PL clear and the
// set's replacement bits. Either way TR7 reports the replacement bits as they were, and the
// lookup changes nothing in the TLB.
void TlbLookup(TestRegisters& tr, const Tlb& tlb) {
  const uint32_t linear = tr.tr6 & kTr6Linear;
  const uint32_t set = Tlb::SetOf(linear);
  const uint32_t lru = uint32_t{tlb.lru_bits(set)} << kTr7LruShift;
  for (uint32_t w = 0; w < Tlb::kWays; ++w) {
    const TlbEntry& e = tlb.entry(set, w);
    if (!(tr.tr6 & kTr6V) || !e.valid() || (e.page & kPteFrame) != linear) continue;
    if (!AttributeMatches(tr.tr6, kTr6D, kTr6NotD, e.dirty()) ||
        !AttributeMatches(tr.tr6, kTr6U, kTr6NotU, e.user()) ||
        !AttributeMatches(tr.tr6, kTr6W, kTr6NotW, e.writable())) {
      continue;
    }
    tr.tr7 = e.frame() | (e.pcd() ? kTr7Pcd : 0) | (e.pwt() ? kTr7Pwt : 0) | lru | kTr7Pl |
             w << kTr7RepShift;
    return;
  }
  tr.tr7 = lru;
}

// TR6 with C = 0: TR6's page, V and attributes (X of each pair) with TR7's physical address,
// PCD and PWT into the way TR7's REP names when PL is set, else into the way the replacement
// rule picks (the first invalid one, else the pseudo-LRU victim).
void TlbWrite(const TestRegisters& tr, Tlb& tlb) {
  const uint32_t linear = tr.tr6 & kTr6Linear;
  const uint32_t set = Tlb::SetOf(linear);
  uint32_t way = (tr.tr7 >> kTr7RepShift) & 3;
  if (!(tr.tr7 & kTr7Pl)) {
    uint8_t valid = 0;
    for (uint32_t w = 0; w < Tlb::kWays; ++w) {
      if (tlb.entry(set, w).valid()) valid |= static_cast<uint8_t>(1u << w);
    }
    way = PlruChoose(valid, tlb.lru_bits(set));
  }
  const uint32_t pte = (tr.tr7 & kTr7Physical) | (tr.tr6 & kTr6D ? kPteDirty : 0) |
                       (tr.tr6 & kTr6U ? kPteUser : 0) | (tr.tr6 & kTr6W ? kPteWritable : 0) |
                       (tr.tr7 & kTr7Pcd ? kPtePcd : 0) | (tr.tr7 & kTr7Pwt ? kPtePwt : 0);
  tlb.WriteEntry(way, linear, tr.tr6 & kTr6V, pte);
}

}  // namespace

void WriteTestRegister(TestRegisters& tr, int n, uint32_t value, Cache& cache, Tlb& tlb) {
  switch (n) {
    case 3:
      tr.fill_buffer[Entry(tr)] = value;
      return;
    case 4:
      tr.tr4 = (value & kTr4Writable) | (tr.tr4 & ~kTr4Writable);
      return;
    case 5:
      tr.tr5 = value & kTr5Writable;
      switch (tr.tr5 & kTr5Control) {
        case kTr5CacheWrite:
          CacheWrite(tr, cache);
          return;
        case kTr5CacheRead:
          CacheRead(tr, cache);
          return;
        case kTr5Flush:
          cache.InvalidateAll();
          return;
        default:
          return;  // selects the buffer doubleword TR3 reaches
      }
    case 6:
      tr.tr6 = value & kTr6Writable;
      if (tr.tr6 & kTr6Lookup) {
        TlbLookup(tr, tlb);
      } else {
        TlbWrite(tr, tlb);
      }
      return;
    case 7:
      tr.tr7 = (value & kTr7Writable) | (tr.tr7 & ~kTr7Writable);
      return;
    default:
      return;  // TR0-TR2 do not exist: the decoder rejects them
  }
}

uint32_t ReadTestRegister(const TestRegisters& tr, int n) {
  switch (n) {
    case 3:
      return tr.read_buffer[Entry(tr)];
    case 4:
      return tr.tr4;
    case 5:
      return tr.tr5;
    case 6:
      return tr.tr6;
    case 7:
      return tr.tr7;
    default:
      return 0;
  }
}

}  // namespace citcat::x86
