// The x87's correctly rounded basic arithmetic on 80-bit values: FADD/FSUB(R), FMUL, FDIV(R) and
// FSQRT, and FSCALE, FXTRACT and FPREM/FPREM1. The basic operations round to the control word's
// precision (24, 53 or 64 significand bits, with the extended exponent range kept) under its
// rounding control; flags and C1 follow the 486 (docs/machines/i486-fpu.md). Reversed forms (FSUBR,
// FDIVR) swap the operands in the caller.
#ifndef CITCAT_SIMCORE_X86_FPU_ARITH_H_
#define CITCAT_SIMCORE_X86_FPU_ARITH_H_

#include <cstdint>

#include "simcore/x86/fpu/float80.h"

namespace citcat::x86 {

FpResult Add(Float80 a, Float80 b, uint16_t cw);
FpResult Sub(Float80 a, Float80 b, uint16_t cw);  // a - b
FpResult Mul(Float80 a, Float80 b, uint16_t cw);
FpResult Div(Float80 a, Float80 b, uint16_t cw);  // a / b
FpResult Sqrt(Float80 a, uint16_t cw);

// FSCALE: a * 2^trunc(b), rounded to 64 bits (precision control does not apply). b's integral
// part is taken toward zero; |trunc(b)| is saturated at 2^20, far beyond any finite result.
FpResult Scale(Float80 a, Float80 b, uint16_t cw);

// FXTRACT: a = significand * 2^exponent with 1 <= |significand| < 2. A zero is ZE (exponent -inf,
// significand the zero); infinity gives +inf and the infinity; NaNs go to both.
struct FpExtract {
  Float80 exponent, significand;
  uint16_t flags = 0;
  bool store = true;
};
FpExtract Extract(Float80 a, uint16_t cw);

// FPREM (ieee = false: quotient truncated) and FPREM1 (ieee = true: quotient rounded to nearest
// even) of a by b. Exact whenever it completes. With an exponent difference of 64 or more only a
// partial remainder is formed, reducing the difference to N = 32 + (difference mod 32) (the
// AMD-documented choice QEMU follows); `partial` is then set and `quotient` is not meaningful.
// `quotient` holds the low three bits of the integral quotient.
struct FpRemainder {
  FpResult result;
  uint8_t quotient = 0;
  bool partial = false;
};
FpRemainder Remainder(Float80 a, Float80 b, uint16_t cw, bool ieee);

}  // namespace citcat::x86

#endif  // CITCAT_SIMCORE_X86_FPU_ARITH_H_
