#include "tests/oracles/kernel_random_program.h"

#include <random>

#include "simcore/mips/cpu.h"
#include "tests/oracles/qemu_system.h"
#include "tests/simcore/mips_asm.h"

namespace citcat::oracle {
namespace {

using namespace mips::as;  // NOLINT

constexpr uint64_t kRom = 0xFFFFFFFFBFC00000ull;
constexpr uint64_t kCachedPa = 0x01000000;    // reached through cached attributes only
constexpr uint64_t kUncachedPa = 0x02000000;  // through uncached attributes only
constexpr uint64_t kRegionBytes = 0x01000000;
constexpr uint64_t kTlbRegion = 0x02000000;  // kuseg: TLB entry i maps only [i, i+1) * 32 MB

constexpr int kAt = 1, kA0 = 4, kLoop = 23, kT8 = 24, kT9 = 25, kK0 = 26, kK1 = 27, kCount = 30;
constexpr int kPool[] = {2,  3,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14,
                         15, 16, 17, 18, 19, 20, 21, 22, 28, 29, 31};
constexpr uint32_t kPageMasks[] = {0x0, 0x6000, 0x1E000, 0x7E000, 0x1FE000, 0x7FE000, 0x1FFE000};

// The handlers' common code starts here, after the vectors.
constexpr uint32_t kRefillCommon = 0x400;
constexpr uint32_t kGeneralCommon = 0x500;
constexpr uint32_t kInit = 0x600;

uint32_t B(int off) { return Beq(0, 0, off); }
uint32_t Sdbbp1() { return kQemuExitWord; }

class Program {
 public:
  explicit Program(const KernelProgramOptions& o) : opt_(o), rng_(o.seed) {}

  std::vector<uint8_t> Build() {
    Vectors();
    RefillHandler();
    GeneralHandler();
    Init();
    const size_t body = words_.size();
    for (int i = 0; i < opt_.items; ++i) Item();
    Emit(Daddiu(kLoop, kLoop, -1));
    Emit(Bne(kLoop, 0, static_cast<int>(body) - static_cast<int>(words_.size()) - 1));
    Emit(Nop());
    Li(kT9, 1);  // UHI exit(0)
    Li(kA0, 0);
    Emit(Sdbbp1());
    Emit(Nop());
    std::vector<uint8_t> rom(words_.size() * 4);
    for (size_t i = 0; i < words_.size(); ++i) {
      for (int k = 0; k < 4; ++k) rom[4 * i + k] = static_cast<uint8_t>(words_[i] >> (24 - 8 * k));
    }
    return rom;
  }

 private:
  uint64_t Rand() { return rng_(); }
  uint64_t Below(uint64_t n) { return Rand() % n; }
  bool Chance(int percent) { return Below(100) < static_cast<uint64_t>(percent); }
  int PoolReg() { return kPool[Below(std::size(kPool))]; }

  void Emit(uint32_t w) { words_.push_back(w); }
  void At(uint32_t offset) { words_.resize(offset / 4, Nop()); }
  uint64_t Here() const { return kRom + 4 * words_.size(); }

  // Any 64-bit constant; 32-bit sign-extended ones take two words.
  void Li(int r, uint64_t v) {
    if (v == static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v)))) {
      Emit(Lui(r, static_cast<int>((v >> 16) & 0xFFFF)));
      Emit(Ori(r, r, static_cast<int>(v & 0xFFFF)));
      return;
    }
    Emit(Lui(r, static_cast<int>((v >> 48) & 0xFFFF)));
    Emit(Ori(r, r, static_cast<int>((v >> 32) & 0xFFFF)));
    Emit(Dsll(r, r, 16));
    Emit(Ori(r, r, static_cast<int>((v >> 16) & 0xFFFF)));
    Emit(Dsll(r, r, 16));
    Emit(Ori(r, r, static_cast<int>(v & 0xFFFF)));
  }

  uint64_t Interesting() {
    static constexpr uint64_t kValues[] = {0,
                                           1,
                                           0x7FFFFFFF,
                                           0xFFFFFFFF80000000ull,
                                           0xFFFFFFFFFFFFFFFFull,
                                           0x7FFFFFFFFFFFFFFFull,
                                           0x8000000000000000ull,
                                           0x00000000FFFFFFFFull,
                                           0x0000000080000000ull};
    if (Chance(40)) return kValues[Below(std::size(kValues))];
    const uint64_t v = Rand();
    return Chance(50) ? static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v))) : v;
  }

  // ---- vectors and handlers ----
  // BEV=1 vectors in ROM branch to the common code; BEV=0 ones (copied to RAM by Init) jump.
  void Vectors() {
    Emit(B(kInit / 4 - 1));
    Emit(Nop());
    for (uint32_t vec : {0x200u, 0x280u, 0x380u}) {
      At(vec);
      const uint32_t target = vec == 0x380 ? kGeneralCommon : kRefillCommon;
      Emit(B(static_cast<int>(target - vec) / 4 - 1));
      Emit(Nop());
    }
    At(kRefillCommon);
  }

  // Copies what QEMU does not log into k0/k1 (compared at the next instruction), then maps the
  // page: inside the kuseg TLB regions with TLBWI at the region's index, elsewhere with TLBWR.
  void RefillHandler() {
    Emit(Dmfc0(kK1, mips::kCp0Context));
    Emit(Dmfc0(kK1, mips::kCp0XContext));
    Emit(Dmfc0(kK1, mips::kCp0EntryHi));
    Emit(Dmfc0(kK0, mips::kCp0BadVAddr));
    Emit(Mtc0(0, mips::kCp0PageMask));
    Emit(Dsrl(kK1, kK0, 12));
    Emit(Andi(kK1, kK1, 0xFFE));
    Emit(Ori(kK1, kK1, kCachedPa >> 12));
    Emit(Dsll(kK1, kK1, 6));
    Emit(Ori(kK1, kK1, (3 << 3) | 4 | 2));  // cacheable, dirty, valid
    Emit(Dmtc0(kK1, mips::kCp0EntryLo0));
    Emit(Daddiu(kK1, kK1, 1 << 6));
    Emit(Dmtc0(kK1, mips::kCp0EntryLo1));
    Emit(Dsrl(kK1, kK0, 25));
    Emit(Sltiu(kK1, kK1, 48));
    Emit(Beq(kK1, 0, 5));  // to the TLBWR
    Emit(Dsrl(kK0, kK0, 25));
    Emit(Mtc0(kK0, mips::kCp0Index));
    Emit(Tlbwi());
    Emit(B(2));
    Emit(Nop());
    Emit(Tlbwr());
    Emit(Mfc0(kK0, mips::kCp0Index));
    Emit(Daddiu(kCount, kCount, 1));
    Emit(Eret());
    At(kGeneralCommon);
  }

  // Copies the unlogged registers, counts, and resumes after the faulting instruction, or after
  // its branch when it sat in a delay slot. Context, XContext and EntryHi are only read after a
  // TLB exception: after an address error the R4400 leaves them undefined (QEMU fills them in).
  void GeneralHandler() {
    Emit(Dmfc0(kK0, mips::kCp0BadVAddr));
    Emit(Mfc0(kK0, mips::kCp0Cause));
    Emit(Andi(kK1, kK0, 0x7C));
    Emit(Addiu(kK1, kK1, -4));
    Emit(Sltiu(kK1, kK1, 12));  // Mod, TLBL, TLBS
    Emit(Beq(kK1, 0, 4));
    Emit(Nop());
    Emit(Dmfc0(kK1, mips::kCp0Context));
    Emit(Dmfc0(kK1, mips::kCp0XContext));
    Emit(Dmfc0(kK1, mips::kCp0EntryHi));
    Emit(Dmfc0(kK1, mips::kCp0Epc));
    Emit(Bgez(kK0, 2));
    Emit(Daddiu(kK1, kK1, 4));
    Emit(Daddiu(kK1, kK1, 4));
    Emit(Dmtc0(kK1, mips::kCp0Epc));
    Emit(Daddiu(kCount, kCount, 1));
    Emit(Eret());
    At(kInit);
  }

  void Init() {
    // The BEV=0 vectors in RAM: jumps to the common code in ROM, stored through kseg1.
    Li(kT9, 0xFFFFFFFFA0000000ull);
    for (uint32_t vec : {0x000u, 0x080u, 0x180u}) {
      const uint32_t target = vec == 0x180 ? kGeneralCommon : kRefillCommon;
      const uint32_t stub[] = {Lui(kK0, 0xBFC0), Ori(kK0, kK0, static_cast<int>(target)), Jr(kK0),
                               Nop()};
      for (int k = 0; k < 4; ++k) {
        Li(kT8, stub[k]);
        Emit(Sw(kT8, static_cast<int>(vec + 4 * k), kT9));
      }
    }
    for (int r : kPool) Li(r, Interesting());
    for (int i = 0; i < 48; ++i) TlbWriteIndexed(i);
    Li(kLoop, static_cast<uint64_t>(opt_.iterations));
    Li(kCount, 0);
    Li(kT8, RandomStatus() | mips::kStatusBev);
    Emit(Mtc0(kT8, mips::kCp0Status));  // clears ERL: the TLB maps kuseg from here on
  }

  // ---- random items ----
  void Item() {
    const uint64_t k = Below(100);
    if (k < 22) {
      Alu();
    } else if (k < 52) {
      WithMaybeBranch([this] { Access(); });
    } else if (k < 62) {
      Cp0Write();
    } else if (k < 66) {
      TlbWriteIndexed(static_cast<int>(Below(48)));
    } else if (k < 70) {
      TlbWriteRandom();
    } else if (k < 74) {
      TlbProbe();
    } else if (k < 77) {
      TlbRead();
    } else if (k < 96) {
      WithMaybeBranch([this] { Trouble(); });
    } else {
      EretToNext();
    }
  }

  void Alu() {
    const int d = PoolReg(), a = PoolReg(), b = PoolReg();
    switch (Below(12)) {
      case 0:
        Emit(Daddu(d, a, b));
        break;
      case 1:
        Emit(Dsubu(d, a, b));
        break;
      case 2:
        Emit(And(d, a, b));
        break;
      case 3:
        Emit(Or(d, a, b));
        break;
      case 4:
        Emit(Xor(d, a, b));
        break;
      case 5:
        Emit(Nor(d, a, b));
        break;
      case 6:
        Emit(Dsll32(d, a, static_cast<int>(Below(32))));
        break;
      case 7:
        Emit(Dsra(d, a, static_cast<int>(Below(32))));
        break;
      case 8:
        Emit(Daddiu(d, a, static_cast<int>(Below(65536)) - 32768));
        break;
      case 9:
        Emit(Sltu(d, a, b));
        break;
      case 10:  // 32-bit operations on sign-extended operands
        Emit(Sll(a, a, 0));
        Emit(Sll(b, b, 0));
        Emit(Mult(a, b));
        Emit(Mflo(d));
        Emit(Mfhi(a));
        break;
      default:
        Li(d, Interesting());
        break;
    }
  }

  // A branch whose delay slot is the block (taken or not, the code goes on after the slot), or
  // just the block.
  template <typename F>
  void WithMaybeBranch(F block) {
    if (!Chance(35)) {
      block();
      return;
    }
    const int a = PoolReg();
    int b = PoolReg();
    // QEMU translates BNE r,r as a NOP: an exception in its slot gets no Cause.BD (the R4400's
    // does; tests "differences" prove it).
    if (b == a) b = a == 2 ? 3 : 2;
    // The block's set-up words go before the branch, its last word into the delay slot.
    const size_t start = words_.size();
    block();
    std::vector<uint32_t> blockw(words_.begin() + static_cast<long>(start), words_.end());
    words_.resize(start);
    for (size_t i = 0; i + 1 < blockw.size(); ++i) Emit(blockw[i]);
    switch (Below(8)) {
      case 0:
        Emit(Beq(a, b, 1));
        break;
      case 1:
        Emit(Bne(a, b, 1));
        break;
      case 2:
        Emit(Bgez(a, 1));
        break;
      case 3:
        Emit(Bltz(a, 1));
        break;
      case 4:
        Emit(Bgezal(a, 1));
        break;
      case 5:
        Emit(Beql(a, b, 1));
        break;
      case 6:
        Emit(Bnel(a, b, 1));
        break;
      default:
        Emit(J(static_cast<uint32_t>(Here() + 8)));
        break;
    }
    Emit(blockw.back());
  }

  uint64_t RandomVa() {
    const uint64_t off = Below(8) * 0x1000 + Below(0x1000);
    const uint64_t page = Below(4) * 0x10000;
    switch (Below(11)) {
      case 0:  // kuseg: a TLB region
      case 1:
        return Below(48) * kTlbRegion + Below(4) * 0x2000 + off;
      case 2:  // kseg0
        return 0xFFFFFFFF80000000ull + kCachedPa + page + off;
      case 3:  // kseg1
        return 0xFFFFFFFFA0000000ull + kUncachedPa + page + off;
      case 4:  // ksseg / kseg3
        return 0xFFFFFFFFC0000000ull + Below(2) * 0x20000000 + page + off;
      case 5:  // xkphys, cached (CCA 3) or uncached (CCA 2)
        return Chance(50) ? 0x9800000000000000ull + kCachedPa + page + off
                          : 0x9000000000000000ull + kUncachedPa + page + off;
      case 6:  // xkseg, inside or beyond its end
        return Chance(80) ? 0xC000000000000000ull + (Below(4) << 32) + page + off
                          : 0xC00000FF80000000ull + off;
      case 7:  // xksseg
        return 0x4000000000000000ull + (Below(4) << 36) + page + off;
      case 8:  // xkuseg beyond 32 bits, or beyond 2^40
        return Chance(80) ? ((Below(255) + 1) << 32) | (page + off) : (uint64_t{1} << 40) + off;
      case 9:  // xkphys with bits no R4400 address has
        return 0x9800010000000000ull + off;
      default: {
        // Anything, except unmapped addresses outside the two regions (QEMU's mipssim has
        // devices and holes there).
        const uint64_t va = (Interesting() & ~uint64_t{0xFFF}) | off;
        const bool ckseg01 = va >= 0xFFFFFFFF80000000ull && va < 0xFFFFFFFFC0000000ull;
        return ckseg01 || (va >> 62) == 2 ? 0xFFFFFFFFC0000000ull + off : va;
      }
    }
  }

  void Access() {
    const uint64_t va = RandomVa();
    const int r = PoolReg();
    int off = static_cast<int>(Below(64)) - 32;
    if (!Chance(15)) off &= ~7;  // mostly aligned
    Li(kAt, va - static_cast<uint64_t>(static_cast<int64_t>(off)));
    switch (Below(14)) {
      case 0:
        Emit(Lb(r, off, kAt));
        break;
      case 1:
        Emit(Lbu(r, off, kAt));
        break;
      case 2:
        Emit(Lh(r, off, kAt));
        break;
      case 3:
        Emit(Lhu(r, off, kAt));
        break;
      case 4:
        Emit(Lw(r, off, kAt));
        break;
      case 5:
        Emit(Lwu(r, off, kAt));
        break;
      case 6:
        Emit(Ld(r, off, kAt));
        break;
      case 7:
        Emit(Lwl(r, off, kAt));
        break;
      case 8:
        Emit(Sb(r, off, kAt));
        break;
      case 9:
        Emit(Sh(r, off, kAt));
        break;
      case 10:
        Emit(Sw(r, off, kAt));
        break;
      case 11:
        Emit(Sd(r, off, kAt));
        break;
      case 12:
        Emit(Sdl(r, off, kAt));
        break;
      default:
        Emit(Lwr(r, off, kAt));
        break;
    }
  }

  // SYSCALL, BREAK, traps, overflows and Coprocessor Unusable; most of them take the exception.
  void Trouble() {
    const int a = PoolReg(), b = PoolReg(), d = PoolReg();
    switch (Below(12)) {
      case 0:
        Emit(Syscall() | static_cast<uint32_t>(Below(1 << 20)) << 6);
        break;
      case 1:
        Emit(Break() | static_cast<uint32_t>(Below(1 << 20)) << 6);
        break;
      case 2:
        Emit(Teq(a, b));
        break;
      case 3:
        Emit(Tne(a, b));
        break;
      case 4:
        Emit(Chance(50) ? Tge(a, b) : Tltu(a, b));
        break;
      case 5:
        Emit(Chance(50) ? Tgei(a, static_cast<int>(Below(65536)) - 32768)
                        : Tnei(a, static_cast<int>(Below(16))));
        break;
      case 6:
        Emit(Sll(a, a, 0));
        Emit(Sll(b, b, 0));
        Emit(Chance(50) ? Add(d, a, b) : Sub(d, a, b));
        break;
      case 7:
        Emit(Sll(a, a, 0));
        Emit(Addi(d, a, static_cast<int>(Below(65536)) - 32768));
        break;
      case 8:
        Emit(Chance(50) ? Dadd(d, a, b) : Dsub(d, a, b));
        break;
      case 9:
        Emit(Daddi(d, a, static_cast<int>(Below(65536)) - 32768));
        break;
      case 10:
        Emit(Mfc1(d, static_cast<int>(Below(32))));
        break;
      default:
        Emit(Mtc1(a, static_cast<int>(Below(32))));
        break;
    }
  }

  uint32_t RandomStatus() {
    uint32_t s = static_cast<uint32_t>(Below(256)) << mips::kStatusImShift;
    // KX, SX and UX together: in kernel mode the R4400 gates every 64-bit segment with KX,
    // QEMU each with its own bit (xkuseg UX, xksseg SX).
    if (Chance(50)) s |= mips::kStatusKx | mips::kStatusSx | mips::kStatusUx;
    if (Chance(50)) s |= mips::kStatusBev;
    if (Chance(50)) s |= mips::kStatusCu1;
    if (Chance(30)) s |= mips::kStatusCu0;
    if (Chance(10)) s |= mips::kStatusSr;
    return s;
  }

  uint64_t RandomEntryHi() {
    uint64_t va;
    switch (Below(4)) {
      case 0:
        va = Below(48) * kTlbRegion + Below(8) * 0x2000;
        break;
      case 1:
        va = 0xFFFFFFFFC0000000ull + Below(64) * 0x2000;
        break;
      case 2:
        va = 0xC000000000000000ull + (Below(4) << 32) + Below(64) * 0x2000;
        break;
      default:
        va = Rand();
        break;
    }
    return va | Below(4);  // a few ASIDs, so that entries match again
  }

  void Cp0Write() {
    const int r = PoolReg();
    int reg;
    uint64_t v;
    switch (Below(10)) {
      case 0:
        reg = mips::kCp0EntryHi;
        v = RandomEntryHi();
        break;
      case 1:
        reg = mips::kCp0EntryLo0;
        v = Rand();
        break;
      case 2:
        reg = mips::kCp0EntryLo1;
        v = Rand();
        break;
      case 3:
        reg = mips::kCp0PageMask;
        v = kPageMasks[Below(std::size(kPageMasks))];
        break;
      case 4:
        reg = mips::kCp0Index;
        v = Below(48);
        break;
      case 5:
        reg = mips::kCp0Wired;
        v = Below(48);
        break;
      case 6:
        reg = mips::kCp0Context;
        v = Rand();
        break;
      case 7:
        reg = mips::kCp0XContext;
        v = Rand();
        break;
      case 8:
        reg = mips::kCp0Cause;
        v = Below(4) << 8;
        break;
      default:
        reg = mips::kCp0Status;
        v = RandomStatus();
        break;
    }
    Li(kT8, v);
    Emit(Dmtc0(kT8, reg));
    Emit(Dmfc0(r, reg));
  }

  uint64_t EntryLo(uint64_t page_bytes) {
    const bool cached = Chance(60);
    const uint64_t base = cached ? kCachedPa : kUncachedPa;
    const uint64_t pa = base + Below(kRegionBytes / page_bytes) * page_bytes;
    uint64_t lo = (pa >> 12) << 6 | (cached ? 3 : 2) << 3;
    if (Chance(80)) lo |= 2;  // V
    if (Chance(70)) lo |= 4;  // D
    if (Chance(30)) lo |= 1;  // G
    return lo;
  }

  // Entry i maps only inside its own kuseg region, so no two entries ever match one address.
  void TlbWriteIndexed(int i) {
    const uint32_t mask = kPageMasks[Below(std::size(kPageMasks))];
    const uint64_t page = (uint64_t{mask} >> 1) + 0x1000;
    const uint64_t hi = i * kTlbRegion + Below(kTlbRegion / (2 * page)) * 2 * page + Below(4);
    Li(kT8, static_cast<uint64_t>(i));
    Emit(Mtc0(kT8, mips::kCp0Index));
    Li(kT8, mask);
    Emit(Mtc0(kT8, mips::kCp0PageMask));
    Li(kT8, hi);
    Emit(Dmtc0(kT8, mips::kCp0EntryHi));
    Li(kT8, EntryLo(page));
    Emit(Dmtc0(kT8, mips::kCp0EntryLo0));
    Li(kT8, EntryLo(page));
    Emit(Dmtc0(kT8, mips::kCp0EntryLo1));
    Emit(Tlbwi());
  }

  // A 4 KB pair outside kuseg, written at Random only if TLBP finds no entry for it.
  void TlbWriteRandom() {
    uint64_t hi = RandomEntryHi() & mips::kEntryHiMask;
    if ((hi & ~uint64_t{0xFF}) < 48 * kTlbRegion) hi |= 0xFFFFFFFFE0000000ull;  // kseg3 instead
    Li(kT8, hi);
    Emit(Dmtc0(kT8, mips::kCp0EntryHi));
    Emit(Mtc0(0, mips::kCp0PageMask));
    Emit(Tlbp());
    Emit(Mfc0(kT9, mips::kCp0Index));
    Emit(Bgez(kT9, 8));  // past the TLBWR
    Emit(Nop());
    Li(kT8, EntryLo(0x1000) & ~uint64_t{1});  // not global: other ASIDs may map the page
    Emit(Dmtc0(kT8, mips::kCp0EntryLo0));
    Li(kT8, EntryLo(0x1000) & ~uint64_t{1});
    Emit(Dmtc0(kT8, mips::kCp0EntryLo1));
    Emit(Tlbwr());
  }

  void TlbProbe() {
    Li(kT8, RandomEntryHi());
    Emit(Dmtc0(kT8, mips::kCp0EntryHi));
    Emit(Tlbp());
    Emit(Mfc0(PoolReg(), mips::kCp0Index));
  }

  void TlbRead() {
    Li(kT8, Below(48));
    Emit(Mtc0(kT8, mips::kCp0Index));
    Emit(Tlbr());
    Emit(Dmfc0(PoolReg(), mips::kCp0EntryHi));
    Emit(Dmfc0(PoolReg(), mips::kCp0EntryLo0));
    Emit(Dmfc0(PoolReg(), mips::kCp0EntryLo1));
    Emit(Mfc0(PoolReg(), mips::kCp0PageMask));
  }

  void EretToNext() {
    Li(kT8, Here() + 4 * 4);  // Li is two words here (a ROM address), then two more
    Emit(Dmtc0(kT8, mips::kCp0Epc));
    Emit(Eret());
  }

  KernelProgramOptions opt_;
  std::mt19937_64 rng_;
  std::vector<uint32_t> words_;
};

}  // namespace

std::vector<uint8_t> GenerateKernelProgram(const KernelProgramOptions& options) {
  return Program(options).Build();
}

}  // namespace citcat::oracle
