#include "simcore/x86/fpu/float80.h"

namespace citcat::x86 {

F80Class Classify(Float80 x) {
  const uint16_t e = x.exponent();
  const bool integer = (x.signif & kF80IntegerBit) != 0;
  if (e == 0) {
    if (x.signif == 0) return F80Class::kZero;
    return integer ? F80Class::kPseudoDenormal : F80Class::kDenormal;
  }
  if (e == kF80ExpMax) {
    if (!integer) return x.signif == 0 ? F80Class::kPseudoInfinity : F80Class::kPseudoNaN;
    if (x.signif == kF80IntegerBit) return F80Class::kInfinity;
    return (x.signif & kF80QuietBit) ? F80Class::kQuietNaN : F80Class::kSignalingNaN;
  }
  return integer ? F80Class::kNormal : F80Class::kUnnormal;
}

bool IsUnsupported(F80Class c) {
  return c == F80Class::kPseudoNaN || c == F80Class::kPseudoInfinity || c == F80Class::kUnnormal;
}

bool IsNaN(F80Class c) { return c == F80Class::kQuietNaN || c == F80Class::kSignalingNaN; }

bool IsFinite(F80Class c) {
  return c == F80Class::kZero || c == F80Class::kDenormal || c == F80Class::kPseudoDenormal ||
         c == F80Class::kNormal;
}

int SignificandBits(Precision pc) {
  switch (pc) {
    case Precision::k24:
      return 24;
    case Precision::k53:
      return 53;
    default:
      return 64;
  }
}

}  // namespace citcat::x86
