// The straight path: Run's loop for the common case and the predecoded forms of compiled code,
// each run by a handler made for its operation and operand size. Everything here does what
// Execute does for the same instruction; tests prove it by running with and without the fast
// paths (Cpu::set_fast_paths).
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "simcore/x86/alu.h"
#include "simcore/x86/cpu.h"

namespace citcat::x86 {

struct StraightForms {
  using P = Cpu::Predecoded;

  static constexpr bool Writes(Op op) { return op != Op::kCmp && op != Op::kTest; }

  template <Op op, int size>
  static bool AluRegReg(Cpu& c, const P& p) {
    const uint32_t r =
        Alu<op, size>(c.eflags_, c.ReadReg(p.dst_reg, size), c.ReadReg(p.src_reg, size));
    if constexpr (Writes(op)) c.WriteReg(p.dst_reg, size, r);
    return true;
  }
  template <Op op, int size>
  static bool AluRegImm(Cpu& c, const P& p) {
    const uint32_t r = Alu<op, size>(c.eflags_, c.ReadReg(p.dst_reg, size), p.in.imm);
    if constexpr (Writes(op)) c.WriteReg(p.dst_reg, size, r);
    return true;
  }
  template <Op op, int size>
  static bool AluRegMem(Cpu& c, const P& p) {
    uint32_t value;
    if (!c.ReadMem(p.in.seg, c.EffectiveAddress(p.in), size, &value)) return false;
    const uint32_t r = Alu<op, size>(c.eflags_, c.ReadReg(p.dst_reg, size), value);
    if constexpr (Writes(op)) c.WriteReg(p.dst_reg, size, r);
    return true;
  }
  // Reads [mem], combines it and writes it back; a write that faults leaves the flags as they
  // were (the instruction did not happen).
  template <Op op, int size, typename F>
  static bool ReadModifyWrite(Cpu& c, const P& p, F f) {
    const uint32_t ea = c.EffectiveAddress(p.in);
    uint32_t a;
    if (!c.ReadMem(p.in.seg, ea, size, &a)) return false;
    const uint32_t saved = c.eflags_;
    const uint32_t r = f(a);
    if constexpr (Writes(op)) {
      if (!c.WriteMem(p.in.seg, ea, size, r)) {
        c.eflags_ = saved;
        return false;
      }
    }
    return true;
  }
  template <Op op, int size>
  static bool AluMemReg(Cpu& c, const P& p) {
    return ReadModifyWrite<op, size>(
        c, p, [&](uint32_t a) { return Alu<op, size>(c.eflags_, a, c.ReadReg(p.src_reg, size)); });
  }
  template <Op op, int size>
  static bool AluMemImm(Cpu& c, const P& p) {
    return ReadModifyWrite<op, size>(
        c, p, [&](uint32_t a) { return Alu<op, size>(c.eflags_, a, p.in.imm); });
  }
  template <Op op, int size>
  static uint32_t Unary(Cpu& c, uint32_t a) {
    if constexpr (op == Op::kNot) {
      return ~a;
    } else if constexpr (op == Op::kNeg) {
      return Alu<op, size>(c.eflags_, 0, a);
    } else {
      return Alu<op, size>(c.eflags_, a, 1);
    }
  }
  template <Op op, int size>
  static bool UnaryReg(Cpu& c, const P& p) {
    c.WriteReg(p.dst_reg, size, Unary<op, size>(c, c.ReadReg(p.dst_reg, size)));
    return true;
  }
  template <Op op, int size>
  static bool UnaryMem(Cpu& c, const P& p) {
    return ReadModifyWrite<op, size>(c, p, [&](uint32_t a) { return Unary<op, size>(c, a); });
  }
  template <Op op, int size>
  static bool ShiftReg(Cpu& c, const P& p) {
    const uint32_t count = p.in.src == Operand::kOne  ? 1
                           : p.in.src == Operand::kCl ? c.gpr_[kEcx] & 0xFF
                                                      : p.in.imm & SizeMask(size);
    c.WriteReg(p.dst_reg, size, Shift<op, size>(c.eflags_, c.ReadReg(p.dst_reg, size), count));
    return true;
  }
  template <int size>
  static bool MovRegReg(Cpu& c, const P& p) {
    c.WriteReg(p.dst_reg, size, c.ReadReg(p.src_reg, size));
    return true;
  }
  template <int size>
  static bool MovRegImm(Cpu& c, const P& p) {
    c.WriteReg(p.dst_reg, size, p.in.imm);
    return true;
  }
  template <int size>
  static bool Load(Cpu& c, const P& p) {
    uint32_t value;
    if (!c.ReadMem(p.in.seg, c.EffectiveAddress(p.in), size, &value)) return false;
    c.WriteReg(p.dst_reg, size, value);
    return true;
  }
  template <int size>
  static bool Store(Cpu& c, const P& p) {
    return c.WriteMem(p.in.seg, c.EffectiveAddress(p.in), size, c.ReadReg(p.src_reg, size));
  }
  template <int size>
  static bool StoreImm(Cpu& c, const P& p) {
    return c.WriteMem(p.in.seg, c.EffectiveAddress(p.in), size, p.in.imm);
  }
  static bool Nop(Cpu&, const P&) { return true; }
  template <int size>
  static bool Lea(Cpu& c, const P& p) {
    c.WriteReg(p.dst_reg, size, c.EffectiveAddress(p.in));
    return true;
  }
  template <uint8_t cond>
  static bool Jcc(Cpu& c, const P& p) {
    return c.Branch(Condition(c.eflags_, cond), c.next_eip_ + p.in.imm, p.in.opsize);
  }
  static bool Jmp(Cpu& c, const P& p) {
    return c.Branch(true, c.next_eip_ + p.in.imm, p.in.opsize);
  }
  static bool Call(Cpu& c, const P& p) { return c.NearCall(c.next_eip_ + p.in.imm, p.in.opsize); }
  static bool Ret(Cpu& c, const P& p) { return c.NearReturn(p.in, p.in.opsize); }
  template <int size>
  static bool PushReg(Cpu& c, const P& p) {
    return c.Push(size, c.ReadReg(p.dst_reg, size));  // PUSH ESP pushes the value before the push
  }
  template <int size>
  static bool PopReg(Cpu& c, const P& p) {
    uint32_t value;
    if (!c.Pop(size, &value)) return false;
    c.WriteReg(p.dst_reg, size, value);
    return true;
  }

  // ---- choosing a handler ----

  using Handler = Cpu::Handler;
  // The two-operand group of the ALU forms.
  template <typename F>
  static Handler WithAluOp(Op op, F f) {
    return WithOp<Op::kAdd, Op::kOr, Op::kAdc, Op::kSbb, Op::kAnd, Op::kSub, Op::kXor, Op::kCmp,
                  Op::kTest>(op, f);
  }
  template <uint8_t cond = 0>
  static Handler ByCondition(uint8_t c) {
    if constexpr (cond == 16) {
      return nullptr;
    } else {
      return c == cond ? &Jcc<cond> : ByCondition<cond + 1>(c);
    }
  }

  // The handler of a straight form.
  static Handler Of(Cpu::Straight form, const Instruction& in) {
    using S = Cpu::Straight;
    const int size = in.opsize;
    switch (form) {
      case S::kAluRegReg:
        return WithAluOp(in.op, [&](auto op) {
          return WithSize(size, [](auto n) { return &AluRegReg<decltype(op)::value, n()>; });
        });
      case S::kAluRegImm:
        return WithAluOp(in.op, [&](auto op) {
          return WithSize(size, [](auto n) { return &AluRegImm<decltype(op)::value, n()>; });
        });
      case S::kAluRegMem:
        return WithAluOp(in.op, [&](auto op) {
          return WithSize(size, [](auto n) { return &AluRegMem<decltype(op)::value, n()>; });
        });
      case S::kAluMemReg:
        return WithAluOp(in.op, [&](auto op) {
          return WithSize(size, [](auto n) { return &AluMemReg<decltype(op)::value, n()>; });
        });
      case S::kAluMemImm:
        return WithAluOp(in.op, [&](auto op) {
          return WithSize(size, [](auto n) { return &AluMemImm<decltype(op)::value, n()>; });
        });
      case S::kUnaryReg:
        return WithOp<Op::kInc, Op::kDec, Op::kNeg, Op::kNot>(in.op, [&](auto op) {
          return WithSize(size, [](auto n) { return &UnaryReg<decltype(op)::value, n()>; });
        });
      case S::kUnaryMem:
        return WithOp<Op::kInc, Op::kDec, Op::kNeg, Op::kNot>(in.op, [&](auto op) {
          return WithSize(size, [](auto n) { return &UnaryMem<decltype(op)::value, n()>; });
        });
      case S::kShiftReg:
        return WithOp<Op::kRol, Op::kRor, Op::kRcl, Op::kRcr, Op::kShl, Op::kShr, Op::kSar>(
            in.op, [&](auto op) {
              return WithSize(size, [](auto n) { return &ShiftReg<decltype(op)::value, n()>; });
            });
      case S::kMovRegReg:
        return WithSize(size, [](auto n) { return &MovRegReg<n()>; });
      case S::kMovRegImm:
        return WithSize(size, [](auto n) { return &MovRegImm<n()>; });
      case S::kLoad:
        return WithSize(size, [](auto n) { return &Load<n()>; });
      case S::kStore:
        return WithSize(size, [](auto n) { return &Store<n()>; });
      case S::kStoreImm:
        return WithSize(size, [](auto n) { return &StoreImm<n()>; });
      case S::kNop:
        return &Nop;
      case S::kLea:
        return WithSize(size, [](auto n) { return &Lea<n()>; });
      case S::kPushReg:
        return WithSize(size, [](auto n) { return &PushReg<n()>; });
      case S::kPopReg:
        return WithSize(size, [](auto n) { return &PopReg<n()>; });
      case S::kJcc:
        return ByCondition(in.cond);
      case S::kJmp:
        return &Jmp;
      case S::kCall:
        return &Call;
      case S::kRet:
        return &Ret;
      case S::kGeneric:
        break;
    }
    return &Cpu::RunGeneric;
  }
};

bool Cpu::RunGeneric(Cpu& cpu, const Predecoded& p) { return cpu.Execute(p.in); }

void Cpu::ChooseForm(Predecoded& p) {
  p.form = FormOf(p.in, &p.dst_reg, &p.src_reg);
  p.run = StraightForms::Of(p.form, p.in);
  p.pure = p.valid && !p.crosses && Pure(p.form) ? PureKey(p.code32) : 0;
}

Cpu::Straight Cpu::FormOf(const Instruction& in, uint8_t* dst_reg, uint8_t* src_reg) {
  // LOCK makes locked bus cycles (or #UD): Execute's business.
  if (!in.ok() || (in.prefixes & prefix::kLock)) return Straight::kGeneric;
  // The general register an operand names, or -1.
  const auto reg = [&](Operand o) -> int {
    switch (o) {
      case Operand::kReg:
      case Operand::kRegOp:
        return in.reg;
      case Operand::kAcc:
        return kEax;
      case Operand::kRm:
        return in.IsRegisterForm() ? in.rm : -1;
      default:
        return -1;
    }
  };
  const int dst = reg(in.dst), src = reg(in.src);
  *dst_reg = static_cast<uint8_t>(dst);
  *src_reg = static_cast<uint8_t>(src);
  const bool imm_src = in.src == Operand::kImm || in.src == Operand::kImm8;
  const bool mem_src = in.src == Operand::kRm && !in.IsRegisterForm();
  const bool mem_dst = in.dst == Operand::kRm && !in.IsRegisterForm();
  switch (in.op) {
    case Op::kAdd:
    case Op::kOr:
    case Op::kAdc:
    case Op::kSbb:
    case Op::kAnd:
    case Op::kSub:
    case Op::kXor:
    case Op::kCmp:
    case Op::kTest:
      if (mem_dst && src >= 0) return Straight::kAluMemReg;
      if (mem_dst && imm_src) return Straight::kAluMemImm;
      if (dst < 0) break;
      if (src >= 0) return Straight::kAluRegReg;
      if (imm_src) return Straight::kAluRegImm;
      if (mem_src) return Straight::kAluRegMem;
      break;
    case Op::kInc:
    case Op::kDec:
    case Op::kNeg:
    case Op::kNot:
      if (dst >= 0) return Straight::kUnaryReg;
      if (mem_dst) return Straight::kUnaryMem;
      break;
    case Op::kNop:
      return Straight::kNop;
    case Op::kRol:
    case Op::kRor:
    case Op::kRcl:
    case Op::kRcr:
    case Op::kShl:
    case Op::kShr:
    case Op::kSar:
      if (dst >= 0 &&
          (in.src == Operand::kImm8 || in.src == Operand::kOne || in.src == Operand::kCl)) {
        return Straight::kShiftReg;
      }
      break;
    case Op::kMov:
      if (dst >= 0 && src >= 0) return Straight::kMovRegReg;
      if (dst >= 0 && imm_src) return Straight::kMovRegImm;
      if (dst >= 0 && mem_src) return Straight::kLoad;
      if (mem_dst && src >= 0) return Straight::kStore;
      if (mem_dst && imm_src) return Straight::kStoreImm;
      break;
    case Op::kLea:
      if (in.dst == Operand::kReg) return Straight::kLea;
      break;
    case Op::kJcc:
      return Straight::kJcc;
    case Op::kJmp:
      if (in.dst == Operand::kRel) return Straight::kJmp;
      break;
    case Op::kCall:
      if (in.dst == Operand::kRel) return Straight::kCall;
      break;
    case Op::kRet:
      return Straight::kRet;
    case Op::kPush:
      if (in.dst == Operand::kRegOp) return Straight::kPushReg;
      break;
    case Op::kPop:
      if (in.dst == Operand::kRegOp) return Straight::kPopReg;
      break;
    default:
      break;
  }
  return Straight::kGeneric;
}

// Runs straight forms from `p` on, each fetched from its line as RunStraight would fetch it,
// while no observer is told, TF and RF are clear, and nothing ends the loop: `p` is fetched,
// inside the CS limit and already counted in `done`; `line` and `retouch` are RunStraight's.
// Stops after the step that makes a stop condition true or an interrupt due, or before an
// instruction that is not a straight form or lies beyond the limit (left in `fetched`: it is
// fetched, its touches made). Returns false when a form raised an exception.
//
// EIP and the retired count stay in registers and are written to the state only before a form
// that may fault, branch or make a bus cycle (the fault, the branch and the bus read them) and at
// the end: a pure form (register-only, no branch) raises nothing, and nothing it does is seen
// before the next such write. The next EIP wraps at 64 KB in 16-bit code, as Complete's does.
bool Cpu::RunForms(const Predecoded* p, const FetchLine** line, bool* retouch, uint64_t steps,
                   uint64_t* done, const Predecoded** fetched) {
  const Segment& cs = seg_[kCs];
  const bool code32 = cs.big;
  // A 4 GB code segment holds every instruction that starts 16 bytes or more below its end.
  const uint32_t flat_below = cs.limit == 0xFFFFFFFF ? 0xFFFFFFF0 : 0;
  const auto in_limit = [&](uint32_t eip, const Predecoded& q) {
    return eip < flat_below || InLimit(cs, eip, q);
  };
  simcore::InstructionLog* const log = log_;
  const FetchLine* f = *line;
  bool touch = *retouch;
  uint32_t e = eip_;
  uint64_t r = retired_, n = *done;
  repeat_ = false;
  bool ok = true;
  for (;;) {
    if (Pure(p->form) && p->run_after != 0 && e < flat_below) {
      // A run counted before (below): its forms are still the current copies, and in 32-bit code
      // of a 4 GB segment each lies inside the limit.
      uint64_t after = std::min<uint64_t>(p->run_after - 1, steps - n);
      for (;;) {
        if (log != nullptr) Log(e, r, *p);
        p->run(*this, *p);
        const uint32_t length = p->in.length;
        e += length;
        ++r;
        if (after-- == 0) break;
        ++n;
        p += length;
      }
    } else if (Pure(p->form)) {
      // A run of pure forms along the line: each successor is the next predecoded copy, current
      // when decoded from the same bytes (its generation) as a pure form of this code size that
      // ends in the line (its `pure` key). In 32-bit code of a 4 GB segment the run is counted
      // in its first form, for the branch above.
      const Predecoded* first = p;
      uint8_t after = 0;
      uint32_t left = Cache::kLineBytes - ((cs.base + e) & (Cache::kLineBytes - 1));
      for (;;) {
        if (log != nullptr) Log(e, r, *p);
        p->run(*this, *p);
        const uint32_t length = p->in.length;
        const uint32_t from = e;
        e = code32 ? e + length : (e + length) & 0xFFFF;
        ++r;
        if (n >= steps) break;
        const bool line_ends = length >= left || e < from;  // (e < from: IP wrapped at 64 KB)
        const Predecoded* q = line_ends ? nullptr : p + length;
        if (q == nullptr || q->generation != p->generation || q->pure != p->pure ||
            !in_limit(e, *q)) {
          if (code32 && flat_below != 0) first->run_after = after + 1;
          break;
        }
        left -= length;
        ++n;
        ++after;
        p = q;
      }
    } else {
      const uint32_t length = p->in.length;
      const uint32_t next = code32 ? e + length : (e + length) & 0xFFFF;
      eip_ = e;
      next_eip_ = next;
      jumped_ = false;
      retired_ = r;
      if (log != nullptr) Log(e, r, *p);
      if (!p->run(*this, *p)) {
        ok = false;  // eip_ and retired_ are the faulting instruction's
        break;
      }
      e = jumped_ ? eip_ : next;
      ++r;
      touch = !RegisterOnly(p->form);
      if (stop_ || branch_count_ >= stop_branch_count_ || (deliver_ && InterruptDue())) break;
    }
    if (n >= steps) break;
    const Predecoded* q = FetchNext(cs.base + e, code32, touch, &f);
    if (q == nullptr) break;  // RunStraight's Step fetches and decodes it
    touch = false;
    if (q->form == Straight::kGeneric || !in_limit(e, *q)) {
      *fetched = q;
      break;
    }
    ++n;
    p = q;
  }
  if (ok) {
    eip_ = e;
    next_eip_ = e;
    retired_ = r;
  }
  *line = f;
  *retouch = touch;
  *done = n;
  return ok;
}

// The iterations of a REP string instruction `p` after the one just completed, each a step of
// its own, as RunStraight's loop would take them: while the instruction repeats and nothing
// ends the loop or is due first, it is fetched again from its line (with the fetch's touches,
// after the iteration's data accesses) and completed. Only the way to the line differs: the one
// the last fetch named (`line`), not the line table, which names the same. An instruction that is
// not `p` (its line was refilled, or there is none) is left to the caller in `fetched`; the
// caller fetches through the table after it, as after any instruction that is not a straight form.
void Cpu::RepeatIterations(const Predecoded& p, uint64_t steps, uint64_t* done,
                           const FetchLine* line, const Predecoded** fetched) {
  const Segment& cs = seg_[kCs];
  while (repeat_ && *done < steps && !exception_.pending && !stop_ &&
         branch_count_ < stop_branch_count_ && CanRunStraight() && !(deliver_ && InterruptDue())) {
    const Predecoded* again = FetchNext(cs.base + eip_, cs.big, true, &line);
    if (again != &p) {
      *fetched = again;
      return;
    }
    ++*done;
    faulted_ = false;
    data_breakpoint_ = false;
    Complete(p);
    DeliverPendingFault();
    if (faulted_) return;
  }
}

// Run's loop for the common case: no breakpoint armed, no interrupt shadow, not halted. Each
// step is Step's, less the checks those make pointless; an instruction the predecoded lines
// cannot give, or an interrupt to take, goes through Step itself. Leaves after the step that
// makes any of Run's stop conditions true or CanRunStraight() false. Returns the steps taken.
//
// After a register-only form, the next instruction in the same line needs no new look at the
// line: nothing since its fetch can have changed the cache, the TLB or what the translation
// depended on, and touching the same line and TLB entry again leaves their pseudo-LRU bits as
// they are, so leaving the touch out keeps the replacement state exact. After a straight form
// with a memory operand, the line is fetched again with its touches (Refetch): such a form
// changes neither CR0 nor the CPL, so only the line's contents and the TLB need a look.
//
// A straight form is completed here, without Complete's general checks, when that cannot differ:
// it was decoded without fault, raises no trap, never repeats and is neither IRET nor POPF, and
// while TF and RF are clear (`plain`), no #DB follows it and there is no RF to clear
// (CanRunStraight: no breakpoint is armed). Completing, it changes none of what ends the loop but
// the branch count, a stop request (from the bus or the observer) and an interrupt becoming due;
// nor `plain`. With no observer to tell, RunForms runs the straight forms one after another;
// with one, each is told of as Complete tells it.
uint64_t Cpu::RunStraight(uint64_t steps) {
  uint64_t done = 0;
  const FetchLine* line = nullptr;      // the line the last instruction was fetched from
  bool retouch = false;                 // a data access since then touched the cache or the TLB
  const Predecoded* fetched = nullptr;  // the next instruction, fetched by RunForms
  const auto is_plain = [this] { return !(eflags_ & (flag::kTF | flag::kRF)); };
  bool plain = is_plain();
  while (done < steps) {
    ++done;
    const Predecoded* p = std::exchange(fetched, nullptr);
    const Segment& cs = seg_[kCs];
    if (p == nullptr && !(deliver_ && InterruptDue())) {
      p = FetchNext(cs.base + eip_, cs.big, retouch, &line);
      retouch = false;
    }
    if (p != nullptr && plain && p->form != Straight::kGeneric) {
      if (!InLimit(cs, eip_, *p)) {
        Raise(kVecGeneralProtection);
      } else if (observer_ == nullptr) {
        if (RunForms(p, &line, &retouch, steps, &done, &fetched)) {
          if (stop_ || branch_count_ >= stop_branch_count_) break;
          continue;
        }
      } else {
        Observe(eip_, *p);
        const uint32_t next = p->code32 ? eip_ + p->in.length : (eip_ + p->in.length) & 0xFFFF;
        next_eip_ = next;
        jumped_ = false;
        repeat_ = false;
        if (p->run(*this, *p)) {
          if (report_registers_) ReportRegisters(p->in);
          if (!jumped_) eip_ = next;
          ++retired_;
          retouch = !RegisterOnly(p->form);
          if (stop_ || branch_count_ >= stop_branch_count_) break;
          continue;
        }
      }
      DeliverPendingFault();
      faulted_ = false;
      line = nullptr;
    } else if (p != nullptr) {
      faulted_ = false;
      data_breakpoint_ = false;
      Complete(*p);
      DeliverPendingFault();
      if (repeat_ && !faulted_ && is_plain()) RepeatIterations(*p, steps, &done, line, &fetched);
      if (!RegisterOnly(p->form) || faulted_ || (eflags_ & flag::kTF)) line = nullptr;
      plain = is_plain();
    } else {
      Step();
      line = nullptr;
      plain = is_plain();
    }
    if (exception_.pending || stop_ || branch_count_ >= stop_branch_count_ || !CanRunStraight()) {
      break;
    }
  }
  steps_ += done;
  return done;
}

}  // namespace citcat::x86
