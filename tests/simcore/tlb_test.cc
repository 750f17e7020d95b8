// The JTLB and address translation, from the R4000/R4400 manuals.
#include "gtest/gtest.h"
#include "tests/simcore/cpu_fixture.h"

namespace citcat::mips {
namespace {

using namespace as;  // NOLINT

constexpr uint64_t kRefill = 0xFFFFFFFF80000000ull;
constexpr uint64_t kXRefill = 0xFFFFFFFF80000080ull;
constexpr uint64_t kGeneral = 0xFFFFFFFF80000180ull;

uint32_t ExcCodeOf(const Cpu& cpu) { return (cpu.cause() >> 2) & 31; }
uint64_t Lo(uint64_t pa, uint32_t c, bool d, bool v, bool g = false) {
  return ((pa >> 12) << 6) | (c << 3) | (d ? 4 : 0) | (v ? 2 : 0) | (g ? 1 : 0);
}

class TlbTest : public CpuTest {
 protected:
  // Writes TLB entry `index` through the CP0 registers and TLBWI, as a kernel would.
  void WriteEntry(int index, uint64_t hi, uint64_t lo0, uint64_t lo1, uint32_t mask = 0) {
    cpu_->WriteCp0(kCp0Index, index);
    cpu_->WriteCp0(kCp0EntryHi, hi);
    cpu_->WriteCp0(kCp0EntryLo0, lo0);
    cpu_->WriteCp0(kCp0EntryLo1, lo1);
    cpu_->WriteCp0(kCp0PageMask, mask);
    Exec(Tlbwi());
  }
  // Runs one instruction from a fresh kseg0 line.
  void Exec(uint32_t word) {
    const uint32_t status = cpu_->status();
    next_ += 0x20;
    Put(kCode + next_, {word});
    cpu_->SetPc(kCode + next_);
    cpu_->Run(1);
    cpu_->WriteCp0(kCp0Status, status);
  }
  // Loads a word from `vaddr` into $2 in kernel mode; true if no exception.
  bool LoadWord(uint64_t vaddr) {
    cpu_->set_gpr(1, vaddr);
    const uint64_t before = cpu_->exceptions();
    const uint32_t status = cpu_->status();
    next_ += 0x20;
    Put(kCode + next_, {Lw(2, 0, 1)});
    cpu_->SetPc(kCode + next_);
    cpu_->Run(1);
    const bool ok = cpu_->exceptions() == before;
    if (!ok) last_vector_ = cpu_->pc();
    cpu_->WriteCp0(kCp0Status, status);
    return ok;
  }
  bool StoreWord(uint64_t vaddr, uint32_t value) {
    cpu_->set_gpr(1, vaddr);
    cpu_->set_gpr(3, value);
    const uint64_t before = cpu_->exceptions();
    const uint32_t status = cpu_->status();
    next_ += 0x20;
    Put(kCode + next_, {Sw(3, 0, 1)});
    cpu_->SetPc(kCode + next_);
    cpu_->Run(1);
    const bool ok = cpu_->exceptions() == before;
    if (!ok) last_vector_ = cpu_->pc();
    cpu_->WriteCp0(kCp0Status, status);
    return ok;
  }
  uint64_t next_ = 0;
  uint64_t last_vector_ = 0;
};

TEST_F(TlbTest, RefillSetsBadVAddrContextAndEntryHi) {
  cpu_->WriteCp0(kCp0Context, 0xFFFFFFFFC0000000ull);
  cpu_->WriteCp0(kCp0EntryHi, 0x42);  // ASID 0x42
  EXPECT_FALSE(LoadWord(0x00403004));
  EXPECT_EQ(last_vector_, kRefill);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcTlbl);
  EXPECT_EQ(cpu_->bad_vaddr(), 0x00403004u);
  EXPECT_EQ(cpu_->ReadCp0(kCp0Context), 0xFFFFFFFFC0000000ull | ((0x00403004u >> 13) << 4));
  EXPECT_EQ(cpu_->entry_hi(), 0x00402000u | 0x42);
  EXPECT_FALSE(StoreWord(0x00403004, 1));
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcTlbs);
}

TEST_F(TlbTest, XTlbRefillIn64BitMode) {
  cpu_->WriteCp0(kCp0Status, kStatusKx);
  EXPECT_FALSE(LoadWord(0x0000001000002000ull));
  EXPECT_EQ(last_vector_, kXRefill);
  EXPECT_EQ(cpu_->ReadCp0(kCp0XContext) & 0x1FFFFFFF0ull, (0x0000001000002000ull >> 13) << 4);
  // xksseg and xkseg are mapped too; R comes along in EntryHi and XContext.
  EXPECT_FALSE(LoadWord(0xC000000000004000ull));
  EXPECT_EQ(cpu_->entry_hi() & kEntryHiVpn2Mask, 0xC000000000004000ull);
  EXPECT_EQ((cpu_->ReadCp0(kCp0XContext) >> 31) & 3, 3u);
  // Beyond the 40-bit segment: an address error, not a refill.
  EXPECT_FALSE(LoadWord(0x0000010000000000ull));
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcAdel);
}

TEST_F(TlbTest, MappedLoadAndStoreReachPhysicalPages) {
  bus_.PokeWordBE(0x300000, 0x11111111);
  bus_.PokeWordBE(0x301000, 0x22222222);
  WriteEntry(3, 0x00400000, Lo(0x300000, 3, true, true), Lo(0x301000, 2, true, true));
  ASSERT_TRUE(LoadWord(0x00400000));
  EXPECT_EQ(R(2), 0x11111111u);
  ASSERT_TRUE(LoadWord(0x00401000));  // odd page, uncached
  EXPECT_EQ(R(2), 0x22222222u);
  ASSERT_TRUE(StoreWord(0x00401004, 0x33));
  EXPECT_EQ(bus_.PeekWordBE(0x301004), 0x33u);  // uncached: already in RAM
}

TEST_F(TlbTest, InvalidAndModifiedGoToGeneralVector) {
  WriteEntry(0, 0x00400000, Lo(0x300000, 3, false, true), Lo(0x301000, 3, true, false));
  EXPECT_FALSE(LoadWord(0x00401000));
  EXPECT_EQ(last_vector_, kGeneral);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcTlbl);
  EXPECT_FALSE(StoreWord(0x00401000, 1));
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcTlbs);
  EXPECT_TRUE(LoadWord(0x00400000));
  EXPECT_FALSE(StoreWord(0x00400000, 1));
  EXPECT_EQ(last_vector_, kGeneral);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcMod);
  EXPECT_EQ(cpu_->entry_hi() & kEntryHiVpn2Mask, 0x00400000u);
}

TEST_F(TlbTest, AsidMustMatchUnlessGlobal) {
  WriteEntry(0, 0x00400000 | 5, Lo(0x300000, 3, true, true), Lo(0x301000, 3, true, true));
  WriteEntry(1, 0x00800000 | 9, Lo(0x302000, 3, true, true, true),
             Lo(0x303000, 3, true, true, true));
  cpu_->WriteCp0(kCp0EntryHi, 5);
  EXPECT_TRUE(LoadWord(0x00400000));
  EXPECT_TRUE(LoadWord(0x00800000));
  cpu_->WriteCp0(kCp0EntryHi, 6);
  EXPECT_FALSE(LoadWord(0x00400000));  // ASID 5 only
  EXPECT_EQ(last_vector_, kRefill);
  EXPECT_TRUE(LoadWord(0x00800000));  // global
}

TEST_F(TlbTest, LargePages) {
  // 16 KB pages: the pair covers 32 KB and bit 14 selects the odd page.
  bus_.PokeWordBE(0x304000 + 0x3FFC, 0xAAAA0001);
  bus_.PokeWordBE(0x308000 + 0x0008, 0xAAAA0002);
  WriteEntry(0, 0x00400000, Lo(0x304000, 3, true, true), Lo(0x308000, 3, true, true), 0x6000);
  ASSERT_TRUE(LoadWord(0x00403FFC));
  EXPECT_EQ(R(2), 0xFFFFFFFFAAAA0001ull);
  ASSERT_TRUE(LoadWord(0x00404008));
  EXPECT_EQ(R(2), 0xFFFFFFFFAAAA0002ull);
  EXPECT_FALSE(LoadWord(0x00408000));  // outside the pair
  // 16 MB pages (PageMask 0x01FFE000): a 32 MB pair.
  bus_.PokeWordBE(0x123456, 0xBBBB0003);
  WriteEntry(1, 0x02000000, Lo(0, 3, true, true), Lo(0x1000000, 3, true, true), 0x01FFE000);
  ASSERT_TRUE(LoadWord(0x02123456 & ~3u));
  EXPECT_EQ(R(2), static_cast<uint64_t>(static_cast<int32_t>(bus_.PeekWordBE(0x123454))));
  ASSERT_TRUE(LoadWord(0x03000000));  // odd 16 MB page: physical 0x1000000 (outside RAM)
}

TEST_F(TlbTest, ProbeAndRead) {
  WriteEntry(7, 0x00400000 | 3, Lo(0x300000, 3, true, true, true),
             Lo(0x301000, 2, false, true, true), 0x6000);
  cpu_->WriteCp0(kCp0EntryHi, 0x00404000 | 3);  // inside the 16 KB pair
  Exec(Tlbp());
  EXPECT_EQ(cpu_->ReadCp0(kCp0Index), 7u);
  cpu_->WriteCp0(kCp0EntryHi, 0x00800000);
  Exec(Tlbp());
  EXPECT_EQ(cpu_->ReadCp0(kCp0Index) & 0x80000000u, 0x80000000u);
  cpu_->WriteCp0(kCp0Index, 7);
  Exec(Tlbr());
  EXPECT_EQ(cpu_->ReadCp0(kCp0EntryHi), 0x00400000u | 3);
  EXPECT_EQ(cpu_->ReadCp0(kCp0PageMask), 0x6000u);
  EXPECT_EQ(cpu_->ReadCp0(kCp0EntryLo0), Lo(0x300000, 3, true, true, true));
  EXPECT_EQ(cpu_->ReadCp0(kCp0EntryLo1), Lo(0x301000, 2, false, true, true));
}

TEST_F(TlbTest, RandomCountsDownPerInstructionBetweenWiredAnd47) {
  cpu_->WriteCp0(kCp0Wired, 44);  // Random = 47, then 46, 45, 44, 47, ...
  EXPECT_EQ(cpu_->random(), 47u);
  Load({Nop(), Nop(), Nop(), Nop(), Nop(), Nop()});
  cpu_->SetPc(kCode);
  std::vector<uint32_t> seen;
  for (int i = 0; i < 5; ++i) {
    cpu_->Run(1);
    seen.push_back(cpu_->random());
  }
  EXPECT_EQ(seen, (std::vector<uint32_t>{46, 45, 44, 47, 46}));
  // TLBWR writes the entry Random names at that moment.
  const uint32_t r = cpu_->random();
  cpu_->WriteCp0(kCp0EntryHi, 0x00C00000);
  cpu_->WriteCp0(kCp0EntryLo0, Lo(0x300000, 3, true, true));
  cpu_->WriteCp0(kCp0EntryLo1, 0);
  cpu_->WriteCp0(kCp0PageMask, 0);
  Put(kCode + 0x100, {Tlbwr()});
  cpu_->SetPc(kCode + 0x100);
  cpu_->Run(1);
  EXPECT_EQ(cpu_->tlb().entry(static_cast<int>(r)).entry_hi, 0x00C00000u);
}

TEST_F(TlbTest, ErlMakesKusegUnmappedUncached) {
  bus_.PokeWordBE(0x2000, 0x5555AAAA);
  cpu_->WriteCp0(kCp0Status, kStatusErl);
  bus_.set_logging(true);
  ASSERT_TRUE(LoadWord(0x2000));
  EXPECT_EQ(R(2), 0x5555AAAAu);
  ASSERT_FALSE(bus_.log().empty());
  EXPECT_EQ(bus_.log().back().kind, cat::RecordKind::kUncachedRead);
}

TEST_F(TlbTest, SupervisorSegments) {
  const uint32_t super = 1u << kStatusKsuShift;
  // Supervisor code runs from ksseg (0xC0000000), mapped to physical 0x5000.
  WriteEntry(0, 0xFFFFFFFFC0000000ull, Lo(0x5000, 3, true, true, true),
             Lo(0x6000, 3, true, true, true));
  bus_.PokeWordBE(0x5000, Lw(2, 0, 1));
  cpu_->set_gpr(1, 0xFFFFFFFF80000000ull);  // kseg0: not for supervisor mode
  cpu_->WriteCp0(kCp0Status, super);
  cpu_->SetPc(0xFFFFFFFFC0000000ull);
  cpu_->Run(1);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcAdel);
  EXPECT_EQ(cpu_->epc(), 0xFFFFFFFFC0000000ull);
}

}  // namespace
}  // namespace citcat::mips

namespace citcat::mips {
namespace {

class StateTest : public CpuTest {};

TEST_F(StateTest, Cp0SaveRestoreRoundTrip) {
  Put(kCode, {as::Lw(2, 0, 0)});  // a TLB refill fills BadVAddr, Context, EntryHi, Cause, EPC
  cpu_->WriteCp0(kCp0Wired, 5);
  cpu_->WriteCp0(kCp0Compare, 1234);
  cpu_->Run(1);
  const Cpu::Cp0State saved = cpu_->SaveCp0();
  simcore::RamBus bus2(1 << 20);
  Cpu other(bus2);
  other.RestoreCp0(saved);
  EXPECT_EQ(other.SaveCp0(), saved);
  EXPECT_EQ(other.bad_vaddr(), 0u);
  EXPECT_EQ(other.random(), saved.random);
  EXPECT_EQ(other.pc(), 0xFFFFFFFFBFC00000ull);  // the PC is not CP0 state
}

TEST_F(StateTest, UnalignedPairFaultReportsInstructionAddress) {
  cpu_->set_gpr(1, 0x00400003);
  Put(kCode, {as::Lwl(2, 0, 1)});
  cpu_->Run(1);
  EXPECT_EQ((cpu_->cause() >> 2) & 31, kExcTlbl);
  EXPECT_EQ(cpu_->bad_vaddr(), 0x00400003u);
}

}  // namespace
}  // namespace citcat::mips

namespace citcat::mips {
namespace {

class TlbRewriteTest : public TlbTest {
 protected:
  // The word a kernel-mode load of `vaddr` returns.
  uint32_t Read(uint64_t vaddr) {
    EXPECT_TRUE(LoadWord(vaddr)) << std::hex << vaddr;
    return static_cast<uint32_t>(cpu_->gpr(2));
  }
};

// Translations the core caches must follow a rewritten TLB entry at once, whatever the page
// size, and survive a write to an unrelated entry.
TEST_F(TlbRewriteTest, RewrittenEntryTakesEffectAtOnce) {
  bus_.PokeWordBE(0x200000, 0xAAAA0000);
  bus_.PokeWordBE(0x300000, 0xBBBB0000);
  bus_.PokeWordBE(0x301000, 0xBBBB1000);
  WriteEntry(5, 0x00400000, Lo(0x200000, 3, true, true, true), Lo(0x201000, 3, true, true, true));
  EXPECT_EQ(Read(0x00400000), 0xAAAA0000u);
  WriteEntry(7, 0x00800000, Lo(0x500000, 3, true, true, true), 0);  // unrelated
  EXPECT_EQ(Read(0x00400000), 0xAAAA0000u);
  WriteEntry(5, 0x00400000, Lo(0x300000, 3, true, true, true), Lo(0x301000, 3, true, true, true));
  EXPECT_EQ(Read(0x00400000), 0xBBBB0000u);
  EXPECT_EQ(Read(0x00401000), 0xBBBB1000u);
  // The same entry moved elsewhere: its old pages no longer translate.
  WriteEntry(5, 0x00600000, Lo(0x300000, 3, true, true, true), 0);
  EXPECT_FALSE(LoadWord(0x00400000));
  EXPECT_EQ(last_vector_, kRefill);
}

TEST_F(TlbRewriteTest, LargePagesToo) {
  bus_.PokeWordBE(0x000000 + 0x10000, 0x11110000);
  bus_.PokeWordBE(0x400000 + 0x10000, 0x22220000);
  constexpr uint32_t k1M = 0x001FE000;  // PageMask for 1 MB pages
  WriteEntry(3, 0x00000000, Lo(0x000000, 3, true, true, true), Lo(0x100000, 3, true, true, true),
             k1M);
  EXPECT_EQ(Read(0x00010000), 0x11110000u);
  WriteEntry(3, 0x00000000, Lo(0x400000, 3, true, true, true), Lo(0x500000, 3, true, true, true),
             k1M);
  EXPECT_EQ(Read(0x00010000), 0x22220000u);
}

}  // namespace
}  // namespace citcat::mips
