// Integer instruction semantics from the R4000/R4400 manuals, checked on hand-written programs.
#include "gtest/gtest.h"
#include "tests/simcore/cpu_fixture.h"

namespace citcat::mips {
namespace {

using namespace as;  // NOLINT: the encoder reads like assembly

TEST_F(CpuTest, AluImmediatesAndRegisters) {
  Load({Addiu(1, 0, 5), Addiu(2, 0, -3), Addu(3, 1, 2), Subu(4, 2, 1), Lui(5, 0x8000),
        Ori(6, 0, 0xFFFF), Slti(7, 2, 0), Sra(8, 5, 4), Srl(9, 5, 4), Sll(10, 6, 16)});
  RunWords(10);
  EXPECT_EQ(R(3), 2u);
  EXPECT_EQ(R(4), static_cast<uint64_t>(-8));
  EXPECT_EQ(R(5), 0xFFFFFFFF80000000ull);  // LUI sign-extends
  EXPECT_EQ(R(6), 0xFFFFu);                // ORI zero-extends
  EXPECT_EQ(R(7), 1u);
  EXPECT_EQ(R(8), 0xFFFFFFFFF8000000ull);
  EXPECT_EQ(R(9), 0x08000000u);
  EXPECT_EQ(R(10), 0xFFFFFFFFFFFF0000ull);  // 32-bit result sign-extended
}

TEST_F(CpuTest, RegisterZeroStaysZero) {
  Load({Addiu(0, 0, 7), Or(1, 0, 0)});
  RunWords(2);
  EXPECT_EQ(R(0), 0u);
  EXPECT_EQ(R(1), 0u);
}

TEST_F(CpuTest, BranchDelaySlotExecutesAndBranchCountsAfterIt) {
  const uint64_t bc = cpu_->branch_count();
  Load({Beq(0, 0, 2), Addiu(1, 0, 1), Addiu(2, 0, 2), Addiu(3, 0, 3)});
  cpu_->Step();  // the branch
  EXPECT_TRUE(cpu_->in_delay_slot());
  EXPECT_EQ(cpu_->branch_count(), bc);
  cpu_->Step();  // the delay slot
  EXPECT_EQ(cpu_->branch_count(), bc + 1);
  EXPECT_EQ(cpu_->pc(), kCode + 12);
  cpu_->Step();
  EXPECT_EQ(R(1), 1u);
  EXPECT_EQ(R(2), 0u);
  EXPECT_EQ(R(3), 3u);
}

TEST_F(CpuTest, BranchLikelyNullifiesDelaySlotWhenNotTaken) {
  Load({Addiu(1, 0, 1), Beql(1, 0, 3), Addiu(2, 0, 2), Addiu(3, 0, 3), Bnel(1, 0, 2),
        Addiu(4, 0, 4), Addiu(5, 0, 5), Addiu(6, 0, 6)});
  const uint64_t bc = cpu_->branch_count();
  RunWords(8);
  EXPECT_EQ(R(2), 0u);  // nullified
  EXPECT_EQ(R(3), 3u);
  EXPECT_EQ(R(4), 4u);  // taken: delay slot runs
  EXPECT_EQ(R(5), 0u);
  EXPECT_EQ(cpu_->branch_count(), bc + 2);
}

TEST_F(CpuTest, JumpAndLink) {
  const uint64_t target = kCode + 0x40;
  Load({Jal(static_cast<uint32_t>(target)), Addiu(1, 0, 1)});
  Put(target, {Jr(31), Addiu(2, 0, 2)});
  RunTo(kCode + 8);
  EXPECT_EQ(R(31), kCode + 8);
  EXPECT_EQ(R(1), 1u);
  EXPECT_EQ(R(2), 2u);
}

TEST_F(CpuTest, BgezalLinksEvenWhenNotTaken) {
  Load({Addiu(1, 0, -1), Bgezal(1, 5), Nop(), Nop()});
  RunWords(4);
  EXPECT_EQ(R(31), kCode + 12);
}

TEST_F(CpuTest, LoadsAndStoresBigEndian) {
  Load({Lui(1, 0x8010), Lui(2, 0x1234), Ori(2, 2, 0x5678), Sw(2, 0, 1), Lb(3, 0, 1), Lbu(4, 3, 1),
        Lh(5, 2, 1), Sb(2, 7, 1), Lw(6, 4, 1)});
  RunWords(9);
  EXPECT_EQ(R(3), 0x12u);
  EXPECT_EQ(R(4), 0x78u);
  EXPECT_EQ(R(5), 0x5678u);
  EXPECT_EQ(R(6), 0x78u);
  uint8_t b[4];
  ASSERT_TRUE(cpu_->PeekVirtual(kData, b));
  EXPECT_EQ(b[0], 0x12);
  EXPECT_EQ(b[3], 0x78);
}

TEST_F(CpuTest, UnalignedWordLoadsAndStoresBigEndian) {
  Put(kData, {0x00112233, 0x44556677});
  Load({Lui(1, 0x8010), Lui(2, 0xAABB), Ori(2, 2, 0xCCDD), Or(3, 2, 0), Lwl(2, 1, 1), Lwr(2, 4, 1),
        Lwl(3, 2, 1), Swl(2, 9, 1), Swr(2, 10, 1)});
  RunWords(9);
  // LWL at offset 1 brings bytes 1..3 to the top; LWR at 4 brings byte 4 to the bottom.
  EXPECT_EQ(R(2), 0x11223344u);
  EXPECT_EQ(R(3), 0x2233CCDDu);  // LWL at offset 2 replaces the top two bytes
  uint8_t b[8];
  ASSERT_TRUE(cpu_->PeekVirtual(kData + 8, b));
  // SWL at 9 writes the top three bytes to 9..11; SWR at 10 writes the low three bytes to 8..10.
  EXPECT_EQ(b[0], 0x22);
  EXPECT_EQ(b[1], 0x33);
  EXPECT_EQ(b[2], 0x44);
  EXPECT_EQ(b[3], 0x33);
}

TEST_F(CpuTest, UnalignedDoublewords) {
  Put(kData, {0x00112233, 0x44556677, 0x8899AABB, 0xCCDDEEFF});
  Load({Lui(1, 0x8010), Ldl(2, 3, 1), Ldr(2, 10, 1), Sdl(2, 17, 1), Sdr(2, 24, 1)});
  RunWords(5);
  EXPECT_EQ(R(2), 0x33445566778899AAull);
  uint8_t b[16];
  ASSERT_TRUE(cpu_->PeekVirtual(kData + 16, b));
  EXPECT_EQ(b[1], 0x33);
  EXPECT_EQ(b[7], 0x99);
  EXPECT_EQ(b[8], 0xAA);  // SDR at 24 stores the lowest byte at 24
}

TEST_F(CpuTest, MultiplyDivide) {
  Load({Addiu(1, 0, -6), Addiu(2, 0, 4), Mult(1, 2), Mflo(3), Mfhi(4), Div(1, 2), Mflo(5), Mfhi(6),
        Multu(1, 2), Mfhi(7), Divu(1, 0), Mflo(8), Mfhi(9)});
  RunWords(13);
  EXPECT_EQ(R(3), static_cast<uint64_t>(-24));
  EXPECT_EQ(R(4), ~uint64_t{0});
  EXPECT_EQ(R(5), static_cast<uint64_t>(-1));
  EXPECT_EQ(R(6), static_cast<uint64_t>(-2));
  EXPECT_EQ(R(7), 3u);
  EXPECT_EQ(R(8), ~uint64_t{0});  // divide by zero: R4000-family divider result
  EXPECT_EQ(R(9), static_cast<uint64_t>(-6));
}

TEST_F(CpuTest, SixtyFourBitOperationsInKernelMode) {
  Load({Addiu(1, 0, 1), Dsll32(2, 1, 31), Dsra(3, 2, 63 - 32), Dsrl32(4, 2, 31), Daddu(5, 2, 2),
        Daddiu(6, 0, -1), Dmultu(6, 6), Mfhi(7), Mflo(8), Ddiv(2, 6), Mflo(9)});
  RunWords(11);
  EXPECT_EQ(R(2), 0x8000000000000000ull);
  EXPECT_EQ(R(3), 0xFFFFFFFF00000000ull);
  EXPECT_EQ(R(4), 1u);
  EXPECT_EQ(R(5), 0u);
  EXPECT_EQ(R(7), 0xFFFFFFFFFFFFFFFEull);
  EXPECT_EQ(R(8), 1u);
  EXPECT_EQ(R(9), 0x8000000000000000ull);  // INT64_MIN / -1
}

TEST_F(CpuTest, LoadLinkedStoreConditional) {
  Load({Lui(1, 0x8010), Ll(2, 0, 1), Addiu(2, 2, 1), Sc(2, 0, 1), Lw(3, 0, 1)});
  RunWords(5);
  EXPECT_EQ(R(2), 1u);
  EXPECT_EQ(R(3), 1u);
  EXPECT_TRUE(cpu_->ll_bit());
  EXPECT_EQ(cpu_->ReadCp0(kCp0LLAddr), 0x100000u >> 4);
}

TEST_F(CpuTest, StoreConditionalFailsAfterEret) {
  // ERET clears LLbit: SC after an exception round trip stores nothing.
  Load({Lui(1, 0x8010), Ll(2, 0, 1), Syscall(), Addiu(2, 0, 9), Sc(2, 0, 1), Lw(3, 0, 1)});
  Put(0xFFFFFFFF80000180ull, {Mfc0(26, kCp0Epc), Addiu(26, 26, 4), Mtc0(26, kCp0Epc), Eret()});
  RunWords(6);
  EXPECT_EQ(R(2), 0u);
  EXPECT_EQ(R(3), 0u);
}

TEST(CpuLittleEndian, LoadsStoresAndUnaligned) {
  simcore::RamBus bus(8 << 20);
  CpuConfig config;
  config.big_endian = false;
  Cpu cpu(bus, config);
  cpu.WriteCp0(kCp0Status, 0);
  auto put_le = [&](uint64_t pa, uint32_t w) {
    uint8_t b[4] = {uint8_t(w), uint8_t(w >> 8), uint8_t(w >> 16), uint8_t(w >> 24)};
    bus.Poke(pa, b);
  };
  const uint32_t prog[] = {as::Lui(1, 0x8010), as::Lw(2, 0, 1),  as::Lbu(3, 0, 1),
                           as::Lwr(4, 1, 1),   as::Lwl(4, 4, 1), as::Sh(2, 8, 1)};
  for (int i = 0; i < 6; ++i) put_le(0x1000 + 4 * i, prog[i]);
  put_le(0x100000, 0x33221100);
  put_le(0x100004, 0x77665544);
  cpu.SetPc(0xFFFFFFFF80001000ull);
  cpu.Run(6);
  EXPECT_EQ(cpu.gpr(2), 0x33221100u);
  EXPECT_EQ(cpu.gpr(3), 0x00u);
  EXPECT_EQ(cpu.gpr(4), 0x44332211u);
  uint8_t b[2];
  ASSERT_TRUE(cpu.PeekVirtual(0xFFFFFFFF80100008ull, b));
  EXPECT_EQ(b[0], 0x00);
  EXPECT_EQ(b[1], 0x11);
}

}  // namespace
}  // namespace citcat::mips

namespace citcat::mips {
namespace {

TEST_F(CpuTest, ReverseEndianInUserModeAffectsDataOnly) {
  // User mode at kuseg 0x1000 -> physical 0x5000 (odd page of the pair at 0), data at 0x3000.
  cpu_->WriteCp0(kCp0Index, 0);
  cpu_->WriteCp0(kCp0EntryHi, 0);
  cpu_->WriteCp0(kCp0EntryLo0, 0);
  cpu_->WriteCp0(kCp0EntryLo1, 5 << 6 | 3 << 3 | 7);
  cpu_->WriteCp0(kCp0PageMask, 0);
  Put(kCode, {as::Tlbwi()});
  cpu_->Run(1);
  cpu_->WriteCp0(kCp0Index, 1);
  cpu_->WriteCp0(kCp0EntryHi, 0x2000);
  cpu_->WriteCp0(kCp0EntryLo0, 0);
  cpu_->WriteCp0(kCp0EntryLo1, 3 << 6 | 3 << 3 | 7);  // VA 0x3000 -> PA 0x3000
  Put(kCode + 0x40, {as::Tlbwi()});  // a fresh I-cache line (RAM writes bypass the I-cache)
  cpu_->SetPc(kCode + 0x40);
  cpu_->Run(1);
  bus_.PokeWordBE(0x3000, 0x11223344);
  Put(0x80005000,
      {as::Lui(1, 0), as::Lw(2, 0x3000, 1), as::Lbu(3, 0x3000, 1), as::Lwl(4, 0x3001, 1)});
  cpu_->WriteCp0(kCp0Status, (2u << kStatusKsuShift) | kStatusRe);
  cpu_->SetPc(0x1000);
  cpu_->Run(4);
  EXPECT_EQ(cpu_->exceptions(), 0u);
  EXPECT_EQ(R(2), 0x44332211u);                // little-endian view of the same bytes
  EXPECT_EQ(R(3), 0x11u);                      // bytes stay where they are
  EXPECT_EQ(R(4) & 0xFFFF0000u, 0x22110000u);  // LWL follows the reversed order too
}

}  // namespace
}  // namespace citcat::mips
