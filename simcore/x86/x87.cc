// The x87 instruction layer: see x87.h and docs/machines/i486-fpu.md, "x87 instructions".
#include "simcore/x86/x87.h"

#include <cstring>

#include "simcore/x86/fpu/arith.h"
#include "simcore/x86/fpu/compare.h"
#include "simcore/x86/fpu/convert.h"
#include "simcore/x86/fpu/transcendental.h"

namespace citcat::x86 {
namespace {

uint64_t Le(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}
void PutLe(uint8_t* p, int n, uint64_t v) {
  for (int i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
Float80 ReadF80(const uint8_t* p) { return Float80{Le(p, 8), static_cast<uint16_t>(Le(p + 8, 2))}; }
void WriteF80(uint8_t* p, Float80 v) {
  PutLe(p, 8, v.signif);
  PutLe(p + 8, 2, v.sign_exp);
}

// A memory operand of an arithmetic or compare instruction, as the operation sees it: an SNaN stays
// signaling (the operation raises IE and picks the NaN as the 486 does) and a denormal single or
// double is normalized, its DE decided by the caller.
struct MemOperand {
  Float80 value;
  bool denormal = false;
};
MemOperand ReadOperand(const Instruction& in, const uint8_t* mem) {
  const bool integer = in.op >= Op::kFiadd && in.op <= Op::kFidivr;
  if (integer) {
    const int64_t v =
        in.mem_size == 2 ? static_cast<int16_t>(Le(mem, 2)) : static_cast<int32_t>(Le(mem, 4));
    return {FromInt64(v), false};
  }
  const FpResult r = in.mem_size == 4 ? FromFloat32(static_cast<uint32_t>(Le(mem, 4)), kExAll)
                                      : FromFloat64(Le(mem, 8), kExAll);
  MemOperand m{r.value, (r.flags & kExDenormal) != 0};
  if (r.flags & kExInvalid) m.value.signif &= ~kF80QuietBit;  // back to the signaling NaN
  return m;
}

// The DE a normalized denormal memory operand adds: none when the operation already raised IE or
// ZE, or propagated a NaN from the other operand (those outrank DE); an unmasked DE suppresses the
// result.
void AddMemoryDenormal(const MemOperand& m, Float80 other, uint16_t cw, uint16_t* flags,
                       bool* store) {
  if (!m.denormal || (*flags & (kExInvalid | kExZeroDivide)) || IsNaN(Classify(other))) return;
  if (!(cw & kExDenormal)) {
    *flags = kExDenormal;
    *store = false;
    return;
  }
  *flags |= kExDenormal;
}

// The constants as 64-bit truncations of the exact values with the direction nearest rounding
// takes (none is near a tie). Rounded under RC, as from the 387 on; PC does not apply.
struct Constant {
  uint16_t sign_exp;
  uint64_t truncated;
  bool nearest_up;
};
Float80 ConstantValue(Op op, Rounding rc) {
  Constant c{};
  switch (op) {
    case Op::kFld1:
      return Float80{kF80IntegerBit, 0x3FFF};
    case Op::kFldz:
      return Float80{0, 0};
    case Op::kFldl2t:
      c = {0x4000, 0xD49A784BCD1B8AFEull, false};
      break;
    case Op::kFldl2e:
      c = {0x3FFF, 0xB8AA3B295C17F0BBull, true};
      break;
    case Op::kFldpi:
      c = {0x4000, 0xC90FDAA22168C234ull, true};
      break;
    case Op::kFldlg2:
      c = {0x3FFD, 0x9A209A84FBCFF798ull, true};
      break;
    default:  // kFldln2
      c = {0x3FFE, 0xB17217F7D1CF79ABull, true};
      break;
  }
  const bool up = rc == Rounding::kUp || (rc == Rounding::kNearest && c.nearest_up);
  return Float80{c.truncated + (up ? 1 : 0), c.sign_exp};
}

bool IsReversed(Op op) {
  return op == Op::kFsubr || op == Op::kFsubrp || op == Op::kFisubr || op == Op::kFdivr ||
         op == Op::kFdivrp || op == Op::kFidivr;
}

FpResult Operate(Op op, Float80 a, Float80 b, uint16_t cw) {
  switch (op) {
    case Op::kFadd:
    case Op::kFaddp:
    case Op::kFiadd:
      return Add(a, b, cw);
    case Op::kFmul:
    case Op::kFmulp:
    case Op::kFimul:
      return Mul(a, b, cw);
    case Op::kFsub:
    case Op::kFsubp:
    case Op::kFisub:
    case Op::kFsubr:
    case Op::kFsubrp:
    case Op::kFisubr:
      return Sub(a, b, cw);
    default:
      return Div(a, b, cw);
  }
}

uint16_t TagOf(Float80 v) {
  const F80Class c = Classify(v);
  if (c == F80Class::kZero) return 1;
  if (c == F80Class::kNormal) return 0;
  return 2;
}

}  // namespace

void Fpu::Reset() {
  regs_.fill(Float80{});
  empty_ = 0;
  top_ = 0;
  cw_ = 0x0040;
  sw_ = 0;
  fcs_ = fds_ = fop_ = 0;
  fip_ = fdp_ = 0;
}

void Fpu::Init() {
  empty_ = 0xFF;
  top_ = 0;
  cw_ = kDefaultControlWord;
  sw_ = 0;
  fcs_ = fds_ = fop_ = 0;
  fip_ = fdp_ = 0;
}

uint16_t Fpu::status_word() const {
  uint16_t sw = static_cast<uint16_t>((sw_ & ~(0x3800 | kSwErrorSummary | kSwBusy)) | top_ << 11);
  if (ferr()) sw |= kSwErrorSummary | kSwBusy;
  return sw;
}

void Fpu::set_status_word(uint16_t sw) {
  sw_ = sw & (kSwC3 | kSwC2 | kSwC1 | kSwC0 | kSwStackFault | kExAll);
  top_ = (sw >> 11) & 7;
}

void Fpu::SetEmptyFromTags(uint16_t tw) {
  empty_ = 0;
  for (int r = 0; r < 8; ++r) {
    if (((tw >> (2 * r)) & 3) == 3) empty_ |= 1u << r;
  }
}

FpuState Fpu::state() const {
  return FpuState{regs_, cw_, status_word(), tag_word(), fcs_, fds_, fop_, fip_, fdp_};
}

void Fpu::set_state(const FpuState& s) {
  regs_ = s.physical;
  cw_ = s.cw;
  set_status_word(s.sw);
  SetEmptyFromTags(s.tw);
  fcs_ = s.fcs;
  fds_ = s.fds;
  fop_ = s.opcode & 0x7FF;
  fip_ = s.fip;
  fdp_ = s.fdp;
}

uint16_t Fpu::tag_word() const {
  uint16_t tw = 0;
  for (int r = 0; r < 8; ++r) {
    const uint16_t tag = (empty_ & (1u << r)) ? 3 : TagOf(regs_[r]);
    tw |= static_cast<uint16_t>(tag << (2 * r));
  }
  return tw;
}

void Fpu::Flag(uint16_t flags, bool c1) {
  sw_ |= flags & kExAll;
  sw_ = c1 ? (sw_ | kSwC1) : (sw_ & ~kSwC1);
}

bool Fpu::StackUnderflow() {
  sw_ |= kExInvalid | kSwStackFault;
  sw_ &= ~kSwC1;
  return Masked(kExInvalid);
}

bool Fpu::StackOverflow() {
  sw_ |= kExInvalid | kSwStackFault | kSwC1;
  return Masked(kExInvalid);
}

void Fpu::PushChecked(Float80 v, uint16_t flags, bool deliver) {
  if (!Empty(7)) {
    if (StackOverflow()) Push(kRealIndefinite);
    return;
  }
  Flag(flags, false);
  if (deliver) Push(v);
}

bool Fpu::ReadsMemory(Op op) {
  switch (op) {
    case Op::kFld:
    case Op::kFild:
    case Op::kFbld:
    case Op::kFldcw:
    case Op::kFldenv:
    case Op::kFrstor:
      return true;
    default:
      return (op >= Op::kFadd && op <= Op::kFdivr) || (op >= Op::kFiadd && op <= Op::kFidivr);
  }
}

bool Fpu::WritesMemory(Op op) {
  switch (op) {
    case Op::kFst:
    case Op::kFstp:
    case Op::kFist:
    case Op::kFistp:
    case Op::kFbstp:
    case Op::kFnstcw:
    case Op::kFnstsw:
    case Op::kFnstenv:
    case Op::kFnsave:
      return true;
    default:
      return false;
  }
}

Fpu::Outcome Fpu::Execute(const Instruction& in, const Where& where, uint8_t* mem) {
  const Op op = in.op;
  const bool memory = in.dst == Operand::kMem;
  Outcome out;
  // Control instructions leave the instruction and data pointers and the opcode alone.
  switch (op) {
    case Op::kFninit:
      Init();
      return out;
    case Op::kFnclex:
      sw_ &= ~(kExAll | kSwStackFault);
      return out;
    case Op::kFldcw:
      cw_ = static_cast<uint16_t>(Le(mem, 2));
      return out;
    case Op::kFnstcw:
      PutLe(mem, 2, cw_);
      out.write_memory = true;
      return out;
    case Op::kFnstsw:
      if (memory) {
        PutLe(mem, 2, status_word());
        out.write_memory = true;
      } else {
        out.write_ax = true;
        out.ax = status_word();
      }
      return out;
    case Op::kFnstenv:
      StoreEnvironment(in, where.real, mem);
      cw_ |= kExAll;  // FSTENV masks every exception once the image is out
      out.write_memory = true;
      return out;
    case Op::kFldenv:
      LoadEnvironment(in, where.real, mem);
      return out;
    case Op::kFnsave: {
      StoreEnvironment(in, where.real, mem);
      const int env = in.opsize == 4 ? 28 : 14;
      for (int i = 0; i < 8; ++i) WriteF80(mem + env + 10 * i, st(i));
      Init();
      out.write_memory = true;
      return out;
    }
    case Op::kFrstor: {
      LoadEnvironment(in, where.real, mem);
      const int env = in.opsize == 4 ? 28 : 14;
      for (int i = 0; i < 8; ++i) regs_[Physical(i)] = ReadF80(mem + env + 10 * i);
      return out;
    }
    default:
      break;
  }

  fcs_ = where.cs;
  fip_ = where.ip;
  fop_ = static_cast<uint16_t>((in.opcode & 7) << 8 | in.modrm);
  if (memory) {
    fds_ = where.ds;
    fdp_ = where.dp;
  }

  switch (op) {
    case Op::kFadd:
    case Op::kFmul:
    case Op::kFsub:
    case Op::kFsubr:
    case Op::kFdiv:
    case Op::kFdivr:
    case Op::kFaddp:
    case Op::kFmulp:
    case Op::kFsubp:
    case Op::kFsubrp:
    case Op::kFdivp:
    case Op::kFdivrp:
    case Op::kFiadd:
    case Op::kFimul:
    case Op::kFisub:
    case Op::kFisubr:
    case Op::kFidiv:
    case Op::kFidivr:
      Arith(in, mem);
      return out;
    case Op::kFcom:
    case Op::kFcomp:
    case Op::kFcompp:
    case Op::kFucom:
    case Op::kFucomp:
    case Op::kFucompp:
    case Op::kFicom:
    case Op::kFicomp:
    case Op::kFtst:
      Compare(in, mem);
      return out;
    case Op::kFld:
    case Op::kFild:
    case Op::kFbld:
    case Op::kFld1:
    case Op::kFldl2t:
    case Op::kFldl2e:
    case Op::kFldpi:
    case Op::kFldlg2:
    case Op::kFldln2:
    case Op::kFldz:
      Load(in, mem);
      return out;
    case Op::kFst:
    case Op::kFstp:
    case Op::kFist:
    case Op::kFistp:
    case Op::kFbstp:
      return Store(in, mem);
    case Op::kFxch: {
      const int i = in.rm;
      if (Empty(0) || Empty(i)) {
        if (!StackUnderflow()) return out;
        if (Empty(0)) Set(0, kRealIndefinite);
        if (Empty(i)) Set(i, kRealIndefinite);
      } else {
        sw_ &= ~kSwC1;
      }
      const Float80 t = st(0);
      Set(0, st(i));
      Set(i, t);
      return out;
    }
    case Op::kFxam: {
      const F80Class c = Classify(st(0));
      uint16_t codes;
      if (Empty(0)) {
        codes = kSwC3 | kSwC0;
      } else {
        switch (c) {
          case F80Class::kZero:
            codes = kSwC3;
            break;
          case F80Class::kDenormal:
          case F80Class::kPseudoDenormal:
            codes = kSwC3 | kSwC2;
            break;
          case F80Class::kNormal:
            codes = kSwC2;
            break;
          case F80Class::kInfinity:
            codes = kSwC2 | kSwC0;
            break;
          case F80Class::kQuietNaN:
          case F80Class::kSignalingNaN:
            codes = kSwC0;
            break;
          default:
            codes = 0;
            break;
        }
      }
      SetCodes(codes);
      sw_ = st(0).sign() ? (sw_ | kSwC1) : (sw_ & ~kSwC1);
      return out;
    }
    case Op::kFdecstp:
      top_ = (top_ - 1) & 7;
      sw_ &= ~kSwC1;
      return out;
    case Op::kFincstp:
      top_ = (top_ + 1) & 7;
      sw_ &= ~kSwC1;
      return out;
    case Op::kFfree:
      empty_ |= 1u << Physical(in.rm);
      return out;
    case Op::kFfreep:
      empty_ |= 1u << Physical(in.rm);
      Pop();
      return out;
    case Op::kFnop:
      return out;
    case Op::kFchs:
    case Op::kFabs:
    case Op::kFsqrt:
    case Op::kFrndint:
    case Op::kFscale:
    case Op::kFxtract:
    case Op::kFprem:
    case Op::kFprem1:
      Unary(op);
      return out;
    default:  // F2XM1, FYL2X, FYL2XP1, FPATAN, FSIN, FCOS, FSINCOS, FPTAN
      out.unmodelled = !Transcendental(op);
      return out;
  }
}

// FADD ... FDIVR in all forms: dst = dst op src (reversed: src op dst), Intel operand order.
void Fpu::Arith(const Instruction& in, const uint8_t* mem) {
  const bool pop = in.op >= Op::kFaddp && in.op <= Op::kFdivrp;
  const bool reversed = IsReversed(in.op);
  int dst = 0;
  Float80 d, s;
  MemOperand m;
  if (in.dst == Operand::kMem) {
    if (Empty(0)) {
      if (StackUnderflow()) Set(0, kRealIndefinite);
      return;
    }
    m = ReadOperand(in, mem);
    d = st(0);
    s = m.value;
  } else {
    const int src = in.dst == Operand::kSt0 ? in.rm : 0;
    dst = in.dst == Operand::kSt0 ? 0 : in.rm;
    if (Empty(dst) || Empty(src)) {
      if (StackUnderflow()) {
        Set(dst, kRealIndefinite);
        if (pop) Pop();
      }
      return;
    }
    d = st(dst);
    s = st(src);
  }
  FpResult r = reversed ? Operate(in.op, s, d, cw_) : Operate(in.op, d, s, cw_);
  AddMemoryDenormal(m, d, cw_, &r.flags, &r.store);
  Flag(r.flags, r.c1);
  if (!r.store) return;
  Set(dst, r.value);
  if (pop) Pop();
}

void Fpu::Compare(const Instruction& in, const uint8_t* mem) {
  const Op op = in.op;
  const int pops = (op == Op::kFcompp || op == Op::kFucompp)                      ? 2
                   : (op == Op::kFcomp || op == Op::kFucomp || op == Op::kFicomp) ? 1
                                                                                  : 0;
  const bool quiet = op == Op::kFucom || op == Op::kFucomp || op == Op::kFucompp;
  const int other = (op == Op::kFcompp || op == Op::kFucompp) ? 1 : in.rm;
  const bool with_memory = in.dst == Operand::kMem;
  const bool with_zero = op == Op::kFtst;
  if (Empty(0) || (!with_memory && !with_zero && Empty(other))) {
    if (StackUnderflow()) {
      SetCodes(kCompareCodeMask);
      for (int i = 0; i < pops; ++i) Pop();
    }
    return;
  }
  MemOperand m;
  Float80 b;
  if (with_memory) {
    m = ReadOperand(in, mem);
    b = m.value;
  } else {
    b = with_zero ? Float80{} : st(other);
  }
  const FpCompareResult c = x86::Compare(st(0), b, quiet);
  uint16_t flags = c.flags;
  bool store = !(flags & ~cw_ & kExAll);
  AddMemoryDenormal(m, st(0), cw_, &flags, &store);
  Flag(flags, false);
  if (!store) return;
  SetCodes(ConditionCodes(c.order));
  for (int i = 0; i < pops; ++i) Pop();
}

void Fpu::Load(const Instruction& in, const uint8_t* mem) {
  switch (in.op) {
    case Op::kFld:
      if (in.dst == Operand::kSti) {
        // ST(i) is read before the push; an empty one loads real indefinite (masked).
        if (!Empty(7)) {
          if (StackOverflow()) Push(kRealIndefinite);
        } else if (Empty(in.rm)) {
          if (StackUnderflow()) Push(kRealIndefinite);
        } else {
          PushChecked(st(in.rm));
        }
        return;
      }
      if (in.mem_size == 10) return PushChecked(ReadF80(mem));
      {
        const FpResult r = in.mem_size == 4 ? FromFloat32(static_cast<uint32_t>(Le(mem, 4)), cw_)
                                            : FromFloat64(Le(mem, 8), cw_);
        if (!Empty(7)) return PushChecked(r.value);
        return PushChecked(r.value, r.flags, r.store);
      }
    case Op::kFild: {
      const int64_t v = in.mem_size == 2   ? static_cast<int16_t>(Le(mem, 2))
                        : in.mem_size == 4 ? static_cast<int32_t>(Le(mem, 4))
                                           : static_cast<int64_t>(Le(mem, 8));
      return PushChecked(FromInt64(v));
    }
    case Op::kFbld: {
      PackedBcd bcd;
      std::memcpy(bcd.data(), mem, bcd.size());
      return PushChecked(FromBcd(bcd));
    }
    default:
      return PushChecked(ConstantValue(in.op, RoundingOf(cw_)));
  }
}

Fpu::Outcome Fpu::Store(const Instruction& in, uint8_t* mem) {
  Outcome out;
  const bool pop = in.op == Op::kFstp || in.op == Op::kFistp || in.op == Op::kFbstp;
  if (in.dst == Operand::kSti) {  // FST/FSTP ST(i): a copy
    if (Empty(0)) {
      if (!StackUnderflow()) return out;
      Set(in.rm, kRealIndefinite);
    } else {
      sw_ &= ~kSwC1;
      Set(in.rm, st(0));
    }
    if (pop) Pop();
    return out;
  }
  const bool empty = Empty(0);
  if (empty && !StackUnderflow()) return out;
  const Float80 x = empty ? kRealIndefinite : st(0);
  // An empty source stores the indefinite of the format: convert real indefinite with IE masked.
  const uint16_t cw = empty ? static_cast<uint16_t>(cw_ | kExAll) : cw_;
  uint16_t flags = 0;
  bool c1 = false, store = true;
  const auto take = [&](const auto& s) {
    flags = s.flags;
    c1 = s.c1;
    store = s.store;
    return s.value;
  };
  const int size = in.mem_size;
  if (in.op == Op::kFst || in.op == Op::kFstp) {
    if (size == 4) {
      PutLe(mem, 4, take(ToFloat32(x, cw)));
    } else if (size == 8) {
      PutLe(mem, 8, take(ToFloat64(x, cw)));
    } else {
      WriteF80(mem, x);
    }
  } else if (in.op == Op::kFbstp) {
    const PackedBcd bcd = take(ToBcd(x, cw));
    std::memcpy(mem, bcd.data(), bcd.size());
  } else if (size == 2) {
    PutLe(mem, 2, static_cast<uint16_t>(take(ToInt16(x, cw))));
  } else if (size == 4) {
    PutLe(mem, 4, static_cast<uint32_t>(take(ToInt32(x, cw))));
  } else {
    PutLe(mem, 8, static_cast<uint64_t>(take(ToInt64(x, cw))));
  }
  if (empty) flags &= ~kExInvalid;  // already reported as the stack fault
  if (!empty) Flag(flags, c1);
  if (!store) return out;
  out.write_memory = true;
  if (pop) Pop();
  return out;
}

// FCHS, FABS, FSQRT, FRNDINT on ST(0); FSCALE, FPREM, FPREM1 on ST(0) and ST(1); FXTRACT.
void Fpu::Unary(Op op) {
  const bool binary = op == Op::kFscale || op == Op::kFprem || op == Op::kFprem1;
  if (Empty(0) || (binary && Empty(1))) {
    if (!StackUnderflow()) return;
    Set(0, kRealIndefinite);
    if (op == Op::kFxtract) PushChecked(kRealIndefinite);
    if (op == Op::kFprem || op == Op::kFprem1) SetCodes(0);
    return;
  }
  const Float80 a = st(0);
  FpResult r;
  switch (op) {
    case Op::kFchs:
      sw_ &= ~kSwC1;
      Set(0, Float80{a.signif, static_cast<uint16_t>(a.sign_exp ^ 0x8000)});
      return;
    case Op::kFabs:
      sw_ &= ~kSwC1;
      Set(0, Float80{a.signif, static_cast<uint16_t>(a.sign_exp & 0x7FFF)});
      return;
    case Op::kFsqrt:
      r = Sqrt(a, cw_);
      break;
    case Op::kFrndint:
      r = RoundToInteger(a, cw_);
      break;
    case Op::kFscale:
      r = Scale(a, st(1), cw_);
      break;
    case Op::kFxtract: {
      if (!Empty(7)) {
        if (StackOverflow()) {
          Set(0, kRealIndefinite);
          Push(kRealIndefinite);
        }
        return;
      }
      const FpExtract e = Extract(a, cw_);
      Flag(e.flags, false);
      if (!e.store) return;
      Set(0, e.exponent);
      Push(e.significand);
      return;
    }
    default: {  // FPREM, FPREM1
      const FpRemainder p = Remainder(a, st(1), cw_, op == Op::kFprem1);
      Flag(p.result.flags, false);
      if (!p.result.store) return;
      Set(0, p.result.value);
      const uint8_t q = p.quotient;
      uint16_t codes = p.partial ? kSwC2 : 0;
      if (!p.partial) codes |= ((q & 4) ? kSwC0 : 0) | ((q & 2) ? kSwC3 : 0);
      SetCodes(codes);
      sw_ = (!p.partial && (q & 1)) ? (sw_ | kSwC1) : (sw_ & ~kSwC1);
      return;
    }
  }
  Flag(r.flags, r.c1);
  if (r.store) Set(0, r.value);
}

// Returns false where the i486 leaves the result undefined (the caller stops as unmodelled).
bool Fpu::Transcendental(Op op) {
  const bool binary = op == Op::kFyl2x || op == Op::kFyl2xp1 || op == Op::kFpatan;
  const bool pushes = op == Op::kFptan || op == Op::kFsincos;
  if (Empty(0) || (binary && Empty(1))) {
    if (!StackUnderflow()) return true;
    if (binary) {
      Set(1, kRealIndefinite);
      Pop();
    } else {
      Set(0, kRealIndefinite);
      if (pushes) PushChecked(kRealIndefinite);
    }
    return true;
  }
  const Float80 x = st(0);
  FpTranscendental t;
  switch (op) {
    case Op::kF2xm1:
      t = Exp2Minus1(x, cw_);
      break;
    case Op::kFyl2x:
      t = YLog2X(st(1), x, cw_);
      break;
    case Op::kFyl2xp1:
      t = YLog2XPlus1(st(1), x, cw_);
      break;
    case Op::kFpatan:
      t = Atan2(st(1), x, cw_);
      break;
    default: {
      // FSIN, FCOS, FSINCOS, FPTAN: |x| >= 2^63 sets C2 and changes nothing.
      if (!TrigInRange(x)) {
        sw_ |= kSwC2;
        return true;
      }
      sw_ &= ~kSwC2;
      if (pushes && !Empty(7)) {
        if (StackOverflow()) {
          Set(0, kRealIndefinite);
          Push(kRealIndefinite);
        }
        return true;
      }
      if (op == Op::kFsincos) {
        const FpTranscendental s = Trig(TrigFunction::kSin, x, cw_);
        const FpTranscendental c = Trig(TrigFunction::kCos, x, cw_);
        if (!s.modelled || !c.modelled) return false;
        Flag(s.result.flags | c.result.flags, c.result.c1);
        if (!s.result.store || !c.result.store) return true;
        Set(0, s.result.value);
        Push(c.result.value);
        return true;
      }
      t = Trig(op == Op::kFsin   ? TrigFunction::kSin
               : op == Op::kFcos ? TrigFunction::kCos
                                 : TrigFunction::kTan,
               x, cw_);
      break;
    }
  }
  if (!t.modelled) return false;
  Flag(t.result.flags, t.result.c1);
  if (!t.result.store) return true;
  if (binary) {
    Set(1, t.result.value);
    Pop();
  } else {
    Set(0, t.result.value);
    if (op == Op::kFptan) Push(Float80{kF80IntegerBit, kF80Bias});
  }
  return true;
}

// The environment image (FSTENV/FLDENV, the head of FSAVE/FRSTOR) in its four layouts. Real-mode
// layouts hold the 20-bit (16-bit form) or 32-bit linear instruction and operand addresses
// (selector * 16 + offset) and the opcode; protected-mode layouts hold selector and offset, and the
// 32-bit one the opcode too. Reserved bits are stored as 0 and ignored on load.
void Fpu::StoreEnvironment(const Instruction& in, bool real, uint8_t* mem) const {
  const uint32_t ip = real ? (uint32_t{fcs_} << 4) + fip_ : fip_;
  const uint32_t dp = real ? (uint32_t{fds_} << 4) + fdp_ : fdp_;
  const uint16_t words[3] = {cw_, status_word(), tag_word()};
  if (in.opsize == 4) {
    std::memset(mem, 0, 28);
    for (int i = 0; i < 3; ++i) PutLe(mem + 4 * i, 2, words[i]);
    if (real) {
      PutLe(mem + 12, 2, ip & 0xFFFF);
      PutLe(mem + 16, 4, (ip >> 16) << 12 | fop_);
      PutLe(mem + 20, 2, dp & 0xFFFF);
      PutLe(mem + 24, 4, (dp >> 16) << 12);
    } else {
      PutLe(mem + 12, 4, fip_);
      PutLe(mem + 16, 4, uint32_t{fop_} << 16 | fcs_);
      PutLe(mem + 20, 4, fdp_);
      PutLe(mem + 24, 2, fds_);
    }
    return;
  }
  for (int i = 0; i < 3; ++i) PutLe(mem + 2 * i, 2, words[i]);
  if (real) {
    PutLe(mem + 6, 2, ip & 0xFFFF);
    PutLe(mem + 8, 2, ((ip >> 16) & 0xF) << 12 | fop_);
    PutLe(mem + 10, 2, dp & 0xFFFF);
    PutLe(mem + 12, 2, ((dp >> 16) & 0xF) << 12);
  } else {
    PutLe(mem + 6, 2, fip_ & 0xFFFF);
    PutLe(mem + 8, 2, fcs_);
    PutLe(mem + 10, 2, fdp_ & 0xFFFF);
    PutLe(mem + 12, 2, fds_);
  }
}

// Loads the pointers back so that a real-mode image stored again reproduces itself: the linear
// addresses go to the offsets with selector 0. Only the empty/non-empty state of each tag is kept
// (the others are derived from the registers, see tag_word()); ES and B follow the flags and masks.
void Fpu::LoadEnvironment(const Instruction& in, bool real, const uint8_t* mem) {
  const int step = in.opsize == 4 ? 4 : 2;
  cw_ = static_cast<uint16_t>(Le(mem, 2));
  const uint16_t sw = static_cast<uint16_t>(Le(mem + step, 2));
  const uint16_t tw = static_cast<uint16_t>(Le(mem + 2 * step, 2));
  set_status_word(sw);
  SetEmptyFromTags(tw);
  if (in.opsize == 4) {
    if (real) {
      fip_ = static_cast<uint32_t>(Le(mem + 12, 2) | ((Le(mem + 16, 4) >> 12) & 0xFFFF) << 16);
      fop_ = static_cast<uint16_t>(Le(mem + 16, 2) & 0x7FF);
      fdp_ = static_cast<uint32_t>(Le(mem + 20, 2) | ((Le(mem + 24, 4) >> 12) & 0xFFFF) << 16);
      fcs_ = fds_ = 0;
    } else {
      fip_ = static_cast<uint32_t>(Le(mem + 12, 4));
      fcs_ = static_cast<uint16_t>(Le(mem + 16, 2));
      fop_ = static_cast<uint16_t>(Le(mem + 18, 2) & 0x7FF);
      fdp_ = static_cast<uint32_t>(Le(mem + 20, 4));
      fds_ = static_cast<uint16_t>(Le(mem + 24, 2));
    }
    return;
  }
  if (real) {
    const uint32_t w4 = static_cast<uint32_t>(Le(mem + 8, 2));
    fip_ = static_cast<uint32_t>(Le(mem + 6, 2)) | (w4 >> 12) << 16;
    fop_ = static_cast<uint16_t>(w4 & 0x7FF);
    fdp_ = static_cast<uint32_t>(Le(mem + 10, 2) | (Le(mem + 12, 2) >> 12) << 16);
    fcs_ = fds_ = 0;
  } else {
    fip_ = static_cast<uint32_t>(Le(mem + 6, 2));
    fcs_ = static_cast<uint16_t>(Le(mem + 8, 2));
    fdp_ = static_cast<uint32_t>(Le(mem + 10, 2));
    fds_ = static_cast<uint16_t>(Le(mem + 12, 2));
  }
}

}  // namespace citcat::x86
