// The x87's correctly rounded basic arithmetic on 80-bit values: FADD/FSUB(R), FMUL, FDIV(R) and
// FSQRT. The result is rounded to the control word's precision (24, 53 or 64 significand bits,
// with the extended exponent range kept) under its rounding control; flags and C1 follow the 486
// (docs/machines/i486-fpu.md). Reversed forms (FSUBR, FDIVR) swap the operands in the caller.
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

}  // namespace citcat::x86

#endif  // CITCAT_SIMCORE_X86_FPU_ARITH_H_
