#include "simcore/x86/fpu/compare.h"

#include "simcore/x86/fpu/round.h"

namespace citcat::x86 {

FpCompareResult Compare(Float80 a, Float80 b, bool quiet) {
  const F80Class ca = Classify(a);
  const F80Class cb = Classify(b);
  FpCompareResult r;
  if (!IsFinite(ca) && ca != F80Class::kInfinity) {
    r.flags =
        (quiet && ca == F80Class::kQuietNaN && cb != F80Class::kSignalingNaN && !IsUnsupported(cb))
            ? 0
            : kExInvalid;
    return r;
  }
  if (!IsFinite(cb) && cb != F80Class::kInfinity) {
    r.flags = (quiet && cb == F80Class::kQuietNaN) ? 0 : kExInvalid;
    return r;
  }
  const auto denormal = [](F80Class c) {
    return c == F80Class::kDenormal || c == F80Class::kPseudoDenormal;
  };
  r.flags = (denormal(ca) || denormal(cb)) ? kExDenormal : 0;
  // Order by sign, then magnitude as (exponent, significand) of the normalized value.
  struct Key {
    int sign;  // -1, 0 (zero), +1
    int32_t exp;
    uint64_t sig;
  };
  const auto key = [](Float80 x, F80Class c) {
    if (c == F80Class::kZero) return Key{0, 0, 0};
    const int s = x.sign() ? -1 : 1;
    if (c == F80Class::kInfinity) return Key{s, INT32_MAX, 0};
    const fpu_internal::Unpacked u = fpu_internal::Unpack(x);
    return Key{s, u.exp, u.sig};
  };
  const Key ka = key(a, ca);
  const Key kb = key(b, cb);
  int cmp;
  if (ka.sign != kb.sign) {
    cmp = ka.sign < kb.sign ? -1 : 1;
  } else if (ka.sign == 0 || (ka.exp == kb.exp && ka.sig == kb.sig)) {
    cmp = 0;
  } else {
    const bool mag_less = ka.exp != kb.exp ? ka.exp < kb.exp : ka.sig < kb.sig;
    cmp = (mag_less == (ka.sign > 0)) ? -1 : 1;
  }
  r.order = cmp < 0 ? FpOrder::kLess : cmp > 0 ? FpOrder::kGreater : FpOrder::kEqual;
  return r;
}

uint16_t ConditionCodes(FpOrder order) {
  switch (order) {
    case FpOrder::kGreater:
      return 0;
    case FpOrder::kLess:
      return kSwC0;
    case FpOrder::kEqual:
      return kSwC3;
    case FpOrder::kUnordered:
      return kSwC3 | kSwC2 | kSwC0;
  }
  return 0;
}

}  // namespace citcat::x86
