#include "simcore/x86/fpu/transcendental.h"

#include <array>

#include "simcore/x86/fpu/arith.h"
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
using fpu_internal::u128;
using fpu_internal::Zero;

constexpr int kLimbs = 8;  // 512-bit significands
constexpr int kBits = 64 * kLimbs;

// sign * m * 2^(exp - 512), m normalized (bit 511 set) or zero. Every operation truncates to 512
// bits: at most one unit of the last place lost per operation.
struct Big {
  bool sign = false;
  int64_t exp = 0;
  std::array<uint64_t, kLimbs> m{};
  bool zero() const { return m[kLimbs - 1] == 0; }
};

// 64 bits of the n-limb number src starting at bit `pos` (bits outside read as 0).
uint64_t Bits64(const uint64_t* src, int n, int64_t pos) {
  uint64_t v = 0;
  const int64_t total = int64_t{n} * 64;
  if (pos >= total || pos + 64 <= 0) return 0;
  if (pos % 64 == 0) return src[pos / 64];
  const int64_t lo = pos >= 0 ? pos / 64 : -1;
  const int shift = static_cast<int>(((pos % 64) + 64) % 64);
  if (lo >= 0) v = src[lo] >> shift;
  if (lo + 1 < n) v |= src[lo + 1] << (64 - shift);
  return v;
}

// The number N = limbs * 2^e0, truncated to 512 significant bits.
Big Make(bool sign, const uint64_t* limbs, int n, int64_t e0) {
  int top = -1;
  for (int i = n - 1; i >= 0; --i) {
    if (limbs[i]) {
      top = 64 * i + 63 - __builtin_clzll(limbs[i]);
      break;
    }
  }
  Big b;
  if (top < 0) return b;
  b.sign = sign;
  const int64_t shift = top - (kBits - 1);
  for (int i = 0; i < kLimbs; ++i) b.m[i] = Bits64(limbs, n, shift + 64 * i);
  b.exp = e0 + top + 1;
  return b;
}

Big FromU64(uint64_t v, bool sign = false) { return Make(sign, &v, 1, 0); }

Big FromF80(Float80 x) {
  const int64_t e = x.exponent() == 0 ? 1 - kF80Bias : x.exponent() - kF80Bias;
  return Make(x.sign(), &x.signif, 1, e - 63);
}

bool MagnitudeLess(const Big& a, const Big& b) {
  if (a.zero() || b.zero()) return !b.zero() && a.zero();
  if (a.exp != b.exp) return a.exp < b.exp;
  for (int i = kLimbs - 1; i >= 0; --i) {
    if (a.m[i] != b.m[i]) return a.m[i] < b.m[i];
  }
  return false;
}

Big Add(Big a, Big b) {
  if (a.zero()) return b;
  if (b.zero()) return a;
  if (MagnitudeLess(a, b)) std::swap(a, b);
  constexpr int kFrame = 2 * kLimbs + 1;
  std::array<uint64_t, kFrame> x{}, y{};
  for (int i = 0; i < kLimbs; ++i) x[kFrame - kLimbs + i] = a.m[i];
  const int64_t d = a.exp - b.exp;
  if (d < 64 * (kFrame - kLimbs)) {
    // b.m placed d bits below a.m's position.
    std::array<uint64_t, kFrame> bm{};
    for (int i = 0; i < kLimbs; ++i) bm[kFrame - kLimbs + i] = b.m[i];
    for (int i = 0; i < kFrame; ++i) y[i] = Bits64(bm.data(), kFrame, d + 64 * i);
  }
  const int64_t e0 = a.exp - 64 * kFrame;
  std::array<uint64_t, kFrame + 1> r{};
  if (a.sign == b.sign) {
    u128 carry = 0;
    for (int i = 0; i < kFrame; ++i) {
      const u128 s = u128{x[i]} + y[i] + carry;
      r[i] = static_cast<uint64_t>(s);
      carry = s >> 64;
    }
    r[kFrame] = static_cast<uint64_t>(carry);
  } else {
    uint64_t borrow = 0;
    for (int i = 0; i < kFrame; ++i) {
      const u128 s = u128{x[i]} - y[i] - borrow;
      r[i] = static_cast<uint64_t>(s);
      borrow = (s >> 64) ? 1 : 0;
    }
  }
  return Make(a.sign, r.data(), kFrame + 1, e0);
}

Big Neg(Big a) {
  a.sign = !a.sign;
  return a;
}
Big Sub(const Big& a, const Big& b) { return Add(a, Neg(b)); }

Big Mul(const Big& a, const Big& b) {
  if (a.zero() || b.zero()) return Big{};
  std::array<uint64_t, 2 * kLimbs> p{};
  for (int i = 0; i < kLimbs; ++i) {
    u128 carry = 0;
    for (int j = 0; j < kLimbs; ++j) {
      const u128 t = u128{a.m[i]} * b.m[j] + p[i + j] + carry;
      p[i + j] = static_cast<uint64_t>(t);
      carry = t >> 64;
    }
    p[i + kLimbs] = static_cast<uint64_t>(carry);
  }
  return Make(a.sign != b.sign, p.data(), 2 * kLimbs, a.exp + b.exp - 2 * kBits);
}

Big DivU64(const Big& a, uint64_t d) {
  std::array<uint64_t, kLimbs + 1> q{};
  u128 rem = 0;
  for (int i = kLimbs - 1; i >= 0; --i) {
    const u128 cur = rem << 64 | a.m[i];
    q[i + 1] = static_cast<uint64_t>(cur / d);
    rem = cur % d;
  }
  q[0] = static_cast<uint64_t>((rem << 64) / d);  // one more limb of quotient
  return Make(a.sign, q.data(), kLimbs + 1, a.exp - kBits - 64);
}

Big Div(const Big& a, const Big& b) {
  if (a.zero()) return Big{};
  // Restoring division of a.m * 2^(kBits + 63) by b.m, one quotient bit at a time.
  std::array<uint64_t, kLimbs + 1> r{}, q{};
  for (int i = 0; i < kLimbs; ++i) r[i] = a.m[i];
  const int qbits = 64 * (kLimbs + 1);
  for (int bit = qbits - 1; bit >= 0; --bit) {
    bool ge = r[kLimbs] != 0;
    if (!ge) {
      ge = true;
      for (int i = kLimbs - 1; i >= 0; --i) {
        if (r[i] != b.m[i]) {
          ge = r[i] > b.m[i];
          break;
        }
      }
    }
    if (ge) {
      uint64_t borrow = 0;
      for (int i = 0; i <= kLimbs; ++i) {
        const uint64_t bi = i < kLimbs ? b.m[i] : 0;
        const u128 s = u128{r[i]} - bi - borrow;
        r[i] = static_cast<uint64_t>(s);
        borrow = (s >> 64) ? 1 : 0;
      }
      q[bit / 64] |= uint64_t{1} << (bit % 64);
    }
    for (int i = kLimbs; i > 0; --i) r[i] = r[i] << 1 | r[i - 1] >> 63;
    r[0] <<= 1;
  }
  // q = floor(a.m * 2^(qbits - 1) / b.m).
  return Make(a.sign != b.sign, q.data(), kLimbs + 1, a.exp - b.exp - (qbits - 1));
}

// A term this far below the sum no longer matters at 512 bits.
bool Negligible(const Big& term, const Big& sum) {
  return term.zero() || (!sum.zero() && term.exp < sum.exp - kBits - 8);
}

// e^t - 1 for |t| <= 0.7.
Big ExpMinus1(const Big& t) {
  Big sum = t, term = t;
  for (uint64_t k = 2; !Negligible(term, sum); ++k) {
    term = DivU64(Mul(term, t), k);
    sum = Add(sum, term);
  }
  return sum;
}

// ln(1 + u) for |u| <= 1/2.
Big LogOnePlus(const Big& u) {
  Big sum = u, power = u;
  for (uint64_t k = 2;; ++k) {
    power = Neg(Mul(power, u));
    const Big term = DivU64(power, k);
    if (Negligible(term, sum)) break;
    sum = Add(sum, term);
  }
  return sum;
}

// atan(w) for |w| <= 0.42.
Big AtanSeries(const Big& w) {
  const Big w2 = Mul(w, w);
  Big sum = w, power = w;
  for (uint64_t k = 1;; ++k) {
    power = Neg(Mul(power, w2));
    const Big term = DivU64(power, 2 * k + 1);
    if (Negligible(term, sum)) break;
    sum = Add(sum, term);
  }
  return sum;
}

// sin(r) and cos(r) for |r| <= pi/4 (a little more is fine).
Big SinSeries(const Big& r) {
  const Big r2 = Mul(r, r);
  Big sum = r, term = r;
  for (uint64_t k = 1; !Negligible(term, sum); ++k) {
    term = Neg(DivU64(Mul(term, r2), (2 * k) * (2 * k + 1)));
    sum = Add(sum, term);
  }
  return sum;
}
Big CosSeries(const Big& r) {
  const Big r2 = Mul(r, r);
  Big sum = FromU64(1), term = FromU64(1);
  for (uint64_t k = 1; !Negligible(term, sum); ++k) {
    term = Neg(DivU64(Mul(term, r2), (2 * k - 1) * (2 * k)));
    sum = Add(sum, term);
  }
  return sum;
}

const Big& Ln2() {
  static const Big ln2 = Neg(LogOnePlus(DivU64(FromU64(1, true), 2)));  // -ln(1 - 1/2)
  return ln2;
}
const Big& Pi() {  // Machin: 16 atan(1/5) - 4 atan(1/239)
  static const Big pi = Sub(Mul(FromU64(16), AtanSeries(DivU64(FromU64(1), 5))),
                            Mul(FromU64(4), AtanSeries(DivU64(FromU64(1), 239))));
  return pi;
}
Big HalfPi() {
  Big h = Pi();
  --h.exp;
  return h;
}

// atan(z) for z >= 0.
Big AtanNonNegative(const Big& z) {
  const Big one = FromU64(1);
  if (MagnitudeLess(one, z)) return Sub(HalfPi(), AtanNonNegative(Div(one, z)));
  // tan(pi/8) = 0.41421...: above it, atan(z) = pi/4 + atan((z - 1) / (z + 1)).
  const Big tan_pi_8 = DivU64(FromU64(41421), 100000);
  if (MagnitudeLess(tan_pi_8, z)) {
    Big quarter_pi = Pi();
    quarter_pi.exp -= 2;
    return Add(quarter_pi, AtanSeries(Div(Sub(z, one), Add(z, one))));
  }
  return AtanSeries(z);
}

// Rounds v, known to within 2^-error_bits relative, to 64 bits; `modelled` false if the two ends
// of the interval round differently.
FpTranscendental Deliver(const Big& v, int error_bits, uint16_t cw) {
  FpTranscendental out;
  if (v.zero()) {  // not reached for the operands that get here: their results are nonzero
    out.modelled = false;
    return out;
  }
  const auto round = [&](const Big& x) {
    // The top 128 bits with the rest folded into a sticky bit: sig * 2^(exp - 1 - 127).
    const u128 hi = u128{x.m[kLimbs - 1]} << 64 | x.m[kLimbs - 2];
    bool sticky = false;
    for (int i = 0; i < kLimbs - 2; ++i) sticky |= x.m[i] != 0;
    return fpu_internal::Round(
        fpu_internal::Wide{x.sign, static_cast<int32_t>(x.exp - 1), hi | (sticky ? 1 : 0)},
        fpu_internal::RegisterFormat(64), RoundingOf(cw), cw & kExAll, /*register_dest=*/true);
  };
  Big eps = v;
  eps.exp -= error_bits;
  const fpu_internal::Rounded lo = round(Sub(v, eps));
  const fpu_internal::Rounded hi = round(Add(v, eps));
  const bool same = lo.value.sign == hi.value.sign && lo.value.infinite == hi.value.infinite &&
                    lo.value.exp == hi.value.exp && lo.value.sig == hi.value.sig &&
                    lo.flags == hi.flags && lo.c1 == hi.c1 && lo.store == hi.store;
  if (!same) {
    out.modelled = false;
    return out;
  }
  out.result = fpu_internal::ToResult(lo);
  out.result.flags |= kExPrecision;  // never exact here
  return out;
}

// For f(x) = x (1 -+ O(x^2)) at |x| < 2^-100: the exact value lies strictly between v, which is
// exact in its top 128 bits, and a point 2^-200 relative below (or above) it, so it rounds as v
// nudged by one unit of the 128th bit does.
FpTranscendental DeliverNear(const Big& v, bool below, uint16_t cw) {
  u128 hi = u128{v.m[kLimbs - 1]} << 64 | v.m[kLimbs - 2];
  int32_t exp = static_cast<int32_t>(v.exp - 1);
  if (below) {
    if (hi == u128{1} << 127) {  // a power of two: one unit below is all ones, one binade lower
      hi = ~u128{0};
      --exp;
    } else {
      --hi;
    }
  } else {
    hi |= 1;
  }
  FpTranscendental out;
  out.result = fpu_internal::ToResult(fpu_internal::Round(fpu_internal::Wide{v.sign, exp, hi},
                                                          fpu_internal::RegisterFormat(64),
                                                          RoundingOf(cw), cw & kExAll, true));
  return out;
}

constexpr int kErrorBits = 440;      // series and constants: a few hundred ulps of 512 bits at most
constexpr int kTrigErrorBits = 360;  // after reducing |x| < 2^63 by pi/2 at 512 bits

FpTranscendental Done(FpResult r) {
  FpTranscendental t;
  t.result = r;
  return t;
}
FpTranscendental Undefined() {
  FpTranscendental t;
  t.modelled = false;
  return t;
}

// The denormal check shared by all: masked DE goes on, unmasked stops.
bool DenormalStops(F80Class a, F80Class b, uint16_t cw, uint16_t* de) {
  *de = (IsDenormalClass(a) || IsDenormalClass(b)) ? kExDenormal : 0;
  return *de && !(cw & kExDenormal);
}

FpTranscendental WithFlags(FpTranscendental t, uint16_t flags) {
  t.result.flags |= flags;
  return t;
}

// A correctly rounded constant (pi, pi/2, ...) times a sign, through the same rounding.
FpTranscendental Constant(Big v, bool sign, uint16_t cw, uint16_t flags) {
  v.sign = sign;
  return WithFlags(Deliver(v, kErrorBits, cw), flags);
}

// log2 of a finite positive x as e + ln(m)/ln 2 with m in [sqrt(2)/2, sqrt(2)).
Big Log2(Float80 x) {
  const fpu_internal::Unpacked u = fpu_internal::Unpack(x);
  int64_t e = u.exp;
  Big m = Make(false, &u.sig, 1, -63);
  if (u.sig > 0xB504F333F9DE6484ull) {
    ++e;
    --m.exp;
  }
  const Big ln = Div(LogOnePlus(Sub(m, FromU64(1))), Ln2());
  return Add(FromU64(static_cast<uint64_t>(e < 0 ? -e : e), e < 0), ln);
}

}  // namespace

bool TrigInRange(Float80 x) {
  const F80Class c = Classify(x);
  if (!IsFinite(c)) return true;
  return x.exponent() < kF80Bias + 63;
}

FpTranscendental Exp2Minus1(Float80 x, uint16_t cw) {
  const F80Class c = Classify(x);
  FpResult r;
  if (NaNOperands(x, c, x, c, cw, &r)) return Done(r);
  if (c == F80Class::kZero) return Done(Exact(x, 0));
  if (c == F80Class::kInfinity) {
    return Done(Exact(x.sign() ? MakeFloat80(true, kF80Bias, kF80IntegerBit) : x, 0));
  }
  uint16_t de;
  if (DenormalStops(c, c, cw, &de)) return Done(DenormalTrap());
  if (x.exponent() > kF80Bias || (x.exponent() == kF80Bias && x.signif != kF80IntegerBit)) {
    return Undefined();  // |x| > 1
  }
  if (x.exponent() == kF80Bias) {  // +-1: 1 or -1/2, exact
    return Done(Exact(x.sign() ? MakeFloat80(true, kF80Bias - 1, kF80IntegerBit) : x, de));
  }
  return WithFlags(Deliver(ExpMinus1(Mul(FromF80(x), Ln2())), kErrorBits, cw), de);
}

FpTranscendental YLog2X(Float80 y, Float80 x, uint16_t cw) {
  const F80Class cx = Classify(x), cy = Classify(y);
  FpResult r;
  if (NaNOperands(x, cx, y, cy, cw, &r)) return Done(r);
  const bool zx = cx == F80Class::kZero, ix = cx == F80Class::kInfinity;
  const bool zy = cy == F80Class::kZero, iy = cy == F80Class::kInfinity;
  if (x.sign() && !zx) return Done(Invalid(cw));  // log of a negative number
  const bool x_is_one = x.sign_exp == kF80Bias && x.signif == kF80IntegerBit;
  if (zx) {
    if (zy) return Done(Invalid(cw));
    if (iy) return Done(Exact(Inf(!y.sign()), 0));
    if (!(cw & kExZeroDivide)) {
      FpResult z;
      z.flags = kExZeroDivide;
      z.store = false;
      return Done(z);
    }
    return Done(Exact(Inf(!y.sign()), kExZeroDivide));
  }
  if (ix) {
    if (zy) return Done(Invalid(cw));
    return Done(Exact(Inf(y.sign()), 0));
  }
  if (x_is_one && iy) return Done(Invalid(cw));
  uint16_t de;
  if (DenormalStops(cx, cy, cw, &de)) return Done(DenormalTrap());
  // The sign of log2(x): x above or below 1.
  const bool log_negative = x.exponent() < kF80Bias;  // x < 1 (x == 1 is handled below)
  if (x_is_one) return Done(Exact(Zero(y.sign()), de));
  if (iy) return Done(Exact(Inf(y.sign() != log_negative), de));
  if (zy) return Done(Exact(Zero(y.sign() != log_negative), de));
  if (x.signif == kF80IntegerBit) {
    // A power of two: y * e exactly, one rounding (a basic multiplication at 64 bits).
    const int32_t e = (x.exponent() == 0 ? 1 : x.exponent()) - kF80Bias;
    FpResult p = Mul(y, FromInt32(e), static_cast<uint16_t>(cw | 0x0300));
    p.flags |= de;
    return Done(p);
  }
  return WithFlags(Deliver(Mul(FromF80(y), Log2(x)), kErrorBits, cw), de);
}

FpTranscendental YLog2XPlus1(Float80 y, Float80 x, uint16_t cw) {
  const F80Class cx = Classify(x), cy = Classify(y);
  FpResult r;
  if (NaNOperands(x, cx, y, cy, cw, &r)) return Done(r);
  if (cx == F80Class::kInfinity) return Undefined();
  // |x| < 1 - sqrt(2)/2 = 0.2928932...: beyond it the i486 leaves the result undefined.
  if (cx != F80Class::kZero && !IsDenormalClass(cx) &&
      (x.exponent() > kF80Bias - 2 ||
       (x.exponent() == kF80Bias - 2 && x.signif > 0x95F619980C4336F7ull))) {
    return Undefined();
  }
  const bool zx = cx == F80Class::kZero;
  const bool zy = cy == F80Class::kZero, iy = cy == F80Class::kInfinity;
  if (zx && iy) return Done(Invalid(cw));
  uint16_t de;
  if (DenormalStops(cx, cy, cw, &de)) return Done(DenormalTrap());
  const bool sign = y.sign() != x.sign();  // log2(1 + x) has x's sign
  if (zx || zy) return Done(Exact(Zero(sign), de));
  if (iy) return Done(Exact(Inf(sign), de));
  return WithFlags(Deliver(Mul(FromF80(y), Div(LogOnePlus(FromF80(x)), Ln2())), kErrorBits, cw),
                   de);
}

FpTranscendental Atan2(Float80 y, Float80 x, uint16_t cw) {
  const F80Class cx = Classify(x), cy = Classify(y);
  FpResult r;
  if (NaNOperands(y, cy, x, cx, cw, &r)) return Done(r);
  const bool zx = cx == F80Class::kZero, ix = cx == F80Class::kInfinity;
  const bool zy = cy == F80Class::kZero, iy = cy == F80Class::kInfinity;
  uint16_t de;
  if (DenormalStops(cx, cy, cw, &de)) return Done(DenormalTrap());
  if (zy) return x.sign() ? Constant(Pi(), y.sign(), cw, de) : Done(Exact(Zero(y.sign()), de));
  if (iy) {
    if (!ix) return Constant(HalfPi(), y.sign(), cw, de);
    Big quarter = Pi();
    quarter.exp -= 2;
    if (!x.sign()) return Constant(quarter, y.sign(), cw, de);
    return Constant(Add(HalfPi(), quarter), y.sign(), cw, de);
  }
  if (zx) return Constant(HalfPi(), y.sign(), cw, de);
  if (ix) return x.sign() ? Constant(Pi(), y.sign(), cw, de) : Done(Exact(Zero(y.sign()), de));
  Big a = FromF80(y), b = FromF80(x);
  a.sign = b.sign = false;
  const Big z = Div(a, b);
  Big angle = AtanNonNegative(z);
  if (x.sign()) angle = Sub(Pi(), angle);
  angle.sign = y.sign();
  FpTranscendental t = Deliver(angle, kErrorBits, cw);
  if (!t.modelled && !x.sign() && z.exp < -100) {
    // A quotient exactly at a rounding boundary: atan(z) is a hair below it.
    Big zs = z;
    zs.sign = y.sign();
    t = DeliverNear(zs, /*below=*/true, cw);
  }
  return WithFlags(t, de);
}

FpTranscendental Trig(TrigFunction f, Float80 x, uint16_t cw) {
  const F80Class c = Classify(x);
  FpResult r;
  if (NaNOperands(x, c, x, c, cw, &r)) return Done(r);
  if (c == F80Class::kInfinity) return Done(Invalid(cw));
  if (c == F80Class::kZero) {
    return Done(
        Exact(f == TrigFunction::kCos ? MakeFloat80(false, kF80Bias, kF80IntegerBit) : x, 0));
  }
  uint16_t de;
  if (DenormalStops(c, c, cw, &de)) return Done(DenormalTrap());
  if (x.exponent() < kF80Bias - 100) {  // sin x just below x, tan x just above, cos x below 1
    if (f == TrigFunction::kCos) return WithFlags(DeliverNear(FromU64(1), true, cw), de);
    return WithFlags(DeliverNear(FromF80(x), f == TrigFunction::kSin, cw), de);
  }
  // x = k * pi/2 + r with |r| <= pi/4 (a little more from truncation: the series do not mind).
  const Big bx = FromF80(x);
  Big q = Div(bx, HalfPi());
  uint64_t k = 0;
  {
    Big half = FromU64(1);
    --half.exp;  // round |q| to nearest: floor(|q| + 1/2)
    q.sign = false;
    const Big t = Add(q, half);
    if (t.exp > 0) k = t.m[kLimbs - 1] >> (64 - t.exp);  // t < 2^63
  }
  Big reduced = Sub(bx, Mul(FromU64(k, x.sign()), HalfPi()));
  const int quadrant = static_cast<int>(k & 3) * (x.sign() ? -1 : 1);
  const int j = ((quadrant % 4) + 4) % 4;
  const Big s = SinSeries(reduced), co = CosSeries(reduced);
  Big sin_x = j == 0 ? s : j == 1 ? co : j == 2 ? Neg(s) : Neg(co);
  Big cos_x = j == 0 ? co : j == 1 ? Neg(s) : j == 2 ? Neg(co) : s;
  const Big v = f == TrigFunction::kSin   ? sin_x
                : f == TrigFunction::kCos ? cos_x
                                          : Div(sin_x, cos_x);
  return WithFlags(Deliver(v, kTrigErrorBits, cw), de);
}

}  // namespace citcat::x86
