// MIPS R4400 floating-point unit. The rules implemented here, and where they come from, are listed
// in docs/machines/r4400-fpu.md. In short:
//  * IEEE 754 arithmetic comes from the host's SSE/FPU with the FCSR rounding mode installed
//  through
//    <cfenv> for the one operation, and the host's sticky flags read back right after it. Compiler
//    barriers keep the operation between the mode switch and the flag read.
//  * Everything the R4400 leaves to software raises Unimplemented Operation (cause E, always
//    trapping): denormal or quiet-NaN operands of computational instructions, denormal or
//    underflowing results unless FS=1 with the underflow and inexact traps disabled, conversions
//    to fixed point of NaN, infinity or out-of-range values, and reserved function/format codes.
//  * Signalling NaN operands raise Invalid; untrapped invalid results are the MIPS legacy default
//    quiet NaN (fraction MSB clear): single 0x7FBFFFFF, double 0x7FF7FFFFFFFFFFFF.
#include "simcore/mips/fpu.h"

#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>

namespace citcat::mips {
namespace {

// COP1 function codes (bits 5..0) for the formatted instructions.
enum Function : uint32_t {
  kFnAdd = 0,
  kFnSub = 1,
  kFnMul = 2,
  kFnDiv = 3,
  kFnSqrt = 4,
  kFnAbs = 5,
  kFnMov = 6,
  kFnNeg = 7,
  kFnRoundL = 8,
  kFnTruncL = 9,
  kFnCeilL = 10,
  kFnFloorL = 11,
  kFnRoundW = 12,
  kFnTruncW = 13,
  kFnCeilW = 14,
  kFnFloorW = 15,
  kFnCvtS = 32,
  kFnCvtD = 33,
  kFnCvtW = 36,
  kFnCvtL = 37,
  kFnCompareFirst = 48,
};

constexpr uint32_t kFmtS = 16, kFmtD = 17, kFmtW = 20, kFmtL = 21;

constexpr uint32_t kDefaultNanS = 0x7FBFFFFF;
constexpr uint64_t kDefaultNanD = 0x7FF7FFFFFFFFFFFFull;
constexpr uint32_t kSignS = 0x80000000u;
constexpr uint64_t kSignD = 0x8000000000000000ull;
constexpr uint32_t kMinNormalS = 0x00800000u;
constexpr uint64_t kMinNormalD = 0x0010000000000000ull;

enum class Kind : uint8_t { kZero, kNormal, kDenormal, kInfinity, kQuietNan, kSignallingNan };

// MIPS legacy NaNs: the fraction's most significant bit set means signalling.
Kind ClassifyS(uint32_t v) {
  const uint32_t exp = (v >> 23) & 0xFF, frac = v & 0x7FFFFF;
  if (exp == 0) return frac == 0 ? Kind::kZero : Kind::kDenormal;
  if (exp != 0xFF) return Kind::kNormal;
  if (frac == 0) return Kind::kInfinity;
  return (frac & 0x400000) ? Kind::kSignallingNan : Kind::kQuietNan;
}

Kind ClassifyD(uint64_t v) {
  const uint64_t exp = (v >> 52) & 0x7FF, frac = v & 0xFFFFFFFFFFFFFull;
  if (exp == 0) return frac == 0 ? Kind::kZero : Kind::kDenormal;
  if (exp != 0x7FF) return Kind::kNormal;
  if (frac == 0) return Kind::kInfinity;
  return (frac & 0x8000000000000ull) ? Kind::kSignallingNan : Kind::kQuietNan;
}

bool IsNan(Kind k) { return k == Kind::kQuietNan || k == Kind::kSignallingNan; }
// Operands the hardware hands to software (Unimplemented Operation) in computational instructions.
bool NeedsSoftware(Kind k) { return k == Kind::kDenormal || k == Kind::kQuietNan; }

float BitsToFloat(uint32_t v) {
  float f;
  std::memcpy(&f, &v, sizeof f);
  return f;
}
uint32_t FloatToBits(float f) {
  uint32_t v;
  std::memcpy(&v, &f, sizeof v);
  return v;
}
double BitsToDouble(uint64_t v) {
  double d;
  std::memcpy(&d, &v, sizeof d);
  return d;
}
uint64_t DoubleToBits(double d) {
  uint64_t v;
  std::memcpy(&v, &d, sizeof v);
  return v;
}

// A full compiler barrier through `v`: the value is materialised in memory, and neither it nor any
// other memory access or call moves across. Used to pin a host FP operation between fesetround and
// fetestexcept.
template <typename T>
inline void Pin(T& v) {
  asm volatile("" : "+m"(v) : : "memory");
}

#if defined(__x86_64__) && defined(__SSE2__) && !defined(CITCAT_FPU_PORTABLE_FENV)
// x86-64: all double and float arithmetic is SSE, so MXCSR alone holds the rounding mode and the
// sticky flags. Setting it directly costs a few cycles where <cfenv> costs several calls.
inline uint32_t ReadMxcsr() {
  uint32_t v;
  asm volatile("stmxcsr %0" : "=m"(v) : : "memory");
  return v;
}
inline void WriteMxcsr(uint32_t v) { asm volatile("ldmxcsr %0" : : "m"(v) : "memory"); }

// Runs `op` with the host FPU in rounding mode `rm` and returns the IEEE flags it raised, as
// kFp* bits. The host's MXCSR is restored afterwards.
template <typename Op>
uint32_t WithHostFpu(FpRounding rm, Op op) {
  // MXCSR.RC (bits 14..13): 0 nearest, 1 down, 2 up, 3 toward zero. Flags are bits 5..0 (IE DE
  // ZE OE UE PE); DAZ (bit 6) and FTZ (bit 15) must be off for IEEE results.
  static constexpr uint32_t kRc[4] = {0x0000, 0x6000, 0x4000, 0x2000};
  const uint32_t saved = ReadMxcsr();
  WriteMxcsr((saved & ~0xE07Fu) | kRc[static_cast<int>(rm)]);
  op();
  const uint32_t raised = ReadMxcsr();
  WriteMxcsr(saved);
  uint32_t flags = 0;
  if (raised & 0x20) flags |= kFpInexact;
  if (raised & 0x10) flags |= kFpUnderflow;
  if (raised & 0x08) flags |= kFpOverflow;
  if (raised & 0x04) flags |= kFpDivideByZero;
  if (raised & 0x01) flags |= kFpInvalid;
  return flags;
}
#else
int HostRounding(FpRounding rm) {
  switch (rm) {
    case FpRounding::kNearest:
      return FE_TONEAREST;
    case FpRounding::kZero:
      return FE_TOWARDZERO;
    case FpRounding::kUp:
      return FE_UPWARD;
    case FpRounding::kDown:
      return FE_DOWNWARD;
  }
  return FE_TONEAREST;
}

// Runs `op` with the host FPU in rounding mode `rm` and returns the IEEE flags it raised, as
// kFp* bits. The host is back in round-to-nearest with clear flags afterwards.
template <typename Op>
uint32_t WithHostFpu(FpRounding rm, Op op) {
  std::feclearexcept(FE_ALL_EXCEPT);
  std::fesetround(HostRounding(rm));
  op();
  const int raised = std::fetestexcept(FE_ALL_EXCEPT);
  std::fesetround(FE_TONEAREST);
  std::feclearexcept(FE_ALL_EXCEPT);
  uint32_t flags = 0;
  if (raised & FE_INEXACT) flags |= kFpInexact;
  if (raised & FE_UNDERFLOW) flags |= kFpUnderflow;
  if (raised & FE_OVERFLOW) flags |= kFpOverflow;
  if (raised & FE_DIVBYZERO) flags |= kFpDivideByZero;
  if (raised & FE_INVALID) flags |= kFpInvalid;
  return flags;
}
#endif

// The outcome of one operation before it is committed: the value to write and the cause bits.
struct Pending {
  uint64_t bits = 0;
  uint32_t cause = 0;
};

// Applies the R4400 underflow rule to a freshly rounded result. A tiny result (denormal, or the
// host reported underflow, which includes results rounded to zero) is left to software unless
// FS=1 and both the underflow and inexact traps are disabled; then it is flushed: to zero with the
// result's sign, or to the smallest normal number when rounding away from zero towards it.
template <bool kDouble>
void ApplyUnderflowRule(Pending& p, uint32_t fcsr) {
  const bool negative = kDouble ? (p.bits & kSignD) != 0 : (p.bits & kSignS) != 0;
  const Kind kind = kDouble ? ClassifyD(p.bits) : ClassifyS(static_cast<uint32_t>(p.bits));
  const bool tiny = kind == Kind::kDenormal || (p.cause & kFpUnderflow) != 0;
  if (!tiny) return;
  const uint32_t enables = (fcsr >> kFcsrEnablesShift) & 0x1F;
  if (!(fcsr & kFcsrFlushToZero) || (enables & (kFpUnderflow | kFpInexact))) {
    p.cause = kFpUnimplemented;
    return;
  }
  const auto rm = static_cast<FpRounding>(fcsr & kFcsrRoundingMask);
  const bool to_min_normal =
      (rm == FpRounding::kUp && !negative) || (rm == FpRounding::kDown && negative);
  const uint64_t sign = negative ? (kDouble ? kSignD : kSignS) : 0;
  p.bits = sign | (to_min_normal ? (kDouble ? kMinNormalD : kMinNormalS) : 0);
  p.cause |= kFpUnderflow | kFpInexact;
}

// Rounds a finite double to an integral value in mode `rm`, exactly (no host flags involved).
double RoundIntegral(double x, FpRounding rm, bool* inexact) {
  const double t = std::trunc(x);
  const double frac = x - t;  // exact
  *inexact = frac != 0;
  if (frac == 0) return t;
  switch (rm) {
    case FpRounding::kZero:
      return t;
    case FpRounding::kUp:
      return frac > 0 ? t + 1 : t;
    case FpRounding::kDown:
      return frac < 0 ? t - 1 : t;
    case FpRounding::kNearest: {
      const double step = x < 0 ? -1.0 : 1.0;
      const double half = std::fabs(frac);
      if (half > 0.5) return t + step;
      if (half < 0.5) return t;
      return std::fmod(t, 2.0) != 0 ? t + step : t;  // tie: to even
    }
  }
  return t;
}

class Executor {
 public:
  Executor(Fpu& fpu, uint32_t insn)
      : fpu_(fpu),
        fmt_((insn >> 21) & 0x1F),
        ft_((insn >> 16) & 0x1F),
        fs_((insn >> 11) & 0x1F),
        fd_((insn >> 6) & 0x1F),
        fn_(insn & 0x3F) {}

  FpuOutcome Run() {
    switch (fmt_) {
      case kFmtS:
      case kFmtD:
        return RunFloat();
      case kFmtW:
      case kFmtL:
        return RunFixed();
      default:
        return Unimplemented();
    }
  }

 private:
  bool is_double() const { return fmt_ == kFmtD; }
  uint32_t fcsr() const { return fpu_.fcsr(); }
  FpRounding rm() const { return fpu_.rounding(); }
  uint32_t enables() const { return (fcsr() >> kFcsrEnablesShift) & 0x1F; }

  // With FR=0 a 64-bit operand or result needs an even register. The R4400 manuals leave odd
  // specifiers undefined; like QEMU we raise Reserved Instruction.
  bool BadPair(uint32_t regs) const { return !fpu_.fr() && (regs & 1) != 0; }

  uint64_t ReadSource(uint32_t reg) const {
    return is_double() ? fpu_.ReadDouble(static_cast<int>(reg))
                       : fpu_.ReadWord(static_cast<int>(reg));
  }
  Kind Classify(uint64_t v) const {
    return is_double() ? ClassifyD(v) : ClassifyS(static_cast<uint32_t>(v));
  }
  uint64_t DefaultNan(bool dbl) const { return dbl ? kDefaultNanD : kDefaultNanS; }

  void SetCause(uint32_t cause) {
    fpu_.set_fcsr((fcsr() & ~kFcsrCauseMask) | (cause << kFcsrCauseShift));
  }

  FpuOutcome Unimplemented() {
    SetCause(kFpUnimplemented);
    return FpuOutcome::kFpe;
  }

  // Commits an operation: cause field, then either the trap or the flags and the destination.
  FpuOutcome Commit(const Pending& p, bool dst_double) {
    if (p.cause & kFpUnimplemented) return Unimplemented();
    SetCause(p.cause);
    if (p.cause & enables()) return FpuOutcome::kFpe;
    fpu_.set_fcsr(fcsr() | (p.cause << kFcsrFlagsShift));
    if (dst_double) {
      fpu_.WriteDouble(static_cast<int>(fd_), p.bits);
    } else {
      fpu_.WriteWord(static_cast<int>(fd_), static_cast<uint32_t>(p.bits));
    }
    return FpuOutcome::kOk;
  }

  FpuOutcome RunFloat() {
    const bool dbl = is_double();
    switch (fn_) {
      case kFnAdd:
      case kFnSub:
      case kFnMul:
      case kFnDiv:
        if (dbl && BadPair(fs_ | ft_ | fd_)) return FpuOutcome::kReservedInstruction;
        return Arithmetic(true);
      case kFnSqrt:
        if (dbl && BadPair(fs_ | fd_)) return FpuOutcome::kReservedInstruction;
        return Arithmetic(false);
      case kFnMov:
        if (dbl && BadPair(fs_ | fd_)) return FpuOutcome::kReservedInstruction;
        // Not arithmetic: no trap, FCR31 untouched, NaNs and denormals copied as they are.
        if (dbl) {
          fpu_.WriteDouble(static_cast<int>(fd_), fpu_.ReadDouble(static_cast<int>(fs_)));
        } else {
          fpu_.WriteWord(static_cast<int>(fd_), fpu_.ReadWord(static_cast<int>(fs_)));
        }
        return FpuOutcome::kOk;
      case kFnAbs:
      case kFnNeg:
        if (dbl && BadPair(fs_ | fd_)) return FpuOutcome::kReservedInstruction;
        return SignOp();
      case kFnRoundL:
      case kFnTruncL:
      case kFnCeilL:
      case kFnFloorL:
      case kFnCvtL:
        if (!fpu_.fr()) return FpuOutcome::kReservedInstruction;
        return ToFixed(true);
      case kFnRoundW:
      case kFnTruncW:
      case kFnCeilW:
      case kFnFloorW:
      case kFnCvtW:
        if (dbl && BadPair(fs_)) return FpuOutcome::kReservedInstruction;
        return ToFixed(false);
      case kFnCvtS:
        if (!dbl) return Unimplemented();  // CVT.S.S
        if (BadPair(fs_)) return FpuOutcome::kReservedInstruction;
        return FloatToFloat();
      case kFnCvtD:
        if (dbl) return Unimplemented();  // CVT.D.D
        if (BadPair(fd_)) return FpuOutcome::kReservedInstruction;
        return FloatToFloat();
      default:
        if (fn_ >= kFnCompareFirst) {
          if (dbl && BadPair(fs_ | ft_)) return FpuOutcome::kReservedInstruction;
          return Compare();
        }
        return Unimplemented();
    }
  }

  FpuOutcome RunFixed() {
    const bool from_long = fmt_ == kFmtL;
    if (fn_ != kFnCvtS && fn_ != kFnCvtD) return Unimplemented();
    const bool to_double = fn_ == kFnCvtD;
    if (from_long && !fpu_.fr()) return FpuOutcome::kReservedInstruction;
    if (to_double && BadPair(fd_)) return FpuOutcome::kReservedInstruction;
    const int64_t value =
        from_long
            ? static_cast<int64_t>(fpu_.ReadDouble(static_cast<int>(fs_)))
            : static_cast<int64_t>(static_cast<int32_t>(fpu_.ReadWord(static_cast<int>(fs_))));
    Pending p;
    if (to_double) {
      double r = 0;
      int64_t v = value;
      p.cause = WithHostFpu(rm(), [&] {
        Pin(v);
        r = static_cast<double>(v);
        Pin(r);
      });
      p.bits = DoubleToBits(r);
    } else {
      float r = 0;
      int64_t v = value;
      p.cause = WithHostFpu(rm(), [&] {
        Pin(v);
        r = static_cast<float>(v);
        Pin(r);
      });
      p.bits = FloatToBits(r);
    }
    return Commit(p, to_double);
  }

  // ADD, SUB, MUL, DIV (binary) and SQRT.
  FpuOutcome Arithmetic(bool binary) {
    const bool dbl = is_double();
    const uint64_t a = ReadSource(fs_);
    const uint64_t b = binary ? ReadSource(ft_) : 0;
    const Kind ka = Classify(a);
    const Kind kb = binary ? Classify(b) : Kind::kZero;
    if (NeedsSoftware(ka) || NeedsSoftware(kb)) return Unimplemented();
    Pending p;
    if (ka == Kind::kSignallingNan || kb == Kind::kSignallingNan) {
      p.bits = DefaultNan(dbl);
      p.cause = kFpInvalid;
      return Commit(p, dbl);
    }
    // The host operation in the guest's rounding mode, its flags into p.cause.
    auto host = [&](auto x, auto y) {
      decltype(x) r = 0;
      p.cause = WithHostFpu(rm(), [&] {
        Pin(x);
        Pin(y);
        switch (fn_) {
          case kFnAdd:
            r = x + y;
            break;
          case kFnSub:
            r = x - y;
            break;
          case kFnMul:
            r = x * y;
            break;
          case kFnDiv:
            r = x / y;
            break;
          default:
            if constexpr (sizeof(x) == 8) {
              r = __builtin_sqrt(x);
            } else {
              r = __builtin_sqrtf(x);
            }
            break;
        }
        Pin(r);
      });
      return r;
    };
    if (dbl) {
      const double r = host(BitsToDouble(a), BitsToDouble(b));
      p.bits = std::isnan(r) ? kDefaultNanD : DoubleToBits(r);
      ApplyUnderflowRule<true>(p, fcsr());
    } else {
      const float r =
          host(BitsToFloat(static_cast<uint32_t>(a)), BitsToFloat(static_cast<uint32_t>(b)));
      p.bits = std::isnan(r) ? kDefaultNanS : FloatToBits(r);
      ApplyUnderflowRule<false>(p, fcsr());
    }
    return Commit(p, dbl);
  }

  // ABS and NEG are arithmetic on the R4400: NaN and denormal operands are checked like any
  // other computational operand, and the cause field is rewritten (cleared).
  FpuOutcome SignOp() {
    const bool dbl = is_double();
    const uint64_t a = ReadSource(fs_);
    const Kind ka = Classify(a);
    if (NeedsSoftware(ka)) return Unimplemented();
    Pending p;
    if (ka == Kind::kSignallingNan) {
      p.bits = DefaultNan(dbl);
      p.cause = kFpInvalid;
      return Commit(p, dbl);
    }
    const uint64_t sign = dbl ? kSignD : kSignS;
    p.bits = fn_ == kFnAbs ? (a & ~sign) : (a ^ sign);
    return Commit(p, dbl);
  }

  // CVT.S.D and CVT.D.S.
  FpuOutcome FloatToFloat() {
    const bool from_double = is_double();
    const uint64_t a = ReadSource(fs_);
    const Kind ka = Classify(a);
    if (NeedsSoftware(ka)) return Unimplemented();
    Pending p;
    if (ka == Kind::kSignallingNan) {
      p.bits = DefaultNan(!from_double);
      p.cause = kFpInvalid;
      return Commit(p, !from_double);
    }
    if (from_double) {
      double x = BitsToDouble(a);
      float r = 0;
      p.cause = WithHostFpu(rm(), [&] {
        Pin(x);
        r = static_cast<float>(x);
        Pin(r);
      });
      p.bits = FloatToBits(r);
      ApplyUnderflowRule<false>(p, fcsr());
      return Commit(p, false);
    }
    p.bits = DoubleToBits(static_cast<double>(BitsToFloat(static_cast<uint32_t>(a))));  // exact
    return Commit(p, true);
  }

  // CVT.W/CVT.L (FCSR rounding) and ROUND/TRUNC/CEIL/FLOOR .W/.L (fixed rounding).
  FpuOutcome ToFixed(bool to_long) {
    const uint64_t a = ReadSource(fs_);
    const Kind ka = Classify(a);
    // The R4400 converts only finite, normal, in-range values; the rest goes to software.
    if (IsNan(ka) || ka == Kind::kInfinity || ka == Kind::kDenormal) return Unimplemented();
    FpRounding mode = rm();
    switch (fn_ & 3) {
      case kFnRoundW & 3:
        mode = FpRounding::kNearest;
        break;
      case kFnTruncW & 3:
        mode = FpRounding::kZero;
        break;
      case kFnCeilW & 3:
        mode = FpRounding::kUp;
        break;
      case kFnFloorW & 3:
        mode = FpRounding::kDown;
        break;
    }
    if (fn_ == kFnCvtW || fn_ == kFnCvtL) mode = rm();
    const double x =
        is_double() ? BitsToDouble(a) : static_cast<double>(BitsToFloat(static_cast<uint32_t>(a)));
    bool inexact = false;
    const double r = RoundIntegral(x, mode, &inexact);
    Pending p;
    if (to_long) {
      if (!(r >= -9223372036854775808.0 && r < 9223372036854775808.0)) return Unimplemented();
      p.bits = static_cast<uint64_t>(static_cast<int64_t>(r));
    } else {
      if (!(r >= -2147483648.0 && r <= 2147483647.0)) return Unimplemented();
      p.bits = static_cast<uint32_t>(static_cast<int32_t>(r));
    }
    p.cause = inexact ? kFpInexact : 0;
    return Commit(p, to_long);
  }

  // C.cond.fmt: condition bits 0..3 of the function are "true if unordered", "true if equal",
  // "true if less" and "signal invalid on unordered". Denormals and quiet NaNs are handled in
  // hardware here.
  FpuOutcome Compare() {
    const uint32_t cond = fn_ & 0xF;
    const uint64_t a = ReadSource(fs_), b = ReadSource(ft_);
    const Kind ka = Classify(a), kb = Classify(b);
    const bool unordered = IsNan(ka) || IsNan(kb);
    bool result;
    if (unordered) {
      result = (cond & 1) != 0;
    } else {
      bool less, equal;
      if (is_double()) {
        const double x = BitsToDouble(a), y = BitsToDouble(b);
        less = x < y;
        equal = x == y;
      } else {
        const float x = BitsToFloat(static_cast<uint32_t>(a));
        const float y = BitsToFloat(static_cast<uint32_t>(b));
        less = x < y;
        equal = x == y;
      }
      result = (less && (cond & 4)) || (equal && (cond & 2));
    }
    const bool invalid =
        ka == Kind::kSignallingNan || kb == Kind::kSignallingNan || (unordered && (cond & 8) != 0);
    const uint32_t cause = invalid ? kFpInvalid : 0;
    SetCause(cause);
    if (cause & enables()) return FpuOutcome::kFpe;
    uint32_t v = fcsr() | (cause << kFcsrFlagsShift);
    v = result ? (v | kFcsrCondition) : (v & ~kFcsrCondition);
    fpu_.set_fcsr(v);
    return FpuOutcome::kOk;
  }

  Fpu& fpu_;
  const uint32_t fmt_, ft_, fs_, fd_, fn_;
};

}  // namespace

Fpu::Fpu(uint32_t fir) : fir_(fir) {}

void Fpu::Reset() {
  fgr_.fill(0);
  fcsr_ = 0;
  fr_ = false;
}

uint64_t Fpu::ReadDouble(int reg) const {
  if (fr_) return fgr_[reg & 31];
  const int even = reg & 30;
  return (fgr_[even + 1] << 32) | (fgr_[even] & 0xFFFFFFFFull);
}

void Fpu::WriteDouble(int reg, uint64_t value) {
  if (fr_) {
    fgr_[reg & 31] = value;
    return;
  }
  const int even = reg & 30;
  fgr_[even] = (fgr_[even] & 0xFFFFFFFF00000000ull) | (value & 0xFFFFFFFFull);
  fgr_[even + 1] = (fgr_[even + 1] & 0xFFFFFFFF00000000ull) | (value >> 32);
}

uint32_t Fpu::ReadControl(int reg) const {
  switch (reg) {
    case 0:
      return fir_;
    case 31:
      return fcsr_;
    default:
      return 0;
  }
}

FpuOutcome Fpu::WriteControl(int reg, uint32_t value) {
  if (reg != 31) return FpuOutcome::kOk;
  fcsr_ = value & kFcsrWritableMask;
  const uint32_t cause = (fcsr_ >> kFcsrCauseShift) & 0x3F;
  const uint32_t enables = ((fcsr_ >> kFcsrEnablesShift) & 0x1F) | kFpUnimplemented;
  return (cause & enables) ? FpuOutcome::kFpe : FpuOutcome::kOk;
}

FpuOutcome Fpu::Execute(uint32_t insn) { return Executor(*this, insn).Run(); }

FpuRegisterUse Fpu::DescribeComputational(uint32_t insn) {
  FpuRegisterUse use;
  if (!IsComputational(insn)) return use;
  const uint32_t fmt = (insn >> 21) & 0x1F, fn = insn & 0x3F;
  const auto ft = static_cast<int8_t>((insn >> 16) & 0x1F);
  const auto fs = static_cast<int8_t>((insn >> 11) & 0x1F);
  const auto fd = static_cast<int8_t>((insn >> 6) & 0x1F);
  use.computational = true;
  use.is_double_src = fmt == kFmtD || fmt == kFmtL;
  use.src1 = fs;
  if (fn >= kFnCompareFirst) {
    use.src2 = ft;
    use.writes_condition = true;
    return use;
  }
  use.dst = fd;
  if (fn <= kFnDiv) use.src2 = ft;
  switch (fn) {
    case kFnRoundL:
    case kFnTruncL:
    case kFnCeilL:
    case kFnFloorL:
    case kFnCvtL:
    case kFnCvtD:
      use.is_double_dst = true;
      break;
    case kFnRoundW:
    case kFnTruncW:
    case kFnCeilW:
    case kFnFloorW:
    case kFnCvtW:
    case kFnCvtS:
      use.is_double_dst = false;
      break;
    default:
      use.is_double_dst = use.is_double_src;
      break;
  }
  return use;
}

}  // namespace citcat::mips
