#include "tests/oracles/fpu_oracle.h"

#include <bit>
#include <cfenv>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "simcore/mips/fpu.h"
#include "tests/oracles/lockstep.h"

namespace citcat::oracle {
namespace {

using mips::Fpu;
using mips::FpuOutcome;

constexpr uint32_t kOpLwc1 = 0x31, kOpLdc1 = 0x35, kOpSwc1 = 0x39, kOpSdc1 = 0x3D;
constexpr size_t kMaxReported = 20;

const char* kConds[16] = {"f",  "un",   "eq",  "ueq", "olt", "ult", "ole", "ule",
                          "sf", "ngle", "seq", "ngl", "lt",  "nge", "le",  "ngt"};

const char* FmtSuffix(uint32_t fmt) {
  switch (fmt) {
    case 16:
      return "s";
    case 17:
      return "d";
    case 20:
      return "w";
    case 21:
      return "l";
    default:
      return "?";
  }
}

uint64_t SignExtend32(uint32_t v) {
  return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v)));
}

bool IsAbsOrNeg(uint32_t insn) {
  const uint32_t fn = insn & 0x3F;
  return Fpu::IsComputational(insn) && (fn == 5 || fn == 7);
}

// Why the R4400 hands an instruction to software, for the category name.
std::string UnimplementedReason(const QemuState& s, uint32_t insn) {
  const uint32_t fmt = (insn >> 21) & 0x1F, fn = insn & 0x3F;
  const int fs = static_cast<int>((insn >> 11) & 0x1F), ft = static_cast<int>((insn >> 16) & 0x1F);
  auto kind = [&](int reg) -> std::string {
    if (fmt == 17) {
      const uint64_t v = s.FprDouble(reg);
      const uint64_t exp = (v >> 52) & 0x7FF, frac = v & 0xFFFFFFFFFFFFFull;
      if (exp == 0 && frac != 0) return "denormal";
      if (exp == 0x7FF && frac != 0 && !(frac >> 51)) return "quiet NaN";
      if (exp == 0x7FF) return frac ? "signalling NaN" : "infinity";
    } else if (fmt == 16) {
      const uint32_t v = s.FprWord(reg);
      const uint32_t exp = (v >> 23) & 0xFF, frac = v & 0x7FFFFF;
      if (exp == 0 && frac != 0) return "denormal";
      if (exp == 0xFF && frac != 0 && !(frac >> 22)) return "quiet NaN";
      if (exp == 0xFF) return frac ? "signalling NaN" : "infinity";
    }
    return "";
  };
  const bool to_fixed = (fn >= 8 && fn <= 15) || fn == 36 || fn == 37;
  std::string k = kind(fs);
  if (k.empty() && fn <= 3) k = kind(ft);
  if (to_fixed) {
    return k.empty() ? "conversion to fixed point out of range"
                     : "conversion to fixed point of " + k;
  }
  if (k == "denormal" || k == "quiet NaN") return k + " operand";
  return "denormal or underflowing result";
}

struct IeeeResult {
  uint64_t bits;
  uint32_t flags;  // kFp* bits
};

// The IEEE 754 result (gradual underflow, the FCSR rounding mode) of an arithmetic instruction
// whose operands are finite numbers, computed on the host; nullopt for anything else.
std::optional<IeeeResult> IeeeCompletion(const QemuState& s, uint32_t insn) {
  const uint32_t fmt = (insn >> 21) & 0x1F, fn = insn & 0x3F;
  const int ft = static_cast<int>((insn >> 16) & 0x1F), fs = static_cast<int>((insn >> 11) & 0x1F);
  if ((fmt != 16 && fmt != 17) || (fn > 4 && !(fn == 32 && fmt == 17))) return std::nullopt;
  static const int kModes[4] = {FE_TONEAREST, FE_TOWARDZERO, FE_UPWARD, FE_DOWNWARD};
  const int saved = std::fegetround();
  std::fesetround(kModes[s.fcr31 & 3]);
  std::feclearexcept(FE_ALL_EXCEPT);
  IeeeResult r{};
  bool finite = true;
  if (fmt == 17) {
    volatile double a = std::bit_cast<double>(s.FprDouble(fs));
    volatile double b = std::bit_cast<double>(s.FprDouble(ft));
    finite = std::isfinite(a) && (fn == 4 || fn == 32 || std::isfinite(b));
    if (fn == 32) {
      volatile float f = static_cast<float>(a);
      r.bits = std::bit_cast<uint32_t>(static_cast<float>(f));
    } else {
      volatile double x = fn == 0   ? a + b
                          : fn == 1 ? a - b
                          : fn == 2 ? a * b
                          : fn == 3 ? a / b
                                    : std::sqrt(a);
      r.bits = std::bit_cast<uint64_t>(static_cast<double>(x));
    }
  } else {
    volatile float a = std::bit_cast<float>(s.FprWord(fs));
    volatile float b = std::bit_cast<float>(s.FprWord(ft));
    finite = std::isfinite(a) && (fn == 4 || std::isfinite(b));
    volatile float x = fn == 0   ? a + b
                       : fn == 1 ? a - b
                       : fn == 2 ? a * b
                       : fn == 3 ? a / b
                                 : std::sqrt(a);
    r.bits = std::bit_cast<uint32_t>(static_cast<float>(x));
  }
  const int raised = std::fetestexcept(FE_ALL_EXCEPT);
  std::feclearexcept(FE_ALL_EXCEPT);
  std::fesetround(saved);
  if (!finite || (raised & FE_INVALID)) return std::nullopt;
  if (raised & FE_INEXACT) r.flags |= mips::kFpInexact;
  if (raised & FE_UNDERFLOW) r.flags |= mips::kFpUnderflow;
  if (raised & FE_OVERFLOW) r.flags |= mips::kFpOverflow;
  if (raised & FE_DIVBYZERO) r.flags |= mips::kFpDivideByZero;
  return r;
}

class Checker {
 public:
  Checker(const QemuTrace& trace, const machine::ElfImage& image) : trace_(trace), image_(image) {}

  FpuOracleReport Run() {
    report_.states = trace_.size();
    for (size_t k = 0; k < trace_.size(); ++k) Step(k);
    return std::move(report_);
  }

 private:
  void Known(const std::string& category) { ++report_.known_differences[category]; }

  void Mismatch(size_t k, uint32_t insn, const std::string& what) {
    ++report_.mismatch_count;
    if (report_.mismatches.size() >= kMaxReported) return;
    const QemuState& s = trace_[k];
    report_.mismatches.push_back(
        absl::StrFormat("state %d pc %016x insn %08x (%s), FR=%d FCR31 before %08x:\n%s", k, s.pc,
                        insn, Cop1Mnemonic(insn), s.fr, s.fcr31, what));
  }

  void Step(size_t k) {
    const QemuState& s = trace_[k];
    if (s.nullified_delay_slot()) return;  // not executed
    const auto word = image_.ReadWord32(s.pc);
    if (!word) return;
    const uint32_t insn = *word;
    const uint32_t op = insn >> 26;
    if (op == kOpLwc1 || op == kOpLdc1 || op == kOpSwc1 || op == kOpSdc1) {
      ++report_.fpu_instructions;
      ++report_.unchecked;
      return;
    }
    if (op != mips::kOpCop1) return;
    ++report_.fpu_instructions;
    if (!s.has_fpu || k + 1 >= trace_.size()) {
      ++report_.unchecked;
      return;
    }
    const QemuState& next = trace_[k + 1];
    Fpu fpu(s.fcr0);
    SeedFpu(s, fpu);
    const uint32_t rs = (insn >> 21) & 0x1F;
    const int rt = static_cast<int>((insn >> 16) & 0x1F);
    const int fs = static_cast<int>((insn >> 11) & 0x1F);
    const std::string mnemonic = Cop1Mnemonic(insn);
    const uint64_t gpr_mask = s.gpr64 ? ~uint64_t{0} : 0xFFFFFFFFull;
    std::string diff;
    switch (rs) {
      case 0:    // MFC1
      case 1:    // DMFC1
      case 2: {  // CFC1
        const uint64_t v = rs == 0   ? SignExtend32(fpu.ReadWord(fs))
                           : rs == 1 ? fpu.ReadDouble(fs)
                                     : SignExtend32(fpu.ReadControl(fs));
        if (rt != 0 && (v & gpr_mask) != (next.gpr[rt] & gpr_mask)) {
          diff = absl::StrFormat("r%d: qemu %016x, model %016x\n", rt, next.gpr[rt], v);
        }
        break;
      }
      case 4:  // MTC1
        fpu.WriteWord(fs, static_cast<uint32_t>(s.gpr[rt]));
        diff = FpuDiff(next, fpu);
        break;
      case 5:  // DMTC1
        fpu.WriteDouble(fs, s.gpr[rt]);
        diff = FpuDiff(next, fpu);
        break;
      case 6: {  // CTC1
        const uint32_t value = static_cast<uint32_t>(s.gpr[rt]);
        if (fpu.WriteControl(fs, value) != FpuOutcome::kOk) {
          diff = "model raised the FP exception, QEMU did not\n";
          break;
        }
        diff = FpuDiff(next, fpu);
        break;
      }
      case 8:  // BC1F, BC1T, BC1FL, BC1TL
        if (!CheckBranch(k, insn, fpu, &diff)) {
          ++report_.unchecked;
          return;
        }
        break;
      default:
        if (!Fpu::IsComputational(insn)) {
          ++report_.unchecked;
          return;
        }
        if (!CheckComputational(k, insn, fpu, next, &diff)) return;
        break;
    }
    Count(mnemonic);
    if (diff.empty()) {
      ++report_.exact;
    } else {
      Mismatch(k, insn, diff);
    }
  }

  void Count(const std::string& mnemonic) {
    ++report_.compared;
    ++report_.by_mnemonic[mnemonic];
  }

  // Returns false if the instruction was classified as a known difference (already counted).
  bool CheckComputational(size_t k, uint32_t insn, Fpu& fpu, const QemuState& next,
                          std::string* diff) {
    const QemuState& s = trace_[k];
    const FpuOutcome outcome = fpu.Execute(insn);
    if (outcome == FpuOutcome::kFpe &&
        ((fpu.fcsr() >> mips::kFcsrCauseShift) & mips::kFpUnimplemented)) {
      // QEMU completed the instruction (there is a next state); the R4400 traps to software.
      // QEMU must at least have left every register but the destination alone.
      Fpu untouched(s.fcr0);
      SeedFpu(s, untouched);
      Known("R4400 Unimplemented Operation (QEMU computes it): " + UnimplementedReason(s, insn));
      Count(Cop1Mnemonic(insn));
      const std::string d = FpuDiff(next, untouched);
      const mips::FpuRegisterUse use = Fpu::DescribeComputational(insn);
      if (!OnlyDestinationDiffers(d, use, s.fr)) {
        Mismatch(k, insn, "QEMU changed more than the destination and FCR31:\n" + d);
      }
      // Where software would compute a plain IEEE result (denormals, gradual underflow), QEMU's
      // value and flags must be exactly that result: what the kernel's emulator delivers on an
      // R4400, so taking QEMU's state in a lock-step is sound.
      if (auto ieee = IeeeCompletion(s, insn)) {
        const uint32_t cause = (next.fcr31 & mips::kFcsrCauseMask) >> mips::kFcsrCauseShift;
        const uint64_t got = use.is_double_dst ? next.FprDouble(use.dst) : next.FprWord(use.dst);
        if (got != ieee->bits || cause != ieee->flags) {
          Mismatch(k, insn,
                   absl::StrFormat("QEMU's result %016x cause %02x, IEEE %016x cause %02x\n", got,
                                   cause, ieee->bits, ieee->flags));
        } else {
          ++report_.ieee_verified;
        }
      }
      return false;
    }
    if (outcome != FpuOutcome::kOk) {
      *diff = absl::StrFormat("model outcome %d (trap), QEMU completed the instruction\n",
                              static_cast<int>(outcome));
      return true;
    }
    *diff = FpuDiff(next, fpu);
    if (!diff->empty() && IsAbsOrNeg(insn) &&
        ((fpu.fcsr() >> mips::kFcsrCauseShift) & mips::kFpInvalid)) {
      // A signalling NaN operand: the R4400 signals Invalid and delivers the default NaN; QEMU
      // only flips or clears the sign bit and leaves FCR31 alone.
      Fpu bitwise(s.fcr0);
      SeedFpu(s, bitwise);
      const int fs = static_cast<int>((insn >> 11) & 0x1F),
                fd = static_cast<int>((insn >> 6) & 0x1F);
      const bool neg = (insn & 0x3F) == 7;
      if (((insn >> 21) & 0x1F) == 17) {
        const uint64_t v = bitwise.ReadDouble(fs), sign = uint64_t{1} << 63;
        bitwise.WriteDouble(fd, neg ? v ^ sign : v & ~sign);
      } else {
        const uint32_t v = bitwise.ReadWord(fs), sign = 1u << 31;
        bitwise.WriteWord(fd, neg ? v ^ sign : v & ~sign);
      }
      if (FpuDiff(next, bitwise).empty()) {
        Known("ABS/NEG of a signalling NaN: QEMU flips the sign bit, the R4400 signals Invalid");
        Count(Cop1Mnemonic(insn));
        return false;
      }
    }
    if (!diff->empty() && IsAbsOrNeg(insn)) {
      // QEMU treats ABS/NEG as bit operations that leave FCR31 alone; the R4400 rewrites the
      // cause field (they are arithmetic). Same result otherwise?
      Fpu same(fpu);
      same.set_fcsr((fpu.fcsr() & ~mips::kFcsrCauseMask) | (s.fcr31 & mips::kFcsrCauseMask));
      if (FpuDiff(next, same).empty()) {
        Known("ABS/NEG: QEMU keeps FCR31.Cause, the R4400 rewrites it");
        Count(Cop1Mnemonic(insn));
        return false;
      }
    }
    return true;
  }

  // Is every line of `diff` about the destination register(s) or FCR31?
  static bool OnlyDestinationDiffers(const std::string& diff, const mips::FpuRegisterUse& use,
                                     bool fr) {
    std::vector<std::string> allowed = {"fcr31"};
    if (use.dst >= 0) {
      allowed.push_back(absl::StrCat("f", static_cast<int>(use.dst)));
      if (use.is_double_dst && !fr) allowed.push_back(absl::StrCat("f", use.dst + 1));
    }
    size_t pos = 0;
    while (pos < diff.size()) {
      size_t end = diff.find('\n', pos);
      if (end == std::string::npos) end = diff.size();
      const std::string line = diff.substr(pos, end - pos);
      const std::string name = line.substr(0, line.find(':'));
      bool ok = false;
      for (const std::string& a : allowed) ok = ok || name == a;
      if (!ok) return false;
      pos = end + 1;
    }
    return true;
  }

  bool CheckBranch(size_t k, uint32_t insn, const Fpu& fpu, std::string* diff) {
    const QemuState& s = trace_[k];
    const bool tf = (insn >> 16) & 1, likely = (insn >> 17) & 1;
    const bool taken = fpu.condition() == tf;
    const uint64_t offset = SignExtend32(static_cast<uint32_t>(static_cast<int16_t>(insn & 0xFFFF)))
                            << 2;
    const uint64_t mask = s.gpr64 ? ~uint64_t{0} : 0xFFFFFFFFull;
    const uint64_t target = (s.pc + 4 + offset) & mask;
    if (likely && !taken) {
      // QEMU logs the nullified delay slot as a state that changes nothing.
      size_t after = k + 1;
      if (trace_[after].pc == ((s.pc + 4) & mask) && trace_[after].nullified_delay_slot()) {
        if (k + 2 >= trace_.size()) return false;
        after = k + 2;
      }
      if (trace_[after].pc != ((s.pc + 8) & mask)) {
        *diff = absl::StrFormat("not taken, delay slot nullified: expected pc %x, qemu %x\n",
                                s.pc + 8, trace_[after].pc);
      }
      return true;
    }
    if (trace_[k + 1].nullified_delay_slot()) {
      *diff = "taken, but QEMU nullified the delay slot\n";
      return true;
    }
    if (k + 2 >= trace_.size()) return false;
    if (trace_[k + 1].pc != ((s.pc + 4) & mask)) {
      *diff = absl::StrFormat("delay slot: expected pc %x, qemu %x\n", s.pc + 4, trace_[k + 1].pc);
      return true;
    }
    const uint64_t expect = taken ? target : (s.pc + 8) & mask;
    if (trace_[k + 2].pc != expect) {
      *diff = absl::StrFormat("%s: expected pc %x, qemu %x\n", taken ? "taken" : "not taken",
                              expect, trace_[k + 2].pc);
    }
    return true;
  }

  static std::string FpuDiff(const QemuState& expected, const Fpu& fpu) {
    ArchSnapshot a;
    FillFpu(fpu, &a);
    QemuState e = expected;
    e.pc = 0;  // compare only the FPU
    DiffOptions o;
    o.compare_gprs = false;
    o.compare_hilo = false;
    return DiffStates(e, a, o);
  }

  const QemuTrace& trace_;
  const machine::ElfImage& image_;
  FpuOracleReport report_;
};

}  // namespace

std::string Cop1Mnemonic(uint32_t insn) {
  const uint32_t op = insn >> 26;
  switch (op) {
    case kOpLwc1:
      return "lwc1";
    case kOpLdc1:
      return "ldc1";
    case kOpSwc1:
      return "swc1";
    case kOpSdc1:
      return "sdc1";
    case mips::kOpCop1:
      break;
    default:
      return "";
  }
  const uint32_t rs = (insn >> 21) & 0x1F, fn = insn & 0x3F;
  switch (rs) {
    case 0:
      return "mfc1";
    case 1:
      return "dmfc1";
    case 2:
      return "cfc1";
    case 4:
      return "mtc1";
    case 5:
      return "dmtc1";
    case 6:
      return "ctc1";
    case 8: {
      static const char* kBc[4] = {"bc1f", "bc1t", "bc1fl", "bc1tl"};
      return kBc[(insn >> 16) & 3];
    }
    default:
      break;
  }
  if (rs < 16) return "cop1.reserved";
  const char* f = FmtSuffix(rs);
  if (fn >= 48) return absl::StrCat("c.", kConds[fn & 15], ".", f);
  static const char* kNames[16] = {"add",     "sub",     "mul",     "div",     "sqrt",   "abs",
                                   "mov",     "neg",     "round.l", "trunc.l", "ceil.l", "floor.l",
                                   "round.w", "trunc.w", "ceil.w",  "floor.w"};
  if (fn < 16) return absl::StrCat(kNames[fn], ".", f);
  switch (fn) {
    case 32:
      return absl::StrCat("cvt.s.", f);
    case 33:
      return absl::StrCat("cvt.d.", f);
    case 36:
      return absl::StrCat("cvt.w.", f);
    case 37:
      return absl::StrCat("cvt.l.", f);
    default:
      return absl::StrCat("cop1.fn", fn, ".", f);
  }
}

FpuOracleReport CheckFpuAgainstQemu(const QemuTrace& trace, const machine::ElfImage& image) {
  return Checker(trace, image).Run();
}

std::string FpuOracleReport::Summary() const {
  std::string out = absl::StrFormat(
      "%d states, %d FPU instructions, %d compared, %d exact, %d unchecked, %d mismatches\n",
      states, fpu_instructions, compared, exact, unchecked, mismatch_count);
  if (ieee_verified != 0) {
    absl::StrAppendFormat(&out,
                          "  %d R4400 Unimplemented Operations where QEMU's result is the host's "
                          "IEEE result\n",
                          ieee_verified);
  }
  for (const auto& [category, n] : known_differences) {
    absl::StrAppendFormat(&out, "  known difference x%d: %s\n", n, category);
  }
  out += "  compared:";
  for (const auto& [m, n] : by_mnemonic) absl::StrAppendFormat(&out, " %s=%d", m, n);
  out += "\n";
  for (const std::string& m : mismatches) out += "MISMATCH " + m;
  return out;
}

}  // namespace citcat::oracle
