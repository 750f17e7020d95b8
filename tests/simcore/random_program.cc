#include "tests/simcore/random_program.h"

#include <random>

#include "tests/simcore/mips_asm.h"

namespace citcat::mips {
namespace {

using namespace as;  // NOLINT

constexpr int kJumpReg = 27;   // holds JR/JALR targets
constexpr int kData = 28;      // cached data base
constexpr int kUncached = 29;  // uncached data base
constexpr int kCounter = 30;   // loop counter

// Encoders taking their fields as one braced list: the fields are then evaluated left to right
// (function arguments are not), so a seed gives the same program with every compiler.
struct Field {  // any integer, without narrowing complaints inside the braces
  template <typename T>
  Field(T x) : v(static_cast<int64_t>(x)) {}  // NOLINT: implicit on purpose
  int64_t v;
};
struct RFields {
  Field funct, rs, rt, rd, sa = 0;
};
struct IFields {
  Field op, rs, rt, imm;
};
struct Reg3 {
  Field fa, fb, fc;
  int a() const { return static_cast<int>(fa.v); }
  int b() const { return static_cast<int>(fb.v); }
  int c() const { return static_cast<int>(fc.v); }
};
uint32_t Rs(RFields f) {
  return R(static_cast<uint32_t>(f.funct.v), static_cast<uint32_t>(f.rs.v),
           static_cast<uint32_t>(f.rt.v), static_cast<uint32_t>(f.rd.v),
           static_cast<uint32_t>(f.sa.v));
}
uint32_t Is(IFields f) {
  return I(static_cast<uint32_t>(f.op.v), static_cast<uint32_t>(f.rs.v),
           static_cast<uint32_t>(f.rt.v), static_cast<int32_t>(f.imm.v));
}
uint32_t Adds(Reg3 r) { return Add(r.a(), r.b(), r.c()); }
uint32_t Addus(Reg3 r) { return Addu(r.a(), r.b(), r.c()); }
uint32_t Subs(Reg3 r) { return Sub(r.a(), r.b(), r.c()); }
uint32_t Subus(Reg3 r) { return Subu(r.a(), r.b(), r.c()); }
uint32_t Addis(Reg3 r) { return Addi(r.a(), r.b(), r.c()); }
uint32_t Addius(Reg3 r) { return Addiu(r.a(), r.b(), r.c()); }
uint32_t Lws(Reg3 r) { return Lw(r.a(), r.b(), r.c()); }
uint32_t Shs(Reg3 r) { return Sh(r.a(), r.b(), r.c()); }

// A group is emitted as a unit; control transfers only land on group starts.
struct Group {
  std::vector<uint32_t> words;
  int branch_at = -1;     // index in words of a PC-relative branch to patch
  int jump_at = -1;       // index of a J/JAL to patch
  int target_hi_at = -1;  // LUI/ORI pair to load the absolute target
  int target_group = -1;
};

class Generator {
 public:
  explicit Generator(const RandomProgramOptions& o) : opt_(o), rng_(o.seed) {}

  RandomProgram Generate() {
    RandomProgram p;
    p.data.resize(RandomProgram::kDataBytes);
    for (uint8_t& b : p.data) b = static_cast<uint8_t>(rng_());
    // Prologue: interesting register values, the bases and the loop counter.
    for (int r = 1; r < 32; ++r) {
      if (r == kData || r == kUncached || r == kCounter || r == kJumpReg) continue;
      if (opt_.mode64) {
        LoadImm64(p.words, r, InterestingValue64());
      } else {
        LoadImm(p.words, r, InterestingValue());
      }
    }
    LoadImm(p.words, kData, static_cast<uint32_t>(opt_.data_base));
    LoadImm(p.words, kUncached,
            opt_.mode64 ? static_cast<uint32_t>(opt_.data_base) : RandomProgram::kUncachedBase);
    LoadImm(p.words, kCounter, static_cast<uint32_t>(opt_.iterations));
    const uint64_t loop_top = opt_.code_base + 4 * p.words.size();

    std::vector<Group> groups;
    for (int g = 0; g < opt_.groups; ++g) groups.push_back(MakeGroup(g));
    // Lay out, then patch targets. Group index opt_.groups is the loop tail.
    std::vector<uint64_t> start(groups.size() + 1);
    uint64_t addr = loop_top;
    for (size_t g = 0; g < groups.size(); ++g) {
      start[g] = addr;
      addr += 4 * groups[g].words.size();
    }
    start[groups.size()] = addr;
    for (size_t g = 0; g < groups.size(); ++g) {
      Group& gr = groups[g];
      if (gr.target_group < 0) continue;
      const int tg = std::min<int>(gr.target_group, static_cast<int>(groups.size()));
      const uint64_t target = start[tg];
      const uint64_t here = start[g];
      if (gr.branch_at >= 0) {
        const int64_t off =
            (static_cast<int64_t>(target) - static_cast<int64_t>(here + 4 * gr.branch_at + 4)) / 4;
        gr.words[gr.branch_at] |= static_cast<uint32_t>(off) & 0xFFFF;
      }
      if (gr.jump_at >= 0) gr.words[gr.jump_at] |= (target >> 2) & 0x03FFFFFF;
      if (gr.target_hi_at >= 0) {
        gr.words[gr.target_hi_at] |= (target >> 16) & 0xFFFF;
        gr.words[gr.target_hi_at + 1] |= target & 0xFFFF;
      }
    }
    for (const Group& gr : groups) p.words.insert(p.words.end(), gr.words.begin(), gr.words.end());
    // Tail: count down and loop.
    p.words.push_back(Addius({kCounter, kCounter, -1}));
    const int64_t back = (static_cast<int64_t>(loop_top) -
                          static_cast<int64_t>(opt_.code_base + 4 * p.words.size() + 4)) /
                         4;
    p.words.push_back(Bne(kCounter, 0, static_cast<int>(back)));
    p.words.push_back(Nop());
    p.end = opt_.code_base + 4 * p.words.size();
    if (opt_.mode64) {  // exit(0) for Linux n32: v0 = 6058, a0 = 0
      p.words.push_back(Addius({2, 0, 6058}));
      p.words.push_back(Addius({4, 0, 0}));
      p.words.push_back(Syscall());
    }
    return p;
  }

 private:
  uint32_t Rand(uint32_t n) { return static_cast<uint32_t>(rng_() % n); }
  bool Chance(uint32_t percent) { return Rand(100) < percent; }

  uint32_t InterestingValue() {
    static constexpr uint32_t kSpecial[] = {0,          1,          0xFFFFFFFF, 0x7FFFFFFF,
                                            0x80000000, 0x00008000, 0xFFFF8000, 0x0000FFFF,
                                            2,          31,         32,         0x55555555};
    if (Chance(30)) return kSpecial[Rand(std::size(kSpecial))];
    return static_cast<uint32_t>(rng_());
  }
  uint64_t InterestingValue64() {
    static constexpr uint64_t kSpecial[] = {0x7FFFFFFFFFFFFFFFull, 0x8000000000000000ull,
                                            0x00000000FFFFFFFFull, 0xFFFFFFFF00000000ull,
                                            0x0000000080000000ull, 0xFFFFFFFF7FFFFFFFull};
    if (Chance(15)) return kSpecial[Rand(std::size(kSpecial))];
    if (Chance(40)) return static_cast<uint64_t>(static_cast<int32_t>(InterestingValue()));
    return rng_();
  }
  static void LoadImm64(std::vector<uint32_t>& w, int r, uint64_t v) {
    w.push_back(Lui(r, static_cast<int>((v >> 48) & 0xFFFF)));
    w.push_back(Ori(r, r, static_cast<int>((v >> 32) & 0xFFFF)));
    w.push_back(Dsll(r, r, 16));
    w.push_back(Ori(r, r, static_cast<int>((v >> 16) & 0xFFFF)));
    w.push_back(Dsll(r, r, 16));
    w.push_back(Ori(r, r, static_cast<int>(v & 0xFFFF)));
  }
  static void LoadImm(std::vector<uint32_t>& w, int r, uint32_t v) {
    w.push_back(Lui(r, static_cast<int>(v >> 16)));
    w.push_back(Ori(r, r, static_cast<int>(v & 0xFFFF)));
  }
  int Dst() {
    static constexpr int kWritable[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14,
                                        15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 31};
    return kWritable[Rand(std::size(kWritable))];
  }
  int Src() { return static_cast<int>(Rand(32)); }
  int16_t Imm() {
    if (Chance(20)) return static_cast<int16_t>(Rand(3) - 1);
    return static_cast<int16_t>(rng_());
  }
  int DataOffset(int align) { return static_cast<int>(Rand(RandomProgram::kDataBytes)) & -align; }

  // An instruction that cannot raise an exception: fit for a delay slot.
  uint32_t Safe() {
    if (opt_.mode64 && Chance(40)) return Safe64();
    switch (Rand(12)) {
      case 0:
        return Rs({0x21, Src(), Src(), Dst()});  // addu
      case 1:
        return Rs({0x23, Src(), Src(), Dst()});  // subu
      case 2:
        return Rs({0x24 + Rand(4), Src(), Src(), Dst()});  // and/or/xor/nor
      case 3:
        return Rs({0x2A + Rand(2), Src(), Src(), Dst()});  // slt/sltu
      case 4:
        return Rs({Rand(2) ? 0x04 : 0x06 + Rand(2), Src(), Src(), Dst()});  // sllv/srlv/srav
      case 5:
        return Rs({Rand(2) ? 0x00 : 0x02 + Rand(2), 0, Src(), Dst(), Rand(32)});  // shifts
      case 6:
        return Is({0x09 + Rand(7), Src(), Dst(), Imm()});  // addiu..lui (no addi)
      case 7:
        return Rs({0x10 + 2 * Rand(2), 0, 0, Dst()});  // mfhi/mflo
      case 8:
        return Rs({0x11 + 2 * Rand(2), Src(), 0, 0});  // mthi/mtlo
      case 9:  // mult/multu/div/divu (in 64-bit mode only the multiplies: see MakeGroup)
        return Rs({0x18 + Rand(opt_.mode64 ? 2 : 4), Src(), Src(), 0});
      case 10: {  // aligned load from the cached area
        static constexpr uint32_t kOps[] = {0x20, 0x21, 0x23, 0x24, 0x25};
        static constexpr int kAlign[] = {1, 2, 4, 1, 2};
        const int k = static_cast<int>(Rand(5));
        return Is({kOps[k], kData, Dst(), DataOffset(kAlign[k])});
      }
      default: {  // aligned store to the cached area
        static constexpr uint32_t kOps[] = {0x28, 0x29, 0x2B};
        static constexpr int kAlign[] = {1, 2, 4};
        const int k = static_cast<int>(Rand(3));
        return Is({kOps[k], kData, Src(), DataOffset(kAlign[k])});
      }
    }
  }

  // 64-bit operations that cannot raise an exception.
  uint32_t Safe64() {
    switch (Rand(9)) {
      case 0:
        return Rs({0x2D, Src(), Src(), Dst()});  // daddu
      case 1:
        return Rs({0x2F, Src(), Src(), Dst()});  // dsubu
      case 2:
        return Rs({0x14 + (Rand(3) == 0 ? 0 : 2 + Rand(2)), Src(), Src(), Dst()});  // dsllv..
      case 3: {
        static constexpr uint32_t kFn[] = {0x38, 0x3A, 0x3B, 0x3C, 0x3E, 0x3F};  // dsll..dsra32
        return Rs({kFn[Rand(6)], 0, Src(), Dst(), Rand(32)});
      }
      case 4:
        return Is({0x19, Src(), Dst(), Imm()});  // daddiu
      case 5:
        return Rs({0x1C + Rand(2), Src(), Src(), 0});  // dmult/dmultu
      case 6:
        return Is({0x37, kData, Dst(), DataOffset(8)});  // ld
      case 7:
        return Is({0x27, kData, Dst(), DataOffset(4)});  // lwu
      default:
        return Is({0x3F, kData, Src(), DataOffset(8)});  // sd
    }
  }

  Group MakeGroup(int index) {
    Group g;
    const uint32_t kind = Rand(100);
    if (opt_.mode64 && kind < 25) {  // 64-bit specific groups
      switch (Rand(5)) {
        case 0: {  // a divide with its divisor forced odd (QEMU and the R4400 differ on zero)
          const int rt = Dst();
          static constexpr uint32_t kFn[] = {0x1A, 0x1B, 0x1E, 0x1F};  // div divu ddiv ddivu
          g.words = {Ori(rt, rt, 1), Rs({kFn[Rand(4)], Src(), rt, 0})};
          break;
        }
        case 1: {  // LDL/LDR/SDL/SDR
          static constexpr uint32_t kOps[] = {0x1A, 0x1B, 0x2C, 0x2D};
          const uint32_t op = kOps[Rand(4)];
          const int rt = op >= 0x2C ? Src() : Dst();
          const int off = DataOffset(8);
          const int k = static_cast<int>(Rand(8));
          g.words.push_back(Is({op, kData, rt, off + k}));
          if (Chance(50)) g.words.push_back(Is({op ^ 0x01, kData, rt, off + 7 - k}));
          break;
        }
        case 2: {  // LLD ... SCD
          const int r = Dst();
          const int off = DataOffset(8);
          g.words = {Is({0x34, kData, r, off}), Daddiu(r, r, Imm()), Is({0x3C, kData, r, off})};
          break;
        }
        case 3: {  // 64-bit arithmetic that would trap on overflow, in its non-trapping form
          g.words.push_back(Rand(2) ? Rs({0x2D, Src(), Src(), Dst()})
                                    : Is({0x19, Src(), Dst(), Imm()}));
          break;
        }
        default:
          g.words.push_back(Safe64());
      }
      return g;
    }
    if (kind < 40) {
      g.words.push_back(Safe());
    } else if (kind < 48) {               // arithmetic that may overflow
      const bool trap = opt_.exceptions;  // else the non-trapping (unsigned) forms
      switch (Rand(3)) {
        case 0:
          g.words.push_back(trap ? Adds({Dst(), Src(), Src()}) : Addus({Dst(), Src(), Src()}));
          break;
        case 1:
          g.words.push_back(trap ? Subs({Dst(), Src(), Src()}) : Subus({Dst(), Src(), Src()}));
          break;
        default:
          g.words.push_back(trap ? Addis({Dst(), Src(), Imm()}) : Addius({Dst(), Src(), Imm()}));
      }
    } else if (kind < 58) {  // loads/stores, cached or uncached, all widths
      const int base = Chance(20) ? kUncached : kData;
      static constexpr uint32_t kOps[] = {0x20, 0x21, 0x23, 0x24, 0x25, 0x28, 0x29, 0x2B};
      static constexpr int kAlign[] = {1, 2, 4, 1, 2, 1, 2, 4};
      const int k = static_cast<int>(Rand(8));
      const int rt = kOps[k] >= 0x28 ? Src() : Dst();
      g.words.push_back(Is({kOps[k], base, rt, DataOffset(kAlign[k])}));
    } else if (kind < 66) {  // unaligned pairs and singles
      const int base = Chance(20) ? kUncached : kData;
      static constexpr uint32_t kOps[] = {0x22, 0x26, 0x2A, 0x2E};  // lwl lwr swl swr
      const uint32_t op = kOps[Rand(4)];
      const int rt = op >= 0x28 ? Src() : Dst();
      const int off = DataOffset(1) & ~3;
      const int k = static_cast<int>(Rand(4));
      g.words.push_back(Is({op, base, rt, off + k}));
      if (Chance(50)) g.words.push_back(Is({op ^ 0x04, base, rt, off + 3 - k}));  // the partner
    } else if (kind < 68) {  // LL ... SC on one word
      const int r = Dst();
      const int off = DataOffset(4);
      g.words = {Ll(r, off, kData), Addius({r, r, Imm()}), Sc(r, off, kData)};
    } else if (kind < 84) {  // conditional branches, plain and likely, with and without link
      g.target_group = index + 1 + static_cast<int>(Rand(6));
      g.branch_at = 0;
      uint32_t w;
      switch (Rand(6)) {
        case 0:
          w = Is({0x04 + Rand(2), Src(), Src(), 0});
          break;  // beq/bne
        case 1:
          w = Is({0x06 + Rand(2), Src(), 0, 0});
          break;  // blez/bgtz
        case 2:
          w = Is({0x14 + Rand(2), Src(), Src(), 0});
          break;  // beql/bnel
        case 3:
          w = Is({0x16 + Rand(2), Src(), 0, 0});
          break;  // blezl/bgtzl
        case 4:
          w = Is({0x01, Src(), Rand(4), 0});
          break;  // bltz/bgez(l)
        default:
          w = Is({0x01, Src(), 0x10 + Rand(4), 0});
          break;  // bltzal..bgezall
      }
      g.words = {w, Safe()};
    } else if (kind < 88) {  // J / JAL
      g.target_group = index + 1 + static_cast<int>(Rand(6));
      g.jump_at = 0;
      g.words = {(Rand(2) ? 0x02u : 0x03u) << 26, Safe()};
    } else if (kind < 91) {  // JR / JALR through a register
      g.target_group = index + 1 + static_cast<int>(Rand(6));
      g.target_hi_at = 0;
      uint32_t jump = Rand(2) ? Jr(kJumpReg) : Jalr(Dst(), kJumpReg);
      g.words = {Lui(kJumpReg, 0), Ori(kJumpReg, kJumpReg, 0), jump, Safe()};
    } else if (kind < 95) {  // traps
      if (!opt_.exceptions) {
        g.words.push_back(Sync());
      } else if (Rand(2)) {
        static constexpr uint32_t kFunct[] = {0x30, 0x31, 0x32, 0x33, 0x34, 0x36};  // tge..tne
        g.words.push_back(Rs({kFunct[Rand(6)], Src(), Src(), 0}));
      } else {
        static constexpr uint32_t kRt[] = {0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0E};
        g.words.push_back(Is({0x01, Src(), kRt[Rand(6)], Imm()}));
      }
    } else if (kind < 97) {
      g.words.push_back(Sync());
    } else if (opt_.exceptions) {  // rare: SYSCALL, BREAK, misaligned access
      switch (Rand(4)) {
        case 0:
          g.words.push_back(Syscall());
          break;
        case 1:
          g.words.push_back(Break());
          break;
        case 2:
          g.words.push_back(Lws({Dst(), DataOffset(4) + 1 + Rand(3), kData}));
          break;
        default:
          g.words.push_back(Shs({Src(), DataOffset(2) + 1, kData}));
          break;
      }
    } else {
      g.words.push_back(Safe());
    }
    return g;
  }

  RandomProgramOptions opt_;
  std::mt19937_64 rng_;
};

}  // namespace

RandomProgram GenerateRandomProgram(const RandomProgramOptions& options) {
  return Generator(options).Generate();
}

}  // namespace citcat::mips
