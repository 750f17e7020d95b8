#include "simcore/x86/fpu/round.h"

namespace citcat::x86::fpu_internal {
namespace {

// The bias the 486 applies to a wrapped (unmasked) overflow or underflow result: 3 * 2^13.
constexpr int32_t kWrapBias = 24576;

struct Step {
  uint64_t sig;  // left-justified kept bits
  int32_t exp;
  bool inexact;
  bool up;
};

// Keeps the top p bits of sig (value sig * 2^(exp - 127)) under rc. A carry out of the top bit
// renormalizes; sig need not be normalized (denormalization), in which case no carry can leave it.
Step RoundBits(bool sign, u128 sig, int32_t exp, int p, Rounding rc) {
  const int drop = 128 - p;
  u128 keep = sig >> drop;
  const u128 rest = sig & ((u128{1} << drop) - 1);
  const u128 half = u128{1} << (drop - 1);
  bool inc = false;
  switch (rc) {
    case Rounding::kNearest:
      inc = rest > half || (rest == half && (keep & 1));
      break;
    case Rounding::kDown:
      inc = sign && rest != 0;
      break;
    case Rounding::kUp:
      inc = !sign && rest != 0;
      break;
    case Rounding::kZero:
      break;
  }
  if (inc) {
    ++keep;
    if (keep >> p) {
      keep >>= 1;
      ++exp;
    }
  }
  return Step{static_cast<uint64_t>(keep) << (64 - p), exp, rest != 0, inc};
}

}  // namespace

int CountLeadingZeros128(u128 x) {
  const uint64_t hi = static_cast<uint64_t>(x >> 64);
  if (hi != 0) return __builtin_clzll(hi);
  const uint64_t lo = static_cast<uint64_t>(x);
  return lo != 0 ? 64 + __builtin_clzll(lo) : 128;
}

u128 ShiftRightJam(u128 x, int n) {
  if (n <= 0) return x;
  if (n >= 128) return x != 0 ? 1 : 0;
  const bool lost = (x & ((u128{1} << n) - 1)) != 0;
  return (x >> n) | (lost ? 1 : 0);
}

Unpacked Unpack(Float80 x) {
  const int32_t e = x.exponent() == 0 ? 1 - kF80Bias : x.exponent() - kF80Bias;
  const int shift = __builtin_clzll(x.signif);
  return Unpacked{x.sign(), e - shift, x.signif << shift};
}

Rounded Round(Wide w, const Format& f, Rounding rc, uint16_t masks, bool register_dest) {
  const int lz = CountLeadingZeros128(w.sig);
  w.sig <<= lz;
  w.exp -= lz;
  Rounded out;
  out.value.sign = w.sign;
  const Step s = RoundBits(w.sign, w.sig, w.exp, f.precision, rc);

  if (s.exp > f.emax) {
    if (!(masks & kExOverflow)) {
      out.flags = kExOverflow;
      if (!register_dest) {
        out.store = false;
        return out;
      }
      out.flags |= s.inexact ? kExPrecision : 0;
      out.c1 = s.up;
      out.value.exp = s.exp - kWrapBias;
      out.value.sig = s.sig;
      return out;
    }
    out.flags = kExOverflow | kExPrecision;
    const bool to_infinity = rc == Rounding::kNearest || (rc == Rounding::kUp && !w.sign) ||
                             (rc == Rounding::kDown && w.sign);
    if (to_infinity) {
      out.value.infinite = true;
      out.c1 = true;
    } else {
      out.value.exp = f.emax;
      out.value.sig = ~uint64_t{0} << (64 - f.precision);
    }
    return out;
  }

  if (s.exp < f.emin) {  // tiny after rounding
    if (!(masks & kExUnderflow)) {
      out.flags = kExUnderflow;
      if (!register_dest) {
        out.store = false;
        return out;
      }
      out.flags |= s.inexact ? kExPrecision : 0;
      out.c1 = s.up;
      out.value.exp = s.exp + kWrapBias;
      out.value.sig = s.sig;
      return out;
    }
    const Step d = RoundBits(w.sign, ShiftRightJam(w.sig, f.emin - w.exp), f.emin, f.precision, rc);
    out.value.exp = f.emin;
    out.value.sig = d.sig;
    out.flags = d.inexact ? (kExUnderflow | kExPrecision) : 0;
    out.c1 = d.up;
    return out;
  }

  out.value.exp = s.exp;
  out.value.sig = s.sig;
  out.flags = s.inexact ? kExPrecision : 0;
  out.c1 = s.up;
  return out;
}

Float80 PackF80(const Packed& p) {
  if (p.infinite) return MakeFloat80(p.sign, kF80ExpMax, kF80IntegerBit);
  if (p.sig == 0) return MakeFloat80(p.sign, 0, 0);
  // A wrapped result's exponent is in range by construction for the basic operations.
  const int32_t biased = (p.sig & kF80IntegerBit) ? p.exp + kF80Bias : 0;
  return MakeFloat80(p.sign, static_cast<uint16_t>(biased), p.sig);
}

uint64_t PackIeee(const Packed& p, int frac_bits, int bias) {
  const uint64_t sign = uint64_t{p.sign} << (frac_bits + (frac_bits == 23 ? 8 : 11));
  const uint64_t exp_max = frac_bits == 23 ? 0xFF : 0x7FF;
  if (p.infinite) return sign | (exp_max << frac_bits);
  if (p.sig == 0) return sign;
  const uint64_t frac = (p.sig >> (63 - frac_bits)) & ((uint64_t{1} << frac_bits) - 1);
  const uint64_t biased = (p.sig & kF80IntegerBit) ? static_cast<uint64_t>(p.exp + bias) : 0;
  return sign | (biased << frac_bits) | frac;
}

Float80 Quiet(Float80 nan) { return Float80{nan.signif | kF80QuietBit, nan.sign_exp}; }

Float80 PickNaN(Float80 a, F80Class ca, Float80 b, F80Class cb) {
  if (!IsNaN(cb)) return Quiet(a);
  if (!IsNaN(ca)) return Quiet(b);
  if (ca != cb) return ca == F80Class::kQuietNaN ? a : b;
  if (a.signif != b.signif) return Quiet(a.signif > b.signif ? a : b);
  return Quiet(a.sign() ? b : a);
}

FpResult Invalid(uint16_t masks) {
  FpResult r;
  r.flags = kExInvalid;
  if (masks & kExInvalid) {
    r.value = kRealIndefinite;
  } else {
    r.store = false;
  }
  return r;
}

FpResult ToResult(const Rounded& r) {
  FpResult out;
  out.value = PackF80(r.value);
  out.flags = r.flags;
  out.c1 = r.c1;
  out.store = r.store;
  return out;
}

bool IsDenormalClass(F80Class c) {
  return c == F80Class::kDenormal || c == F80Class::kPseudoDenormal;
}

FpResult Exact(Float80 v, uint16_t flags) {
  FpResult r;
  r.value = v;
  r.flags = flags;
  return r;
}

FpResult DenormalTrap() {
  FpResult r;
  r.flags = kExDenormal;
  r.store = false;
  return r;
}

Float80 Zero(bool sign) { return MakeFloat80(sign, 0, 0); }
Float80 Inf(bool sign) { return MakeFloat80(sign, kF80ExpMax, kF80IntegerBit); }

bool NaNOperands(Float80 a, F80Class ca, Float80 b, F80Class cb, uint16_t cw, FpResult* out) {
  if (IsUnsupported(ca) || IsUnsupported(cb)) {
    *out = Invalid(cw);
    return true;
  }
  if (!IsNaN(ca) && !IsNaN(cb)) return false;
  const bool signaling = ca == F80Class::kSignalingNaN || cb == F80Class::kSignalingNaN;
  if (signaling && !(cw & kExInvalid)) {
    *out = Invalid(cw);
    return true;
  }
  *out = Exact(PickNaN(a, ca, b, cb), signaling ? kExInvalid : 0);
  return true;
}

}  // namespace citcat::x86::fpu_internal
