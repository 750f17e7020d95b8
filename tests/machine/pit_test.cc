// The 8254 against the datasheet's rules, in input-clock ticks: the modes' outputs and counts,
// counter latch, read-back, access modes, BCD, new counts while counting, GATE and port 61h; and
// the timer's clock as a function of retired instructions (the outside world).
#include "machine/i486/pit.h"

#include "gtest/gtest.h"
#include "machine/world.h"

namespace citcat::machine {
namespace {

constexpr uint64_t kNever = Pit8254::kNever;

void Program(Pit8254& pit, int channel, uint8_t control, uint16_t count, uint64_t tick) {
  pit.Write(3, control, tick);
  pit.Write(channel, static_cast<uint8_t>(count), tick);
  pit.Write(channel, static_cast<uint8_t>(count >> 8), tick);
}

uint16_t ReadCount(Pit8254& pit, int channel, uint64_t tick) {
  uint8_t low = pit.Read(channel, tick);
  return static_cast<uint16_t>(low | pit.Read(channel, tick) << 8);
}

TEST(PitTest, Mode2RateGenerator) {
  Pit8254 pit;
  Program(pit, 0, 0x34, 100, 10);  // loaded on the next clock, tick 11
  EXPECT_EQ(ReadCount(pit, 0, 11), 100);
  EXPECT_EQ(ReadCount(pit, 0, 12), 99);
  EXPECT_TRUE(pit.Out(0, 109));
  EXPECT_FALSE(pit.Out(0, 110));  // low for the one clock where the count is 1
  EXPECT_EQ(ReadCount(pit, 0, 110), 1);
  EXPECT_TRUE(pit.Out(0, 111));
  EXPECT_EQ(ReadCount(pit, 0, 111), 100);  // reloaded
  EXPECT_EQ(pit.NextChange(0, 10), 110u);
  EXPECT_EQ(pit.NextChange(0, 110), 111u);
  EXPECT_EQ(pit.NextChange(0, 111), 210u);
  EXPECT_EQ(pit.NextChange(0, 5000), 5010u);
}

TEST(PitTest, Mode3SquareWaveEvenAndOddCounts) {
  Pit8254 pit;
  Program(pit, 0, 0x36, 100, 0);  // start at tick 1: high 50 clocks, low 50
  EXPECT_TRUE(pit.Out(0, 50));
  EXPECT_FALSE(pit.Out(0, 51));
  EXPECT_FALSE(pit.Out(0, 100));
  EXPECT_TRUE(pit.Out(0, 101));
  EXPECT_EQ(ReadCount(pit, 0, 1), 100);
  EXPECT_EQ(ReadCount(pit, 0, 2), 98);  // counts by two
  EXPECT_EQ(ReadCount(pit, 0, 51), 100);
  EXPECT_EQ(pit.NextChange(0, 0), 51u);
  EXPECT_EQ(pit.NextChange(0, 51), 101u);

  Program(pit, 0, 0x36, 101, 1000);  // odd: high (N+1)/2 = 51 clocks, low 50
  EXPECT_EQ(pit.NextChange(0, 1000), 1052u);
  EXPECT_EQ(pit.NextChange(0, 1052), 1102u);
  EXPECT_EQ(ReadCount(pit, 0, 1001), 100);  // N - 1, then by two
  EXPECT_EQ(ReadCount(pit, 0, 1002), 98);
}

TEST(PitTest, Mode0InterruptOnTerminalCount) {
  Pit8254 pit;
  pit.Write(3, 0x30, 0);
  EXPECT_FALSE(pit.Out(0, 0));  // the control word sets OUT low
  pit.Write(0, 0xE8, 0);
  pit.Write(0, 0x03, 0);  // 1000, loaded at tick 1
  EXPECT_EQ(pit.NextChange(0, 500), 1001u);
  EXPECT_FALSE(pit.Out(0, 1000));
  EXPECT_TRUE(pit.Out(0, 1001));
  EXPECT_EQ(ReadCount(pit, 0, 1001), 0);
  EXPECT_EQ(ReadCount(pit, 0, 1002), 0xFFFF);  // the count wraps, OUT stays high
  EXPECT_TRUE(pit.Out(0, 70000));
  EXPECT_EQ(pit.NextChange(0, 1001), kNever);
  // The first byte of a new count stops counting and sets OUT low; the second starts it again.
  pit.Write(0, 10, 2000);
  EXPECT_FALSE(pit.Out(0, 2000));
  pit.Write(0, 0, 2005);
  EXPECT_EQ(pit.NextChange(0, 2005), 2016u);
}

TEST(PitTest, Mode4StrobeIsOneClockLow) {
  Pit8254 pit;
  Program(pit, 0, 0x38, 10, 0);
  EXPECT_EQ(pit.NextChange(0, 0), 11u);
  EXPECT_FALSE(pit.Out(0, 11));
  EXPECT_EQ(pit.NextChange(0, 11), 12u);
  EXPECT_TRUE(pit.Out(0, 12));
  EXPECT_EQ(pit.NextChange(0, 12), kNever);
}

TEST(PitTest, CounterLatchHoldsTheCountUntilRead) {
  Pit8254 pit;
  Program(pit, 0, 0x34, 1000, 0);
  pit.Write(3, 0x00, 101);  // latch channel 0: 1000 - 100 = 900
  pit.Write(3, 0x00, 300);  // ignored: the first latch has not been read
  EXPECT_EQ(ReadCount(pit, 0, 500), 900);
  EXPECT_EQ(ReadCount(pit, 0, 600), 401);  // live again
}

TEST(PitTest, ReadBackStatusAndCount) {
  Pit8254 pit;
  Program(pit, 0, 0x34, 1000, 0);
  pit.Write(3, 0xE2, 0);            // read-back: status only, channel 0, before the count is loaded
  EXPECT_EQ(pit.Read(0, 0), 0xF4);  // OUT, NULL COUNT, low/high, mode 2, binary
  pit.Write(3, 0xC2, 5);            // count and status
  EXPECT_EQ(pit.Read(0, 9), 0xB4);  // status first, NULL COUNT now clear
  EXPECT_EQ(ReadCount(pit, 0, 9), 996);  // the count latched at tick 5
  // Several channels at once; the status of a mode 0 channel whose OUT is low.
  Program(pit, 1, 0x70, 50, 10);  // channel 1, mode 0
  Program(pit, 2, 0xB4, 60, 10);  // channel 2, mode 2 (GATE low: stopped)
  pit.Write(3, 0xEC, 20);         // status of channels 1 and 2
  EXPECT_EQ(pit.Read(1, 20), 0x30);
  EXPECT_EQ(pit.Read(2, 20), 0xB4);
}

TEST(PitTest, LowOnlyAndHighOnlyAccess) {
  Pit8254 pit;
  pit.Write(3, 0x50, 0);  // channel 1, low byte only, mode 0
  pit.Write(1, 0x80, 0);
  EXPECT_EQ(pit.Read(1, 1), 0x80);
  EXPECT_EQ(pit.Read(1, 2), 0x7F);
  pit.Write(3, 0x64, 10);  // high byte only, mode 2
  pit.Write(1, 0x02, 10);  // 200h
  EXPECT_EQ(pit.Read(1, 11), 0x02);
  EXPECT_EQ(pit.Read(1, 12), 0x01);  // 1FFh
}

TEST(PitTest, BcdCounting) {
  Pit8254 pit;
  Program(pit, 0, 0x35, 0x1000, 0);  // BCD 1000
  EXPECT_EQ(ReadCount(pit, 0, 2), 0x0999);
  EXPECT_EQ(pit.NextChange(0, 0), 1000u);
  Program(pit, 0, 0x35, 0x0000, 100);  // 0 is 10^4 in BCD
  EXPECT_EQ(ReadCount(pit, 0, 101), 0x0000);
  EXPECT_EQ(ReadCount(pit, 0, 102), 0x9999);
}

TEST(PitTest, NewCountInMode2TakesEffectAtTheReload) {
  Pit8254 pit;
  Program(pit, 0, 0x34, 100, 0);
  pit.Write(0, 40, 50);
  pit.Write(0, 0, 50);
  EXPECT_EQ(pit.NextChange(0, 50), 100u);   // the current cycle ends as it was
  EXPECT_EQ(pit.NextChange(0, 100), 101u);  // reload with 40
  EXPECT_EQ(pit.NextChange(0, 101), 140u);
  EXPECT_EQ(ReadCount(pit, 0, 102), 39);
}

TEST(PitTest, GateAndPortB) {
  Pit8254 pit;
  EXPECT_EQ(pit.ReadPortB(0) & 0x01, 0);  // channel 2's GATE is low at power-on
  pit.WritePortB(0x01, 0);
  Program(pit, 2, 0xB0, 100, 0);  // mode 0, loaded at tick 1
  pit.WritePortB(0x00, 51);       // GATE low: counting pauses after 50 clocks
  EXPECT_EQ(pit.NextChange(2, 100), kNever);
  EXPECT_EQ(ReadCount(pit, 2, 150), 50);
  pit.WritePortB(0x01, 200);  // counting goes on
  EXPECT_EQ(pit.NextChange(2, 200), 250u);
  EXPECT_EQ(pit.ReadPortB(249) & 0x20, 0);
  EXPECT_EQ(pit.ReadPortB(250) & 0x20, 0x20);  // bit 5: OUT2
  EXPECT_EQ(pit.ReadPortB(250) & 0x0F, 0x01);

  // Mode 2 with GATE low: OUT high, no counting; a rising GATE reloads.
  Program(pit, 2, 0xB4, 10, 300);
  pit.WritePortB(0x00, 305);
  EXPECT_TRUE(pit.Out(2, 400));
  EXPECT_EQ(pit.NextChange(2, 400), kNever);
  pit.WritePortB(0x01, 500);
  EXPECT_EQ(pit.NextChange(2, 500), 510u);

  // Mode 1: a rising GATE triggers the one-shot.
  pit.WritePortB(0x00, 600);
  Program(pit, 2, 0xB2, 10, 600);
  EXPECT_TRUE(pit.Out(2, 650));
  EXPECT_EQ(pit.NextChange(2, 650), kNever);
  pit.WritePortB(0x01, 700);
  EXPECT_FALSE(pit.Out(2, 701));
  EXPECT_EQ(ReadCount(pit, 2, 705), 6);
  EXPECT_EQ(pit.NextChange(2, 701), 711u);
}

TEST(PitTest, PortBRefreshToggle) {
  Pit8254 pit;
  EXPECT_EQ(pit.ReadPortB(0) & 0x10, 0);
  EXPECT_EQ(pit.ReadPortB(18) & 0x10, 0x10);
  EXPECT_EQ(pit.ReadPortB(36) & 0x10, 0);
}

TEST(PitTest, ClockIsAFunctionOfRetiredInstructions) {
  // Two worlds with one seed give the same clock however they are asked.
  World a(5, kPcTimerRate), b(5, kPcTimerRate), other(6, kPcTimerRate);
  std::vector<uint64_t> fine;
  for (uint64_t t = 0; t <= 1'000'000; t += 997) fine.push_back(a.Ticks(t));
  for (uint64_t t = 0, i = 0; t <= 1'000'000; t += 997, ++i) {
    if (i % 50 == 0) b.Forget(t);
    ASSERT_EQ(b.Ticks(t), fine[i]) << t;
  }
  EXPECT_NE(other.Ticks(1'000'000), a.Ticks(1'000'000));
  // 1.193182 MHz against 33 million instructions a second, within the jitter.
  const double per_second = static_cast<double>(a.Ticks(33'000'000));
  EXPECT_NEAR(per_second, 1'193'182, 1'193'182 * 0.005);
  // WhenTicksReach names the first instruction time at which the clock gets there.
  for (uint64_t target : {1u, 100u, 11932u, 30000u}) {
    World w(9, kPcTimerRate);
    uint64_t t = w.WhenTicksReach(0, target);
    EXPECT_GE(w.Ticks(t), target);
    EXPECT_LT(w.Ticks(t - 1), target);
  }
  // Further than kFar instruction times can reach: the answer is kFar ahead, to ask again then.
  World far(9, kPcTimerRate);
  EXPECT_EQ(far.WhenTicksReach(10, 50000), 10 + World::kFar);
  // A 100 Hz timer (count 11932) first interrupts about 330,000 instructions in.
  World w(1, kPcTimerRate);
  Pit8254 pit;
  Program(pit, 0, 0x34, 11932, w.Ticks(0));
  uint64_t rise = pit.NextChange(0, pit.NextChange(0, 0));
  uint64_t when = w.WhenTicksReach(0, rise);
  EXPECT_NEAR(static_cast<double>(when), 11932.0 * 33e6 / 1193182, 330'000 * 0.02);
}

}  // namespace
}  // namespace citcat::machine
