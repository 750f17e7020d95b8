#include "simcore/x86/fpu/arith.h"

#include <utility>

#include "simcore/x86/fpu/convert.h"
#include "simcore/x86/fpu/round.h"

namespace citcat::x86 {
namespace {

using fpu_internal::DenormalTrap;
using fpu_internal::Exact;
using fpu_internal::Inf;
using fpu_internal::Invalid;
using fpu_internal::IsDenormalClass;
using fpu_internal::NaNOperands;
using fpu_internal::PickNaN;
using fpu_internal::Round;
using fpu_internal::ToResult;
using fpu_internal::u128;
using fpu_internal::Unpack;
using fpu_internal::Unpacked;
using fpu_internal::Wide;
using fpu_internal::Zero;

FpResult RoundToRegister(const Wide& w, uint16_t cw) {
  return ToResult(Round(w, fpu_internal::RegisterFormat(SignificandBits(PrecisionOf(cw))),
                        RoundingOf(cw), cw & kExAll, /*register_dest=*/true));
}

FpResult AddSigned(Float80 a, Float80 b, bool negate_b, uint16_t cw) {
  const F80Class ca = Classify(a);
  const F80Class cb = Classify(b);
  FpResult r;
  if (NaNOperands(a, ca, b, cb, cw, &r)) return r;
  const bool sa = a.sign();
  const bool sb = b.sign() != negate_b;
  if (ca == F80Class::kInfinity && cb == F80Class::kInfinity && sa != sb) return Invalid(cw);
  const uint16_t de = (IsDenormalClass(ca) || IsDenormalClass(cb)) ? kExDenormal : 0;
  if (de && !(cw & kExDenormal)) return DenormalTrap();
  if (ca == F80Class::kInfinity) return Exact(Inf(sa), de);
  if (cb == F80Class::kInfinity) return Exact(Inf(sb), de);
  const bool za = ca == F80Class::kZero;
  const bool zb = cb == F80Class::kZero;
  if (za && zb) {
    const bool sign = sa == sb ? sa : RoundingOf(cw) == Rounding::kDown;
    return Exact(Zero(sign), de);
  }
  Wide w;
  if (za || zb) {
    // x + 0 is x, rounded to the precision control.
    const Unpacked x = Unpack(za ? b : a);
    w = Wide{za ? sb : sa, x.exp, u128{x.sig} << 64};
  } else {
    Unpacked x = Unpack(a);
    Unpacked y = Unpack(b);
    x.sign = sa;
    y.sign = sb;
    if (y.exp > x.exp || (y.exp == x.exp && y.sig > x.sig)) std::swap(x, y);
    // |x| >= |y|. Leading bits at 126 leave room for a carry; the jam keeps the far-shifted
    // operand's contribution as a sticky bit well below any rounding position.
    const u128 big = u128{x.sig} << 63;
    const u128 small = fpu_internal::ShiftRightJam(u128{y.sig} << 63, x.exp - y.exp);
    const u128 sum = x.sign == y.sign ? big + small : big - small;
    if (sum == 0) return Exact(Zero(RoundingOf(cw) == Rounding::kDown), de);
    w = Wide{x.sign, x.exp + 1, sum};
  }
  r = RoundToRegister(w, cw);
  r.flags |= de;
  return r;
}

// floor(sqrt(n)) and the remainder n - root^2.
u128 IntegerSqrt(u128 n, u128* remainder) {
  u128 root = 0;
  u128 bit = u128{1} << 126;
  while (bit > n) bit >>= 2;
  while (bit != 0) {
    if (n >= root + bit) {
      n -= root + bit;
      root = (root >> 1) + bit;
    } else {
      root >>= 1;
    }
    bit >>= 2;
  }
  *remainder = n;
  return root;
}

}  // namespace

FpResult Add(Float80 a, Float80 b, uint16_t cw) { return AddSigned(a, b, false, cw); }
FpResult Sub(Float80 a, Float80 b, uint16_t cw) { return AddSigned(a, b, true, cw); }

FpResult Mul(Float80 a, Float80 b, uint16_t cw) {
  const F80Class ca = Classify(a);
  const F80Class cb = Classify(b);
  FpResult r;
  if (NaNOperands(a, ca, b, cb, cw, &r)) return r;
  const bool sign = a.sign() != b.sign();
  const bool inf = ca == F80Class::kInfinity || cb == F80Class::kInfinity;
  const bool zero = ca == F80Class::kZero || cb == F80Class::kZero;
  if (inf && zero) return Invalid(cw);
  const uint16_t de = (IsDenormalClass(ca) || IsDenormalClass(cb)) ? kExDenormal : 0;
  if (de && !(cw & kExDenormal)) return DenormalTrap();
  if (inf) return Exact(Inf(sign), de);
  if (zero) return Exact(Zero(sign), de);
  const Unpacked x = Unpack(a);
  const Unpacked y = Unpack(b);
  // (x.sig * 2^(x.exp-63)) * (y.sig * 2^(y.exp-63)) = product * 2^(x.exp + y.exp + 1 - 127).
  r = RoundToRegister(Wide{sign, x.exp + y.exp + 1, u128{x.sig} * y.sig}, cw);
  r.flags |= de;
  return r;
}

FpResult Div(Float80 a, Float80 b, uint16_t cw) {
  const F80Class ca = Classify(a);
  const F80Class cb = Classify(b);
  FpResult r;
  if (NaNOperands(a, ca, b, cb, cw, &r)) return r;
  const bool sign = a.sign() != b.sign();
  const bool ia = ca == F80Class::kInfinity;
  const bool ib = cb == F80Class::kInfinity;
  const bool za = ca == F80Class::kZero;
  const bool zb = cb == F80Class::kZero;
  if ((ia && ib) || (za && zb)) return Invalid(cw);
  if (zb && !ia) {
    // A zero divide outranks the denormal-operand exception.
    FpResult z;
    z.flags = kExZeroDivide;
    if (cw & kExZeroDivide) {
      z.value = Inf(sign);
    } else {
      z.store = false;
    }
    return z;
  }
  const uint16_t de = (IsDenormalClass(ca) || IsDenormalClass(cb)) ? kExDenormal : 0;
  if (de && !(cw & kExDenormal)) return DenormalTrap();
  if (ia || zb) return Exact(Inf(sign), de);
  if (za || ib) return Exact(Zero(sign), de);
  const Unpacked x = Unpack(a);
  const Unpacked y = Unpack(b);
  // 2^127 * x.sig / y.sig in two long-division steps of 64 bits each; the remainder is sticky.
  const u128 q1 = (u128{x.sig} << 64) / y.sig;
  const u128 r1 = (u128{x.sig} << 64) % y.sig;
  const u128 q2 = (r1 << 64) / y.sig;
  const u128 r2 = (r1 << 64) % y.sig;
  const u128 q = (q1 << 63) | (q2 >> 1) | ((q2 & 1) | (r2 != 0 ? 1 : 0));
  r = RoundToRegister(Wide{sign, x.exp - y.exp, q}, cw);
  r.flags |= de;
  return r;
}

FpResult Sqrt(Float80 a, uint16_t cw) {
  const F80Class ca = Classify(a);
  FpResult r;
  if (IsUnsupported(ca)) return Invalid(cw);
  if (IsNaN(ca)) {
    if (ca == F80Class::kSignalingNaN) {
      if (!(cw & kExInvalid)) return Invalid(cw);
      return Exact(fpu_internal::Quiet(a), kExInvalid);
    }
    return Exact(a, 0);
  }
  if (ca == F80Class::kZero) return Exact(a, 0);
  if (a.sign()) return Invalid(cw);
  const uint16_t de = IsDenormalClass(ca) ? kExDenormal : 0;
  if (de && !(cw & kExDenormal)) return DenormalTrap();
  if (ca == F80Class::kInfinity) return Exact(a, 0);
  const Unpacked x = Unpack(a);
  // x = m * 2^k with m = sig << s, k = x.exp - 63 - s even, m in [2^126, 2^128).
  const int s = ((x.exp - 63 - 63) & 1) == 0 ? 63 : 64;
  const int32_t k = x.exp - 63 - s;
  u128 rem;
  const u128 root = IntegerSqrt(u128{x.sig} << s, &rem);  // 64 bits: 2^63 <= root < 2^64
  // One more bit: sqrt(m) >= root + 1/2 exactly when rem > root. It can never equal root + 1/2.
  const u128 sig = (root << 64) | (u128{rem > root} << 63) | (rem != 0 ? 1 : 0);
  r = RoundToRegister(Wide{false, k / 2 + 63, sig}, cw);
  r.flags |= de;
  return r;
}

namespace {

// Rounds an exact magnitude r * 2^(e - 63) to 64 bits: only the bottom of the range can round.
FpResult Exact64(bool sign, uint64_t r, int32_t e, uint16_t cw) {
  if (r == 0) return Exact(Zero(sign), 0);
  return ToResult(Round(Wide{sign, e, u128{r} << 64}, fpu_internal::RegisterFormat(64),
                        RoundingOf(cw), cw & kExAll, /*register_dest=*/true));
}

}  // namespace

FpResult Scale(Float80 a, Float80 b, uint16_t cw) {
  const F80Class ca = Classify(a);
  const F80Class cb = Classify(b);
  FpResult r;
  if (NaNOperands(a, ca, b, cb, cw, &r)) return r;
  const bool za = ca == F80Class::kZero, ia = ca == F80Class::kInfinity;
  if (cb == F80Class::kInfinity) {
    // 0 * 2^+inf and inf * 2^-inf have no value.
    if ((za && !b.sign()) || (ia && b.sign())) return Invalid(cw);
    const uint16_t de = IsDenormalClass(ca) ? kExDenormal : 0;
    if (de && !(cw & kExDenormal)) return DenormalTrap();
    if (za || ia) return Exact(a, de);
    return Exact(b.sign() ? Zero(a.sign()) : Inf(a.sign()), de);
  }
  const uint16_t de = (IsDenormalClass(ca) || IsDenormalClass(cb)) ? kExDenormal : 0;
  if (de && !(cw & kExDenormal)) return DenormalTrap();
  if (za || ia) return Exact(a, de);
  int32_t n = 0;
  if (cb != F80Class::kZero) {
    const Unpacked y = Unpack(b);
    constexpr int32_t kLimit = 1 << 20;
    if (y.exp >= 20) {
      n = kLimit;
    } else if (y.exp >= 0) {
      n = static_cast<int32_t>(y.sig >> (63 - y.exp));
    }
    if (y.sign) n = -n;
  }
  const Unpacked x = Unpack(a);
  r = Exact64(x.sign, x.sig, x.exp + n, cw);
  // A wrapped (unmasked) result that still does not fit: the exponent field saturates.
  if (r.store && r.value.exponent() == kF80ExpMax && r.value.signif != kF80IntegerBit) {
    r.value = MakeFloat80(x.sign, kF80ExpMax - 1, r.value.signif);
  }
  r.flags |= de;
  return r;
}

FpExtract Extract(Float80 a, uint16_t cw) {
  const F80Class ca = Classify(a);
  FpExtract e;
  const auto fail = [&](uint16_t flag) {
    e.flags = flag;
    e.store = (cw & flag) != 0;
    e.exponent = e.significand = kRealIndefinite;
    return e;
  };
  if (IsUnsupported(ca)) return fail(kExInvalid);
  if (IsNaN(ca)) {
    if (ca == F80Class::kSignalingNaN) {
      if (!(cw & kExInvalid)) return fail(kExInvalid);
      e.flags = kExInvalid;
    }
    e.exponent = e.significand = fpu_internal::Quiet(a);
    return e;
  }
  if (ca == F80Class::kZero) {
    if (!(cw & kExZeroDivide)) return fail(kExZeroDivide);
    e.flags = kExZeroDivide;
    e.exponent = Inf(true);
    e.significand = a;
    return e;
  }
  if (ca == F80Class::kInfinity) {
    e.exponent = Inf(false);
    e.significand = a;
    return e;
  }
  if (IsDenormalClass(ca)) {
    if (!(cw & kExDenormal)) return fail(kExDenormal);
    e.flags = kExDenormal;
  }
  const Unpacked x = Unpack(a);
  e.exponent = FromInt32(x.exp);
  e.significand = MakeFloat80(x.sign, kF80Bias, x.sig);
  return e;
}

FpRemainder Remainder(Float80 a, Float80 b, uint16_t cw, bool ieee) {
  const F80Class ca = Classify(a);
  const F80Class cb = Classify(b);
  FpRemainder out;
  if (NaNOperands(a, ca, b, cb, cw, &out.result)) return out;
  if (ca == F80Class::kInfinity || cb == F80Class::kZero) {
    out.result = Invalid(cw);
    return out;
  }
  const uint16_t de = (IsDenormalClass(ca) || IsDenormalClass(cb)) ? kExDenormal : 0;
  if (de && !(cw & kExDenormal)) {
    out.result = DenormalTrap();
    return out;
  }
  if (ca == F80Class::kZero || cb == F80Class::kInfinity) {
    out.result = Exact(a, de);
    return out;
  }
  const Unpacked x = Unpack(a);
  const Unpacked y = Unpack(b);
  const int32_t d = x.exp - y.exp;
  bool sign = x.sign;
  uint64_t r;
  int32_t e;  // the remainder is r * 2^(e - 63)
  if (d >= 64) {
    const int n = 32 + d % 32;
    r = static_cast<uint64_t>((u128{x.sig} << n) % y.sig);
    e = x.exp - n;
    out.partial = true;
  } else if (d >= 0) {
    const u128 num = u128{x.sig} << d;
    u128 q = num / y.sig;
    r = static_cast<uint64_t>(num % y.sig);
    if (ieee && (u128{r} * 2 > y.sig || (u128{r} * 2 == y.sig && (q & 1)))) {
      ++q;
      r = y.sig - r;
      sign = !sign;
    }
    out.quotient = static_cast<uint8_t>(q & 7);
    e = y.exp;
  } else if (ieee && d == -1 && x.sig > y.sig) {
    // |a| > |b| / 2: the nearest quotient is 1, the remainder |b| - |a| (exact at a's scale).
    r = static_cast<uint64_t>((u128{y.sig} << 1) - x.sig);
    sign = !sign;
    out.quotient = 1;
    e = x.exp;
  } else {
    out.result = Exact(a, de);
    if (IsDenormalClass(ca)) out.result = Exact64(x.sign, x.sig, x.exp, cw);
    out.result.flags |= de;
    return out;
  }
  out.result = Exact64(sign, r, e, cw);
  if (r == 0) out.result.value = Zero(x.sign);
  out.result.flags |= de;
  return out;
}

}  // namespace citcat::x86
