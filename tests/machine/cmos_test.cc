// The MC146818 RTC and CMOS RAM: time from the world's wall clock, BCD and binary, 12 and 24 hours,
// the update cycle (UIP, SET, rollovers), registers A-D, the flags and IRQ 8, the CMOS RAM.
#include "machine/i486/cmos.h"

#include "gtest/gtest.h"

namespace citcat::machine {
namespace {

constexpr uint64_t kSecond = 1'000'000;
constexpr uint64_t k20210304 = 1614834367;  // 2021-03-04 05:06:07 UTC, a Thursday

uint8_t Reg(Cmos& c, int index, uint64_t us) {
  c.Write(0, static_cast<uint8_t>(index), us);
  return c.Read(1, us);
}
void SetReg(Cmos& c, int index, uint8_t value, uint64_t us) {
  c.Write(0, static_cast<uint8_t>(index), us);
  c.Write(1, value, us);
}

TEST(CmosTest, TimeInBcdByDefault) {
  Cmos c(k20210304, 32 << 20);
  EXPECT_EQ(Reg(c, 0x00, 0), 0x07);
  EXPECT_EQ(Reg(c, 0x02, 0), 0x06);
  EXPECT_EQ(Reg(c, 0x04, 0), 0x05);
  EXPECT_EQ(Reg(c, 0x06, 0), 0x05);  // Thursday: Sunday is 1
  EXPECT_EQ(Reg(c, 0x07, 0), 0x04);
  EXPECT_EQ(Reg(c, 0x08, 0), 0x03);
  EXPECT_EQ(Reg(c, 0x09, 0), 0x21);
  EXPECT_EQ(Reg(c, 0x32, 0), 0x20);
  EXPECT_EQ(Reg(c, 0x0A, 0), 0x26);
  EXPECT_EQ(Reg(c, 0x0B, 0), 0x02);  // BCD, 24 hours
  EXPECT_EQ(Reg(c, 0x0D, 0), 0x80);  // valid RAM and time
}

TEST(CmosTest, BinaryAndTwelveHourFormats) {
  Cmos c(k20210304 + 12 * 3600, 32 << 20);  // 17:06:07
  EXPECT_EQ(Reg(c, 0x04, 0), 0x17);
  SetReg(c, 0x0B, 0x06, 0);  // binary, 24 hours
  EXPECT_EQ(Reg(c, 0x04, 0), 17);
  EXPECT_EQ(Reg(c, 0x09, 0), 21);
  EXPECT_EQ(Reg(c, 0x32, 0), 20);
  SetReg(c, 0x0B, 0x04, 0);  // binary, 12 hours
  EXPECT_EQ(Reg(c, 0x04, 0), 0x80 | 5);
  SetReg(c, 0x0B, 0x00, 0);  // BCD, 12 hours
  EXPECT_EQ(Reg(c, 0x04, 0), 0x85);
  // Writes are read in the current format too: 12 AM is hour 0.
  SetReg(c, 0x04, 0x12, 0);
  SetReg(c, 0x0B, 0x02, 0);
  EXPECT_EQ(Reg(c, 0x04, 0), 0x00);
}

TEST(CmosTest, TheClockRunsAndRollsOver) {
  Cmos c(946684799, 32 << 20);  // 1999-12-31 23:59:59, a Friday
  EXPECT_EQ(Reg(c, 0x00, kSecond - 1), 0x59);
  EXPECT_EQ(Reg(c, 0x00, kSecond), 0x00);
  EXPECT_EQ(Reg(c, 0x02, kSecond), 0x00);
  EXPECT_EQ(Reg(c, 0x04, kSecond), 0x00);
  EXPECT_EQ(Reg(c, 0x06, kSecond), 0x07);
  EXPECT_EQ(Reg(c, 0x07, kSecond), 0x01);
  EXPECT_EQ(Reg(c, 0x08, kSecond), 0x01);
  EXPECT_EQ(Reg(c, 0x09, kSecond), 0x00);
  EXPECT_EQ(Reg(c, 0x32, kSecond), 0x20);
  EXPECT_EQ(Reg(c, 0x00, 75 * kSecond + 5), 0x14);  // 00:01:14
  EXPECT_EQ(Reg(c, 0x02, 75 * kSecond + 5), 0x01);

  Cmos leap(1709164799, 32 << 20);  // 2024-02-28 23:59:59: the next day is the 29th
  EXPECT_EQ(Reg(leap, 0x07, kSecond), 0x29);
  EXPECT_EQ(Reg(leap, 0x08, kSecond), 0x02);
}

TEST(CmosTest, UpdateInProgressIsTheLast244Microseconds) {
  Cmos c(k20210304, 32 << 20);
  EXPECT_EQ(Reg(c, 0x0A, 3 * kSecond - 245) & 0x80, 0);
  EXPECT_EQ(Reg(c, 0x0A, 3 * kSecond - 244) & 0x80, 0x80);
  EXPECT_EQ(Reg(c, 0x00, 3 * kSecond - 1), 0x09);  // the old time until the update
  EXPECT_EQ(Reg(c, 0x0A, 3 * kSecond), 0x26);
}

TEST(CmosTest, SetHoldsTheTimeWhileItIsWritten) {
  Cmos c(k20210304, 32 << 20);
  SetReg(c, 0x0B, 0x82, 100);  // SET
  SetReg(c, 0x00, 0x30, 100);
  SetReg(c, 0x02, 0x45, 100);
  EXPECT_EQ(Reg(c, 0x00, 5 * kSecond), 0x30);  // no updates
  EXPECT_EQ(Reg(c, 0x0A, 5 * kSecond) & 0x80, 0);
  SetReg(c, 0x0B, 0x02, 5 * kSecond);  // the next update is a second later
  EXPECT_EQ(Reg(c, 0x00, 6 * kSecond - 1), 0x30);
  EXPECT_EQ(Reg(c, 0x00, 6 * kSecond), 0x31);
  EXPECT_EQ(Reg(c, 0x02, 6 * kSecond), 0x45);
}

TEST(CmosTest, FlagsInterruptsAndNextInterrupt) {
  Cmos c(k20210304, 32 << 20);
  EXPECT_FALSE(c.Irq(0));
  EXPECT_EQ(c.NextIrq(0), Cmos::kNever);  // nothing enabled
  // Update-ended: UF at each second; with UIE the interrupt.
  SetReg(c, 0x0B, 0x12, 10);
  EXPECT_EQ(c.NextIrq(10), kSecond);
  EXPECT_FALSE(c.Irq(kSecond - 1));
  EXPECT_TRUE(c.Irq(kSecond));
  EXPECT_EQ(c.NextIrq(kSecond), Cmos::kNever);  // raised until C is read
  // IRQF, UF and PF (the 1024 Hz periodic flag of register A's default rate, set whatever
  // PIE says); reading clears them.
  EXPECT_EQ(Reg(c, 0x0C, kSecond + 5), 0xD0);
  EXPECT_FALSE(c.Irq(kSecond + 5));
  EXPECT_EQ(Reg(c, 0x0C, kSecond + 6), 0x00);
  // Periodic at 1024 Hz (rate 6: 32 ticks of 32.768 kHz, 976.5625 us).
  SetReg(c, 0x0B, 0x42, kSecond + 10);
  EXPECT_EQ(c.NextIrq(kSecond + 10), 1000977u);  // the next multiple of 976.5625 us
  EXPECT_TRUE(c.Irq(1000977));
  EXPECT_EQ(Reg(c, 0x0C, 1000977) & 0xC0, 0xC0);
  // Flags are set whether or not their interrupt is enabled.
  SetReg(c, 0x0B, 0x02, 1000980);
  EXPECT_EQ(Reg(c, 0x0C, 2 * kSecond) & 0x70, 0x50);  // PF and UF, no IRQF
}

TEST(CmosTest, AlarmWithDontCareBytes) {
  Cmos c(k20210304, 32 << 20);  // 05:06:07
  SetReg(c, 0x01, 0x10, 0);     // seconds 10
  SetReg(c, 0x03, 0xC0, 0);     // any minute
  SetReg(c, 0x05, 0xFF, 0);     // any hour
  SetReg(c, 0x0B, 0x22, 0);     // AIE
  EXPECT_FALSE(c.Irq(2 * kSecond));
  EXPECT_FALSE(c.Irq(3 * kSecond - 1));
  EXPECT_TRUE(c.Irq(3 * kSecond));             // 05:06:10
  EXPECT_EQ(Reg(c, 0x0C, 3 * kSecond), 0xF0);  // IRQF, PF, AF, UF
}

TEST(CmosTest, RamAndMemorySizes) {
  Cmos c(k20210304, 32 << 20);
  EXPECT_EQ(Reg(c, 0x15, 0) | Reg(c, 0x16, 0) << 8, 640);
  EXPECT_EQ(Reg(c, 0x17, 0) | Reg(c, 0x18, 0) << 8, 31 * 1024);
  EXPECT_EQ(Reg(c, 0x30, 0) | Reg(c, 0x31, 0) << 8, 31 * 1024);
  EXPECT_EQ(Reg(c, 0x34, 0) | Reg(c, 0x35, 0) << 8, 256);  // 16 MiB above 16 MiB, in 64 KiB
  SetReg(c, 0x40, 0xA5, 0);
  EXPECT_EQ(Reg(c, 0x40, 0), 0xA5);
  SetReg(c, 0x0D, 0x00, 0);  // read-only
  EXPECT_EQ(Reg(c, 0x0D, 0), 0x80);
  c.Write(0, 0x80 | 0x40, 0);  // bit 7 of the index masks NMI
  EXPECT_TRUE(c.nmi_disabled());
  EXPECT_EQ(c.Read(1, 0), 0xA5);
}

}  // namespace
}  // namespace citcat::machine
