// The i486's pseudo-LRU replacement for one 4-way set, shared by the on-chip cache and the TLB.
// Three bits per set (Intel486 manual, "cache replacement"):
//   B0 = 1 when the most recent access to the set went to L0 or L1, 0 when it went to L2 or L3;
//   B1 = 1 when, of L0 and L1, L0 was accessed last;  B2 = 1 when, of L2 and L3, L2 was.
// A replacement takes the first invalid way (L0 first); when all four are valid it follows the
// bits: B0 = 0 -> the victim is L0 or L1 (B1 = 0 -> L0, else L1); B0 = 1 -> L2 or L3 (B2 = 0 ->
// L2, else L3). Stored as one byte: bit 0 = B0, bit 1 = B1, bit 2 = B2.
#ifndef CITCAT_SIMCORE_X86_PLRU_H_
#define CITCAT_SIMCORE_X86_PLRU_H_

#include <cstdint>

namespace citcat::x86 {

inline constexpr uint8_t kPlruB0 = 1, kPlruB1 = 2, kPlruB2 = 4;

// The bits after an access (hit or fill) to `way`; the bit of the other pair is kept. Way 0 sets
// B0 and B1, way 1 sets B0 and clears B1, way 2 clears B0 and sets B2, way 3 clears B0 and B2;
// without a branch, since every fetch and data access comes here.
inline constexpr uint8_t PlruTouch(uint8_t bits, unsigned way) {
  way &= 3;
  const unsigned set = (0x00040103u >> (8 * way)) & 0xFF;  // B0|B1, B0, B2, none
  const unsigned keep = kPlruB2 >> (way >> 1);             // B2, B2, B1, B1
  return static_cast<uint8_t>((bits & keep) | set);
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
