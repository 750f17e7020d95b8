// Internal to x86_fpu_arith: the one rounding step every operation ends in, and the helpers that
// turn encodings into exact values and back. Not for use outside simcore/x86/fpu/.
#ifndef CITCAT_SIMCORE_X86_FPU_ROUND_H_
#define CITCAT_SIMCORE_X86_FPU_ROUND_H_

#include <cstdint>

#include "simcore/x86/fpu/float80.h"

namespace citcat::x86::fpu_internal {

using u128 = unsigned __int128;

// A finite operand's exact value: sig * 2^(exp - 63), sig normalized (bit 63 set).
struct Unpacked {
  bool sign;
  int32_t exp;
  uint64_t sig;
};
// x must be finite and nonzero (normal, denormal or pseudo-denormal).
Unpacked Unpack(Float80 x);

// An unrounded nonzero magnitude: sig * 2^(exp - 127). Bits below the last one kept may have been
// folded into bit 0 ("sticky"), which rounding treats as "something nonzero below".
struct Wide {
  bool sign;
  int32_t exp;
  u128 sig;
};

// A destination format: significand bits and the exponent range of its normal numbers. Register
// results keep the extended range whatever the precision control says.
struct Format {
  int precision;
  int emin;
  int emax;
};
inline constexpr Format kSingle{24, -126, 127};
inline constexpr Format kDouble{53, -1022, 1023};
constexpr Format RegisterFormat(int precision) { return Format{precision, -16382, 16383}; }

// A delivered value: sig * 2^(exp - 63) with sig's low (64 - precision) bits zero. A denormal has
// exp == emin and bit 63 clear; zero has sig == 0.
struct Packed {
  bool sign = false;
  bool infinite = false;
  int32_t exp = 0;
  uint64_t sig = 0;
};

struct Rounded {
  Packed value;
  uint16_t flags = 0;
  bool c1 = false;
  bool store = true;
};

// Rounds w to f under rc with the 486's responses: masked overflow gives infinity or the largest
// finite value by rounding direction; masked underflow denormalizes (UE only when also inexact);
// unmasked overflow/underflow to a register scales the exponent by 2^-+24576, to memory stores
// nothing. Tininess is detected after rounding (on the value rounded to f's precision with an
// unbounded exponent), as the 486 does.
Rounded Round(Wide w, const Format& f, Rounding rc, uint16_t masks, bool register_dest);

Float80 PackF80(const Packed& p);
// IEEE single (frac_bits 23, bias 127) or double (52, 1023).
uint64_t PackIeee(const Packed& p, int frac_bits, int bias);

u128 ShiftRightJam(u128 x, int n);
int CountLeadingZeros128(u128 x);

Float80 Quiet(Float80 nan);
// The x87's choice between two operands of which at least one is a NaN: a QNaN beats an SNaN,
// otherwise the larger significand, then the positive sign. Quieted.
Float80 PickNaN(Float80 a, F80Class ca, Float80 b, F80Class cb);

FpResult Invalid(uint16_t masks);  // IE with real indefinite, or no store if unmasked
FpResult ToResult(const Rounded& r);

bool IsDenormalClass(F80Class c);  // denormal or pseudo-denormal
FpResult Exact(Float80 v, uint16_t flags);
FpResult DenormalTrap();  // unmasked DE: no result
Float80 Zero(bool sign);
Float80 Inf(bool sign);
// Handles what comes before any arithmetic, in the 486's priority order: unsupported encodings,
// then NaNs. Returns true with *out set if the operation ends here.
bool NaNOperands(Float80 a, F80Class ca, Float80 b, F80Class cb, uint16_t cw, FpResult* out);

}  // namespace citcat::x86::fpu_internal

#endif  // CITCAT_SIMCORE_X86_FPU_ROUND_H_
