// The i486's pseudo-LRU replacement for one 4-way set, shared by the on-chip cache and the TLB.
// Three bits per set (Intel486 manual, "cache replacement"):
//   B0 = 1 when the most recent access to the set went to L0 or L1, 0 when it went to L2 or L3;
//   B1 = 1 when, of L0 and L1, L0 was accessed last;  B2 = 1 when, of L2 and L3, L2 was.
// A replacement takes the first invalid way (L0 first); when all four are valid it follows the
// bits: B0 = 0 -> the victim is L0 or L1 (B1 = 0 -> L0, else L1); B0 = 1 -> L2 or L3 (B2 = 0 ->
// L2, else L3). Stored as one byte: bit 0 = B0, bit 1 = B1, bit 2 = B2.
#ifndef CITCAT_SIMCORE_X86_PLRU_H_
#define CITCAT_SIMCORE_X86_PLRU_H_

#include <array>
#include <cstdint>

namespace citcat::x86 {

inline constexpr uint8_t kPlruB0 = 1, kPlruB1 = 2, kPlruB2 = 4;

// The bits after an access (hit or fill) to `way`; the bit of the other pair is kept. Way 0 sets
// B0 and B1, way 1 sets B0 and clears B1, way 2 clears B0 and sets B2, way 3 clears B0 and B2.
inline constexpr uint8_t PlruTouchRule(uint8_t bits, unsigned way) {
  constexpr uint8_t kSet[4] = {kPlruB0 | kPlruB1, kPlruB0, kPlruB2, 0};
  constexpr uint8_t kKeep[4] = {kPlruB2, kPlruB2, kPlruB1, kPlruB1};
  return static_cast<uint8_t>((bits & kKeep[way]) | kSet[way]);
}
// The rule as a table, by way and the three bits before: every fetch and data access comes here,
// and a load is cheaper than the rule's shifts and masks.
inline constexpr auto kPlruTouched = [] {
  std::array<std::array<uint8_t, 8>, 4> t{};
  for (unsigned way = 0; way < 4; ++way) {
    for (uint8_t bits = 0; bits < 8; ++bits) t[way][bits] = PlruTouchRule(bits, way);
  }
  return t;
}();
inline constexpr uint8_t PlruTouch(uint8_t bits, unsigned way) {
  return kPlruTouched[way & 3][bits & 7];
}

// The way the bits name for replacement when all four ways are valid.
inline constexpr unsigned PlruVictim(uint8_t bits) {
  if (!(bits & kPlruB0)) return (bits & kPlruB1) ? 1 : 0;
  return (bits & kPlruB2) ? 3 : 2;
}

// The way a new entry goes to: the first invalid one (bit i of `valid` = way i valid), else the
// pseudo-LRU victim.
inline constexpr unsigned PlruChoose(uint8_t valid, uint8_t bits) {
  for (unsigned w = 0; w < 4; ++w) {
    if (!(valid & (1u << w))) return w;
  }
  return PlruVictim(bits);
}

}  // namespace citcat::x86

#endif  // CITCAT_SIMCORE_X86_PLRU_H_
