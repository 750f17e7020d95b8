// The i486 x87's 80-bit extended value, its classes, and the control/status bits the arithmetic in
// this folder reads and reports.
//
// Everything here is integer arithmetic: results are bit-identical on any host. The operations
// (arith.h, convert.h, compare.h) take the control word as the 486 holds it and return the value
// together with the exception flags and C1, exactly as a masked or unmasked response leaves them;
// the instruction layer owns the register stack, the tag word and the trap decision.
#ifndef CITCAT_SIMCORE_X86_FPU_FLOAT80_H_
#define CITCAT_SIMCORE_X86_FPU_FLOAT80_H_

#include <cstdint>

namespace citcat::x86 {

// An 80-bit extended-precision value as the x87 stores it: sign (bit 79), a 15-bit exponent biased
// by 16383 (bits 78..64) and a 64-bit significand whose bit 63 is the explicit integer bit.
struct Float80 {
  uint64_t signif = 0;
  uint16_t sign_exp = 0;

  constexpr bool sign() const { return (sign_exp >> 15) != 0; }
  constexpr uint16_t exponent() const { return sign_exp & 0x7FFF; }
  friend constexpr bool operator==(const Float80& a, const Float80& b) {
    return a.signif == b.signif && a.sign_exp == b.sign_exp;
  }
  friend constexpr bool operator!=(const Float80& a, const Float80& b) { return !(a == b); }
};

inline constexpr int kF80Bias = 16383;
inline constexpr uint16_t kF80ExpMax = 0x7FFF;  // infinities and NaNs
inline constexpr uint64_t kF80IntegerBit = uint64_t{1} << 63;
inline constexpr uint64_t kF80QuietBit = uint64_t{1} << 62;

constexpr Float80 MakeFloat80(bool sign, uint16_t exponent, uint64_t signif) {
  return Float80{signif, static_cast<uint16_t>((sign ? 0x8000 : 0) | (exponent & 0x7FFF))};
}
// The default QNaN ("real indefinite") a masked invalid operation delivers.
inline constexpr Float80 kRealIndefinite = MakeFloat80(true, kF80ExpMax, 0xC000000000000000);
inline constexpr Float80 kF80Infinity = MakeFloat80(false, kF80ExpMax, kF80IntegerBit);

// The encodings an 80-bit register can hold. The last four are the ones the 387 and 486 no longer
// accept as operands: arithmetic on them is an invalid operation (IE, real indefinite), except the
// pseudo-denormal, which the 486 accepts as a denormal operand (DE) with the value the encoding
// reads as (significand * 2^-16445).
enum class F80Class : uint8_t {
  kZero,            // exponent 0, significand 0
  kDenormal,        // exponent 0, integer bit 0, significand != 0
  kNormal,          // exponent 1..7FFE, integer bit 1
  kInfinity,        // exponent 7FFF, significand 8000000000000000
  kQuietNaN,        // exponent 7FFF, significand bits 63..62 = 11
  kSignalingNaN,    // exponent 7FFF, bits 63..62 = 10, rest != 0
  kPseudoDenormal,  // exponent 0, integer bit 1 (accepted: denormal operand)
  kPseudoNaN,       // exponent 7FFF, integer bit 0, bits 62..0 != 0 (unsupported)
  kPseudoInfinity,  // exponent 7FFF, significand 0 (unsupported)
  kUnnormal,        // exponent 1..7FFE, integer bit 0, including pseudo-zero (unsupported)
};

F80Class Classify(Float80 x);
// The classes arithmetic rejects with an invalid-operation exception.
bool IsUnsupported(F80Class c);
bool IsNaN(F80Class c);  // quiet or signaling, not pseudo-NaN
// Finite operands with a value: zero, denormal, pseudo-denormal, normal.
bool IsFinite(F80Class c);

// ---- Control word and status word bits --------------------------------------------------------
// Exception bits, at the same positions in the status word (flags) and the control word (masks).
inline constexpr uint16_t kExInvalid = 1 << 0;     // IE / IM
inline constexpr uint16_t kExDenormal = 1 << 1;    // DE / DM
inline constexpr uint16_t kExZeroDivide = 1 << 2;  // ZE / ZM
inline constexpr uint16_t kExOverflow = 1 << 3;    // OE / OM
inline constexpr uint16_t kExUnderflow = 1 << 4;   // UE / UM
inline constexpr uint16_t kExPrecision = 1 << 5;   // PE / PM
inline constexpr uint16_t kExAll = 0x3F;

// Condition-code bits of the status word.
inline constexpr uint16_t kSwC0 = 1 << 8;
inline constexpr uint16_t kSwC1 = 1 << 9;
inline constexpr uint16_t kSwC2 = 1 << 10;
inline constexpr uint16_t kSwC3 = 1 << 14;

// Control word PC (bits 9..8) and RC (bits 11..10).
enum class Precision : uint8_t { k24 = 0, kReserved = 1, k53 = 2, k64 = 3 };
enum class Rounding : uint8_t { kNearest = 0, kDown = 1, kUp = 2, kZero = 3 };

// The power-on / FINIT control word: all exceptions masked, 64-bit precision, round to nearest.
inline constexpr uint16_t kDefaultControlWord = 0x037F;

constexpr Precision PrecisionOf(uint16_t cw) { return static_cast<Precision>((cw >> 8) & 3); }
constexpr Rounding RoundingOf(uint16_t cw) { return static_cast<Rounding>((cw >> 10) & 3); }
constexpr uint16_t MakeControlWord(Precision pc, Rounding rc, uint16_t masks = kExAll) {
  return static_cast<uint16_t>(0x0040 | (masks & kExAll) | (static_cast<int>(pc) << 8) |
                               (static_cast<int>(rc) << 10));
}
// Significand bits a PC setting rounds to. The reserved setting 01 is taken as 64 bits (QEMU does
// the same; Intel leaves it undefined).
int SignificandBits(Precision pc);

// What an operation did. `flags` are kEx* bits to OR into the status word; `c1` is the value C1
// takes ("rounded up": the delivered magnitude exceeds the exact one); `store` is false when an
// unmasked exception suppresses the result, so the destination and the stack stay untouched.
struct FpResult {
  Float80 value;
  uint16_t flags = 0;
  bool c1 = false;
  bool store = true;
};

}  // namespace citcat::x86

#endif  // CITCAT_SIMCORE_X86_FPU_FLOAT80_H_
