#include "tests/simcore/x87_reference.h"

#include <gmp.h>
#include <mpfr.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace citcat::x86::reference {
namespace {

// Reused MPFR variables: the reference runs millions of times and allocation would dominate.
struct Vars {
  mpfr_t a, b, r;
  mpz_t z;
  Vars() {
    mpfr_inits2(64, a, b, r, static_cast<mpfr_ptr>(nullptr));
    mpz_init(z);
  }
  ~Vars() {
    mpfr_clears(a, b, r, static_cast<mpfr_ptr>(nullptr));
    mpz_clear(z);
  }
};
Vars& V() {
  static thread_local Vars v;
  return v;
}

mpfr_rnd_t Rnd(uint16_t cw) {
  switch (RoundingOf(cw)) {
    case Rounding::kNearest:
      return MPFR_RNDN;
    case Rounding::kDown:
      return MPFR_RNDD;
    case Rounding::kUp:
      return MPFR_RNDU;
    case Rounding::kZero:
      return MPFR_RNDZ;
  }
  return MPFR_RNDN;
}

bool Masked(uint16_t cw, uint16_t bit) { return (cw & bit) != 0; }

bool DenormalClass(F80Class c) {
  return c == F80Class::kDenormal || c == F80Class::kPseudoDenormal;
}

// Exact value of a finite operand or infinity, at 64 bits.
void Set(mpfr_t out, Float80 x) {
  mpfr_set_prec(out, 64);
  const F80Class c = Classify(x);
  if (c == F80Class::kZero) {
    mpfr_set_zero(out, x.sign() ? -1 : 1);
  } else if (c == F80Class::kInfinity) {
    mpfr_set_inf(out, x.sign() ? -1 : 1);
  } else {
    const long e = x.exponent() == 0 ? 1 : x.exponent();
    mpz_set_ui(V().z, x.signif);
    mpfr_set_z_2exp(out, V().z, e - 16383 - 63, MPFR_RNDN);
    if (x.sign()) mpfr_neg(out, out, MPFR_RNDN);
  }
}

// A nonzero finite MPFR value (at most 64 bits) as sign, unbiased exponent of the leading bit and
// left-justified significand.
void Decompose(mpfr_t v, bool* sign, long* exp, uint64_t* sig) {
  *sign = mpfr_signbit(v) != 0;
  *exp = mpfr_get_exp(v) - 1;
  mpfr_get_z_2exp(V().z, v);
  mpz_abs(V().z, V().z);
  uint64_t m = mpz_get_ui(V().z);
  *sig = m << __builtin_clzll(m);
}

Float80 ToF80(mpfr_t v) {
  if (mpfr_inf_p(v)) return MakeFloat80(mpfr_signbit(v), 0x7FFF, uint64_t{1} << 63);
  if (mpfr_zero_p(v)) return MakeFloat80(mpfr_signbit(v), 0, 0);
  bool sign;
  long e;
  uint64_t sig;
  Decompose(v, &sign, &e, &sig);
  if (e < -16382) return MakeFloat80(sign, 0, sig >> (-16382 - e));
  return MakeFloat80(sign, static_cast<uint16_t>(e + 16383), sig);
}

uint64_t ToIeeeBits(mpfr_t v, bool single) {
  const int frac_bits = single ? 23 : 52;
  const long bias = single ? 127 : 1023;
  const uint64_t sign = uint64_t{mpfr_signbit(v) != 0} << (single ? 31 : 63);
  const uint64_t exp_max = single ? 0xFF : 0x7FF;
  if (mpfr_inf_p(v)) return sign | (exp_max << frac_bits);
  if (mpfr_zero_p(v)) return sign;
  bool s;
  long e;
  uint64_t sig;
  Decompose(v, &s, &e, &sig);
  const uint64_t mask = (uint64_t{1} << frac_bits) - 1;
  if (e < 1 - bias) return sign | ((sig >> (1 - bias - e)) >> (63 - frac_bits));
  return sign | (static_cast<uint64_t>(e + bias) << frac_bits) | ((sig >> (63 - frac_bits)) & mask);
}

bool RoundedUp(mpfr_t v, int t) { return t != 0 && ((t > 0) != (mpfr_signbit(v) != 0)); }

struct Outcome {
  uint16_t flags = 0;
  bool c1 = false;
  bool store = true;
};

// r holds the value rounded to its precision with MPFR's default (huge) exponent range, t the
// ternary value. Rounds it into the destination's range as the 486 responds; r then holds the
// delivered value (wrapped by 2^-+24576 for an unmasked register response).
Outcome Deliver(mpfr_t r, int t, int precision, long emin, long emax, uint16_t cw, bool reg) {
  Outcome o;
  const mpfr_rnd_t rnd = Rnd(cw);
  if (mpfr_zero_p(r) || mpfr_inf_p(r)) {
    o.flags = t ? kExPrecision : 0;
    return o;
  }
  const long e = mpfr_get_exp(r) - 1;  // tininess and overflow after rounding to `precision`
  if (e > emax) {
    if (!Masked(cw, kExOverflow)) {
      o.flags = kExOverflow;
      if (!reg) {
        o.store = false;
        return o;
      }
      if (t) o.flags |= kExPrecision;
      o.c1 = RoundedUp(r, t);
      mpfr_mul_2si(r, r, -24576, MPFR_RNDN);
      return o;
    }
  } else if (e < emin) {
    if (!Masked(cw, kExUnderflow)) {
      o.flags = kExUnderflow;
      if (!reg) {
        o.store = false;
        return o;
      }
      if (t) o.flags |= kExPrecision;
      o.c1 = RoundedUp(r, t);
      mpfr_mul_2si(r, r, 24576, MPFR_RNDN);
      return o;
    }
  }
  const mpfr_exp_t old_emin = mpfr_get_emin();
  const mpfr_exp_t old_emax = mpfr_get_emax();
  mpfr_set_emin(emin - precision + 2);
  mpfr_set_emax(emax + 1);
  mpfr_clear_flags();
  t = mpfr_check_range(r, t, rnd);
  t = mpfr_subnormalize(r, t, rnd);
  const bool overflow = mpfr_overflow_p();
  mpfr_set_emin(old_emin);
  mpfr_set_emax(old_emax);
  if (overflow) o.flags |= kExOverflow;
  if (e < emin && t) o.flags |= kExUnderflow;
  if (t) o.flags |= kExPrecision;
  o.c1 = RoundedUp(r, t);
  return o;
}

FpResult Make(Float80 v, uint16_t flags) {
  FpResult r;
  r.value = v;
  r.flags = flags;
  return r;
}

FpResult Suppressed(uint16_t flag) {
  FpResult r;
  r.flags = flag;
  r.store = false;
  return r;
}

FpResult InvalidResult(uint16_t cw) {
  if (!Masked(cw, kExInvalid)) return Suppressed(kExInvalid);
  return Make(MakeFloat80(true, 0x7FFF, 0xC000000000000000), kExInvalid);
}

Float80 Quieted(Float80 x) { return Float80{x.signif | (uint64_t{1} << 62), x.sign_exp}; }

// The SDM's table of NaN results for two operands, at least one a NaN.
FpResult NaNResult(Float80 a, Float80 b, uint16_t cw) {
  const F80Class ca = Classify(a);
  const F80Class cb = Classify(b);
  const bool snan = ca == F80Class::kSignalingNaN || cb == F80Class::kSignalingNaN;
  if (snan && !Masked(cw, kExInvalid)) return Suppressed(kExInvalid);
  Float80 pick;
  if (!IsNaN(ca)) {
    pick = b;
  } else if (!IsNaN(cb)) {
    pick = a;
  } else if (ca == F80Class::kQuietNaN && cb == F80Class::kSignalingNaN) {
    pick = a;
  } else if (cb == F80Class::kQuietNaN && ca == F80Class::kSignalingNaN) {
    pick = b;
  } else if (a.signif > b.signif) {
    pick = a;
  } else if (b.signif > a.signif) {
    pick = b;
  } else {
    pick = b.sign() ? a : b;
  }
  return Make(Quieted(pick), snan ? kExInvalid : 0);
}

FpResult RegisterResult(int t, uint16_t cw, uint16_t extra_flags) {
  const int p = SignificandBits(PrecisionOf(cw));
  const Outcome o = Deliver(V().r, t, p, -16382, 16383, cw, true);
  FpResult res;
  res.flags = o.flags | extra_flags;
  res.c1 = o.c1;
  res.store = o.store;
  if (o.store) res.value = ToF80(V().r);
  return res;
}

Float80 Inf(bool sign) { return MakeFloat80(sign, 0x7FFF, uint64_t{1} << 63); }
Float80 Zero(bool sign) { return MakeFloat80(sign, 0, 0); }

}  // namespace

FpResult Binary(BinaryOp op, Float80 a, Float80 b, uint16_t cw) {
  const F80Class ca = Classify(a);
  const F80Class cb = Classify(b);
  if (IsUnsupported(ca) || IsUnsupported(cb)) return InvalidResult(cw);
  if (IsNaN(ca) || IsNaN(cb)) return NaNResult(a, b, cw);
  if (op == BinaryOp::kSub) {
    b.sign_exp ^= 0x8000;
    op = BinaryOp::kAdd;
  }
  const bool ia = ca == F80Class::kInfinity, ib = cb == F80Class::kInfinity;
  const bool za = ca == F80Class::kZero, zb = cb == F80Class::kZero;
  switch (op) {
    case BinaryOp::kAdd:
      if (ia && ib && a.sign() != b.sign()) return InvalidResult(cw);
      break;
    case BinaryOp::kMul:
      if ((ia && zb) || (za && ib)) return InvalidResult(cw);
      break;
    case BinaryOp::kDiv:
      if ((ia && ib) || (za && zb)) return InvalidResult(cw);
      if (zb && !ia) {
        if (!Masked(cw, kExZeroDivide)) return Suppressed(kExZeroDivide);
        return Make(Inf(a.sign() != b.sign()), kExZeroDivide);
      }
      break;
    default:
      break;
  }
  const uint16_t de = (DenormalClass(ca) || DenormalClass(cb)) ? kExDenormal : 0;
  if (de && !Masked(cw, kExDenormal)) return Suppressed(kExDenormal);
  Set(V().a, a);
  Set(V().b, b);
  mpfr_set_prec(V().r, SignificandBits(PrecisionOf(cw)));
  const mpfr_rnd_t rnd = Rnd(cw);
  int t = 0;
  switch (op) {
    case BinaryOp::kAdd:
      t = mpfr_add(V().r, V().a, V().b, rnd);
      break;
    case BinaryOp::kMul:
      t = mpfr_mul(V().r, V().a, V().b, rnd);
      break;
    case BinaryOp::kDiv:
      t = mpfr_div(V().r, V().a, V().b, rnd);
      break;
    default:
      break;
  }
  return RegisterResult(t, cw, de);
}

FpResult Sqrt(Float80 a, uint16_t cw) {
  const F80Class c = Classify(a);
  if (IsUnsupported(c)) return InvalidResult(cw);
  if (IsNaN(c)) return NaNResult(a, a, cw);
  if (c == F80Class::kZero) return Make(a, 0);
  if (a.sign()) return InvalidResult(cw);
  const uint16_t de = DenormalClass(c) ? kExDenormal : 0;
  if (de && !Masked(cw, kExDenormal)) return Suppressed(kExDenormal);
  Set(V().a, a);
  mpfr_set_prec(V().r, SignificandBits(PrecisionOf(cw)));
  return RegisterResult(mpfr_sqrt(V().r, V().a, Rnd(cw)), cw, de);
}

FpResult RoundToInteger(Float80 a, uint16_t cw) {
  const F80Class c = Classify(a);
  if (IsUnsupported(c)) return InvalidResult(cw);
  if (IsNaN(c)) return NaNResult(a, a, cw);
  if (c == F80Class::kZero || c == F80Class::kInfinity) return Make(a, 0);
  const uint16_t de = DenormalClass(c) ? kExDenormal : 0;
  if (de && !Masked(cw, kExDenormal)) return Suppressed(kExDenormal);
  Set(V().a, a);
  mpfr_set_prec(V().r, 64);
  mpfr_rint(V().r, V().a, Rnd(cw));
  const int cmp = mpfr_cmpabs(V().r, V().a);
  FpResult res = Make(ToF80(V().r), de | (cmp != 0 ? kExPrecision : 0));
  if (mpfr_zero_p(V().r)) res.value = Zero(a.sign());
  res.c1 = cmp > 0;
  return res;
}

FpStore<uint64_t> ToIeee(Float80 a, bool single, uint16_t cw) {
  const F80Class c = Classify(a);
  const int frac_bits = single ? 23 : 52;
  const uint64_t sign = uint64_t{a.sign()} << (single ? 31 : 63);
  const uint64_t exp_all = (single ? uint64_t{0xFF} : uint64_t{0x7FF}) << frac_bits;
  FpStore<uint64_t> s;
  if (IsUnsupported(c)) {
    s.flags = kExInvalid;
    s.store = Masked(cw, kExInvalid);
    s.value = (uint64_t{1} << (single ? 31 : 63)) | exp_all | (uint64_t{1} << (frac_bits - 1));
    return s;
  }
  if (IsNaN(c)) {
    if (c == F80Class::kSignalingNaN) {
      s.flags = kExInvalid;
      s.store = Masked(cw, kExInvalid);
    }
    // The top fraction bits, quiet bit forced.
    const uint64_t top = (a.signif << 1) >> (64 - frac_bits);
    s.value = sign | exp_all | top | (uint64_t{1} << (frac_bits - 1));
    return s;
  }
  Set(V().a, a);
  mpfr_set_prec(V().r, single ? 24 : 53);
  const int t = mpfr_set(V().r, V().a, Rnd(cw));
  const Outcome o = single ? Deliver(V().r, t, 24, -126, 127, cw, false)
                           : Deliver(V().r, t, 53, -1022, 1023, cw, false);
  s.flags = o.flags;
  s.c1 = o.c1;
  s.store = o.store;
  if (o.store) s.value = ToIeeeBits(V().r, single);
  return s;
}

FpResult FromIeee(uint64_t bits, bool single, uint16_t cw) {
  const int frac_bits = single ? 23 : 52;
  const long bias = single ? 127 : 1023;
  const uint64_t exp_max = single ? 0xFF : 0x7FF;
  const bool sign = (bits >> (single ? 31 : 63)) & 1;
  const uint64_t e = (bits >> frac_bits) & exp_max;
  const uint64_t frac = bits & ((uint64_t{1} << frac_bits) - 1);
  if (e == exp_max) {
    if (frac == 0) return Make(Inf(sign), 0);
    Float80 nan = MakeFloat80(sign, 0x7FFF, (uint64_t{1} << 63) | (frac << (63 - frac_bits)));
    const bool snan = (frac >> (frac_bits - 1)) == 0;
    if (snan && !Masked(cw, kExInvalid)) return Suppressed(kExInvalid);
    return Make(Quieted(nan), snan ? kExInvalid : 0);
  }
  if (e == 0 && frac == 0) return Make(Zero(sign), 0);
  if (e == 0 && !Masked(cw, kExDenormal)) return Suppressed(kExDenormal);
  mpfr_set_prec(V().r, 64);
  mpz_set_ui(V().z, e == 0 ? frac : frac | (uint64_t{1} << frac_bits));
  mpfr_set_z_2exp(V().r, V().z, (e == 0 ? 1 : static_cast<long>(e)) - bias - frac_bits, MPFR_RNDN);
  if (sign) mpfr_neg(V().r, V().r, MPFR_RNDN);
  return Make(ToF80(V().r), e == 0 ? kExDenormal : 0);
}

FpStore<int64_t> ToInt(Float80 a, int bits, uint16_t cw) {
  const F80Class c = Classify(a);
  FpStore<int64_t> s;
  const int64_t indefinite = bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1));
  const auto invalid = [&] {
    s.flags = kExInvalid;
    s.value = indefinite;
    s.store = Masked(cw, kExInvalid);
    return s;
  };
  if (!IsFinite(c)) return invalid();
  Set(V().a, a);
  mpfr_set_prec(V().r, 64);
  mpfr_rint(V().r, V().a, Rnd(cw));
  if (!mpfr_fits_intmax_p(V().r, MPFR_RNDN)) return invalid();
  const intmax_t v = mpfr_get_sj(V().r, MPFR_RNDN);
  if (bits < 64 && (v < -(intmax_t{1} << (bits - 1)) || v >= (intmax_t{1} << (bits - 1)))) {
    return invalid();
  }
  const int cmp = mpfr_cmpabs(V().r, V().a);
  s.value = v;
  s.flags = cmp != 0 ? kExPrecision : 0;
  s.c1 = cmp > 0;
  return s;
}

Float80 FromInt(int64_t v) {
  mpfr_set_prec(V().r, 64);
  mpfr_set_sj(V().r, v, MPFR_RNDN);
  return ToF80(V().r);
}

FpStore<PackedBcd> ToBcd(Float80 a, uint16_t cw) {
  const F80Class c = Classify(a);
  FpStore<PackedBcd> s;
  const auto invalid = [&] {
    s.flags = kExInvalid;
    s.value = {0, 0, 0, 0, 0, 0, 0, 0xC0, 0xFF, 0xFF};
    s.store = Masked(cw, kExInvalid);
    return s;
  };
  if (!IsFinite(c)) return invalid();
  Set(V().a, a);
  mpfr_set_prec(V().r, 64);
  mpfr_rint(V().r, V().a, Rnd(cw));
  if (mpfr_cmpabs_ui(V().r, 999999999999999999ul) > 0) return invalid();
  const int cmp = mpfr_cmpabs(V().r, V().a);
  mpfr_abs(V().r, V().r, MPFR_RNDN);
  char digits[32];
  std::snprintf(digits, sizeof digits, "%018ju", mpfr_get_uj(V().r, MPFR_RNDN));
  for (int i = 0; i < 9; ++i) {
    const int hi = digits[16 - 2 * i] - '0';
    const int lo = digits[17 - 2 * i] - '0';
    s.value[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  s.value[9] = a.sign() ? 0x80 : 0;
  s.flags = cmp != 0 ? kExPrecision : 0;
  s.c1 = cmp > 0;
  return s;
}

Float80 FromBcd(const PackedBcd& bcd) {
  std::string digits;
  for (int i = 8; i >= 0; --i) {
    digits += static_cast<char>('0' + (bcd[i] >> 4));
    digits += static_cast<char>('0' + (bcd[i] & 0xF));
  }
  mpfr_set_prec(V().r, 64);
  mpfr_set_str(V().r, digits.c_str(), 10, MPFR_RNDN);
  if (bcd[9] & 0x80) mpfr_neg(V().r, V().r, MPFR_RNDN);
  return ToF80(V().r);
}

FpCompareResult Compare(Float80 a, Float80 b, bool quiet) {
  const F80Class ca = Classify(a);
  const F80Class cb = Classify(b);
  FpCompareResult r;
  const bool bad_a = IsUnsupported(ca) || IsNaN(ca);
  const bool bad_b = IsUnsupported(cb) || IsNaN(cb);
  if (bad_a || bad_b) {
    r.order = FpOrder::kUnordered;
    const bool signals = IsUnsupported(ca) || IsUnsupported(cb) || ca == F80Class::kSignalingNaN ||
                         cb == F80Class::kSignalingNaN;
    r.flags = (signals || !quiet) ? kExInvalid : 0;
    return r;
  }
  r.flags = (DenormalClass(ca) || DenormalClass(cb)) ? kExDenormal : 0;
  Set(V().a, a);
  Set(V().b, b);
  const int cmp = mpfr_cmp(V().a, V().b);
  r.order = cmp < 0 ? FpOrder::kLess : cmp > 0 ? FpOrder::kGreater : FpOrder::kEqual;
  return r;
}

}  // namespace citcat::x86::reference
