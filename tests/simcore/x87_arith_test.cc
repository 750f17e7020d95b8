// The x87 arithmetic (simcore/x86/fpu) against MPFR: hand-picked known answers, a small random
// sample per operation class, and (label `differential`) a million seeded random operations per
// class drawn to hit the hard cases. Every value, flag, C1 and the store decision is compared.
#include <gmp.h>
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <string>

#include "absl/strings/str_format.h"
#include "simcore/x86/fpu/arith.h"
#include "simcore/x86/fpu/compare.h"
#include "simcore/x86/fpu/convert.h"
#include "simcore/x86/fpu/float80.h"
#include "simcore/x86/fpu/transcendental.h"
#include "tests/simcore/x87_reference.h"

namespace citcat::x86 {
namespace {

using reference::BinaryOp;

constexpr int kSampleOps = 20000;
constexpr int kDifferentialOps = 1000000;

std::string Hex(Float80 x) { return absl::StrFormat("%04X:%016X", x.sign_exp, x.signif); }

template <typename T>
std::string Show(const T& v) {
  if constexpr (std::is_same_v<T, Float80>) {
    return Hex(v);
  } else if constexpr (std::is_same_v<T, PackedBcd>) {
    std::string s;
    for (int i = 9; i >= 0; --i) s += absl::StrFormat("%02X", v[i]);
    return s;
  } else {
    return absl::StrFormat("%X", static_cast<uint64_t>(v));
  }
}

template <typename R>
std::string Describe(const R& r) {
  return absl::StrFormat("%s flags=%02X c1=%d store=%d", r.store ? Show(r.value) : "-", r.flags,
                         r.c1, r.store);
}

template <typename R>
bool Same(const R& got, const R& want) {
  return got.flags == want.flags && got.c1 == want.c1 && got.store == want.store &&
         (!want.store || got.value == want.value);
}

// Counts mismatches, reporting the first few in full.
class Checker {
 public:
  explicit Checker(std::string what) : what_(std::move(what)) {}
  ~Checker() { EXPECT_EQ(mismatches_, 0u) << what_ << ": " << mismatches_ << " of " << ops_; }
  template <typename R>
  void Check(const R& got, const R& want, const std::string& operands) {
    ++ops_;
    for (int bit = 0; bit < 6; ++bit) seen_[bit] += (want.flags >> bit) & 1;
    if (Same(got, want)) return;
    if (++mismatches_ <= 10) {
      ADD_FAILURE() << what_ << " " << operands << "\n  got  " << Describe(got) << "\n  want "
                    << Describe(want);
    }
  }
  // The run drew enough operands for each of these exceptions (at least 0.1% of them) to mean
  // something: a generator that stopped reaching a case must fail too.
  void ExpectEachSeen(uint16_t flags) {
    for (int bit = 0; bit < 6; ++bit) {
      if (flags & (1 << bit)) {
        EXPECT_GE(seen_[bit] * 1000, ops_)
            << what_ << ": exception bit " << bit << " seen " << seen_[bit] << " times in " << ops_;
      }
    }
  }
  void CheckCompare(const FpCompareResult& got, const FpCompareResult& want,
                    const std::string& operands) {
    ++ops_;
    if (got.order == want.order && got.flags == want.flags) return;
    if (++mismatches_ <= 10) {
      ADD_FAILURE() << what_ << " " << operands << ": got order " << int(got.order) << " flags "
                    << got.flags << ", want order " << int(want.order) << " flags " << want.flags;
    }
  }

 private:
  std::string what_;
  uint64_t ops_ = 0;
  uint64_t mismatches_ = 0;
  uint64_t seen_[6] = {};
};

// Seeded operands aimed at the hard cases: every encoding class, exponents at the edges of the
// range, significands with long runs, few bits, or bit patterns right at a rounding boundary.
class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}

  uint64_t Bits() { return rng_(); }
  int Below(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }

  uint16_t ControlWord() {
    static constexpr Precision kPcs[] = {Precision::k24, Precision::k53, Precision::k64};
    const Precision pc = Below(16) == 0 ? Precision::kReserved : kPcs[Below(3)];
    const uint16_t masks = Below(100) < 80 ? kExAll : static_cast<uint16_t>(Bits() & kExAll);
    return MakeControlWord(pc, static_cast<Rounding>(Below(4)), masks);
  }

  // A significand; bit 63 is the caller's business. p: the precision whose rounding boundary the
  // near-halfway patterns aim at.
  uint64_t Significand(int p) {
    switch (Below(7)) {
      case 0:
      case 1:
        return Bits();
      case 2: {  // few significant bits: products and quotients that are exact or exactly halfway
        const int k = 1 + Below(64);
        const uint64_t v = (Bits() | 1) & (k == 64 ? ~0ull : ((1ull << k) - 1));
        return (v | (1ull << (k - 1))) << (64 - k);
      }
      case 3: {  // runs of ones and zeros
        uint64_t v = Below(2) ? ~0ull : 0;
        for (int i = Below(3); i >= 0; --i) {
          const int lo = Below(64), len = 1 + Below(64 - lo);
          v ^= (len == 64 ? ~0ull : ((1ull << len) - 1)) << lo;
        }
        return v;
      }
      case 4:
      case 5: {                  // at or next to the halfway point below precision p
        const int pos = 64 - p;  // bits below the last kept one
        uint64_t v = Bits();
        if (pos == 0) return v;
        const uint64_t low = pos == 64 ? ~0ull : (1ull << pos) - 1;
        const uint64_t half = 1ull << (pos - 1);
        static constexpr int kDelta[] = {0, 1, -1, 2, -2};
        return (v & ~low) | ((half + kDelta[Below(5)]) & low);
      }
      default: {
        static constexpr uint64_t kEdges[] = {
            0x8000000000000000, 0xFFFFFFFFFFFFFFFF, 0x8000000000000001, 0xFFFFFFFFFFFFFFFE,
            0xC000000000000000, 0xAAAAAAAAAAAAAAAA, 0x8000010000000000, 0xFFFFFF0000000000,
            0x8000000000000800, 0xFFFFFFFFFFFFF800};
        return kEdges[Below(10)];
      }
    }
  }

  int Exponent() {
    const int q = Below(100);
    if (q < 35) return 16383 - 64 + Below(129);
    if (q < 50) return 1 + Below(140);
    if (q < 65) return 0x7FFE - Below(140);
    return 1 + Below(0x7FFE);
  }

  // Any encoding. exp_hint >= 0: a normal operand's exponent is drawn near it half of the time.
  Float80 Operand(int p, int exp_hint = -1) {
    const bool sign = Below(2);
    const int r = Below(100);
    const uint64_t low62 = (1ull << 62) - 1;
    if (r < 3) return MakeFloat80(sign, 0, 0);
    if (r < 6) return MakeFloat80(sign, 0x7FFF, 1ull << 63);
    if (r < 9) return MakeFloat80(sign, 0x7FFF, 0xC000000000000000 | (Significand(p) & low62));
    if (r < 12) {
      uint64_t s = Significand(p) & low62;
      return MakeFloat80(sign, 0x7FFF, (1ull << 63) | (s ? s : 1));
    }
    if (r < 14) {
      switch (Below(4)) {
        case 0:  // pseudo-NaN
          return MakeFloat80(sign, 0x7FFF, (Significand(p) & ~(1ull << 63)) | 1);
        case 1:  // pseudo-infinity
          return MakeFloat80(sign, 0x7FFF, 0);
        case 2:  // unnormal
          return MakeFloat80(sign, static_cast<uint16_t>(Exponent()),
                             Significand(p) & ~(1ull << 63));
        default:  // pseudo-zero
          return MakeFloat80(sign, static_cast<uint16_t>(Exponent()), 0);
      }
    }
    if (r < 21) {  // denormal
      const uint64_t s = Significand(p) >> (1 + Below(63));
      return MakeFloat80(sign, 0, s ? s : 1);
    }
    if (r < 23) return MakeFloat80(sign, 0, Significand(p) | (1ull << 63));  // pseudo-denormal
    int e = Exponent();
    if (exp_hint >= 0 && Below(2)) {
      e = exp_hint + (Below(2) ? Below(7) - 3 : Below(141) - 70);
      e = e < 1 ? 1 : e > 0x7FFE ? 0x7FFE : e;
    }
    return MakeFloat80(sign, static_cast<uint16_t>(e), Significand(p) | (1ull << 63));
  }

  // An exponent that puts a product (or quotient) next to overflow, underflow or the bottom of
  // the denormal range.
  int ResultTarget() {
    switch (Below(3)) {
      case 0:
        return 0x7FFE + Below(5) - 2;
      case 1:
        return 1 + Below(5) - 2;
      default:
        return -Below(70);
    }
  }

 private:
  std::mt19937_64 rng_;
};

int Bits(uint16_t cw) { return SignificandBits(PrecisionOf(cw)); }

void RunBinary(BinaryOp op, uint64_t seed, int n) {
  static constexpr const char* kNames[] = {"add", "sub", "mul", "div"};
  Checker check(kNames[int(op)]);
  Gen g(seed);
  for (int i = 0; i < n; ++i) {
    const uint16_t cw = g.ControlWord();
    const int p = Bits(cw);
    Float80 a = g.Operand(p);
    if ((op == BinaryOp::kAdd || op == BinaryOp::kSub) && Classify(a) == F80Class::kNormal &&
        g.Below(16) == 0) {
      a.sign_exp |= 0x7FFE;  // both operands at the top of the range: the sum may overflow
    }
    int hint = a.exponent();
    if (op == BinaryOp::kMul && g.Below(3) == 0) hint = g.ResultTarget() - a.exponent() + 16383;
    if (op == BinaryOp::kDiv && g.Below(3) == 0) hint = a.exponent() - g.ResultTarget() + 16383;
    Float80 b = g.Operand(p, hint);
    Float80 a2 = a;
    if (op == BinaryOp::kDiv && p < 64 && g.Below(5) == 0) {
      // a = b * q with q one bit longer than p and odd: the quotient is exactly halfway, or
      // (a nudged by one) right next to it.
      const int kb = 1 + g.Below(63 - p);
      const uint64_t bs = (g.Bits() | 1 | (1ull << (kb - 1))) & ((1ull << kb) - 1);
      const uint64_t q = (g.Bits() | 1 | (1ull << p)) & ((1ull << (p + 1)) - 1);
      uint64_t prod = bs * q + static_cast<uint64_t>(g.Below(3) - 1);
      if (prod != 0) {
        const int la = __builtin_clzll(prod), lb = __builtin_clzll(bs);
        a2 = MakeFloat80(a.sign(), static_cast<uint16_t>(16383 + g.Below(200) - 100), prod << la);
        b = MakeFloat80(b.sign(), static_cast<uint16_t>(16383 + g.Below(200) - 100), bs << lb);
      }
    }
    FpResult got;
    switch (op) {
      case BinaryOp::kAdd:
        got = Add(a2, b, cw);
        break;
      case BinaryOp::kSub:
        got = Sub(a2, b, cw);
        break;
      case BinaryOp::kMul:
        got = Mul(a2, b, cw);
        break;
      case BinaryOp::kDiv:
        got = Div(a2, b, cw);
        break;
    }
    check.Check(got, reference::Binary(op, a2, b, cw),
                absl::StrFormat("%s %s cw=%04X", Hex(a2), Hex(b), cw));
  }
  check.ExpectEachSeen(op == BinaryOp::kDiv ? kExAll : kExAll & ~kExZeroDivide);
}

void RunSqrt(uint64_t seed, int n) {
  Checker check("sqrt");
  Gen g(seed);
  for (int i = 0; i < n; ++i) {
    const uint16_t cw = g.ControlWord();
    const int p = Bits(cw);
    Float80 a = g.Operand(p);
    if (g.Below(4) == 0) {
      // The square of a (p+1)-bit odd root, maybe nudged: the root is exactly halfway or next
      // to it (representable when the square fits in 64 bits).
      const int k = 1 + g.Below(32);
      const uint64_t root = (g.Bits() | 1 | (1ull << (k - 1))) & ((1ull << k) - 1);
      const uint64_t sq = root * root + static_cast<uint64_t>(g.Below(3) - 1);
      if (sq != 0) {
        const int lz = __builtin_clzll(sq);
        // Keep the exponent parity of the integer square.
        a = MakeFloat80(false, static_cast<uint16_t>(16383 + 63 - lz + 2 * (g.Below(200) - 100)),
                        sq << lz);
      }
    }
    check.Check(Sqrt(a, cw), reference::Sqrt(a, cw), absl::StrFormat("%s cw=%04X", Hex(a), cw));
  }
  check.ExpectEachSeen(kExInvalid | kExDenormal | kExPrecision);
}

// A value of integer size, for the conversions to integers and BCD.
Float80 IntegerRange(Gen& g, int p) {
  if (g.Below(4) == 0) return g.Operand(p);
  const int e = 16383 - 3 + g.Below(70);
  Float80 x = MakeFloat80(g.Below(2), static_cast<uint16_t>(e), g.Significand(p) | (1ull << 63));
  if (g.Below(4) == 0) {             // exactly k + 1/2 or an integer
    const int lsb = 16383 + 63 - e;  // bit of weight 1
    if (lsb > 0 && lsb < 64) {
      x.signif &= ~((1ull << lsb) - 1);
      if (g.Below(2)) x.signif |= 1ull << (lsb - 1);
    }
  }
  return x;
}

void RunToInt(uint64_t seed, int n) {
  Checker check("fist");
  Gen g(seed);
  for (int i = 0; i < n; ++i) {
    const uint16_t cw = g.ControlWord();
    const Float80 a = IntegerRange(g, 64);
    const std::string ops = absl::StrFormat("%s cw=%04X", Hex(a), cw);
    const FpStore<int64_t> w16 = reference::ToInt(a, 16, cw);
    const FpStore<int16_t> g16 = ToInt16(a, cw);
    check.Check(FpStore<int64_t>{g16.value, g16.flags, g16.c1, g16.store}, w16, ops + " m16");
    const FpStore<int32_t> g32 = ToInt32(a, cw);
    check.Check(FpStore<int64_t>{g32.value, g32.flags, g32.c1, g32.store},
                reference::ToInt(a, 32, cw), ops + " m32");
    check.Check(ToInt64(a, cw), reference::ToInt(a, 64, cw), ops + " m64");
  }
  check.ExpectEachSeen(kExInvalid | kExPrecision);
}

void RunToBcd(uint64_t seed, int n) {
  Checker check("fbstp");
  Gen g(seed);
  for (int i = 0; i < n; ++i) {
    const uint16_t cw = g.ControlWord();
    const Float80 a = IntegerRange(g, 64);
    check.Check(ToBcd(a, cw), reference::ToBcd(a, cw), absl::StrFormat("%s cw=%04X", Hex(a), cw));
  }
  check.ExpectEachSeen(kExInvalid | kExPrecision);
}

void RunFromBcd(uint64_t seed, int n) {
  Checker check("fbld");
  Gen g(seed);
  for (int i = 0; i < n; ++i) {
    PackedBcd bcd{};
    const int digits = g.Below(19);
    for (int d = 0; d < digits; ++d)
      bcd[d / 2] |= static_cast<uint8_t>(g.Below(10) << (4 * (d % 2)));
    bcd[9] = static_cast<uint8_t>(g.Bits() & 0xFF);  // bits 6..0 are ignored
    FpResult got, want;
    got.value = FromBcd(bcd);
    want.value = reference::FromBcd(bcd);
    check.Check(got, want, Show(bcd));
  }
}

void RunFrndint(uint64_t seed, int n) {
  Checker check("frndint");
  Gen g(seed);
  for (int i = 0; i < n; ++i) {
    const uint16_t cw = g.ControlWord();
    const Float80 a = IntegerRange(g, 64);
    check.Check(RoundToInteger(a, cw), reference::RoundToInteger(a, cw),
                absl::StrFormat("%s cw=%04X", Hex(a), cw));
  }
  check.ExpectEachSeen(kExInvalid | kExDenormal | kExPrecision);
}

void RunToIeee(bool single, uint64_t seed, int n) {
  Checker check(single ? "fst m32" : "fst m64");
  Gen g(seed);
  const int p = single ? 24 : 53;
  const int emax = single ? 127 : 1023;
  for (int i = 0; i < n; ++i) {
    const uint16_t cw = g.ControlWord();
    Float80 a = g.Operand(p);
    if (g.Below(3) != 0 && Classify(a) == F80Class::kNormal) {
      // Around the format's overflow, normal and denormal boundaries.
      static constexpr int kEdge[] = {0, 1, 2};
      const int edge = kEdge[g.Below(3)];
      const int e = edge == 0 ? emax : edge == 1 ? 1 - emax : 1 - emax - p;
      a.sign_exp = static_cast<uint16_t>((a.sign_exp & 0x8000) | (16383 + e + g.Below(7) - 3));
    }
    const std::string ops = absl::StrFormat("%s cw=%04X", Hex(a), cw);
    if (single) {
      const FpStore<uint32_t> s = ToFloat32(a, cw);
      check.Check(FpStore<uint64_t>{s.value, s.flags, s.c1, s.store},
                  reference::ToIeee(a, true, cw), ops);
    } else {
      check.Check(ToFloat64(a, cw), reference::ToIeee(a, false, cw), ops);
    }
  }
  check.ExpectEachSeen(kExInvalid | kExOverflow | kExUnderflow | kExPrecision);
}

void RunFromIeee(bool single, uint64_t seed, int n) {
  Checker check(single ? "fld m32" : "fld m64");
  Gen g(seed);
  for (int i = 0; i < n; ++i) {
    const uint16_t cw = g.ControlWord();
    uint64_t bits = g.Bits();
    const int frac_bits = single ? 23 : 52;
    const uint64_t exp_max = single ? 0xFF : 0x7FF;
    switch (g.Below(4)) {  // force the zero/denormal and infinity/NaN exponents often
      case 0:
        bits &= ~(exp_max << frac_bits);
        if (g.Below(8) == 0) bits &= ~((1ull << frac_bits) - 1);
        break;
      case 1:
        bits |= exp_max << frac_bits;
        if (g.Below(4) == 0) bits &= ~((1ull << frac_bits) - 1);
        break;
      default:
        break;
    }
    if (single) bits &= 0xFFFFFFFF;
    const FpResult got =
        single ? FromFloat32(static_cast<uint32_t>(bits), cw) : FromFloat64(bits, cw);
    check.Check(got, reference::FromIeee(bits, single, cw),
                absl::StrFormat("%X cw=%04X", bits, cw));
  }
  check.ExpectEachSeen(kExInvalid | kExDenormal);
}

void RunFromInt(uint64_t seed, int n) {
  Checker check("fild");
  Gen g(seed);
  for (int i = 0; i < n; ++i) {
    const int64_t v = static_cast<int64_t>(g.Bits()) >> g.Below(64);
    FpResult got, want;
    got.value = FromInt64(v);
    want.value = reference::FromInt(v);
    check.Check(got, want, absl::StrFormat("%d", v));
    if (v == static_cast<int16_t>(v)) check.Check(got, FpResult{FromInt16(int16_t(v))}, "m16");
    if (v == static_cast<int32_t>(v)) check.Check(got, FpResult{FromInt32(int32_t(v))}, "m32");
  }
}

void RunCompare(uint64_t seed, int n) {
  Checker check("fcom");
  Gen g(seed);
  for (int i = 0; i < n; ++i) {
    const Float80 a = g.Operand(64);
    Float80 b = g.Below(4) == 0 ? a : g.Operand(64, a.exponent());
    if (g.Below(8) == 0) b.sign_exp ^= 0x8000;
    const bool quiet = g.Below(2);
    check.CheckCompare(Compare(a, b, quiet), reference::Compare(a, b, quiet),
                       absl::StrFormat("%s %s quiet=%d", Hex(a), Hex(b), quiet));
  }
}

// ---- Known answers ----------------------------------------------------------------------------

constexpr Float80 F(uint16_t se, uint64_t s) { return Float80{s, se}; }
constexpr Float80 kOne = F(0x3FFF, 0x8000000000000000);
constexpr Float80 kTwo = F(0x4000, 0x8000000000000000);
constexpr Float80 kThree = F(0x4000, 0xC000000000000000);
constexpr Float80 kMax = F(0x7FFE, 0xFFFFFFFFFFFFFFFF);
constexpr Float80 kMinNormal = F(0x0001, 0x8000000000000000);
constexpr Float80 kMinDenormal = F(0x0000, 0x0000000000000001);

uint16_t Cw(Precision pc, Rounding rc, uint16_t masks = kExAll) {
  return MakeControlWord(pc, rc, masks);
}

TEST(X87Known, OneThirdInEachPrecision) {
  struct Case {
    Precision pc;
    Rounding rc;
    uint64_t signif;
    bool c1;
  };
  const Case cases[] = {
      {Precision::k64, Rounding::kNearest, 0xAAAAAAAAAAAAAAAB, true},
      {Precision::k64, Rounding::kDown, 0xAAAAAAAAAAAAAAAA, false},
      {Precision::k53, Rounding::kNearest, 0xAAAAAAAAAAAAA800, false},
      {Precision::k53, Rounding::kUp, 0xAAAAAAAAAAAAB000, true},
      {Precision::k24, Rounding::kNearest, 0xAAAAAB0000000000, true},
      {Precision::k24, Rounding::kZero, 0xAAAAAA0000000000, false},
  };
  for (const Case& c : cases) {
    const FpResult r = Div(kOne, kThree, Cw(c.pc, c.rc));
    EXPECT_EQ(Hex(r.value), Hex(F(0x3FFD, c.signif))) << int(c.pc) << " " << int(c.rc);
    EXPECT_EQ(r.flags, kExPrecision);
    EXPECT_EQ(r.c1, c.c1);
  }
}

TEST(X87Known, SquareRootOfTwo) {
  const FpResult rn = Sqrt(kTwo, kDefaultControlWord);
  EXPECT_EQ(Hex(rn.value), Hex(F(0x3FFF, 0xB504F333F9DE6484)));
  EXPECT_EQ(rn.flags, kExPrecision);
  EXPECT_FALSE(rn.c1);
  EXPECT_EQ(Sqrt(kTwo, Cw(Precision::k64, Rounding::kUp)).value, F(0x3FFF, 0xB504F333F9DE6485));
  EXPECT_EQ(Sqrt(F(0x4001, 0x8000000000000000), kDefaultControlWord).value, kTwo);  // sqrt(4)
  EXPECT_EQ(Sqrt(F(0x4001, 0x8000000000000000), kDefaultControlWord).flags, 0);
  EXPECT_EQ(Sqrt(F(0x8000, 0), kDefaultControlWord).value, F(0x8000, 0));  // sqrt(-0) = -0
  EXPECT_EQ(Sqrt(F(0xBFFF, 0x8000000000000000), kDefaultControlWord).value, kRealIndefinite);
}

TEST(X87Known, SmallestDenormal) {
  // min normal * 2^-63 is exactly the smallest denormal: no underflow without inexactness.
  const FpResult exact = Mul(kMinNormal, F(0x3FC0, 0x8000000000000000), kDefaultControlWord);
  EXPECT_EQ(exact.value, kMinDenormal);
  EXPECT_EQ(exact.flags, 0);
  // Half of it ties to even (zero) under round to nearest, and rounds up to it under round up.
  const FpResult half = Div(kMinDenormal, kTwo, kDefaultControlWord);
  EXPECT_EQ(half.value, F(0x0000, 0));
  EXPECT_EQ(half.flags, kExDenormal | kExUnderflow | kExPrecision);
  EXPECT_FALSE(half.c1);
  const FpResult up = Div(kMinDenormal, kTwo, Cw(Precision::k64, Rounding::kUp));
  EXPECT_EQ(up.value, kMinDenormal);
  EXPECT_TRUE(up.c1);
  // With PC=24, the denormal's last bit is 2^-16405: 2^-16406 ties to zero.
  EXPECT_EQ(
      Mul(kMinNormal, F(0x3FFF - 24, 0x8000000000000000), Cw(Precision::k24, Rounding::kNearest))
          .value,
      F(0, 0));
  EXPECT_EQ(
      Mul(kMinNormal, F(0x3FFF - 23, 0x8000000000000000), Cw(Precision::k24, Rounding::kNearest))
          .value,
      F(0, 0x0000010000000000));
  // Unmasked underflow to a register: the exact tiny result, exponent biased up by 24576.
  const FpResult wrapped =
      Div(kMinDenormal, kTwo, Cw(Precision::k64, Rounding::kNearest, kExAll & ~kExUnderflow));
  EXPECT_EQ(wrapped.value, F(static_cast<uint16_t>(-16446 + 24576 + 16383), 0x8000000000000000));
  EXPECT_EQ(wrapped.flags, kExDenormal | kExUnderflow);
}

TEST(X87Known, OverflowPerRoundingMode) {
  struct Case {
    Rounding rc;
    bool negative;
    Float80 want;
    bool c1;
  };
  const Float80 inf = kF80Infinity;
  const Case cases[] = {
      {Rounding::kNearest, false, inf, true},
      {Rounding::kZero, false, kMax, false},
      {Rounding::kUp, false, inf, true},
      {Rounding::kDown, false, kMax, false},
      {Rounding::kDown, true, F(0xFFFF, 1ull << 63), true},
      {Rounding::kUp, true, F(0xFFFE, ~0ull), false},
  };
  for (const Case& c : cases) {
    const Float80 a = c.negative ? F(0xFFFE, ~0ull) : kMax;
    const FpResult r = Mul(a, kTwo, Cw(Precision::k64, c.rc));
    EXPECT_EQ(Hex(r.value), Hex(c.want)) << int(c.rc);
    EXPECT_EQ(r.flags, kExOverflow | kExPrecision);
    EXPECT_EQ(r.c1, c.c1);
  }
  // The largest finite value at PC=24 keeps the extended exponent.
  EXPECT_EQ(Mul(kMax, kTwo, Cw(Precision::k24, Rounding::kZero)).value,
            F(0x7FFE, 0xFFFFFF0000000000));
  // Unmasked overflow: max^2 with the exponent biased down by 24576.
  const FpResult w = Mul(kMax, kMax, Cw(Precision::k64, Rounding::kNearest, kExAll & ~kExOverflow));
  EXPECT_EQ(Hex(w.value), Hex(F(0x5FFE, 0xFFFFFFFFFFFFFFFE)));
  EXPECT_EQ(w.flags, kExOverflow | kExPrecision);
  // To memory, unmasked overflow stores nothing.
  EXPECT_FALSE(
      ToFloat32(kMax, Cw(Precision::k64, Rounding::kNearest, kExAll & ~kExOverflow)).store);
}

TEST(X87Known, NaNRules) {
  const Float80 q1 = F(0x7FFF, 0xC000000000000001);
  const Float80 q2 = F(0xFFFF, 0xC000000000000002);
  const Float80 s1 = F(0x7FFF, 0xA000000000000000);
  const uint16_t cw = kDefaultControlWord;
  EXPECT_EQ(Add(q1, s1, cw).value, q1);  // QNaN beats SNaN
  EXPECT_EQ(Add(q1, s1, cw).flags, kExInvalid);
  EXPECT_EQ(Add(q1, q2, cw).value, q2);  // larger significand
  EXPECT_EQ(Add(q1, q2, cw).flags, 0);
  EXPECT_EQ(Mul(s1, kOne, cw).value, F(0x7FFF, 0xE000000000000000));  // quieted
  EXPECT_EQ(Sub(kOne, F(0xFFFF, 0xC000000000000001), cw).value, F(0xFFFF, 0xC000000000000001));
  EXPECT_EQ(Add(F(0xFFFF, 0xC000000000000001), q1, cw).value, q1);  // tie: positive
  EXPECT_EQ(Div(q1, F(0, 0), cw).flags, 0);  // a QNaN outranks the zero divide
  EXPECT_EQ(Add(kF80Infinity, F(0xFFFF, 1ull << 63), cw).value, kRealIndefinite);
  EXPECT_FALSE(Add(s1, kOne, Cw(Precision::k64, Rounding::kNearest, kExAll & ~kExInvalid)).store);
}

TEST(X87Known, UnsupportedEncodings) {
  const uint16_t cw = kDefaultControlWord;
  const Float80 pseudo_nan = F(0x7FFF, 0x4000000000000001);
  const Float80 pseudo_inf = F(0x7FFF, 0);
  const Float80 unnormal = F(0x4000, 0x4000000000000000);
  const Float80 pseudo_denormal = F(0x0000, 0x8000000000000000);
  EXPECT_EQ(Classify(pseudo_nan), F80Class::kPseudoNaN);
  EXPECT_EQ(Classify(pseudo_inf), F80Class::kPseudoInfinity);
  EXPECT_EQ(Classify(unnormal), F80Class::kUnnormal);
  EXPECT_EQ(Classify(F(0x4000, 0)), F80Class::kUnnormal);  // pseudo-zero
  EXPECT_EQ(Classify(pseudo_denormal), F80Class::kPseudoDenormal);
  for (const Float80 x : {pseudo_nan, pseudo_inf, unnormal}) {
    EXPECT_EQ(Add(x, kOne, cw).value, kRealIndefinite);
    EXPECT_EQ(Add(x, F(0x7FFF, 0xC000000000000001), cw).flags, kExInvalid);
    EXPECT_EQ(ToInt32(x, cw).value, INT32_MIN);
    EXPECT_EQ(ToFloat64(x, cw).value, 0xFFF8000000000000u);
    EXPECT_EQ(Compare(x, kOne, /*quiet=*/true).order, FpOrder::kUnordered);
    EXPECT_EQ(Compare(x, kOne, true).flags, kExInvalid);
  }
  // The pseudo-denormal is accepted as 2^-16382, a denormal operand.
  const FpResult r = Add(pseudo_denormal, F(0, 0), cw);
  EXPECT_EQ(r.value, kMinNormal);
  EXPECT_EQ(r.flags, kExDenormal);
  EXPECT_EQ(Compare(pseudo_denormal, kMinNormal, false).order, FpOrder::kEqual);
}

TEST(X87Known, Conversions) {
  const uint16_t rn = kDefaultControlWord;
  EXPECT_EQ(ToInt16(F(0x4000, 0xA000000000000000), rn).value, 2);   // 2.5 -> 2
  EXPECT_EQ(ToInt16(F(0xC000, 0xE000000000000000), rn).value, -4);  // -3.5 -> -4
  const FpStore<int16_t> big = ToInt16(FromInt32(32768), rn);
  EXPECT_EQ(big.value, INT16_MIN);
  EXPECT_EQ(big.flags, kExInvalid);
  EXPECT_EQ(ToInt16(FromInt32(-32768), rn).flags, 0);
  EXPECT_EQ(FromInt64(INT64_MIN), F(0xC03E, 0x8000000000000000));
  EXPECT_EQ(FromInt16(0), F(0, 0));
  EXPECT_EQ(FromFloat32(0x3F800000, rn).value, kOne);
  EXPECT_EQ(FromFloat32(0x00000001, rn).value, F(16383 - 149, 1ull << 63));  // denormal
  EXPECT_EQ(FromFloat32(0x00000001, rn).flags, kExDenormal);
  EXPECT_EQ(FromFloat32(0x7F800001, rn).value, F(0x7FFF, 0xC000010000000000));  // SNaN quieted
  EXPECT_EQ(ToFloat64(kOne, rn).value, 0x3FF0000000000000u);
  EXPECT_EQ(ToFloat32(F(0x3FFD, 0xAAAAAAAAAAAAAAAB), rn).value, 0x3EAAAAABu);
  EXPECT_EQ(ToFloat32(kMinNormal, rn).value, 0u);
  EXPECT_EQ(ToFloat32(kMinNormal, rn).flags, kExUnderflow | kExPrecision);
  const PackedBcd bcd = {0x21, 0x43, 0x65, 0x87, 0x09, 0, 0, 0, 0, 0x80};
  EXPECT_EQ(FromBcd(bcd), FromInt64(-987654321));
  EXPECT_EQ(ToBcd(FromInt64(-987654321), rn).value, bcd);
  EXPECT_EQ(ToBcd(FromInt64(1000000000000000000), rn).value, kBcdIndefinite);
  const FpStore<PackedBcd> neg_zero = ToBcd(F(0xBFFD, 1ull << 63), rn);  // -0.25
  EXPECT_EQ(neg_zero.value, (PackedBcd{0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80}));
  EXPECT_EQ(RoundToInteger(F(0x3FFE, 0xC000000000000000), rn).value, kOne);  // 0.75 -> 1
  EXPECT_TRUE(RoundToInteger(F(0x3FFE, 0xC000000000000000), rn).c1);
  EXPECT_EQ(RoundToInteger(F(0xBFFD, 1ull << 63), rn).value, F(0x8000, 0));  // -0.25 -> -0
  EXPECT_EQ(ConditionCodes(Compare(kOne, kTwo, false).order), kSwC0);
  EXPECT_EQ(ConditionCodes(Compare(F(0x8000, 0), F(0, 0), false).order), kSwC3);
  EXPECT_EQ(Compare(F(0x7FFF, 0xC000000000000000), kOne, false).flags, kExInvalid);
  EXPECT_EQ(Compare(F(0x7FFF, 0xC000000000000000), kOne, true).flags, 0);
}

// ---- FPREM/FPREM1 and FSCALE against MPFR on finite operands ---------------------------------

// The exact value of a finite encoding (denormals and pseudo-denormals included).
void ToMpfr(mpfr_t out, Float80 x) {
  const long e = x.exponent() == 0 ? 1 : x.exponent();
  mpfr_set_uj_2exp(out, x.signif, e - 16383 - 63, MPFR_RNDN);  // 64 bits: exact
  if (x.sign()) mpfr_neg(out, out, MPFR_RNDN);
}

bool FiniteNonzero(Float80 x) {
  const F80Class c = Classify(x);
  return c == F80Class::kNormal || c == F80Class::kDenormal || c == F80Class::kPseudoDenormal;
}

// Complete remainders (exponent difference below 64) must equal MPFR's exact fmod/remainder, with
// the quotient's low three bits; a partial one must leave a value congruent to the dividend
// modulo the divisor, smaller in magnitude, with the dividend's sign.
void RunRemainder(bool ieee, uint64_t seed, int n) {
  Gen g(seed);
  mpfr_t a, b, want, got, t;
  mpfr_inits2(64, a, b, want, got, static_cast<mpfr_ptr>(nullptr));
  mpfr_init2(t, 33000);  // x - remainder exactly, across the whole exponent range
  int complete = 0, partial = 0, mismatches = 0;
  for (int i = 0; i < n && mismatches < 10; ++i) {
    const Float80 x = g.Operand(64);
    const Float80 y = g.Operand(64, x.exponent() - (g.Below(4) == 0 ? g.Below(200) : g.Below(64)));
    if (!FiniteNonzero(x) || !FiniteNonzero(y)) continue;
    const FpRemainder r = Remainder(x, y, kDefaultControlWord, ieee);
    ToMpfr(a, x);
    ToMpfr(b, y);
    ToMpfr(got, r.result.value);
    const std::string what = absl::StrFormat("%s %s %s", ieee ? "fprem1" : "fprem", Hex(x), Hex(y));
    if (r.partial) {
      ++partial;
      // (x - got) / y must be an integer: check with the remainder of the difference.
      mpfr_sub(t, a, got, MPFR_RNDN);  // exact at this precision
      mpfr_fmod(t, t, b, MPFR_RNDN);
      const bool ok = mpfr_zero_p(t) && mpfr_cmpabs(got, a) < 0 &&
                      (mpfr_zero_p(got) || mpfr_signbit(got) == mpfr_signbit(a));
      if (!ok) {
        ++mismatches;
        ADD_FAILURE() << what << ": partial remainder " << Hex(r.result.value);
      }
      continue;
    }
    ++complete;
    long q = 0;
    if (ieee) {
      mpfr_remquo(want, &q, a, b, MPFR_RNDN);
    } else {
      mpfr_fmodquo(want, &q, a, b, MPFR_RNDN);
    }
    const bool same = mpfr_equal_p(want, got) && mpfr_signbit(want) == mpfr_signbit(got) &&
                      r.quotient == (static_cast<unsigned long>(q < 0 ? -q : q) & 7) &&
                      (r.result.flags & ~kExDenormal) == 0;
    if (!same) {
      ++mismatches;
      ADD_FAILURE() << what << ": got " << Hex(r.result.value) << " q " << int{r.quotient}
                    << " flags " << r.result.flags << ", MPFR quotient bits " << (q & 7);
    }
  }
  EXPECT_GT(complete, n / 10);
  EXPECT_GT(partial, n / 100);
  mpfr_clears(a, b, want, got, t, static_cast<mpfr_ptr>(nullptr));
}

// FSCALE whose result stays normal is exact: x * 2^trunc(y).
void RunScale(uint64_t seed, int n) {
  Gen g(seed);
  mpfr_t a, want, got;
  mpfr_inits2(64, a, want, got, static_cast<mpfr_ptr>(nullptr));
  int checked = 0, mismatches = 0;
  for (int i = 0; i < n && mismatches < 10; ++i) {
    const Float80 x = g.Operand(64);
    const int32_t k = g.Below(40000) - 20000;
    // Build y exactly as |k| + 1/4 with its sign.
    const uint64_t mag = static_cast<uint64_t>(k < 0 ? -k : k);
    Float80 y;
    if (mag == 0) {
      y = Float80{0x8000000000000000, 0x3FFD};  // 0.25
    } else {
      const int top = 63 - __builtin_clzll(mag);  // weight of mag's leading bit
      const uint64_t fixed = (mag << 2) | 1;      // mag + 1/4 in units of 1/4
      y = MakeFloat80(k < 0, static_cast<uint16_t>(16383 + top), fixed << (61 - top));
    }
    if (Classify(x) != F80Class::kNormal) continue;
    const long e = x.exponent() - 16383 + k;
    if (e < -16382 || e > 16383) continue;
    const FpResult r = Scale(x, y, kDefaultControlWord);
    ToMpfr(a, x);
    mpfr_mul_2si(want, a, k, MPFR_RNDN);
    ToMpfr(got, r.value);
    ++checked;
    if (!mpfr_equal_p(want, got) || mpfr_signbit(want) != mpfr_signbit(got) || r.flags != 0) {
      ++mismatches;
      ADD_FAILURE() << "fscale " << Hex(x) << " by " << k << " (" << Hex(y) << "): got "
                    << Hex(r.value) << " flags " << r.flags;
    }
  }
  EXPECT_GT(checked, n / 5);
  mpfr_clears(a, want, got, static_cast<mpfr_ptr>(nullptr));
}

TEST(X87Sample, Remainder) { RunRemainder(false, 16, kSampleOps); }
TEST(X87Sample, Remainder1) { RunRemainder(true, 17, kSampleOps); }
TEST(X87Sample, Scale) { RunScale(18, kSampleOps); }

// ---- Transcendentals against MPFR, correctly rounded to 64 bits
// ----------------------------------

enum class Tf { kF2xm1, kFyl2x, kFyl2xp1, kFpatan, kSin, kCos, kTan };

Float80 Normal(Gen& g, int lo, int hi) {
  return MakeFloat80(g.Below(2), static_cast<uint16_t>(16383 + lo + g.Below(hi - lo + 1)),
                     g.Significand(64) | (1ull << 63));
}

void RunTranscendental(Tf f, uint64_t seed, int n) {
  Gen g(seed);
  mpfr_t x, y, t, want, ln2;
  mpfr_inits2(1000, x, y, t, ln2, static_cast<mpfr_ptr>(nullptr));
  mpfr_init2(want, 64);
  mpfr_const_log2(ln2, MPFR_RNDN);
  int checked = 0, mismatches = 0, unmodelled = 0;
  for (int i = 0; i < n && mismatches < 10; ++i) {
    static constexpr Rounding kRc[] = {Rounding::kNearest, Rounding::kDown, Rounding::kUp,
                                       Rounding::kZero};
    const Rounding rc = kRc[g.Below(4)];
    const uint16_t cw = MakeControlWord(Precision::k64, rc);
    const mpfr_rnd_t rnd = rc == Rounding::kNearest ? MPFR_RNDN
                           : rc == Rounding::kDown  ? MPFR_RNDD
                           : rc == Rounding::kUp    ? MPFR_RNDU
                                                    : MPFR_RNDZ;
    Float80 a{}, b{};
    FpTranscendental got;
    // A single MPFR function rounds straight to 64 bits (its ternary value is exact even when the
    // result is a hair from a representable value); a composition goes through 1000 bits first.
    std::optional<int> direct;
    switch (f) {
      case Tf::kF2xm1:
        a = Normal(g, -80, -1);
        got = Exp2Minus1(a, cw);
        ToMpfr(x, a);
        mpfr_mul(t, x, ln2, MPFR_RNDN);
        mpfr_expm1(t, t, MPFR_RNDN);
        break;
      case Tf::kFyl2x:
        a = Normal(g, -16000, 16000);
        a.sign_exp &= 0x7FFF;
        b = Normal(g, -1000, 1000);
        got = YLog2X(b, a, cw);
        ToMpfr(x, a);
        ToMpfr(y, b);
        mpfr_log2(t, x, MPFR_RNDN);
        mpfr_mul(t, t, y, MPFR_RNDN);
        break;
      case Tf::kFyl2xp1:
        a = Normal(g, -200, -3);
        b = Normal(g, -1000, 1000);
        got = YLog2XPlus1(b, a, cw);
        ToMpfr(x, a);
        ToMpfr(y, b);
        mpfr_log1p(t, x, MPFR_RNDN);
        mpfr_div(t, t, ln2, MPFR_RNDN);
        mpfr_mul(t, t, y, MPFR_RNDN);
        break;
      case Tf::kFpatan:
        a = Normal(g, -100, 100);
        b = g.Below(4) == 0 ? Normal(g, -3000, 3000) : Normal(g, -100, 100);
        if (g.Below(8) == 0) {  // a ratio exactly at a rounding boundary, far below 1
          b = MakeFloat80(g.Below(2), static_cast<uint16_t>(a.exponent() - 200 - g.Below(2000)),
                          0xFFFFFFFFFFFFFFFF);
          a = MakeFloat80(false, a.exponent(), 0xAAAAAAAAAAAAAAAA);
        }
        got = Atan2(b, a, cw);
        ToMpfr(x, a);
        ToMpfr(y, b);
        direct = mpfr_atan2(want, y, x, rnd);
        break;
      default:
        a = g.Below(8) == 0 ? Normal(g, -16382, -100) : Normal(g, -70, 62);
        got = Trig(f == Tf::kSin   ? TrigFunction::kSin
                   : f == Tf::kCos ? TrigFunction::kCos
                                   : TrigFunction::kTan,
                   a, cw);
        ToMpfr(x, a);
        if (f == Tf::kSin) direct = mpfr_sin(want, x, rnd);
        if (f == Tf::kCos) direct = mpfr_cos(want, x, rnd);
        if (f == Tf::kTan) direct = mpfr_tan(want, x, rnd);
        break;
    }
    if (!got.modelled) {
      if (++unmodelled <= 3) ADD_FAILURE() << "unmodelled: " << Hex(a) << " " << Hex(b);
      continue;
    }
    // Results in the normal range only: the masked underflow and overflow responses are the
    // basic operations' rounding step, checked above.
    const int ternary = direct ? *direct : mpfr_set(want, t, rnd);
    if (mpfr_zero_p(want) || mpfr_get_exp(want) < -16381 || mpfr_get_exp(want) > 16383) continue;
    const bool up = mpfr_signbit(want) ? ternary < 0 : ternary > 0;
    mpfr_t gotv;
    mpfr_init2(gotv, 64);
    ToMpfr(gotv, got.result.value);
    const bool same = mpfr_equal_p(gotv, want) && got.result.c1 == up &&
                      got.result.flags == (ternary != 0 ? kExPrecision : 0) && got.result.store;
    mpfr_clear(gotv);
    ++checked;
    if (!same) {
      ++mismatches;
      ADD_FAILURE() << "function " << int(f) << " " << Hex(a) << " " << Hex(b) << " rc " << int(rc)
                    << ": got " << Hex(got.result.value) << " c1 " << got.result.c1 << " flags "
                    << got.result.flags << ", want " << mpfr_get_ld(want, MPFR_RNDN) << " up "
                    << up;
    }
  }
  EXPECT_EQ(unmodelled, 0);
  EXPECT_GT(checked, n / 2);
  mpfr_clears(x, y, t, want, ln2, static_cast<mpfr_ptr>(nullptr));
}

TEST(X87Transcendental, F2xm1) { RunTranscendental(Tf::kF2xm1, 21, 2000); }
TEST(X87Transcendental, Fyl2x) { RunTranscendental(Tf::kFyl2x, 22, 2000); }
TEST(X87Transcendental, Fyl2xp1) { RunTranscendental(Tf::kFyl2xp1, 23, 2000); }
TEST(X87Transcendental, Fpatan) { RunTranscendental(Tf::kFpatan, 24, 2000); }
TEST(X87Transcendental, Fsin) { RunTranscendental(Tf::kSin, 25, 2000); }
TEST(X87Transcendental, Fcos) { RunTranscendental(Tf::kCos, 26, 2000); }
TEST(X87Transcendental, Fptan) { RunTranscendental(Tf::kTan, 27, 2000); }
// Longer runs of the same (label `differential`, long-test trees only): 100,000 per instruction,
// about 15 s in all.
TEST(X87Differential, Transcendentals) {
  for (int f = 0; f <= static_cast<int>(Tf::kTan); ++f) {
    RunTranscendental(static_cast<Tf>(f), 200 + static_cast<uint64_t>(f), 100000);
  }
}

// ---- Random samples (unit) and the million-operation runs (differential) -----------------------

TEST(X87Sample, Add) { RunBinary(BinaryOp::kAdd, 1, kSampleOps); }
TEST(X87Sample, Sub) { RunBinary(BinaryOp::kSub, 2, kSampleOps); }
TEST(X87Sample, Mul) { RunBinary(BinaryOp::kMul, 3, kSampleOps); }
TEST(X87Sample, Div) { RunBinary(BinaryOp::kDiv, 4, kSampleOps); }
TEST(X87Sample, Sqrt) { RunSqrt(5, kSampleOps); }
TEST(X87Sample, ToInt) { RunToInt(6, kSampleOps); }
TEST(X87Sample, ToBcd) { RunToBcd(7, kSampleOps); }
TEST(X87Sample, FromBcd) { RunFromBcd(8, kSampleOps); }
TEST(X87Sample, RoundToInteger) { RunFrndint(9, kSampleOps); }
TEST(X87Sample, ToFloat32) { RunToIeee(true, 10, kSampleOps); }
TEST(X87Sample, ToFloat64) { RunToIeee(false, 11, kSampleOps); }
TEST(X87Sample, FromFloat32) { RunFromIeee(true, 12, kSampleOps); }
TEST(X87Sample, FromFloat64) { RunFromIeee(false, 13, kSampleOps); }
TEST(X87Sample, FromInt) { RunFromInt(14, kSampleOps); }
TEST(X87Sample, Compare) { RunCompare(15, kSampleOps); }

TEST(X87Differential, Add) { RunBinary(BinaryOp::kAdd, 101, kDifferentialOps); }
TEST(X87Differential, Sub) { RunBinary(BinaryOp::kSub, 102, kDifferentialOps); }
TEST(X87Differential, Mul) { RunBinary(BinaryOp::kMul, 103, kDifferentialOps); }
TEST(X87Differential, Div) { RunBinary(BinaryOp::kDiv, 104, kDifferentialOps); }
TEST(X87Differential, Sqrt) { RunSqrt(105, kDifferentialOps); }
TEST(X87Differential, ToInt) { RunToInt(106, kDifferentialOps); }
TEST(X87Differential, ToBcd) { RunToBcd(107, kDifferentialOps); }
TEST(X87Differential, FromBcd) { RunFromBcd(108, kDifferentialOps); }
TEST(X87Differential, RoundToInteger) { RunFrndint(109, kDifferentialOps); }
TEST(X87Differential, ToFloat32) { RunToIeee(true, 110, kDifferentialOps); }
TEST(X87Differential, ToFloat64) { RunToIeee(false, 111, kDifferentialOps); }
TEST(X87Differential, FromFloat32) { RunFromIeee(true, 112, kDifferentialOps); }
TEST(X87Differential, FromFloat64) { RunFromIeee(false, 113, kDifferentialOps); }
TEST(X87Differential, FromInt) { RunFromInt(114, kDifferentialOps); }
TEST(X87Differential, Compare) { RunCompare(115, kDifferentialOps); }

}  // namespace
}  // namespace citcat::x86
