// The x87 arithmetic as the tests expect it: exact values from MPFR, rounded to the destination
// format by MPFR (mpfr_check_range + mpfr_subnormalize), plus the 486's rules for special operands
// written out by hand. Independent of simcore/x86/fpu's own rounding code.
#ifndef CITCAT_TESTS_SIMCORE_X87_REFERENCE_H_
#define CITCAT_TESTS_SIMCORE_X87_REFERENCE_H_

#include <cstdint>

#include "simcore/x86/fpu/compare.h"
#include "simcore/x86/fpu/convert.h"
#include "simcore/x86/fpu/float80.h"

namespace citcat::x86::reference {

enum class BinaryOp { kAdd, kSub, kMul, kDiv };

FpResult Binary(BinaryOp op, Float80 a, Float80 b, uint16_t cw);
FpResult Sqrt(Float80 a, uint16_t cw);
FpResult RoundToInteger(Float80 a, uint16_t cw);
FpStore<uint64_t> ToIeee(Float80 a, bool single, uint16_t cw);
FpResult FromIeee(uint64_t bits, bool single, uint16_t cw);
// FIST into `bits` (16, 32, 64) bits; the value is sign-extended.
FpStore<int64_t> ToInt(Float80 a, int bits, uint16_t cw);
Float80 FromInt(int64_t v);
FpStore<PackedBcd> ToBcd(Float80 a, uint16_t cw);
Float80 FromBcd(const PackedBcd& bcd);  // valid digits only
FpCompareResult Compare(Float80 a, Float80 b, bool quiet);

}  // namespace citcat::x86::reference

#endif  // CITCAT_TESTS_SIMCORE_X87_REFERENCE_H_
