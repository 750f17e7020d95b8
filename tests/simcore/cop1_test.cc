// COP1 as the integer core dispatches it: Coprocessor Unusable, moves, loads/stores, branches on
// the condition bit, arithmetic handed to the Fpu, and the FP exception.
#include "gtest/gtest.h"
#include "tests/simcore/cpu_fixture.h"

namespace citcat::mips {
namespace {

using namespace as;  // NOLINT

constexpr uint32_t Cop1(uint32_t rs, uint32_t rt, uint32_t rd, uint32_t low11) {
  return (0x11u << 26) | (rs << 21) | (rt << 16) | (rd << 11) | low11;
}
constexpr uint32_t Mfc1(int rt, int fs) { return Cop1(0, rt, fs, 0); }
constexpr uint32_t Dmfc1(int rt, int fs) { return Cop1(1, rt, fs, 0); }
constexpr uint32_t Cfc1(int rt, int fs) { return Cop1(2, rt, fs, 0); }
constexpr uint32_t Ctc1(int rt, int fs) { return Cop1(6, rt, fs, 0); }
constexpr uint32_t Dmtc1(int rt, int fs) { return Cop1(5, rt, fs, 0); }
constexpr uint32_t Bc1t(int off) { return Cop1(8, 1, 0, 0) | (off & 0xFFFF); }
constexpr uint32_t Bc1f(int off) { return Cop1(8, 0, 0, 0) | (off & 0xFFFF); }
// fd = fs + ft (single), and c.eq.s fs, ft.
constexpr uint32_t AddS(int fd, int fs, int ft) { return Cop1(16, ft, fs, (fd << 6) | 0); }
constexpr uint32_t DivS(int fd, int fs, int ft) { return Cop1(16, ft, fs, (fd << 6) | 3); }
constexpr uint32_t CeqS(int fs, int ft) { return Cop1(16, ft, fs, 0x32); }
constexpr uint32_t Lwc1(int ft, int off, int base) { return I(0x31, base, ft, off); }
constexpr uint32_t Swc1(int ft, int off, int base) { return I(0x39, base, ft, off); }
constexpr uint32_t Ldc1(int ft, int off, int base) { return I(0x35, base, ft, off); }
constexpr uint32_t Sdc1(int ft, int off, int base) { return I(0x3D, base, ft, off); }

uint32_t ExcCodeOf(const Cpu& cpu) { return (cpu.cause() >> 2) & 31; }

class Cop1Test : public CpuTest {};

TEST_F(Cop1Test, UnusableWhenCu1Clear) {
  Load({Mtc1(1, 0)});
  cpu_->Run(1);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcCpu);
  EXPECT_EQ((cpu_->cause() >> 28) & 3, 1u);
}

TEST_F(Cop1Test, MovesLoadsStoresAndArithmetic) {
  cpu_->WriteCp0(kCp0Status, kStatusCu1);
  Put(kData, {0x3FC00000, 0x40100000});  // 1.5f, 2.25f
  Load({Lui(1, 0x8010), Lwc1(0, 0, 1), Lwc1(1, 4, 1), AddS(2, 0, 1), Swc1(2, 8, 1), Mfc1(3, 2),
        Lui(4, 0x4070), Mtc1(4, 4), CeqS(2, 4), Bc1t(2), Addiu(5, 0, 5), Addiu(6, 0, 6),
        Addiu(7, 0, 7)});
  cpu_->Run(13);
  EXPECT_EQ(R(3), 0x40700000u);  // 3.75f
  EXPECT_EQ(bus_.PeekWordBE(0x100008), 0u) << "still in the D-cache";
  uint8_t b[4];
  ASSERT_TRUE(cpu_->PeekVirtual(kData + 8, b));
  EXPECT_EQ(b[0], 0x40);
  EXPECT_EQ(b[1], 0x70);
  EXPECT_TRUE(cpu_->fpu().condition());
  EXPECT_EQ(R(5), 5u);  // delay slot
  EXPECT_EQ(R(6), 0u);  // skipped by the taken BC1T
  EXPECT_EQ(R(7), 7u);
}

TEST_F(Cop1Test, DoublewordMovesFollowFr) {
  cpu_->WriteCp0(kCp0Status, kStatusCu1 | kStatusFr);
  EXPECT_TRUE(cpu_->fpu().fr());
  cpu_->set_gpr(1, 0x0123456789ABCDEFull);
  cpu_->set_gpr(8, kData);
  Load({Dmtc1(1, 3), Dmfc1(2, 3), Sdc1(3, 0, 8), Ldc1(5, 0, 8), Dmfc1(4, 5)});
  cpu_->Run(5);
  EXPECT_EQ(R(2), 0x0123456789ABCDEFull);
  EXPECT_EQ(R(4), 0x0123456789ABCDEFull);
  cpu_->WriteCp0(kCp0Status, kStatusCu1);
  EXPECT_FALSE(cpu_->fpu().fr());
}

TEST_F(Cop1Test, ControlRegistersAndFloatingPointException) {
  cpu_->WriteCp0(kCp0Status, kStatusCu1);
  // Enable the divide-by-zero trap (FCSR bit 10), then divide by zero.
  Load({Addiu(1, 0, 1 << 10), Ctc1(1, 31), Cfc1(2, 31), Cfc1(3, 0), Lui(4, 0x3F80), Mtc1(4, 0),
        Mtc1(0, 1), DivS(2, 0, 1)});
  cpu_->Run(8);
  EXPECT_EQ(R(2), 1u << 10);
  EXPECT_EQ(R(3) & 0xFF00, 0x0500u);
  EXPECT_EQ(ExcCodeOf(*cpu_), kExcFpe);
  EXPECT_EQ(cpu_->epc(), kCode + 28);
  EXPECT_TRUE(cpu_->fpu().fcsr() & (kFpDivideByZero << kFcsrCauseShift));
}

TEST_F(Cop1Test, BranchOnFalseWithCu1) {
  cpu_->WriteCp0(kCp0Status, kStatusCu1);
  Load({Bc1f(2), Nop(), Addiu(1, 0, 1), Addiu(2, 0, 2)});
  cpu_->Run(3);
  EXPECT_EQ(R(1), 0u);
  EXPECT_EQ(R(2), 2u);
}

}  // namespace
}  // namespace citcat::mips
