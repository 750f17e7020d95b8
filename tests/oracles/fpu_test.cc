// Unit tests of the R4400 FPU from the manual rules: register views in both FR modes, control
// registers, each operation in each rounding mode, flags/enables/cause, the Unimplemented
// Operation cases, conversions at their range limits, and the 16 compare conditions.
#include "simcore/mips/fpu.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace citcat::mips {
namespace {

constexpr uint32_t kS = 16, kD = 17, kW = 20, kL = 21;
enum : uint32_t {
  kAdd = 0,
  kSub = 1,
  kMul = 2,
  kDiv = 3,
  kSqrt = 4,
  kAbs = 5,
  kMov = 6,
  kNeg = 7,
  kRoundL = 8,
  kTruncL = 9,
  kCeilL = 10,
  kFloorL = 11,
  kRoundW = 12,
  kTruncW = 13,
  kCeilW = 14,
  kFloorW = 15,
  kCvtS = 32,
  kCvtD = 33,
  kCvtW = 36,
  kCvtL = 37,
  kC = 48,
};

constexpr uint32_t Cop1(uint32_t fmt, uint32_t ft, uint32_t fs, uint32_t fd, uint32_t fn) {
  return (0x11u << 26) | (fmt << 21) | (ft << 16) | (fs << 11) | (fd << 6) | fn;
}

uint64_t D(double v) { return std::bit_cast<uint64_t>(v); }
double AsD(uint64_t v) { return std::bit_cast<double>(v); }
uint32_t S(float v) { return std::bit_cast<uint32_t>(v); }
float AsS(uint32_t v) { return std::bit_cast<float>(v); }

uint32_t Cause(const Fpu& f) { return (f.fcsr() & kFcsrCauseMask) >> kFcsrCauseShift; }
uint32_t Flags(const Fpu& f) { return (f.fcsr() & kFcsrFlagsMask) >> kFcsrFlagsShift; }

constexpr uint32_t kQNanS = 0x7FBFFFFF;  // MIPS legacy default quiet NaN
constexpr uint64_t kQNanD = 0x7FF7FFFFFFFFFFFFull;
constexpr uint32_t kSNanS = 0x7FC00000;  // fraction MSB set: signalling on MIPS
constexpr uint64_t kSNanD = 0x7FF8000000000000ull;

class FpuTest : public ::testing::Test {
 protected:
  FpuTest() { fpu.set_fr(true); }

  // Runs a binary double op f4 = f0 op f2.
  FpuOutcome BinD(uint32_t fn, double a, double b) {
    fpu.WriteDouble(0, D(a));
    fpu.WriteDouble(2, D(b));
    return fpu.Execute(Cop1(kD, 2, 0, 4, fn));
  }
  FpuOutcome BinS(uint32_t fn, float a, float b) {
    fpu.WriteWord(0, S(a));
    fpu.WriteWord(2, S(b));
    return fpu.Execute(Cop1(kS, 2, 0, 4, fn));
  }
  void SetRounding(FpRounding rm) {
    fpu.set_fcsr((fpu.fcsr() & ~kFcsrRoundingMask) | static_cast<uint32_t>(rm));
  }
  void SetEnables(uint32_t e) {
    fpu.set_fcsr((fpu.fcsr() & ~kFcsrEnablesMask) | (e << kFcsrEnablesShift));
  }

  Fpu fpu;
};

// ---- Registers -------------------------------------------------------------------------------

TEST(FpuRegisters, Fr1RegistersAre64Bit) {
  Fpu f;
  f.set_fr(true);
  f.WriteDouble(3, 0x0123456789ABCDEFull);
  EXPECT_EQ(f.ReadDouble(3), 0x0123456789ABCDEFull);
  EXPECT_EQ(f.ReadWord(3), 0x89ABCDEFu);
  f.WriteWord(3, 0x11111111);  // MTC1 keeps the high half
  EXPECT_EQ(f.ReadDouble(3), 0x0123456711111111ull);
  EXPECT_EQ(f.ReadDouble(2), 0u);
}

TEST(FpuRegisters, Fr0PairsEvenOdd) {
  Fpu f;
  EXPECT_FALSE(f.fr());
  f.set_raw_fgr(4, 0xAAAAAAAA00000000ull);
  f.set_raw_fgr(5, 0xBBBBBBBB00000000ull);
  f.WriteDouble(4, 0x0123456789ABCDEFull);
  EXPECT_EQ(f.ReadWord(4), 0x89ABCDEFu);  // low word in the even register
  EXPECT_EQ(f.ReadWord(5), 0x01234567u);  // high word in the odd register
  EXPECT_EQ(f.ReadDouble(4), 0x0123456789ABCDEFull);
  EXPECT_EQ(f.ReadDouble(5), 0x0123456789ABCDEFull);  // odd specifier: bit 0 ignored
  EXPECT_EQ(f.raw_fgr(4), 0xAAAAAAAA89ABCDEFull);     // hidden high halves untouched
  EXPECT_EQ(f.raw_fgr(5), 0xBBBBBBBB01234567ull);
  f.WriteWord(5, 0x3FF00000);
  f.WriteWord(4, 0);
  EXPECT_EQ(AsD(f.ReadDouble(4)), 1.0);
}

TEST(FpuRegisters, ControlRegisters) {
  Fpu f(0x0522);
  EXPECT_EQ(f.ReadControl(0), 0x0522u);
  EXPECT_EQ(f.WriteControl(0, 0xFFFF), FpuOutcome::kOk);  // FCR0 is read-only
  EXPECT_EQ(f.ReadControl(0), 0x0522u);
  EXPECT_EQ(f.ReadControl(5), 0u);
  // Reserved bits 18..22 and 25..31 read as zero.
  EXPECT_EQ(f.WriteControl(31, 0xFFFFFFFF & ~(0x3Fu << 12)), FpuOutcome::kOk);
  EXPECT_EQ(f.ReadControl(31), 0x01800FFFu);
  EXPECT_TRUE(f.condition());
  EXPECT_EQ(f.rounding(), FpRounding::kDown);
  // A cause bit without its enable: no exception.
  EXPECT_EQ(f.WriteControl(31, kFpInexact << kFcsrCauseShift), FpuOutcome::kOk);
  // A cause bit with its enable: FP exception, and the register holds the written value.
  const uint32_t v = (kFpOverflow << kFcsrCauseShift) | (kFpOverflow << kFcsrEnablesShift);
  EXPECT_EQ(f.WriteControl(31, v), FpuOutcome::kFpe);
  EXPECT_EQ(f.ReadControl(31), v);
  // Cause E has no enable and always traps.
  EXPECT_EQ(f.WriteControl(31, kFpUnimplemented << kFcsrCauseShift), FpuOutcome::kFpe);
  f.Reset();
  EXPECT_EQ(f.fcsr(), 0u);
  EXPECT_EQ(f.fir(), 0x0522u);
}

// ---- Arithmetic --------------------------------------------------------------------------------

TEST_F(FpuTest, BasicDoubleArithmetic) {
  fpu.set_fcsr(0x3Fu << kFcsrCauseShift);  // stale cause bits are replaced
  ASSERT_EQ(BinD(kAdd, 1.5, 2.25), FpuOutcome::kOk);
  EXPECT_EQ(AsD(fpu.ReadDouble(4)), 3.75);
  EXPECT_EQ(Cause(fpu), 0u);
  ASSERT_EQ(BinD(kSub, 1.5, 2.25), FpuOutcome::kOk);
  EXPECT_EQ(AsD(fpu.ReadDouble(4)), -0.75);
  ASSERT_EQ(BinD(kMul, 1.5, -2.0), FpuOutcome::kOk);
  EXPECT_EQ(AsD(fpu.ReadDouble(4)), -3.0);
  ASSERT_EQ(BinD(kDiv, 1.0, 4.0), FpuOutcome::kOk);
  EXPECT_EQ(AsD(fpu.ReadDouble(4)), 0.25);
  fpu.WriteDouble(0, D(2.25));
  ASSERT_EQ(fpu.Execute(Cop1(kD, 0, 0, 6, kSqrt)), FpuOutcome::kOk);
  EXPECT_EQ(AsD(fpu.ReadDouble(6)), 1.5);
  EXPECT_EQ(Flags(fpu), 0u);
}

TEST_F(FpuTest, SingleResultKeepsHighHalfWithFr1) {
  fpu.set_raw_fgr(4, 0xDEADBEEF00000000ull);
  ASSERT_EQ(BinS(kAdd, 1.0f, 2.0f), FpuOutcome::kOk);
  EXPECT_EQ(fpu.raw_fgr(4), 0xDEADBEEF00000000ull | S(3.0f));
}

TEST_F(FpuTest, RoundingModesSingle) {
  // 1 + 2^-24 is exactly half an ulp above 1.0f.
  const float tiny = 0x1p-24f;
  struct Case {
    FpRounding rm;
    float a;
    float expect;
  } cases[] = {
      {FpRounding::kNearest, 1.0f, 1.0f},
      {FpRounding::kZero, 1.0f, 1.0f},
      {FpRounding::kUp, 1.0f, 1.0f + 0x1p-23f},
      {FpRounding::kDown, 1.0f, 1.0f},
      {FpRounding::kNearest, -1.0f, -1.0f},
      {FpRounding::kZero, -1.0f, -1.0f},
      {FpRounding::kUp, -1.0f, -1.0f},
      {FpRounding::kDown, -1.0f, -1.0f - 0x1p-23f},
      // Tie to even: 1 + 3*2^-24 rounds up to 1 + 2^-22.
      {FpRounding::kNearest, 1.0f + 0x1p-23f, 1.0f + 0x1p-22f},
  };
  for (const Case& c : cases) {
    SetRounding(c.rm);
    const float b = c.a < 0 ? -tiny : tiny;
    ASSERT_EQ(BinS(kAdd, c.a, b), FpuOutcome::kOk);
    EXPECT_EQ(AsS(fpu.ReadWord(4)), c.expect) << static_cast<int>(c.rm) << " " << c.a;
    EXPECT_EQ(Cause(fpu), kFpInexact);
  }
  EXPECT_EQ(Flags(fpu), kFpInexact);
}

TEST_F(FpuTest, RoundingModesDouble) {
  const double third_rn = 1.0 / 3.0;
  const double up = std::nextafter(third_rn, 1.0);
  SetRounding(FpRounding::kNearest);
  ASSERT_EQ(BinD(kDiv, 1.0, 3.0), FpuOutcome::kOk);
  EXPECT_EQ(AsD(fpu.ReadDouble(4)), third_rn);
  SetRounding(FpRounding::kUp);
  ASSERT_EQ(BinD(kDiv, 1.0, 3.0), FpuOutcome::kOk);
  EXPECT_EQ(AsD(fpu.ReadDouble(4)), up);
  SetRounding(FpRounding::kZero);
  ASSERT_EQ(BinD(kDiv, -1.0, 3.0), FpuOutcome::kOk);
  EXPECT_EQ(AsD(fpu.ReadDouble(4)), -third_rn);
  SetRounding(FpRounding::kDown);
  ASSERT_EQ(BinD(kDiv, -1.0, 3.0), FpuOutcome::kOk);
  EXPECT_EQ(AsD(fpu.ReadDouble(4)), -up);
  // sqrt(2) in each direction.
  SetRounding(FpRounding::kDown);
  fpu.WriteDouble(0, D(2.0));
  ASSERT_EQ(fpu.Execute(Cop1(kD, 0, 0, 4, kSqrt)), FpuOutcome::kOk);
  const double lo = AsD(fpu.ReadDouble(4));
  SetRounding(FpRounding::kUp);
  ASSERT_EQ(fpu.Execute(Cop1(kD, 0, 0, 4, kSqrt)), FpuOutcome::kOk);
  EXPECT_EQ(AsD(fpu.ReadDouble(4)), std::nextafter(lo, 2.0));
  EXPECT_EQ(Cause(fpu), kFpInexact);
}

TEST_F(FpuTest, HostRoundingModeIsRestored) {
  SetRounding(FpRounding::kUp);
  ASSERT_EQ(BinD(kDiv, 1.0, 3.0), FpuOutcome::kOk);
  volatile double one = 1.0, three = 3.0;
  EXPECT_EQ(one / three, 1.0 / 3.0);
}

TEST_F(FpuTest, OverflowInEachMode) {
  const double big = std::numeric_limits<double>::max();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    FpRounding rm;
    double expect_pos;
    double expect_neg;
  } cases[] = {
      {FpRounding::kNearest, inf, -inf},
      {FpRounding::kZero, big, -big},
      {FpRounding::kUp, inf, -big},
      {FpRounding::kDown, big, -inf},
  };
  for (const Case& c : cases) {
    SetRounding(c.rm);
    ASSERT_EQ(BinD(kMul, big, 2.0), FpuOutcome::kOk);
    EXPECT_EQ(AsD(fpu.ReadDouble(4)), c.expect_pos);
    EXPECT_EQ(Cause(fpu), kFpOverflow | kFpInexact);
    ASSERT_EQ(BinD(kMul, -big, 2.0), FpuOutcome::kOk);
    EXPECT_EQ(AsD(fpu.ReadDouble(4)), c.expect_neg);
  }
  EXPECT_EQ(Flags(fpu), kFpOverflow | kFpInexact);
}

TEST_F(FpuTest, DivideByZeroAndInvalid) {
  ASSERT_EQ(BinD(kDiv, -1.0, 0.0), FpuOutcome::kOk);
  EXPECT_EQ(AsD(fpu.ReadDouble(4)), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(Cause(fpu), kFpDivideByZero);
  ASSERT_EQ(BinD(kDiv, 0.0, 0.0), FpuOutcome::kOk);
  EXPECT_EQ(fpu.ReadDouble(4), kQNanD);
  EXPECT_EQ(Cause(fpu), kFpInvalid);
  const double inf = std::numeric_limits<double>::infinity();
  ASSERT_EQ(BinD(kSub, inf, inf), FpuOutcome::kOk);
  EXPECT_EQ(fpu.ReadDouble(4), kQNanD);
  ASSERT_EQ(BinS(kMul, 0.0f, std::numeric_limits<float>::infinity()), FpuOutcome::kOk);
  EXPECT_EQ(fpu.ReadWord(4), kQNanS);
  fpu.WriteWord(0, S(-1.0f));
  ASSERT_EQ(fpu.Execute(Cop1(kS, 0, 0, 4, kSqrt)), FpuOutcome::kOk);
  EXPECT_EQ(fpu.ReadWord(4), kQNanS);
  fpu.WriteDouble(0, D(-0.0));
  ASSERT_EQ(fpu.Execute(Cop1(kD, 0, 0, 4, kSqrt)), FpuOutcome::kOk);
  EXPECT_EQ(fpu.ReadDouble(4), D(-0.0));
  EXPECT_EQ(Flags(fpu), kFpDivideByZero | kFpInvalid);
}

TEST_F(FpuTest, EnabledExceptionTrapsWithoutWriting) {
  fpu.WriteDouble(4, D(42.0));
  SetEnables(kFpDivideByZero);
  ASSERT_EQ(BinD(kDiv, 1.0, 0.0), FpuOutcome::kFpe);
  EXPECT_EQ(AsD(fpu.ReadDouble(4)), 42.0);
  EXPECT_EQ(Cause(fpu), kFpDivideByZero);
  EXPECT_EQ(Flags(fpu), 0u);  // flags only accumulate untrapped exceptions
  // Inexact trap: overflow sets O and I, the enabled I traps.
  SetEnables(kFpInexact);
  ASSERT_EQ(BinD(kMul, std::numeric_limits<double>::max(), 4.0), FpuOutcome::kFpe);
  EXPECT_EQ(Cause(fpu), kFpOverflow | kFpInexact);
  EXPECT_EQ(AsD(fpu.ReadDouble(4)), 42.0);
  SetEnables(kFpInvalid);
  ASSERT_EQ(
      BinS(kSub, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity()),
      FpuOutcome::kFpe);
  EXPECT_EQ(Cause(fpu), kFpInvalid);
  // A non-trapping operation afterwards clears the cause and sets flags.
  SetEnables(0);
  ASSERT_EQ(BinD(kDiv, 1.0, 3.0), FpuOutcome::kOk);
  EXPECT_EQ(Cause(fpu), kFpInexact);
  EXPECT_EQ(Flags(fpu), kFpInexact);
}

TEST_F(FpuTest, NanOperands) {
  // Signalling NaN: Invalid, default quiet NaN delivered.
  fpu.WriteDouble(0, kSNanD);
  fpu.WriteDouble(2, D(1.0));
  ASSERT_EQ(fpu.Execute(Cop1(kD, 2, 0, 4, kAdd)), FpuOutcome::kOk);
  EXPECT_EQ(fpu.ReadDouble(4), kQNanD);
  EXPECT_EQ(Cause(fpu), kFpInvalid);
  fpu.WriteWord(0, kSNanS);
  ASSERT_EQ(fpu.Execute(Cop1(kS, 0, 0, 4, kSqrt)), FpuOutcome::kOk);
  EXPECT_EQ(fpu.ReadWord(4), kQNanS);
  // Quiet NaN operand: the R4400 leaves it to software.
  fpu.WriteDouble(4, D(7.0));
  fpu.WriteDouble(0, kQNanD);
  ASSERT_EQ(fpu.Execute(Cop1(kD, 2, 0, 4, kMul)), FpuOutcome::kFpe);
  EXPECT_EQ(Cause(fpu), kFpUnimplemented);
  EXPECT_EQ(AsD(fpu.ReadDouble(4)), 7.0);
  // SNaN with the invalid trap enabled.
  SetEnables(kFpInvalid);
  fpu.WriteDouble(0, kSNanD);
  ASSERT_EQ(fpu.Execute(Cop1(kD, 2, 0, 4, kAdd)), FpuOutcome::kFpe);
  EXPECT_EQ(AsD(fpu.ReadDouble(4)), 7.0);
}

TEST_F(FpuTest, DenormalOperandIsUnimplemented) {
  fpu.WriteDouble(4, D(7.0));
  ASSERT_EQ(BinD(kAdd, 0x1p-1070, 1.0), FpuOutcome::kFpe);
  EXPECT_EQ(Cause(fpu), kFpUnimplemented);
  EXPECT_EQ(AsD(fpu.ReadDouble(4)), 7.0);
  ASSERT_EQ(BinS(kMul, 1.0f, 0x1p-140f), FpuOutcome::kFpe);
  EXPECT_EQ(Cause(fpu), kFpUnimplemented);
}

TEST_F(FpuTest, UnderflowWithoutFlushIsUnimplemented) {
  fpu.WriteDouble(4, D(7.0));
  ASSERT_EQ(BinD(kMul, 0x1p-1000, 0x1p-30), FpuOutcome::kFpe);  // exact denormal result
  EXPECT_EQ(Cause(fpu), kFpUnimplemented);
  ASSERT_EQ(BinD(kMul, 0x1p-1000, 0x1p-1000), FpuOutcome::kFpe);  // rounds to zero
  EXPECT_EQ(Cause(fpu), kFpUnimplemented);
  EXPECT_EQ(AsD(fpu.ReadDouble(4)), 7.0);
  // Exact results at the normal boundary are fine.
  ASSERT_EQ(BinD(kMul, 0x1p-1000, 0x1p-22), FpuOutcome::kOk);
  EXPECT_EQ(AsD(fpu.ReadDouble(4)), 0x1p-1022);
}

TEST_F(FpuTest, TininessIsDetectedBeforeRounding) {
  // The exact product is just below 2^-1022 and rounds up to it: tiny before rounding, so the
  // R4400 rule sends it to software (FS=0) or flushes it (FS=1).
  const double a = AsD(0x20079690975fbde1ull), b = AsD(0x1ff5b4b09c51fcb8ull);
  ASSERT_EQ(BinD(kMul, a, b), FpuOutcome::kFpe);
  EXPECT_EQ(Cause(fpu), kFpUnimplemented);
  fpu.set_fcsr(kFcsrFlushToZero);
  ASSERT_EQ(BinD(kMul, a, b), FpuOutcome::kOk);
  EXPECT_EQ(fpu.ReadDouble(4), D(0.0));
  EXPECT_EQ(Cause(fpu), kFpUnderflow | kFpInexact);
}

TEST_F(FpuTest, FlushToZero) {
  fpu.set_fcsr(kFcsrFlushToZero);
  ASSERT_EQ(BinD(kMul, 0x1p-1000, 0x1p-30), FpuOutcome::kOk);
  EXPECT_EQ(fpu.ReadDouble(4), D(0.0));
  EXPECT_EQ(Cause(fpu), kFpUnderflow | kFpInexact);
  ASSERT_EQ(BinD(kMul, -0x1p-1000, 0x1p-30), FpuOutcome::kOk);
  EXPECT_EQ(fpu.ReadDouble(4), D(-0.0));
  SetRounding(FpRounding::kUp);
  ASSERT_EQ(BinS(kMul, 0x1p-100f, 0x1p-30f), FpuOutcome::kOk);
  EXPECT_EQ(AsS(fpu.ReadWord(4)), 0x1p-126f);  // smallest normal
  ASSERT_EQ(BinS(kMul, -0x1p-100f, 0x1p-30f), FpuOutcome::kOk);
  EXPECT_EQ(fpu.ReadWord(4), S(-0.0f));
  SetRounding(FpRounding::kDown);
  ASSERT_EQ(BinD(kMul, -0x1p-1000, 0x1p-1000), FpuOutcome::kOk);
  EXPECT_EQ(AsD(fpu.ReadDouble(4)), -0x1p-1022);
  EXPECT_EQ(Flags(fpu), kFpUnderflow | kFpInexact);
  // With the underflow or inexact trap enabled, FS does not help.
  SetEnables(kFpUnderflow);
  ASSERT_EQ(BinD(kMul, 0x1p-1000, 0x1p-30), FpuOutcome::kFpe);
  EXPECT_EQ(Cause(fpu), kFpUnimplemented);
  SetEnables(kFpInexact);
  ASSERT_EQ(BinD(kMul, 0x1p-1000, 0x1p-30), FpuOutcome::kFpe);
  EXPECT_EQ(Cause(fpu), kFpUnimplemented);
}

TEST_F(FpuTest, AbsNegMov) {
  fpu.set_fcsr(kFpInexact << kFcsrCauseShift);
  fpu.WriteDouble(0, D(0.0));
  ASSERT_EQ(fpu.Execute(Cop1(kD, 0, 0, 4, kNeg)), FpuOutcome::kOk);
  EXPECT_EQ(fpu.ReadDouble(4), D(-0.0));
  EXPECT_EQ(Cause(fpu), 0u);  // arithmetic: cause rewritten
  ASSERT_EQ(fpu.Execute(Cop1(kD, 0, 4, 6, kAbs)), FpuOutcome::kOk);
  EXPECT_EQ(fpu.ReadDouble(6), D(0.0));
  fpu.WriteWord(1, S(-2.5f));
  ASSERT_EQ(fpu.Execute(Cop1(kS, 0, 1, 3, kAbs)), FpuOutcome::kOk);
  EXPECT_EQ(AsS(fpu.ReadWord(3)), 2.5f);
  // NaN operands: QNaN -> unimplemented, SNaN -> invalid.
  fpu.WriteWord(1, kQNanS);
  EXPECT_EQ(fpu.Execute(Cop1(kS, 0, 1, 3, kNeg)), FpuOutcome::kFpe);
  EXPECT_EQ(Cause(fpu), kFpUnimplemented);
  fpu.WriteWord(1, kSNanS);
  ASSERT_EQ(fpu.Execute(Cop1(kS, 0, 1, 3, kAbs)), FpuOutcome::kOk);
  EXPECT_EQ(fpu.ReadWord(3), kQNanS);
  EXPECT_EQ(Cause(fpu), kFpInvalid);
  // MOV copies anything and leaves FCR31 alone.
  const uint32_t before = fpu.fcsr();
  fpu.WriteDouble(8, kQNanD);
  ASSERT_EQ(fpu.Execute(Cop1(kD, 0, 8, 10, kMov)), FpuOutcome::kOk);
  EXPECT_EQ(fpu.ReadDouble(10), kQNanD);
  fpu.WriteDouble(8, 1);  // denormal
  ASSERT_EQ(fpu.Execute(Cop1(kD, 0, 8, 10, kMov)), FpuOutcome::kOk);
  EXPECT_EQ(fpu.ReadDouble(10), 1u);
  EXPECT_EQ(fpu.fcsr(), before);
}

// ---- Conversions -------------------------------------------------------------------------------

struct FixedCase {
  uint32_t fn;
  double in;
  int64_t out;
};

TEST_F(FpuTest, ConversionsToWord) {
  const FixedCase cases[] = {
      {kRoundW, 2.5, 2},
      {kRoundW, 3.5, 4},
      {kRoundW, -2.5, -2},
      {kRoundW, -2.51, -3},
      {kTruncW, 2.7, 2},
      {kTruncW, -2.7, -2},
      {kCeilW, 2.1, 3},
      {kCeilW, -2.9, -2},
      {kFloorW, 2.9, 2},
      {kFloorW, -2.1, -3},
      {kCvtW, 7.5, 8},
      {kCvtW, -0.0, 0},
      {kTruncW, 2147483647.9, 2147483647},
      {kTruncW, -2147483648.9, -2147483648LL},
      {kRoundW, -2147483648.5, -2147483648LL},
      {kCeilW, -0.5, 0},
  };
  for (const FixedCase& c : cases) {
    fpu.WriteDouble(2, D(c.in));
    ASSERT_EQ(fpu.Execute(Cop1(kD, 0, 2, 5, c.fn)), FpuOutcome::kOk) << c.fn << " " << c.in;
    EXPECT_EQ(static_cast<int32_t>(fpu.ReadWord(5)), c.out) << c.fn << " " << c.in;
    EXPECT_EQ(Cause(fpu), c.in == static_cast<double>(c.out) ? 0u : kFpInexact);
  }
  // Single source.
  fpu.WriteWord(1, S(-1.5f));
  ASSERT_EQ(fpu.Execute(Cop1(kS, 0, 1, 7, kRoundW)), FpuOutcome::kOk);
  EXPECT_EQ(static_cast<int32_t>(fpu.ReadWord(7)), -2);
}

TEST_F(FpuTest, ConversionsToWordOutOfRangeAreUnimplemented) {
  const double inf = std::numeric_limits<double>::infinity();
  const struct {
    uint32_t fn;
    double in;
  } cases[] = {
      {kCvtW, 2147483648.0},    {kRoundW, 2147483647.5},  {kCeilW, 2147483647.1},
      {kFloorW, -2147483648.1}, {kTruncW, -2147483649.0}, {kCvtW, inf},
      {kTruncW, -inf},
  };
  for (const auto& c : cases) {
    fpu.WriteWord(5, 0x12345678);
    fpu.WriteDouble(2, D(c.in));
    ASSERT_EQ(fpu.Execute(Cop1(kD, 0, 2, 5, c.fn)), FpuOutcome::kFpe) << c.fn << " " << c.in;
    EXPECT_EQ(Cause(fpu), kFpUnimplemented);
    EXPECT_EQ(fpu.ReadWord(5), 0x12345678u);
  }
  fpu.WriteDouble(2, kQNanD);
  EXPECT_EQ(fpu.Execute(Cop1(kD, 0, 2, 5, kCvtW)), FpuOutcome::kFpe);
  fpu.WriteDouble(2, kSNanD);
  EXPECT_EQ(fpu.Execute(Cop1(kD, 0, 2, 5, kCvtW)), FpuOutcome::kFpe);
  EXPECT_EQ(Cause(fpu), kFpUnimplemented);
}

TEST_F(FpuTest, ConversionsToLong) {
  const FixedCase cases[] = {
      {kCvtL, 0x1p62, int64_t{1} << 62},
      {kTruncL, -0x1p63, std::numeric_limits<int64_t>::min()},
      {kRoundL, 0x1p51 + 0.5, (int64_t{1} << 51)},
      {kCeilL, 0x1p51 + 0.5, (int64_t{1} << 51) + 1},
      {kFloorL, -1.5, -2},
      {kCvtL, 9007199254740993.0, 9007199254740992LL},  // already rounded by the parse
  };
  for (const FixedCase& c : cases) {
    fpu.WriteDouble(2, D(c.in));
    ASSERT_EQ(fpu.Execute(Cop1(kD, 0, 2, 6, c.fn)), FpuOutcome::kOk) << c.fn << " " << c.in;
    EXPECT_EQ(static_cast<int64_t>(fpu.ReadDouble(6)), c.out) << c.fn << " " << c.in;
  }
  fpu.WriteDouble(2, D(0x1p63));
  EXPECT_EQ(fpu.Execute(Cop1(kD, 0, 2, 6, kCvtL)), FpuOutcome::kFpe);
  EXPECT_EQ(Cause(fpu), kFpUnimplemented);
  fpu.WriteWord(1, S(-0x1p63f));
  ASSERT_EQ(fpu.Execute(Cop1(kS, 0, 1, 6, kTruncL)), FpuOutcome::kOk);
  EXPECT_EQ(static_cast<int64_t>(fpu.ReadDouble(6)), std::numeric_limits<int64_t>::min());
}

TEST_F(FpuTest, ConversionsBetweenFloats) {
  fpu.WriteDouble(2, D(0.1));
  ASSERT_EQ(fpu.Execute(Cop1(kD, 0, 2, 5, kCvtS)), FpuOutcome::kOk);
  EXPECT_EQ(AsS(fpu.ReadWord(5)), 0.1f);
  EXPECT_EQ(Cause(fpu), kFpInexact);
  SetRounding(FpRounding::kZero);
  ASSERT_EQ(fpu.Execute(Cop1(kD, 0, 2, 5, kCvtS)), FpuOutcome::kOk);
  EXPECT_EQ(AsS(fpu.ReadWord(5)), std::nextafter(0.1f, 0.0f));
  SetRounding(FpRounding::kNearest);
  fpu.WriteDouble(2, D(1e300));
  ASSERT_EQ(fpu.Execute(Cop1(kD, 0, 2, 5, kCvtS)), FpuOutcome::kOk);
  EXPECT_EQ(AsS(fpu.ReadWord(5)), std::numeric_limits<float>::infinity());
  EXPECT_EQ(Cause(fpu), kFpOverflow | kFpInexact);
  fpu.WriteDouble(2, D(1e-300));
  EXPECT_EQ(fpu.Execute(Cop1(kD, 0, 2, 5, kCvtS)), FpuOutcome::kFpe);
  EXPECT_EQ(Cause(fpu), kFpUnimplemented);
  fpu.WriteWord(3, S(0.1f));
  ASSERT_EQ(fpu.Execute(Cop1(kS, 0, 3, 8, kCvtD)), FpuOutcome::kOk);
  EXPECT_EQ(AsD(fpu.ReadDouble(8)), static_cast<double>(0.1f));
  EXPECT_EQ(Cause(fpu), 0u);
  fpu.WriteWord(3, kSNanS);
  ASSERT_EQ(fpu.Execute(Cop1(kS, 0, 3, 8, kCvtD)), FpuOutcome::kOk);
  EXPECT_EQ(fpu.ReadDouble(8), kQNanD);
  EXPECT_EQ(Cause(fpu), kFpInvalid);
}

TEST_F(FpuTest, ConversionsFromFixed) {
  fpu.WriteWord(1, static_cast<uint32_t>(-7));
  ASSERT_EQ(fpu.Execute(Cop1(kW, 0, 1, 2, kCvtD)), FpuOutcome::kOk);
  EXPECT_EQ(AsD(fpu.ReadDouble(2)), -7.0);
  fpu.WriteWord(1, 16777217);
  ASSERT_EQ(fpu.Execute(Cop1(kW, 0, 1, 3, kCvtS)), FpuOutcome::kOk);
  EXPECT_EQ(AsS(fpu.ReadWord(3)), 16777216.0f);
  EXPECT_EQ(Cause(fpu), kFpInexact);
  SetRounding(FpRounding::kUp);
  ASSERT_EQ(fpu.Execute(Cop1(kW, 0, 1, 3, kCvtS)), FpuOutcome::kOk);
  EXPECT_EQ(AsS(fpu.ReadWord(3)), 16777218.0f);
  fpu.WriteDouble(4, (uint64_t{1} << 53) + 1);
  ASSERT_EQ(fpu.Execute(Cop1(kL, 0, 4, 6, kCvtD)), FpuOutcome::kOk);
  EXPECT_EQ(AsD(fpu.ReadDouble(6)), 0x1p53 + 2);
  SetRounding(FpRounding::kNearest);
  ASSERT_EQ(fpu.Execute(Cop1(kL, 0, 4, 6, kCvtD)), FpuOutcome::kOk);
  EXPECT_EQ(AsD(fpu.ReadDouble(6)), 0x1p53);
  EXPECT_EQ(Cause(fpu), kFpInexact);
  fpu.WriteDouble(4, static_cast<uint64_t>(std::numeric_limits<int64_t>::min()));
  ASSERT_EQ(fpu.Execute(Cop1(kL, 0, 4, 7, kCvtS)), FpuOutcome::kOk);
  EXPECT_EQ(AsS(fpu.ReadWord(7)), -0x1p63f);
  EXPECT_EQ(Cause(fpu), 0u);
}

// ---- Compares -------------------------------------------------------------------------------

TEST_F(FpuTest, AllSixteenConditions) {
  enum Rel { kLess, kEqual, kGreater, kUnordered };
  const struct {
    double a, b;
    Rel rel;
  } pairs[] = {{1.0, 2.0, kLess},
               {2.0, 1.0, kGreater},
               {-0.0, 0.0, kEqual},
               {AsD(kQNanD), 1.0, kUnordered},
               {0x1p-1070, 0.0, kGreater}};  // denormals compare in hardware
  for (uint32_t cond = 0; cond < 16; ++cond) {
    for (const auto& p : pairs) {
      for (bool single : {false, true}) {
        fpu.set_fcsr(0);
        if (single) {
          fpu.WriteWord(1, p.rel == kUnordered ? kQNanS : S(static_cast<float>(p.a)));
          fpu.WriteWord(3, S(static_cast<float>(p.b)));
          if (p.a == 0x1p-1070) fpu.WriteWord(1, 1);  // single denormal
        } else {
          fpu.WriteDouble(2, D(p.a));
          fpu.WriteDouble(4, D(p.b));
        }
        const uint32_t insn = single ? Cop1(kS, 3, 1, 0, kC + cond) : Cop1(kD, 4, 2, 0, kC + cond);
        ASSERT_EQ(fpu.Execute(insn), FpuOutcome::kOk);
        const bool expect = (p.rel == kUnordered && (cond & 1)) ||
                            (p.rel == kEqual && (cond & 2)) || (p.rel == kLess && (cond & 4));
        EXPECT_EQ(fpu.condition(), expect) << cond << " " << p.a << " " << p.b;
        const bool invalid = p.rel == kUnordered && (cond & 8);
        EXPECT_EQ(Cause(fpu), invalid ? kFpInvalid : 0u) << cond;
        EXPECT_EQ(Flags(fpu), invalid ? kFpInvalid : 0u) << cond;
      }
    }
  }
}

TEST_F(FpuTest, CompareSignallingNanAndTrap) {
  fpu.WriteDouble(2, kSNanD);
  fpu.WriteDouble(4, D(1.0));
  ASSERT_EQ(fpu.Execute(Cop1(kD, 4, 2, 0, kC + 2)), FpuOutcome::kOk);  // C.EQ: quiet predicate
  EXPECT_EQ(Cause(fpu), kFpInvalid);
  EXPECT_FALSE(fpu.condition());
  ASSERT_EQ(fpu.Execute(Cop1(kD, 4, 2, 0, kC + 1)), FpuOutcome::kOk);  // C.UN
  EXPECT_TRUE(fpu.condition());
  SetEnables(kFpInvalid);
  fpu.WriteDouble(2, kQNanD);
  EXPECT_EQ(fpu.Execute(Cop1(kD, 4, 2, 0, kC + 8)), FpuOutcome::kFpe);  // C.SF
  EXPECT_TRUE(fpu.condition());  // unchanged by the trapping compare
  EXPECT_EQ(fpu.Execute(Cop1(kD, 4, 2, 0, kC + 0)), FpuOutcome::kOk);  // C.F: quiet
  EXPECT_FALSE(fpu.condition());
}

// ---- Encodings and register models ------------------------------------------------------------

TEST_F(FpuTest, ReservedEncodingsAreUnimplemented) {
  const uint32_t bad[] = {
      Cop1(kW, 2, 0, 4, kAdd),  Cop1(kL, 0, 0, 4, kSqrt), Cop1(kS, 0, 0, 4, kCvtS),
      Cop1(kD, 0, 0, 4, kCvtD), Cop1(kS, 0, 0, 4, 16),    Cop1(kD, 0, 0, 4, 40),
      Cop1(18, 2, 0, 4, kAdd),  Cop1(22, 0, 0, 4, kCvtD), Cop1(kW, 0, 0, 4, kCvtW),
      Cop1(kW, 2, 0, 0, kC),
  };
  for (uint32_t insn : bad) {
    fpu.set_fcsr(0);
    EXPECT_EQ(fpu.Execute(insn), FpuOutcome::kFpe) << std::hex << insn;
    EXPECT_EQ(Cause(fpu), kFpUnimplemented);
  }
}

TEST(FpuRegisters, Fr0OddDoubleSpecifiersAreReserved) {
  Fpu f;  // FR=0
  f.set_fcsr(0x1234 & kFcsrWritableMask);
  const uint32_t before = f.fcsr();
  EXPECT_EQ(f.Execute(Cop1(kD, 2, 1, 4, kAdd)), FpuOutcome::kReservedInstruction);
  EXPECT_EQ(f.Execute(Cop1(kD, 2, 0, 5, kAdd)), FpuOutcome::kReservedInstruction);
  EXPECT_EQ(f.Execute(Cop1(kD, 0, 3, 4, kCvtS)), FpuOutcome::kReservedInstruction);
  EXPECT_EQ(f.Execute(Cop1(kS, 0, 2, 3, kCvtD)), FpuOutcome::kReservedInstruction);
  EXPECT_EQ(f.Execute(Cop1(kD, 3, 2, 0, kC)), FpuOutcome::kReservedInstruction);
  // Long format needs FR=1.
  EXPECT_EQ(f.Execute(Cop1(kD, 0, 2, 4, kCvtL)), FpuOutcome::kReservedInstruction);
  EXPECT_EQ(f.Execute(Cop1(kL, 0, 2, 4, kCvtD)), FpuOutcome::kReservedInstruction);
  EXPECT_EQ(f.fcsr(), before);
  // Single-precision ops and word results can use odd registers.
  f.WriteWord(3, S(1.5f));
  EXPECT_EQ(f.Execute(Cop1(kS, 3, 3, 5, kAdd)), FpuOutcome::kOk);
  EXPECT_EQ(AsS(f.ReadWord(5)), 3.0f);
  EXPECT_EQ(f.Execute(Cop1(kS, 0, 5, 4, kCvtD)), FpuOutcome::kOk);
  EXPECT_EQ(AsD(f.ReadDouble(4)), 3.0);
  EXPECT_EQ(f.ReadWord(5), 0x40080000u);  // the pair's high word overwrote f5
  EXPECT_EQ(f.Execute(Cop1(kD, 0, 4, 7, kTruncW)), FpuOutcome::kOk);
  EXPECT_EQ(f.ReadWord(7), 3u);
}

TEST(FpuRegisters, Fr0DoubleArithmeticUsesPairs) {
  Fpu f;
  f.WriteDouble(0, D(1.25));
  f.WriteDouble(2, D(2.0));
  ASSERT_EQ(f.Execute(Cop1(kD, 2, 0, 30, kMul)), FpuOutcome::kOk);
  EXPECT_EQ(AsD(f.ReadDouble(30)), 2.5);
  EXPECT_EQ(f.ReadWord(31), D(2.5) >> 32);
}

TEST(FpuDescribe, RegisterUse) {
  FpuRegisterUse u = Fpu::DescribeComputational(Cop1(kD, 2, 4, 6, kAdd));
  EXPECT_TRUE(u.computational);
  EXPECT_EQ(u.src1, 4);
  EXPECT_EQ(u.src2, 2);
  EXPECT_EQ(u.dst, 6);
  EXPECT_TRUE(u.is_double_src);
  EXPECT_TRUE(u.is_double_dst);
  u = Fpu::DescribeComputational(Cop1(kD, 0, 4, 7, kCvtW));
  EXPECT_EQ(u.src2, -1);
  EXPECT_EQ(u.dst, 7);
  EXPECT_FALSE(u.is_double_dst);
  u = Fpu::DescribeComputational(Cop1(kS, 3, 1, 0, kC + 12));
  EXPECT_TRUE(u.writes_condition);
  EXPECT_EQ(u.dst, -1);
  EXPECT_EQ(u.src2, 3);
  u = Fpu::DescribeComputational(Cop1(kW, 0, 1, 2, kCvtD));
  EXPECT_FALSE(u.is_double_src);
  EXPECT_TRUE(u.is_double_dst);
  EXPECT_FALSE(Fpu::DescribeComputational(0x44800000).computational);  // mtc1
  EXPECT_TRUE(Fpu::IsComputational(Cop1(kD, 2, 4, 6, kAdd)));
  EXPECT_FALSE(Fpu::IsComputational(0x45000001));  // bc1t
}

}  // namespace
}  // namespace citcat::mips
