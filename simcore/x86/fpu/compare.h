// FCOM/FCOMP/FCOMPP, FUCOM/FUCOMP/FUCOMPP and FTST (compare with +0) on 80-bit values, and the
// condition codes they leave.
#ifndef CITCAT_SIMCORE_X86_FPU_COMPARE_H_
#define CITCAT_SIMCORE_X86_FPU_COMPARE_H_

#include <cstdint>

#include "simcore/x86/fpu/float80.h"

namespace citcat::x86 {

enum class FpOrder : uint8_t { kGreater, kLess, kEqual, kUnordered };

struct FpCompareResult {
  FpOrder order = FpOrder::kUnordered;
  uint16_t flags = 0;  // kExInvalid and/or kExDenormal
};

// Compares a (ST(0)) with b. Any NaN or unsupported encoding is unordered. FCOM (quiet = false)
// raises IE on every unordered operand; FUCOM (quiet = true) only on an SNaN or an unsupported
// encoding. A denormal or pseudo-denormal operand of an ordered compare raises DE. Zeros compare
// equal whatever their signs. If a raised exception is unmasked, the instruction leaves the
// condition codes alone; that is the caller's decision.
FpCompareResult Compare(Float80 a, Float80 b, bool quiet);

// C3, C2, C0 in status-word positions: greater 000, less 001, equal 100, unordered 111.
uint16_t ConditionCodes(FpOrder order);
inline constexpr uint16_t kCompareCodeMask = kSwC3 | kSwC2 | kSwC0;

}  // namespace citcat::x86

#endif  // CITCAT_SIMCORE_X86_FPU_COMPARE_H_
