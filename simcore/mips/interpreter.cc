// One short handler per instruction. Handlers write results straight into the register file
// (the run loop re-zeroes $0), and return right after raising an exception so that a faulting
// instruction changes nothing else.
#include <algorithm>
#include <iterator>

#include "simcore/mips/cpu.h"

namespace citcat::mips {
namespace {

inline uint64_t S32(uint64_t v) { return static_cast<uint64_t>(static_cast<int32_t>(v)); }
inline int64_t I64(uint64_t v) { return static_cast<int64_t>(v); }

}  // namespace

struct Exec {
  // ---- helpers ----
  static uint64_t& Rs(Cpu& c, const Inst& i) { return c.gpr_[i.rs]; }
  static uint64_t& Rt(Cpu& c, const Inst& i) { return c.gpr_[i.rt]; }
  static uint64_t& Rd(Cpu& c, const Inst& i) { return c.gpr_[i.rd]; }
  static uint64_t Addr(Cpu& c, const Inst& i) { return c.gpr_[i.rs] + static_cast<int64_t>(i.imm); }
  static bool Need64(Cpu& c) {
    if (c.ops64_) [[likely]]
      return true;
    c.ReservedInstruction();
    return false;
  }
  static bool NeedCop0(Cpu& c) {
    if (c.cu0_) [[likely]]
      return true;
    c.CoprocessorUnusable(0);
    return false;
  }
  static bool NeedCop1(Cpu& c) {
    if (c.status_ & kStatusCu1) [[likely]]
      return true;
    c.CoprocessorUnusable(1);
    return false;
  }
  // Branches set the flow; the run loop moves through the delay slot (Cpu::FinishFlow).
  static void Jump(Cpu& c, uint64_t target) {
    c.flow_ = Cpu::kBranch;
    c.target_ = target;
  }
  static void Branch(Cpu& c, const Inst& i, bool taken) {
    Jump(c, taken ? c.pc_ + 4 + (static_cast<int64_t>(i.imm) << 2) : c.pc_ + 8);
  }
  static void BranchLikely(Cpu& c, const Inst& i, bool taken) {
    if (taken) {
      Jump(c, c.pc_ + 4 + (static_cast<int64_t>(i.imm) << 2));
    } else {  // nullify the delay slot: the branch retires now
      c.flow_ = Cpu::kSkipSlot;
      ++c.branch_count_;
    }
  }
  static void Link(Cpu& c) { c.gpr_[31] = c.pc_ + 8; }
  template <Op kOp>
  static bool Taken(Cpu& c, const Inst& i) {
    return BranchCondition<kOp>(Rs(c, i), Rt(c, i), c.fpu_.condition());
  }
  static void Trap(Cpu& c, bool cond) {
    if (cond) c.Exception(kExcTr);
  }

  // ---- SPECIAL ----
  static void Sll(Cpu& c, const Inst& i) {
    Rd(c, i) = S32(static_cast<uint32_t>(Rt(c, i)) << i.sa);
  }
  static void Srl(Cpu& c, const Inst& i) {
    Rd(c, i) = S32(static_cast<uint32_t>(Rt(c, i)) >> i.sa);
  }
  static void Sra(Cpu& c, const Inst& i) { Rd(c, i) = S32(static_cast<int32_t>(Rt(c, i)) >> i.sa); }
  static void Sllv(Cpu& c, const Inst& i) {
    Rd(c, i) = S32(static_cast<uint32_t>(Rt(c, i)) << (Rs(c, i) & 31));
  }
  static void Srlv(Cpu& c, const Inst& i) {
    Rd(c, i) = S32(static_cast<uint32_t>(Rt(c, i)) >> (Rs(c, i) & 31));
  }
  static void Srav(Cpu& c, const Inst& i) {
    Rd(c, i) = S32(static_cast<int32_t>(Rt(c, i)) >> (Rs(c, i) & 31));
  }
  static void Jr(Cpu& c, const Inst& i) { Jump(c, Rs(c, i)); }
  static void Jalr(Cpu& c, const Inst& i) {
    const uint64_t target = Rs(c, i);
    Rd(c, i) = c.pc_ + 8;
    Jump(c, target);
  }
  static void Syscall(Cpu& c, const Inst&) { c.Exception(kExcSys); }
  static void Break(Cpu& c, const Inst&) { c.Exception(kExcBp); }
  static void Sync(Cpu&, const Inst&) {}  // one CPU, strongly ordered bus: nothing to do
  static void Mfhi(Cpu& c, const Inst& i) { Rd(c, i) = c.hi_; }
  static void Mthi(Cpu& c, const Inst& i) { c.hi_ = Rs(c, i); }
  static void Mflo(Cpu& c, const Inst& i) { Rd(c, i) = c.lo_; }
  static void Mtlo(Cpu& c, const Inst& i) { c.lo_ = Rs(c, i); }
  static void Dsllv(Cpu& c, const Inst& i) {
    if (Need64(c)) Rd(c, i) = Rt(c, i) << (Rs(c, i) & 63);
  }
  static void Dsrlv(Cpu& c, const Inst& i) {
    if (Need64(c)) Rd(c, i) = Rt(c, i) >> (Rs(c, i) & 63);
  }
  static void Dsrav(Cpu& c, const Inst& i) {
    if (Need64(c)) Rd(c, i) = static_cast<uint64_t>(I64(Rt(c, i)) >> (Rs(c, i) & 63));
  }
  static void Mult(Cpu& c, const Inst& i) {
    const int64_t p = int64_t{static_cast<int32_t>(Rs(c, i))} * static_cast<int32_t>(Rt(c, i));
    c.lo_ = S32(static_cast<uint64_t>(p));
    c.hi_ = S32(static_cast<uint64_t>(p) >> 32);
  }
  static void Multu(Cpu& c, const Inst& i) {
    const uint64_t p = uint64_t{static_cast<uint32_t>(Rs(c, i))} * static_cast<uint32_t>(Rt(c, i));
    c.lo_ = S32(p);
    c.hi_ = S32(p >> 32);
  }
  // Division by zero is architecturally undefined; these are the results of the R4000-family
  // divider (quotient all ones / one by dividend sign, remainder the dividend).
  static void Div(Cpu& c, const Inst& i) {
    const int32_t n = static_cast<int32_t>(Rs(c, i)), d = static_cast<int32_t>(Rt(c, i));
    if (d == 0) {
      c.lo_ = n < 0 ? 1 : ~uint64_t{0};
      c.hi_ = S32(static_cast<uint32_t>(n));
    } else if (n == INT32_MIN && d == -1) {
      c.lo_ = S32(static_cast<uint32_t>(INT32_MIN));
      c.hi_ = 0;
    } else {
      c.lo_ = S32(static_cast<uint32_t>(n / d));
      c.hi_ = S32(static_cast<uint32_t>(n % d));
    }
  }
  static void Divu(Cpu& c, const Inst& i) {
    const uint32_t n = static_cast<uint32_t>(Rs(c, i)), d = static_cast<uint32_t>(Rt(c, i));
    if (d == 0) {
      c.lo_ = ~uint64_t{0};
      c.hi_ = S32(n);
    } else {
      c.lo_ = S32(n / d);
      c.hi_ = S32(n % d);
    }
  }
  static void Dmult(Cpu& c, const Inst& i) {
    if (!Need64(c)) return;
    const __int128 p = static_cast<__int128>(I64(Rs(c, i))) * I64(Rt(c, i));
    c.lo_ = static_cast<uint64_t>(p);
    c.hi_ = static_cast<uint64_t>(static_cast<unsigned __int128>(p) >> 64);
  }
  static void Dmultu(Cpu& c, const Inst& i) {
    if (!Need64(c)) return;
    const unsigned __int128 p = static_cast<unsigned __int128>(Rs(c, i)) * Rt(c, i);
    c.lo_ = static_cast<uint64_t>(p);
    c.hi_ = static_cast<uint64_t>(p >> 64);
  }
  static void Ddiv(Cpu& c, const Inst& i) {
    if (!Need64(c)) return;
    const int64_t n = I64(Rs(c, i)), d = I64(Rt(c, i));
    if (d == 0) {
      c.lo_ = n < 0 ? 1 : ~uint64_t{0};
      c.hi_ = static_cast<uint64_t>(n);
    } else if (n == INT64_MIN && d == -1) {
      c.lo_ = static_cast<uint64_t>(INT64_MIN);
      c.hi_ = 0;
    } else {
      c.lo_ = static_cast<uint64_t>(n / d);
      c.hi_ = static_cast<uint64_t>(n % d);
    }
  }
  static void Ddivu(Cpu& c, const Inst& i) {
    if (!Need64(c)) return;
    const uint64_t n = Rs(c, i), d = Rt(c, i);
    if (d == 0) {
      c.lo_ = ~uint64_t{0};
      c.hi_ = n;
    } else {
      c.lo_ = n / d;
      c.hi_ = n % d;
    }
  }
  static void Add(Cpu& c, const Inst& i) {
    int32_t r;
    if (__builtin_add_overflow(static_cast<int32_t>(Rs(c, i)), static_cast<int32_t>(Rt(c, i)),
                               &r)) {
      c.Exception(kExcOv);
    } else {
      Rd(c, i) = S32(static_cast<uint32_t>(r));
    }
  }
  static void Addu(Cpu& c, const Inst& i) { Rd(c, i) = S32(Rs(c, i) + Rt(c, i)); }
  static void Sub(Cpu& c, const Inst& i) {
    int32_t r;
    if (__builtin_sub_overflow(static_cast<int32_t>(Rs(c, i)), static_cast<int32_t>(Rt(c, i)),
                               &r)) {
      c.Exception(kExcOv);
    } else {
      Rd(c, i) = S32(static_cast<uint32_t>(r));
    }
  }
  static void Subu(Cpu& c, const Inst& i) { Rd(c, i) = S32(Rs(c, i) - Rt(c, i)); }
  static void And(Cpu& c, const Inst& i) { Rd(c, i) = Rs(c, i) & Rt(c, i); }
  static void Or(Cpu& c, const Inst& i) { Rd(c, i) = Rs(c, i) | Rt(c, i); }
  static void Xor(Cpu& c, const Inst& i) { Rd(c, i) = Rs(c, i) ^ Rt(c, i); }
  static void Nor(Cpu& c, const Inst& i) { Rd(c, i) = ~(Rs(c, i) | Rt(c, i)); }
  static void Slt(Cpu& c, const Inst& i) { Rd(c, i) = I64(Rs(c, i)) < I64(Rt(c, i)); }
  static void Sltu(Cpu& c, const Inst& i) { Rd(c, i) = Rs(c, i) < Rt(c, i); }
  static void Dadd(Cpu& c, const Inst& i) {
    if (!Need64(c)) return;
    int64_t r;
    if (__builtin_add_overflow(I64(Rs(c, i)), I64(Rt(c, i)), &r)) {
      c.Exception(kExcOv);
    } else {
      Rd(c, i) = static_cast<uint64_t>(r);
    }
  }
  static void Daddu(Cpu& c, const Inst& i) {
    if (Need64(c)) Rd(c, i) = Rs(c, i) + Rt(c, i);
  }
  static void Dsub(Cpu& c, const Inst& i) {
    if (!Need64(c)) return;
    int64_t r;
    if (__builtin_sub_overflow(I64(Rs(c, i)), I64(Rt(c, i)), &r)) {
      c.Exception(kExcOv);
    } else {
      Rd(c, i) = static_cast<uint64_t>(r);
    }
  }
  static void Dsubu(Cpu& c, const Inst& i) {
    if (Need64(c)) Rd(c, i) = Rs(c, i) - Rt(c, i);
  }
  static void Tge(Cpu& c, const Inst& i) { Trap(c, I64(Rs(c, i)) >= I64(Rt(c, i))); }
  static void Tgeu(Cpu& c, const Inst& i) { Trap(c, Rs(c, i) >= Rt(c, i)); }
  static void Tlt(Cpu& c, const Inst& i) { Trap(c, I64(Rs(c, i)) < I64(Rt(c, i))); }
  static void Tltu(Cpu& c, const Inst& i) { Trap(c, Rs(c, i) < Rt(c, i)); }
  static void Teq(Cpu& c, const Inst& i) { Trap(c, Rs(c, i) == Rt(c, i)); }
  static void Tne(Cpu& c, const Inst& i) { Trap(c, Rs(c, i) != Rt(c, i)); }
  static void Dsll(Cpu& c, const Inst& i) {
    if (Need64(c)) Rd(c, i) = Rt(c, i) << i.sa;
  }
  static void Dsrl(Cpu& c, const Inst& i) {
    if (Need64(c)) Rd(c, i) = Rt(c, i) >> i.sa;
  }
  static void Dsra(Cpu& c, const Inst& i) {
    if (Need64(c)) Rd(c, i) = static_cast<uint64_t>(I64(Rt(c, i)) >> i.sa);
  }
  static void Dsll32(Cpu& c, const Inst& i) {
    if (Need64(c)) Rd(c, i) = Rt(c, i) << (i.sa + 32);
  }
  static void Dsrl32(Cpu& c, const Inst& i) {
    if (Need64(c)) Rd(c, i) = Rt(c, i) >> (i.sa + 32);
  }
  static void Dsra32(Cpu& c, const Inst& i) {
    if (Need64(c)) Rd(c, i) = static_cast<uint64_t>(I64(Rt(c, i)) >> (i.sa + 32));
  }

  // ---- REGIMM ----
  static void Bltz(Cpu& c, const Inst& i) { Branch(c, i, Taken<Op::kBltz>(c, i)); }
  static void Bgez(Cpu& c, const Inst& i) { Branch(c, i, Taken<Op::kBgez>(c, i)); }
  static void Bltzl(Cpu& c, const Inst& i) { BranchLikely(c, i, Taken<Op::kBltzl>(c, i)); }
  static void Bgezl(Cpu& c, const Inst& i) { BranchLikely(c, i, Taken<Op::kBgezl>(c, i)); }
  static void Tgei(Cpu& c, const Inst& i) { Trap(c, I64(Rs(c, i)) >= i.imm); }
  static void Tgeiu(Cpu& c, const Inst& i) {
    Trap(c, Rs(c, i) >= static_cast<uint64_t>(int64_t{i.imm}));
  }
  static void Tlti(Cpu& c, const Inst& i) { Trap(c, I64(Rs(c, i)) < i.imm); }
  static void Tltiu(Cpu& c, const Inst& i) {
    Trap(c, Rs(c, i) < static_cast<uint64_t>(int64_t{i.imm}));
  }
  static void Teqi(Cpu& c, const Inst& i) { Trap(c, I64(Rs(c, i)) == i.imm); }
  static void Tnei(Cpu& c, const Inst& i) { Trap(c, I64(Rs(c, i)) != i.imm); }
  static void Bltzal(Cpu& c, const Inst& i) {
    const bool taken = Taken<Op::kBltzal>(c, i);
    Link(c);
    Branch(c, i, taken);
  }
  static void Bgezal(Cpu& c, const Inst& i) {
    const bool taken = Taken<Op::kBgezal>(c, i);
    Link(c);
    Branch(c, i, taken);
  }
  static void Bltzall(Cpu& c, const Inst& i) {
    const bool taken = Taken<Op::kBltzall>(c, i);
    Link(c);
    BranchLikely(c, i, taken);
  }
  static void Bgezall(Cpu& c, const Inst& i) {
    const bool taken = Taken<Op::kBgezall>(c, i);
    Link(c);
    BranchLikely(c, i, taken);
  }

  // ---- jumps and branches ----
  static void J(Cpu& c, const Inst& i) {
    Jump(c, ((c.pc_ + 4) & ~uint64_t{0x0FFFFFFF}) | static_cast<uint32_t>(i.imm));
  }
  static void Jal(Cpu& c, const Inst& i) {
    Link(c);
    J(c, i);
  }
  static void Beq(Cpu& c, const Inst& i) { Branch(c, i, Taken<Op::kBeq>(c, i)); }
  static void Bne(Cpu& c, const Inst& i) { Branch(c, i, Taken<Op::kBne>(c, i)); }
  static void Blez(Cpu& c, const Inst& i) { Branch(c, i, Taken<Op::kBlez>(c, i)); }
  static void Bgtz(Cpu& c, const Inst& i) { Branch(c, i, Taken<Op::kBgtz>(c, i)); }
  static void Beql(Cpu& c, const Inst& i) { BranchLikely(c, i, Taken<Op::kBeql>(c, i)); }
  static void Bnel(Cpu& c, const Inst& i) { BranchLikely(c, i, Taken<Op::kBnel>(c, i)); }
  static void Blezl(Cpu& c, const Inst& i) { BranchLikely(c, i, Taken<Op::kBlezl>(c, i)); }
  static void Bgtzl(Cpu& c, const Inst& i) { BranchLikely(c, i, Taken<Op::kBgtzl>(c, i)); }

  // ---- immediates ----
  static void Addi(Cpu& c, const Inst& i) {
    int32_t r;
    if (__builtin_add_overflow(static_cast<int32_t>(Rs(c, i)), i.imm, &r)) {
      c.Exception(kExcOv);
    } else {
      Rt(c, i) = S32(static_cast<uint32_t>(r));
    }
  }
  static void Addiu(Cpu& c, const Inst& i) {
    Rt(c, i) = S32(Rs(c, i) + static_cast<uint32_t>(i.imm));
  }
  static void Slti(Cpu& c, const Inst& i) { Rt(c, i) = I64(Rs(c, i)) < i.imm; }
  static void Sltiu(Cpu& c, const Inst& i) {
    Rt(c, i) = Rs(c, i) < static_cast<uint64_t>(int64_t{i.imm});
  }
  static void Andi(Cpu& c, const Inst& i) { Rt(c, i) = Rs(c, i) & static_cast<uint32_t>(i.imm); }
  static void Ori(Cpu& c, const Inst& i) { Rt(c, i) = Rs(c, i) | static_cast<uint32_t>(i.imm); }
  static void Xori(Cpu& c, const Inst& i) { Rt(c, i) = Rs(c, i) ^ static_cast<uint32_t>(i.imm); }
  static void Lui(Cpu& c, const Inst& i) { Rt(c, i) = S32(static_cast<uint32_t>(i.imm) << 16); }
  static void Daddi(Cpu& c, const Inst& i) {
    if (!Need64(c)) return;
    int64_t r;
    if (__builtin_add_overflow(I64(Rs(c, i)), int64_t{i.imm}, &r)) {
      c.Exception(kExcOv);
    } else {
      Rt(c, i) = static_cast<uint64_t>(r);
    }
  }
  static void Daddiu(Cpu& c, const Inst& i) {
    if (Need64(c)) Rt(c, i) = Rs(c, i) + static_cast<uint64_t>(int64_t{i.imm});
  }

  // ---- loads and stores ----
  template <typename T, typename R>
  [[gnu::always_inline]] static void LoadAs(Cpu& c, const Inst& i) {
    T v;
    if (c.Load<T>(Addr(c, i), &v)) Rt(c, i) = static_cast<uint64_t>(static_cast<R>(v));
  }
  [[gnu::always_inline]] static void Lb(Cpu& c, const Inst& i) { LoadAs<uint8_t, int8_t>(c, i); }
  [[gnu::always_inline]] static void Lbu(Cpu& c, const Inst& i) { LoadAs<uint8_t, uint8_t>(c, i); }
  [[gnu::always_inline]] static void Lh(Cpu& c, const Inst& i) { LoadAs<uint16_t, int16_t>(c, i); }
  [[gnu::always_inline]] static void Lhu(Cpu& c, const Inst& i) {
    LoadAs<uint16_t, uint16_t>(c, i);
  }
  [[gnu::always_inline]] static void Lw(Cpu& c, const Inst& i) { LoadAs<uint32_t, int32_t>(c, i); }
  [[gnu::always_inline]] static void Lwu(Cpu& c, const Inst& i) {
    if (Need64(c)) LoadAs<uint32_t, uint32_t>(c, i);
  }
  [[gnu::always_inline]] static void Ld(Cpu& c, const Inst& i) {
    if (Need64(c)) LoadAs<uint64_t, uint64_t>(c, i);
  }
  [[gnu::always_inline]] static void Sb(Cpu& c, const Inst& i) {
    c.Store<uint8_t>(Addr(c, i), static_cast<uint8_t>(Rt(c, i)));
  }
  [[gnu::always_inline]] static void Sh(Cpu& c, const Inst& i) {
    c.Store<uint16_t>(Addr(c, i), static_cast<uint16_t>(Rt(c, i)));
  }
  [[gnu::always_inline]] static void Sw(Cpu& c, const Inst& i) {
    c.Store<uint32_t>(Addr(c, i), static_cast<uint32_t>(Rt(c, i)));
  }
  [[gnu::always_inline]] static void Sd(Cpu& c, const Inst& i) {
    if (Need64(c)) c.Store<uint64_t>(Addr(c, i), Rt(c, i));
  }

  // Unaligned pairs. k is the byte offset counted from the most significant end of the unit, so
  // one formula serves both byte orders.
  static unsigned LaneOffset(const Cpu& c, uint64_t va, unsigned n) {
    const unsigned k = va & (n - 1);
    return c.data_big_ ? k : n - 1 - k;
  }
  static void Lwl(Cpu& c, const Inst& i) {
    const uint64_t va = Addr(c, i);
    uint32_t w;
    if (!c.LoadUnit<uint32_t>(va, &w)) return;
    const unsigned sh = 8 * LaneOffset(c, va, 4);
    const uint32_t old = static_cast<uint32_t>(Rt(c, i));
    Rt(c, i) = S32((w << sh) | (old & ((1u << sh) - 1)));
    c.Accessed(va & ~uint64_t{3}, 4, false, Rt(c, i));
  }
  static void Lwr(Cpu& c, const Inst& i) {
    const uint64_t va = Addr(c, i);
    uint32_t w;
    if (!c.LoadUnit<uint32_t>(va, &w)) return;
    const unsigned sh = 8 * (3 - LaneOffset(c, va, 4));
    const uint32_t old = static_cast<uint32_t>(Rt(c, i));
    Rt(c, i) = S32((w >> sh) | (old & ~(0xFFFFFFFFu >> sh)));
    c.Accessed(va & ~uint64_t{3}, 4, false, Rt(c, i));
  }
  static void Ldl(Cpu& c, const Inst& i) {
    if (!Need64(c)) return;
    const uint64_t va = Addr(c, i);
    uint64_t d;
    if (!c.LoadUnit<uint64_t>(va, &d)) return;
    const unsigned sh = 8 * LaneOffset(c, va, 8);
    const uint64_t keep = sh ? (uint64_t{1} << sh) - 1 : 0;
    Rt(c, i) = (d << sh) | (Rt(c, i) & keep);
    c.Accessed(va & ~uint64_t{7}, 8, false, Rt(c, i));
  }
  static void Ldr(Cpu& c, const Inst& i) {
    if (!Need64(c)) return;
    const uint64_t va = Addr(c, i);
    uint64_t d;
    if (!c.LoadUnit<uint64_t>(va, &d)) return;
    const unsigned sh = 8 * (7 - LaneOffset(c, va, 8));
    Rt(c, i) = (d >> sh) | (Rt(c, i) & ~(~uint64_t{0} >> sh));
    c.Accessed(va & ~uint64_t{7}, 8, false, Rt(c, i));
  }
  static void Swl(Cpu& c, const Inst& i) {
    const uint64_t va = Addr(c, i);
    const unsigned sh = 8 * LaneOffset(c, va, 4);
    if (c.StorePartial<uint32_t>(va, static_cast<uint32_t>(Rt(c, i)) >> sh, 0xFFFFFFFFu >> sh)) {
      c.Accessed(va & ~uint64_t{3}, 4, true, Rt(c, i));
    }
  }
  static void Swr(Cpu& c, const Inst& i) {
    const uint64_t va = Addr(c, i);
    const unsigned sh = 8 * (3 - LaneOffset(c, va, 4));
    if (c.StorePartial<uint32_t>(va, static_cast<uint32_t>(Rt(c, i)) << sh, 0xFFFFFFFFu << sh)) {
      c.Accessed(va & ~uint64_t{3}, 4, true, Rt(c, i));
    }
  }
  static void Sdl(Cpu& c, const Inst& i) {
    if (!Need64(c)) return;
    const uint64_t va = Addr(c, i);
    const unsigned sh = 8 * LaneOffset(c, va, 8);
    if (c.StorePartial<uint64_t>(va, Rt(c, i) >> sh, ~uint64_t{0} >> sh)) {
      c.Accessed(va & ~uint64_t{7}, 8, true, Rt(c, i));
    }
  }
  static void Sdr(Cpu& c, const Inst& i) {
    if (!Need64(c)) return;
    const uint64_t va = Addr(c, i);
    const unsigned sh = 8 * (7 - LaneOffset(c, va, 8));
    if (c.StorePartial<uint64_t>(va, Rt(c, i) << sh, ~uint64_t{0} << sh)) {
      c.Accessed(va & ~uint64_t{7}, 8, true, Rt(c, i));
    }
  }

  // LL/SC: LLbit is set by LL and cleared only by ERET (one processor, no coherent traffic).
  template <typename T, typename R>
  static void LoadLinked(Cpu& c, const Inst& i) {
    const uint64_t va = Addr(c, i);
    T v;
    if (!c.Load<T>(va, &v)) return;
    uint64_t pa = 0;
    bool cached;
    c.DebugTranslate(va, &pa, &cached);
    Rt(c, i) = static_cast<uint64_t>(static_cast<R>(v));
    c.ll_bit_ = true;
    c.lladdr_ = static_cast<uint32_t>(pa >> 4);
  }
  template <typename T>
  static void StoreConditional(Cpu& c, const Inst& i) {
    const uint64_t va = Addr(c, i);
    if (c.ll_bit_) {
      if (c.Store<T>(va, static_cast<T>(Rt(c, i)))) Rt(c, i) = 1;
      return;
    }
    // A failing SC stores nothing but still checks its address like a store.
    if (va & (sizeof(T) - 1)) {
      c.AddressError(va, Cpu::Access::kStore);
      return;
    }
    uint64_t pa;
    bool cached;
    if (c.TranslateData(va, Cpu::Access::kStore, &pa, &cached)) Rt(c, i) = 0;
  }
  static void Ll(Cpu& c, const Inst& i) { LoadLinked<uint32_t, int32_t>(c, i); }
  static void Lld(Cpu& c, const Inst& i) {
    if (Need64(c)) LoadLinked<uint64_t, uint64_t>(c, i);
  }
  static void Sc(Cpu& c, const Inst& i) { StoreConditional<uint32_t>(c, i); }
  static void Scd(Cpu& c, const Inst& i) {
    if (Need64(c)) StoreConditional<uint64_t>(c, i);
  }
  static void Cache(Cpu& c, const Inst& i) {
    if (NeedCop0(c)) c.CacheOp(i.rt, Addr(c, i));
  }

  // ---- CP0 ----
  static void Mfc0(Cpu& c, const Inst& i) {
    if (NeedCop0(c)) Rt(c, i) = S32(c.ReadCp0(i.rd));
  }
  static void Dmfc0(Cpu& c, const Inst& i) {
    if (NeedCop0(c) && Need64(c)) Rt(c, i) = c.ReadCp0(i.rd);
  }
  static void Mtc0(Cpu& c, const Inst& i) {
    if (NeedCop0(c)) c.WriteCp0(i.rd, S32(Rt(c, i)));
  }
  static void Dmtc0(Cpu& c, const Inst& i) {
    if (NeedCop0(c) && Need64(c)) c.WriteCp0(i.rd, Rt(c, i));
  }
  static void Tlbr(Cpu& c, const Inst&) {
    if (NeedCop0(c)) c.TlbRead();
  }
  static void Tlbwi(Cpu& c, const Inst&) {
    if (NeedCop0(c)) c.TlbWriteIndexed();
  }
  static void Tlbwr(Cpu& c, const Inst&) {
    if (NeedCop0(c)) c.TlbWriteRandom();
  }
  static void Tlbp(Cpu& c, const Inst&) {
    if (NeedCop0(c)) c.TlbProbe();
  }
  static void Eret(Cpu& c, const Inst&) {
    if (NeedCop0(c)) c.Eret();
  }

  // ---- CP1: moves, loads, stores and branches here; arithmetic in the Fpu ----
  static void FpuOutcomeToException(Cpu& c, FpuOutcome o) {
    if (o == FpuOutcome::kFpe) c.Exception(kExcFpe);
    if (o == FpuOutcome::kReservedInstruction) c.ReservedInstruction();
  }
  static void Mfc1(Cpu& c, const Inst& i) {
    if (NeedCop1(c)) Rt(c, i) = S32(c.fpu_.ReadWord(i.rd));
  }
  static void Dmfc1(Cpu& c, const Inst& i) {
    if (NeedCop1(c) && Need64(c)) Rt(c, i) = c.fpu_.ReadDouble(i.rd);
  }
  static void Cfc1(Cpu& c, const Inst& i) {
    if (NeedCop1(c)) Rt(c, i) = S32(c.fpu_.ReadControl(i.rd));
  }
  static void Mtc1(Cpu& c, const Inst& i) {
    if (NeedCop1(c)) c.fpu_.WriteWord(i.rd, static_cast<uint32_t>(Rt(c, i)));
  }
  static void Dmtc1(Cpu& c, const Inst& i) {
    if (NeedCop1(c) && Need64(c)) c.fpu_.WriteDouble(i.rd, Rt(c, i));
  }
  static void Ctc1(Cpu& c, const Inst& i) {
    if (NeedCop1(c))
      FpuOutcomeToException(c, c.fpu_.WriteControl(i.rd, static_cast<uint32_t>(Rt(c, i))));
  }
  static void Bc1f(Cpu& c, const Inst& i) {
    if (NeedCop1(c)) Branch(c, i, Taken<Op::kBc1f>(c, i));
  }
  static void Bc1t(Cpu& c, const Inst& i) {
    if (NeedCop1(c)) Branch(c, i, Taken<Op::kBc1t>(c, i));
  }
  static void Bc1fl(Cpu& c, const Inst& i) {
    if (NeedCop1(c)) BranchLikely(c, i, Taken<Op::kBc1fl>(c, i));
  }
  static void Bc1tl(Cpu& c, const Inst& i) {
    if (NeedCop1(c)) BranchLikely(c, i, Taken<Op::kBc1tl>(c, i));
  }
  static void Cop1Arith(Cpu& c, const Inst& i) {
    if (NeedCop1(c)) FpuOutcomeToException(c, c.fpu_.Execute(i.word));
  }
  static void Lwc1(Cpu& c, const Inst& i) {
    uint32_t v;
    if (NeedCop1(c) && c.Load<uint32_t>(Addr(c, i), &v)) c.fpu_.WriteWord(i.rt, v);
  }
  static void Ldc1(Cpu& c, const Inst& i) {
    uint64_t v;
    if (NeedCop1(c) && c.Load<uint64_t>(Addr(c, i), &v)) c.fpu_.WriteDouble(i.rt, v);
  }
  static void Swc1(Cpu& c, const Inst& i) {
    if (NeedCop1(c)) c.Store<uint32_t>(Addr(c, i), c.fpu_.ReadWord(i.rt));
  }
  static void Sdc1(Cpu& c, const Inst& i) {
    if (NeedCop1(c)) c.Store<uint64_t>(Addr(c, i), c.fpu_.ReadDouble(i.rt));
  }
  // COP2/COP3 and their loads and stores: no such coprocessor on the R4400.
  static void Cop2(Cpu& c, const Inst& i) {
    const int cop = (i.word >> 26) == 0x13 ? 3 : 2;
    if (!(c.status_ & (1u << (28 + cop)))) {
      c.CoprocessorUnusable(cop);
    } else {
      c.ReservedInstruction();
    }
  }
  static void Cop3(Cpu& c, const Inst& i) { Cop2(c, i); }
  static void Reserved(Cpu& c, const Inst&) { c.ReservedInstruction(); }
};

namespace {

// The table's plain operations (op::kPlain). One that would write $0 Predecode turns into SYNC, a
// no-op, so the run loop need not re-zero $0 after them either.
constexpr bool IsPlain(Op op) { return (Facts(op).traits & op::kPlain) == op::kPlain; }

// Branches and jumps that cannot raise an exception: the run loop takes their delay slot itself.
// clang-format off
#define CITCAT_MIPS_BRANCHES(X) \
  X(Jr) X(Jalr) X(Bltz) X(Bgez) X(Bltzl) X(Bgezl) X(Bltzal) X(Bgezal) X(Bltzall) X(Bgezall) \
  X(J) X(Jal) X(Beq) X(Bne) X(Blez) X(Bgtz) X(Beql) X(Bnel) X(Blezl) X(Bgtzl)
// clang-format on
#define CITCAT_MIPS_BRANCH_OP(name) Op::k##name,
constexpr Op kBranches[] = {CITCAT_MIPS_BRANCHES(CITCAT_MIPS_BRANCH_OP)};
#undef CITCAT_MIPS_BRANCH_OP

// The place of `op` in `list`, -1 if it is not there.
template <size_t N>
constexpr int IndexIn(const Op (&list)[N], Op op) {
  for (size_t k = 0; k < N; ++k) {
    if (list[k] == op) return static_cast<int>(k);
  }
  return -1;
}

constexpr bool IsBranch(Op op) { return IndexIn(kBranches, op) >= 0; }

// The lists below name what the table says, in its order: the preprocessor cannot expand the
// table inside itself, which the pairs' labels need (see CITCAT_MIPS_FUSIBLE).
template <size_t N>
constexpr bool ListsWhere(const Op (&list)[N], bool (*in_list)(Op)) {
  size_t k = 0;
  for (size_t i = 0; i < static_cast<size_t>(Op::kCount); ++i) {
    if (!in_list(static_cast<Op>(i))) continue;
    if (k == N || list[k] != static_cast<Op>(i)) return false;
    ++k;
  }
  return k == N;
}
// The branches and jumps that cannot raise an exception: COP1's may (Coprocessor Unusable).
static_assert(ListsWhere(kBranches,
                         [](Op op) {
                           const Shape s = Facts(op).shape;
                           return s == Shape::kJumpRegister || s == Shape::kJumpAndLinkRd ||
                                  s == Shape::kJump || s == Shape::kBranchRs ||
                                  s == Shape::kBranchRsRt;
                         }),
              "CITCAT_MIPS_BRANCHES must list the table's integer branches and jumps, in order");

// The plain operations the run loop fuses in pairs: two of them in a row run under one label
// of their own, without the indirect jump between them, which on current hosts costs more than
// a simple operation itself. All but the divisions (slow anyway) and the rare MTHI/MTLO.
// clang-format off
#define CITCAT_MIPS_FUSIBLE(X) \
  X(Sll) X(Srl) X(Sra) X(Sllv) X(Srlv) X(Srav) X(Sync) X(Mfhi) X(Mflo) X(Mult) X(Multu) \
  X(Addu) X(Subu) X(And) X(Or) X(Xor) X(Nor) X(Slt) X(Sltu) X(Addiu) X(Slti) X(Sltiu) \
  X(Andi) X(Ori) X(Xori) X(Lui)
// The same list with the pair's first operation bound: the preprocessor will not expand a list
// inside itself, so the pairs need a second copy (checked against the first below).
#define CITCAT_MIPS_FUSIBLE_AFTER(X, a) \
  X(a, Sll) X(a, Srl) X(a, Sra) X(a, Sllv) X(a, Srlv) X(a, Srav) X(a, Sync) X(a, Mfhi) \
  X(a, Mflo) X(a, Mult) X(a, Multu) X(a, Addu) X(a, Subu) X(a, And) X(a, Or) X(a, Xor) \
  X(a, Nor) X(a, Slt) X(a, Sltu) X(a, Addiu) X(a, Slti) X(a, Sltiu) X(a, Andi) X(a, Ori) \
  X(a, Xori) X(a, Lui)
// clang-format on

#define CITCAT_MIPS_FUSIBLE_OP(name) Op::k##name,
#define CITCAT_MIPS_FUSIBLE_SECOND(a, name) Op::k##name,
constexpr Op kFusible[] = {CITCAT_MIPS_FUSIBLE(CITCAT_MIPS_FUSIBLE_OP)};
constexpr Op kFusibleSecond[] = {CITCAT_MIPS_FUSIBLE_AFTER(CITCAT_MIPS_FUSIBLE_SECOND, _)};
#undef CITCAT_MIPS_FUSIBLE_SECOND
#undef CITCAT_MIPS_FUSIBLE_OP
constexpr int kNumFusible = static_cast<int>(std::size(kFusible));
static_assert(std::equal(std::begin(kFusible), std::end(kFusible), std::begin(kFusibleSecond),
                         std::end(kFusibleSecond)));
static_assert(ListsWhere(kFusible,
                         [](Op op) { return (Facts(op).traits & op::kFusible) == op::kFusible; }),
              "CITCAT_MIPS_FUSIBLE must list the table's op::kFusible operations, in order");

// Inst::run after the operations and the sentinel: the plain pairs (a, b), then the branches
// with a plain delay slot (branch, b), each first-major.
constexpr int kNumPlainPairs = kNumFusible * kNumFusible;
constexpr uint16_t PairRun(int a, int b) {
  return static_cast<uint16_t>(static_cast<int>(kLineEnd) + 1 + a * kNumFusible + b);
}
constexpr uint16_t BranchPairRun(int branch, int b) {
  return static_cast<uint16_t>(PairRun(0, 0) + kNumPlainPairs + branch * kNumFusible + b);
}

}  // namespace

void FusePairs(Inst* insts, uint32_t count) {
  for (uint32_t j = 0; j + 1 < count; ++j) {
    const int b = IndexIn(kFusible, insts[j + 1].op);
    const int plain = IndexIn(kFusible, insts[j].op), branch = IndexIn(kBranches, insts[j].op);
    if (b >= 0 && plain >= 0) {
      insts[j].run = PairRun(plain, b);
    } else if (b >= 0 && branch >= 0) {
      insts[j].run = BranchPairRun(branch, b);
    } else {
      insts[j].run = static_cast<uint16_t>(insts[j].op);
    }
  }
}

Inst Predecode(uint32_t word) {
  const Op op = DecodeOp(word);
  Inst in;
  in.op = op;
  in.word = word;
  in.run = static_cast<uint16_t>(op);
  in.rs = static_cast<uint8_t>(Rs(word));
  in.rt = static_cast<uint8_t>(Rt(word));
  in.rd = static_cast<uint8_t>(Rd(word));
  in.sa = static_cast<uint8_t>(Sa(word));
  switch (op) {
    case Op::kAndi:
    case Op::kOri:
    case Op::kXori:
      in.imm = static_cast<int32_t>(Uimm(word));
      break;
    case Op::kJ:
    case Op::kJal:
      in.imm = static_cast<int32_t>((word & 0x03FFFFFF) << 2);
      break;
    default:
      in.imm = Simm(word);
  }
  if (IsPlain(op)) {  // one that changes nothing (it writes $0, e.g. NOP) does nothing
    const InstructionInfo info = Describe(word);
    if (info.gpr_written == 0 && !info.writes_hi && !info.writes_lo) {
      in.op = Op::kSync;
      in.run = static_cast<uint16_t>(Op::kSync);
    }
  }
  return in;
}

// Each handler ends in its own indirect jump, which lets the host predict per handler. The
// observed loop and the sanitizer build share one: the compiler's work grows with jumps times
// labels, and with the fused pairs that is minutes.
#if defined(__SANITIZE_ADDRESS__)
#define CITCAT_MIPS_SHARED_DISPATCH 1
#elif defined(__has_feature)
#define CITCAT_MIPS_SHARED_DISPATCH __has_feature(address_sanitizer)
#else
#define CITCAT_MIPS_SHARED_DISPATCH 0
#endif

// The hot loop: runs from `inst` (fetched at pc_) for at most `n` steps while nothing needs the
// outer loop's attention (Cpu::RunLoop), following branches through I-cache lines already
// present. Each handler is inlined under its own label and ends in its own indirect jump to the
// next one, so the host predicts "what follows Lbu" per handler rather than one jump for all.
// Running off the end of a line reaches its kLineEnd sentinel; a branch goes on to its delay
// slot, which runs under a second set of labels that then take the branch. Fused pairs (see
// FusePairs) run two instructions under one label. The PC and the retired count live in
// registers and are stored to pc_ and retired_ only where someone may look: before anything but
// a plain operation, before an observer, and on the way out. With an instruction log
// (Watch::kLog) each label writes the instructions it starts into the log, pairs included; with
// an observer, one shared jump tells it of each and nothing is fused. Returns the steps done (at
// least one).
template <Cpu::Watch kWatch>
uint64_t Cpu::RunStraight(const Inst* inst, uint64_t n) {
  constexpr bool kObserved = kWatch == Watch::kObserver, kLogged = kWatch == Watch::kLog;
  // clang-format off
  static constexpr const void* kLabels[] = {
#define CITCAT_MIPS_LABEL(name, ...) &&op_##name,
      CITCAT_MIPS_OPS(CITCAT_MIPS_LABEL)
#undef CITCAT_MIPS_LABEL
      &&sentinel,
#define CITCAT_MIPS_PAIR_LABEL(a, b) &&pair_##a##_##b,
#define CITCAT_MIPS_PAIR_LABELS(a) CITCAT_MIPS_FUSIBLE_AFTER(CITCAT_MIPS_PAIR_LABEL, a)
      CITCAT_MIPS_FUSIBLE(CITCAT_MIPS_PAIR_LABELS)
#undef CITCAT_MIPS_PAIR_LABELS
#undef CITCAT_MIPS_PAIR_LABEL
#define CITCAT_MIPS_PAIR_LABEL(a, b) &&branch_##a##_##b,
#define CITCAT_MIPS_PAIR_LABELS(a) CITCAT_MIPS_FUSIBLE_AFTER(CITCAT_MIPS_PAIR_LABEL, a)
      CITCAT_MIPS_BRANCHES(CITCAT_MIPS_PAIR_LABELS)
#undef CITCAT_MIPS_PAIR_LABELS
#undef CITCAT_MIPS_PAIR_LABEL
  };
  static constexpr const void* kSlotLabels[] = {
#define CITCAT_MIPS_LABEL(name, ...) &&slot_##name,
      CITCAT_MIPS_OPS(CITCAT_MIPS_LABEL)
#undef CITCAT_MIPS_LABEL
  };
  // The handlers as plain calls, for the rare instruction that runs alone (see `alone`).
  static constexpr void (*kHandlers[])(Cpu&, const Inst&) = {
#define CITCAT_MIPS_HANDLER(name, ...) &Exec::name,
      CITCAT_MIPS_OPS(CITCAT_MIPS_HANDLER)
#undef CITCAT_MIPS_HANDLER
  };
  // clang-format on
  static_assert(std::size(kLabels) ==
                BranchPairRun(std::size(kBranches) - 1, kNumFusible - 1) + 1u);
  // Every step here retires an instruction (an exception leaves at once), so the retired count
  // follows from the budget: retired_end - left.
  uint64_t pc = pc_, left = n;
  // The pending branch's target_, kept in a register: the next fetch waits on it.
  uint64_t target = target_;
  const uint64_t retired_end = retired_ + n;

  // The instruction `k` places after `inst`, at pc + 4k, into the log.
#define CITCAT_MIPS_LOG(k)                                                            \
  do {                                                                                \
    if constexpr (kLogged) Log(pc + 4 * (k), retired_end - left + (k), inst[k].word); \
  } while (0)
  // The instruction at `inst`, about to run, to whoever watches.
#define CITCAT_MIPS_OBSERVE()        \
  do {                               \
    if constexpr (kObserved) {       \
      pc_ = pc;                      \
      retired_ = retired_end - left; \
      Observe(pc, inst->word);       \
    }                                \
    CITCAT_MIPS_LOG(0);              \
  } while (0)
#define CITCAT_MIPS_DISPATCH()                                \
  do {                                                        \
    if constexpr (kObserved || CITCAT_MIPS_SHARED_DISPATCH) { \
      goto dispatch;                                          \
    } else {                                                  \
      goto* kLabels[inst->run];                               \
    }                                                         \
  } while (0)

  if (flow_ == kDelaySlot) goto slot;
  if (flow_ != kSequential) [[unlikely]]
    goto alone;
  goto dispatch;

#define CITCAT_MIPS_CASE(name, ...)                       \
  op_##name : CITCAT_MIPS_LOG(0);                         \
  if constexpr (!IsPlain(Op::k##name)) {                  \
    pc_ = pc;                                             \
    if constexpr (!IsBranch(Op::k##name)) /* may fault */ \
      retired_ = retired_end - left;                      \
  }                                                       \
  Exec::name(*this, *inst);                               \
  --left;                                                 \
  if constexpr (IsBranch(Op::k##name)) {                  \
    gpr_[0] = 0;                                          \
    goto branched;                                        \
  } else if constexpr (!IsPlain(Op::k##name)) {           \
    gpr_[0] = 0;                                          \
    if (flow_ != kSequential) [[unlikely]]                \
      goto changed_flow;                                  \
  }                                                       \
  pc += 4;                                                \
  if (left == 0) [[unlikely]]                             \
    goto out;                                             \
  ++inst;                                                 \
  CITCAT_MIPS_DISPATCH();
  CITCAT_MIPS_OPS(CITCAT_MIPS_CASE)
#undef CITCAT_MIPS_CASE

  // A fused pair (only reached unobserved): both operations, then one jump onwards.
#define CITCAT_MIPS_PAIR(a, b)                             \
  pair_##a##_##b : if (left < 2) [[unlikely]] goto op_##a; \
  CITCAT_MIPS_LOG(0);                                      \
  CITCAT_MIPS_LOG(1);                                      \
  Exec::a(*this, inst[0]);                                 \
  Exec::b(*this, inst[1]);                                 \
  left -= 2;                                               \
  pc += 8;                                                 \
  if (left == 0) [[unlikely]]                              \
    goto out;                                              \
  inst += 2;                                               \
  CITCAT_MIPS_DISPATCH();
#define CITCAT_MIPS_PAIRS(a) CITCAT_MIPS_FUSIBLE_AFTER(CITCAT_MIPS_PAIR, a)
  CITCAT_MIPS_FUSIBLE(CITCAT_MIPS_PAIRS)
#undef CITCAT_MIPS_PAIRS
#undef CITCAT_MIPS_PAIR

  // A branch fused with its plain delay slot (only reached unobserved). Nothing can tell that
  // the slot runs inside the pair, so the branch state (flow_ kDelaySlot, in_delay_) is skipped.
#define CITCAT_MIPS_BRANCH_PAIR(a, b)                        \
  branch_##a##_##b : if (left < 2) [[unlikely]] goto op_##a; \
  CITCAT_MIPS_LOG(0);                                        \
  pc_ = pc;                                                  \
  Exec::a(*this, *inst);                                     \
  target = target_;                                          \
  gpr_[0] = 0;                                               \
  if (flow_ != kBranch) { /* an untaken branch-likely */     \
    --left;                                                  \
    goto changed_flow;                                       \
  }                                                          \
  CITCAT_MIPS_LOG(1);                                        \
  Exec::b(*this, inst[1]);                                   \
  left -= 2;                                                 \
  pc += 4;                                                   \
  ++inst;                                                    \
  goto take_branch;
#define CITCAT_MIPS_BRANCH_PAIRS(a) CITCAT_MIPS_FUSIBLE_AFTER(CITCAT_MIPS_BRANCH_PAIR, a)
  CITCAT_MIPS_BRANCHES(CITCAT_MIPS_BRANCH_PAIRS)
#undef CITCAT_MIPS_BRANCH_PAIRS
#undef CITCAT_MIPS_BRANCH_PAIR

branched:  // a branch or jump ran: flow_ is kBranch (target_ set) or kSkipSlot
  if (flow_ != kBranch) goto changed_flow;
  target = target_;
  pc += 4;
  flow_ = kDelaySlot;
  in_delay_ = true;
  if (left == 0) goto out;
  if ((++inst)->op == kLineEnd) {
    inst = FetchFast(pc);
    if (inst == nullptr) goto out;
  }
slot:
  // The delay slot, with flow_ kDelaySlot and in_delay_ set. A plain operation cannot look at
  // them, so its branch completes here; anything else goes through changed_flow if it left
  // something other than kDelaySlot (an exception, a recheck).
  CITCAT_MIPS_OBSERVE();
  goto* kSlotLabels[static_cast<size_t>(inst->op)];
#define CITCAT_MIPS_SLOT(name, ...)                    \
  slot_##name : if constexpr (!IsPlain(Op::k##name)) { \
    pc_ = pc;                                          \
    retired_ = retired_end - left;                     \
  }                                                    \
  Exec::name(*this, *inst);                            \
  --left;                                              \
  if constexpr (!IsPlain(Op::k##name)) {               \
    gpr_[0] = 0;                                       \
    if (flow_ != kDelaySlot) [[unlikely]]              \
      goto changed_flow;                               \
  }                                                    \
  goto take_branch;
  CITCAT_MIPS_OPS(CITCAT_MIPS_SLOT)
#undef CITCAT_MIPS_SLOT

changed_flow:
  // Whatever is left after an instruction whose flow is not sequential, as Cpu::FinishFlow does
  // it; exceptions, ERET and rechecks go back out, so that the outer loop looks at interrupts,
  // stop requests and the fetch window first. pc_ and retired_ are those of that instruction.
  switch (flow_) {
    case kSkipSlot:  // an untaken branch-likely, already counted: the slot is skipped
      flow_ = kSequential;
      pc += 8;
      goto check_stop;
    default:
      FinishFlow(pc);
      return n - left;
  }

take_branch:  // the delay slot completed: the branch retires and takes effect
  in_delay_ = false;
  flow_ = kSequential;
  if (++branch_count_ >= stop_branch_count_) [[unlikely]] {
    flow_break_ = target != pc + 4;
    pc = target;
    stop_ = true;
    goto out;
  }
  if (target == pc + 4) {  // not taken: the stretch goes on after the delay slot
    pc += 4;
    if (left == 0) goto out;
    ++inst;
    CITCAT_MIPS_DISPATCH();
  }
  pc = target;
  if (left == 0) goto out;
  goto fetch;

check_stop:  // after an untaken branch-likely skipped its slot
  if (branch_count_ >= stop_branch_count_) [[unlikely]] {
    flow_break_ = true;
    stop_ = true;
    goto out;
  }
  if (left == 0) goto out;
  goto fetch;

sentinel:
  // The stretch ran off the end of its line into the next word. Inside the same page (the fetch
  // window's) the next line needs no translation: if the I-cache holds the physically next line
  // there, its instructions follow the sentinel.
  if (inst->imm >= 0 && (pc & 0xFFF) != 0) {
    const Cache::Line& next = icache_.line(static_cast<uint32_t>(inst->imm));
    if (next.tag == (&next - 1)->tag + icache_.line_bytes()) [[likely]] {
      ++inst;
      CITCAT_MIPS_DISPATCH();
    }
  }
fetch:
  inst = FetchFast(pc);
  if (inst == nullptr) goto out;
  CITCAT_MIPS_DISPATCH();
dispatch:  // the entry, and the one shared jump of the observed loop and the sanitizer build
  if constexpr (kObserved) {
    if (inst->op != kLineEnd) CITCAT_MIPS_OBSERVE();
    goto* kLabels[static_cast<size_t>(inst->op)];
  }
  goto* kLabels[inst->run];
#undef CITCAT_MIPS_DISPATCH

alone:
  // An instruction that starts with something pending (a recheck): it runs on its own and
  // FinishFlow takes what it left.
  CITCAT_MIPS_OBSERVE();
  kHandlers[static_cast<size_t>(inst->op)](*this, *inst);
  gpr_[0] = 0;
  FinishFlow(pc);
  return 1;
#undef CITCAT_MIPS_LOG
#undef CITCAT_MIPS_OBSERVE

out:
  pc_ = pc;
  retired_ = retired_end - left;
  return n - left;
}

template uint64_t Cpu::RunStraight<Cpu::Watch::kNone>(const Inst*, uint64_t);
template uint64_t Cpu::RunStraight<Cpu::Watch::kLog>(const Inst*, uint64_t);
template uint64_t Cpu::RunStraight<Cpu::Watch::kObserver>(const Inst*, uint64_t);

}  // namespace citcat::mips
