#include "simcore/x86/fpu/convert.h"

#include "simcore/x86/fpu/round.h"

namespace citcat::x86 {
namespace {

using fpu_internal::Unpack;
using fpu_internal::Unpacked;

Float80 FromMagnitude(bool sign, uint64_t mag) {
  if (mag == 0) return MakeFloat80(sign, 0, 0);
  const int lz = __builtin_clzll(mag);
  return MakeFloat80(sign, static_cast<uint16_t>(kF80Bias + 63 - lz), mag << lz);
}

struct IntRound {
  uint64_t mag = 0;
  bool too_big = false;  // magnitude >= 2^64 before rounding
  bool inexact = false;
  bool up = false;
};

// Rounds a finite value to an integer magnitude under rc.
IntRound RoundToIntegral(Float80 x, F80Class c, Rounding rc) {
  IntRound out;
  if (c == F80Class::kZero) return out;
  const Unpacked u = Unpack(x);
  if (u.exp >= 64) {
    out.too_big = true;
    return out;
  }
  if (u.exp == 63) {
    out.mag = u.sig;
    return out;
  }
  uint64_t keep = 0;
  uint64_t rest = 1;  // exp <= -2: below one half, nonzero
  uint64_t half = uint64_t{1} << 63;
  if (u.exp >= 0) {
    keep = u.sig >> (63 - u.exp);
    rest = u.sig & ((uint64_t{1} << (63 - u.exp)) - 1);
    half = uint64_t{1} << (62 - u.exp);
  } else if (u.exp == -1) {
    rest = u.sig;
  }
  bool inc = false;
  switch (rc) {
    case Rounding::kNearest:
      inc = rest > half || (rest == half && (keep & 1));
      break;
    case Rounding::kDown:
      inc = u.sign && rest != 0;
      break;
    case Rounding::kUp:
      inc = !u.sign && rest != 0;
      break;
    case Rounding::kZero:
      break;
  }
  out.mag = keep + (inc ? 1 : 0);
  out.inexact = rest != 0;
  out.up = inc;
  return out;
}

template <typename T>
FpStore<T> InvalidStore(uint16_t cw, T indefinite) {
  FpStore<T> s;
  s.flags = kExInvalid;
  s.value = indefinite;
  s.store = (cw & kExInvalid) != 0;
  return s;
}

// FIST into a signed integer of `bits` bits, returned sign-extended in an int64_t.
FpStore<int64_t> ToInteger(Float80 x, uint16_t cw, int bits) {
  const F80Class c = Classify(x);
  const uint64_t limit = uint64_t{1} << (bits - 1);
  const int64_t indefinite = static_cast<int64_t>(uint64_t{0} - limit);
  if (!IsFinite(c)) return InvalidStore<int64_t>(cw, indefinite);
  const IntRound r = RoundToIntegral(x, c, RoundingOf(cw));
  const bool neg = x.sign();
  if (r.too_big || r.mag > (neg ? limit : limit - 1)) return InvalidStore<int64_t>(cw, indefinite);
  FpStore<int64_t> s;
  s.value = neg ? static_cast<int64_t>(uint64_t{0} - r.mag) : static_cast<int64_t>(r.mag);
  s.flags = r.inexact ? kExPrecision : 0;
  s.c1 = r.up;
  return s;
}

template <typename T>
FpStore<T> Narrow(const FpStore<int64_t>& w) {
  FpStore<T> s;
  s.value = static_cast<T>(w.value);
  s.flags = w.flags;
  s.c1 = w.c1;
  s.store = w.store;
  return s;
}

// FLD of an IEEE value with `frac_bits` fraction bits and exponent bias `bias`.
FpResult FromIeee(uint64_t bits, int frac_bits, int bias, uint16_t cw) {
  const int exp_bits = frac_bits == 23 ? 8 : 11;
  const uint64_t exp_max = (uint64_t{1} << exp_bits) - 1;
  const bool sign = (bits >> (frac_bits + exp_bits)) & 1;
  const uint64_t e = (bits >> frac_bits) & exp_max;
  const uint64_t frac = bits & ((uint64_t{1} << frac_bits) - 1);
  FpResult r;
  if (e == exp_max) {
    r.value = MakeFloat80(sign, kF80ExpMax, kF80IntegerBit | (frac << (63 - frac_bits)));
    if (frac != 0 && !(r.value.signif & kF80QuietBit)) {
      r.flags = kExInvalid;
      r.store = (cw & kExInvalid) != 0;
      r.value = fpu_internal::Quiet(r.value);
    }
    return r;
  }
  if (e == 0) {
    if (frac == 0) {
      r.value = MakeFloat80(sign, 0, 0);
      return r;
    }
    r.flags = kExDenormal;
    r.store = (cw & kExDenormal) != 0;
    // frac * 2^(1 - bias - frac_bits)
    const int msb = 63 - __builtin_clzll(frac);
    r.value = MakeFloat80(sign, static_cast<uint16_t>(kF80Bias + 1 - bias - frac_bits + msb),
                          frac << (63 - msb));
    return r;
  }
  r.value = MakeFloat80(sign, static_cast<uint16_t>(e - bias + kF80Bias),
                        kF80IntegerBit | (frac << (63 - frac_bits)));
  return r;
}

// FST to an IEEE format.
FpStore<uint64_t> ToIeee(Float80 x, const fpu_internal::Format& f, uint16_t cw) {
  const int frac_bits = f.precision - 1;
  const int bias = f.emax;
  const int exp_bits = frac_bits == 23 ? 8 : 11;
  const uint64_t sign = uint64_t{x.sign()} << (frac_bits + exp_bits);
  const uint64_t exp_field = ((uint64_t{1} << exp_bits) - 1) << frac_bits;
  const uint64_t frac_mask = (uint64_t{1} << frac_bits) - 1;
  const F80Class c = Classify(x);
  FpStore<uint64_t> s;
  if (IsUnsupported(c)) {
    // Indefinite: sign set, exponent all ones, top fraction bit set.
    return InvalidStore<uint64_t>(
        cw, (uint64_t{1} << (frac_bits + exp_bits)) | exp_field | (uint64_t{1} << (frac_bits - 1)));
  }
  if (IsNaN(c) || c == F80Class::kInfinity) {
    if (c == F80Class::kSignalingNaN) {
      s.flags = kExInvalid;
      s.store = (cw & kExInvalid) != 0;
      x = fpu_internal::Quiet(x);
    }
    s.value = sign | exp_field | ((x.signif >> (63 - frac_bits)) & frac_mask);
    return s;
  }
  if (c == F80Class::kZero) {
    s.value = sign;
    return s;
  }
  const Unpacked u = Unpack(x);
  const fpu_internal::Rounded r =
      fpu_internal::Round(fpu_internal::Wide{u.sign, u.exp, fpu_internal::u128{u.sig} << 64}, f,
                          RoundingOf(cw), cw & kExAll, /*register_dest=*/false);
  s.value = fpu_internal::PackIeee(r.value, frac_bits, bias);
  s.flags = r.flags;
  s.c1 = r.c1;
  s.store = r.store;
  return s;
}

}  // namespace

Float80 FromInt16(int16_t v) { return FromInt64(v); }
Float80 FromInt32(int32_t v) { return FromInt64(v); }
Float80 FromInt64(int64_t v) {
  const bool neg = v < 0;
  const uint64_t mag = neg ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  // FILD of 0 loads +0.
  return FromMagnitude(neg, mag);
}

FpStore<int16_t> ToInt16(Float80 x, uint16_t cw) { return Narrow<int16_t>(ToInteger(x, cw, 16)); }
FpStore<int32_t> ToInt32(Float80 x, uint16_t cw) { return Narrow<int32_t>(ToInteger(x, cw, 32)); }
FpStore<int64_t> ToInt64(Float80 x, uint16_t cw) { return ToInteger(x, cw, 64); }

FpResult FromFloat32(uint32_t bits, uint16_t cw) { return FromIeee(bits, 23, 127, cw); }
FpResult FromFloat64(uint64_t bits, uint16_t cw) { return FromIeee(bits, 52, 1023, cw); }

FpStore<uint32_t> ToFloat32(Float80 x, uint16_t cw) {
  const FpStore<uint64_t> w = ToIeee(x, fpu_internal::kSingle, cw);
  FpStore<uint32_t> s;
  s.value = static_cast<uint32_t>(w.value);
  s.flags = w.flags;
  s.c1 = w.c1;
  s.store = w.store;
  return s;
}
FpStore<uint64_t> ToFloat64(Float80 x, uint16_t cw) { return ToIeee(x, fpu_internal::kDouble, cw); }

Float80 FromBcd(const PackedBcd& bcd) {
  uint64_t mag = 0;
  for (int i = 8; i >= 0; --i) mag = mag * 100 + (bcd[i] >> 4) * 10 + (bcd[i] & 0xF);
  return FromMagnitude((bcd[9] & 0x80) != 0, mag);
}

FpStore<PackedBcd> ToBcd(Float80 x, uint16_t cw) {
  const F80Class c = Classify(x);
  if (!IsFinite(c)) return InvalidStore<PackedBcd>(cw, kBcdIndefinite);
  const IntRound r = RoundToIntegral(x, c, RoundingOf(cw));
  if (r.too_big || r.mag > 999999999999999999ull) {
    return InvalidStore<PackedBcd>(cw, kBcdIndefinite);
  }
  FpStore<PackedBcd> s;
  uint64_t m = r.mag;
  for (int i = 0; i < 9; ++i) {
    const uint8_t lo = m % 10;
    m /= 10;
    const uint8_t hi = m % 10;
    m /= 10;
    s.value[i] = static_cast<uint8_t>((hi << 4) | lo);
  }
  s.value[9] = x.sign() ? 0x80 : 0;
  s.flags = r.inexact ? kExPrecision : 0;
  s.c1 = r.up;
  return s;
}

FpResult RoundToInteger(Float80 x, uint16_t cw) {
  const F80Class c = Classify(x);
  FpResult r;
  if (IsUnsupported(c)) return fpu_internal::Invalid(cw);
  if (c == F80Class::kSignalingNaN) {
    if (!(cw & kExInvalid)) return fpu_internal::Invalid(cw);
    r.value = fpu_internal::Quiet(x);
    r.flags = kExInvalid;
    return r;
  }
  r.value = x;
  if (c == F80Class::kQuietNaN || c == F80Class::kInfinity || c == F80Class::kZero) return r;
  if (c == F80Class::kDenormal || c == F80Class::kPseudoDenormal) {
    r.flags = kExDenormal;
    if (!(cw & kExDenormal)) {
      r.store = false;
      return r;
    }
  }
  const IntRound i = RoundToIntegral(x, c, RoundingOf(cw));
  if (i.too_big || (!i.inexact && c == F80Class::kNormal)) return r;  // already integral
  r.value = FromMagnitude(x.sign(), i.mag);
  r.flags |= i.inexact ? kExPrecision : 0;
  r.c1 = i.up;
  return r;
}

}  // namespace citcat::x86
