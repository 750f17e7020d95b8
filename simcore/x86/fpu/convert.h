// Conversions between the x87's 80-bit registers and the memory formats it loads and stores:
// integers (FILD, FIST/FISTP), IEEE single and double (FLD, FST/FSTP m32/m64), 18-digit packed BCD
// (FBLD, FBSTP), and rounding to an integral value (FRNDINT). Loads into a register are exact and
// ignore precision control; stores round under the rounding control. The rules for each class of
// source value are in docs/machines/i486-fpu.md.
#ifndef CITCAT_SIMCORE_X86_FPU_CONVERT_H_
#define CITCAT_SIMCORE_X86_FPU_CONVERT_H_

#include <array>
#include <cstdint>

#include "simcore/x86/fpu/float80.h"

namespace citcat::x86 {

// A value bound for memory. `store` is false when an unmasked exception suppresses the store (the
// instruction then also leaves the stack alone).
template <typename T>
struct FpStore {
  T value{};
  uint16_t flags = 0;
  bool c1 = false;
  bool store = true;
};

// FILD: exact, no exceptions.
Float80 FromInt16(int16_t v);
Float80 FromInt32(int32_t v);
Float80 FromInt64(int64_t v);

// FIST/FISTP: rounded under RC. NaN, infinity, an unsupported encoding or a rounded value out of
// range is IE with the integer indefinite (the most negative value); an inexact one is PE with C1.
FpStore<int16_t> ToInt16(Float80 x, uint16_t cw);
FpStore<int32_t> ToInt32(Float80 x, uint16_t cw);
FpStore<int64_t> ToInt64(Float80 x, uint16_t cw);

// FLD m32/m64: exact. A denormal source is DE (normalized into the register); an SNaN is IE and
// loads quieted.
FpResult FromFloat32(uint32_t bits, uint16_t cw);
FpResult FromFloat64(uint64_t bits, uint16_t cw);

// FST/FSTP m32/m64: rounded to the format under RC, with its own overflow and underflow thresholds.
// NaNs keep their top significand bits (an SNaN is IE and stored quieted); an unsupported encoding
// is IE with the format's indefinite.
FpStore<uint32_t> ToFloat32(Float80 x, uint16_t cw);
FpStore<uint64_t> ToFloat64(Float80 x, uint16_t cw);

// 80-bit packed BCD as stored in memory: bytes 0..8 hold 18 digits, two per byte, least
// significant first (low nibble before high); bit 7 of byte 9 is the sign.
using PackedBcd = std::array<uint8_t, 10>;
inline constexpr PackedBcd kBcdIndefinite = {0, 0, 0, 0, 0, 0, 0, 0xC0, 0xFF, 0xFF};

// FBLD: exact. Nibbles above 9 (undefined on Intel) are weighted as if they were digits.
Float80 FromBcd(const PackedBcd& bcd);
// FBSTP: rounded under RC; |result| above 18 digits, NaN, infinity or an unsupported encoding is IE
// with the BCD indefinite. The sign byte follows the source sign, so -0.25 stores as "-0".
FpStore<PackedBcd> ToBcd(Float80 x, uint16_t cw);

// FRNDINT: rounds to an integral value under RC (precision control does not apply).
FpResult RoundToInteger(Float80 x, uint16_t cw);

}  // namespace citcat::x86

#endif  // CITCAT_SIMCORE_X86_FPU_CONVERT_H_
