#include "aes/interrupt_columns.h"

#include <random>
#include <string>
#include <vector>

#include "aes/schedule.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace citcat::aes {
namespace {

using ::testing::HasSubstr;

// Interrupts with every key field in use: branch counts that go up by a timer-like period (and
// once down: a hostile or damaged schedule must still round-trip), PCs from a set larger than
// the recent PCs a code can name, 64-bit PCs, and each optional field present or not.
std::vector<Interrupt> Many(int n) {
  std::mt19937_64 random(7);
  std::vector<Interrupt> all;
  uint64_t bc = 1000, record = 50;
  for (int i = 0; i < n; ++i) {
    Interrupt& irq = all.emplace_back();
    bc = i == 700 ? bc - 5 : bc + 19000 + random() % 2000;
    irq.set_branch_count(bc);
    const uint64_t site = random() % 10 == 0 ? random() % 600 : random() % 12;
    irq.set_pc(i % 97 == 0 ? 0xFFFFFFFF80001000ull + 4 * site : 0x40001000 + 4 * site);
    irq.set_vector(i % 3 == 0 ? 46 : 32);
    irq.set_cause_ip(i % 5 == 0 ? 0x80 : 0);
    if (i % 7 == 0) irq.set_rep_remaining(random() % 5 == 0 ? 0 : random());
    record += 1 + random() % 5000;
    if (i % 4 == 0) irq.set_cat_record(record);
    if (i % 3 == 1) irq.set_delay_slot(i % 2 == 0);
    if (i % 11 == 0) irq.set_steps_after_arrival(random() % 70000);
  }
  return all;
}

std::vector<InterruptBlock> Write(const std::vector<Interrupt>& all) {
  InterruptColumnWriter w;
  std::vector<InterruptBlock> blocks;
  for (const Interrupt& irq : all) {
    w.Add(irq);
    if (w.size() == kInterruptsPerBlock) blocks.push_back(w.Take());
  }
  if (w.size() > 0) blocks.push_back(w.Take());
  return blocks;
}

TEST(InterruptColumns, RoundTripAcrossBlocks) {
  const std::vector<Interrupt> all = Many(2500);
  const std::vector<InterruptBlock> blocks = Write(all);
  ASSERT_EQ(blocks.size(), 3u);
  InterruptColumnReader r;
  std::vector<Interrupt> back;
  for (const InterruptBlock& b : blocks) {
    ASSERT_TRUE(r.Load(b).ok());
    EXPECT_EQ(r.loaded(), b.count());
    for (Interrupt irq; r.Next(irq);) back.push_back(irq);
  }
  ASSERT_EQ(back.size(), all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(back[i].SerializeAsString(), all[i].SerializeAsString()) << "interrupt " << i;
    EXPECT_EQ(back[i].has_rep_remaining(), all[i].has_rep_remaining()) << "interrupt " << i;
  }
  // A block is far below the size at which a reader refuses one event.
  for (const InterruptBlock& b : blocks) EXPECT_LT(b.ByteSizeLong(), kMaxEventBytes / 2);
}

TEST(InterruptColumns, AWholeMessageExpandsAndCollapses) {
  EventSchedule s;
  for (const Interrupt& irq : Many(1500)) *s.add_interrupts() = irq;
  const std::string list = s.SerializeAsString();
  PutInterruptsInBlocks(s);
  EXPECT_EQ(s.interrupts_size(), 0);
  EXPECT_EQ(s.interrupt_blocks_size(), 2);
  EXPECT_LT(s.ByteSizeLong(), list.size());
  ASSERT_TRUE(ExpandInterruptBlocks(s).ok());
  EXPECT_EQ(s.SerializeAsString(), list);
}

// A schedule with blocks reads the same through every reader: streamed from bytes (each list
// by its own cursor) and in place from a message.
TEST(InterruptColumns, SchedulesReadBlocksAsInterrupts) {
  EventSchedule m;
  m.set_format_version(2);
  m.set_machine(ims::MACHINE_I486);
  const std::vector<Interrupt> all = Many(1100);
  for (const Interrupt& irq : all) *m.add_interrupts() = irq;
  for (int i = 0; i < 3; ++i) m.add_device_io()->set_address(0x3F8 + i);
  PutInterruptsInBlocks(m);
  absl::StatusOr<Schedule> parsed = Schedule::Parse(BytesInMemory(m.SerializeAsString(), "s"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const Schedule in_place(m);
  for (const Schedule* s : {static_cast<const Schedule*>(&*parsed), &in_place}) {
    EXPECT_EQ(s->interrupts(), all.size());
    std::unique_ptr<ScheduleReader> r = s->Read();
    for (const Interrupt& irq : all) {
      ASSERT_FALSE(r->interrupts().empty());
      EXPECT_EQ(r->interrupts().Pop().SerializeAsString(), irq.SerializeAsString());
    }
    EXPECT_TRUE(r->interrupts().empty());
    EXPECT_EQ(r->device_io().Pop().address(), 0x3F8u);
    EXPECT_TRUE(r->status().ok());
  }
}

absl::Status ReadOne(const InterruptBlock& b) {
  InterruptColumnReader r;
  return r.Load(b);
}

TEST(InterruptColumns, DamagedBlocksAreRefusedSayingWhy) {
  const InterruptBlock good = Write(Many(300))[0];
  ASSERT_TRUE(ReadOne(good).ok());
  const auto refused = [&](auto damage, const char* why) {
    InterruptBlock b = good;
    damage(b);
    const absl::Status s = ReadOne(b);
    EXPECT_FALSE(s.ok()) << why;
    EXPECT_THAT(s.message(), HasSubstr(why));
  };
  refused([](InterruptBlock& b) { b.set_count(kInterruptsPerBlock + 1); }, "more than the 1024");
  refused([](InterruptBlock& b) { b.set_count(b.count() + 1); }, "branch_count_low holds");
  refused([](InterruptBlock& b) { b.mutable_pc_codes()->pop_back(); }, "column pc_codes ends");
  refused([](InterruptBlock& b) { b.mutable_vectors()->push_back(1); },
          "column vectors holds more");
  refused([](InterruptBlock& b) { (*b.mutable_flags())[0] = 32; }, "flags 32");
  refused([](InterruptBlock& b) { (*b.mutable_pc_codes())[1] = 9; }, "names no recent PC");
  refused([](InterruptBlock& b) { b.mutable_rep_remaining()->clear(); },
          "column rep_remaining ends");
}

TEST(InterruptColumns, ASchedulesInterruptsAreInAListOrInBlocks) {
  EventSchedule m;
  m.set_format_version(2);
  for (const Interrupt& irq : Many(10)) *m.add_interrupts() = irq;
  EventSchedule blocks = m;
  PutInterruptsInBlocks(blocks);
  *m.mutable_interrupt_blocks() = blocks.interrupt_blocks();
  absl::StatusOr<Schedule> parsed = Schedule::Parse(BytesInMemory(m.SerializeAsString(), "s"));
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.status().message(), HasSubstr("both in a list and in blocks"));
  EXPECT_FALSE(ExpandInterruptBlocks(m).ok());
}

}  // namespace
}  // namespace citcat::aes
