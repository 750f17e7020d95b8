// The x87 transcendental instructions, correctly rounded to 64 significand bits under the rounding
// control (precision control does not apply), with the flags and C1 of the basic operations.
//
// Method (docs/machines/i486-fpu.md, "Transcendentals"): the exact value is approximated with a
// 512-bit integer significand (Taylor series after argument reduction, pi and ln 2 computed the
// same way) to far better than 2^-360 relative; the result is rounded from both ends of that error
// interval and accepted only when both round alike (Ziv's test), which settles every operand but
// the exact cases, handled by hand. Integer arithmetic only: bit-identical on any host.
//
// `modelled` is false where the i486 leaves the result undefined (F2XM1 with |x| > 1, FYL2XP1 with
// |x| >= 1 - sqrt(2)/2) or, in theory, when Ziv's test does not settle; the caller then stops.
#ifndef CITCAT_SIMCORE_X86_FPU_TRANSCENDENTAL_H_
#define CITCAT_SIMCORE_X86_FPU_TRANSCENDENTAL_H_

#include <cstdint>

#include "simcore/x86/fpu/float80.h"

namespace citcat::x86 {

struct FpTranscendental {
  FpResult result;
  bool modelled = true;
};

FpTranscendental Exp2Minus1(Float80 x, uint16_t cw);              // F2XM1: 2^x - 1
FpTranscendental YLog2X(Float80 y, Float80 x, uint16_t cw);       // FYL2X: y * log2(x)
FpTranscendental YLog2XPlus1(Float80 y, Float80 x, uint16_t cw);  // FYL2XP1: y * log2(x + 1)
FpTranscendental Atan2(Float80 y, Float80 x, uint16_t cw);        // FPATAN: atan(y / x), quadrant

// FSIN, FCOS and FPTAN's tangent for |x| < 2^63 (the caller checks the range: C2).
enum class TrigFunction : uint8_t { kSin, kCos, kTan };
FpTranscendental Trig(TrigFunction f, Float80 x, uint16_t cw);
// |x| < 2^63 or not finite: the range FSIN/FCOS/FSINCOS/FPTAN accept (else C2 = 1, no change).
bool TrigInRange(Float80 x);

}  // namespace citcat::x86

#endif  // CITCAT_SIMCORE_X86_FPU_TRANSCENDENTAL_H_
