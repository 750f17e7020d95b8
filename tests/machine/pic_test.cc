// The 8259A pair against the datasheet's rules: initialisation, priorities, EOI, masking, IRR and
// ISR reads, edge and level triggering, cascade, spurious interrupts, rotation, AEOI, special
// mask, poll and special fully nested modes.
#include "machine/i486/pic.h"

#include "gtest/gtest.h"

namespace citcat::machine {
namespace {

// The PC BIOS programming: edge triggered, cascade, vectors 20h (master) and 28h (slave), 8086
// mode, normal EOI.
void InitPc(PicPair& p, uint8_t master_icw4 = 0x01, uint8_t icw1 = 0x11) {
  p.Write(0x20, icw1);
  p.Write(0x21, 0x20);
  p.Write(0x21, 0x04);  // slave on IR2
  p.Write(0x21, master_icw4);
  p.Write(0xA0, icw1);
  p.Write(0xA1, 0x28);
  p.Write(0xA1, 0x02);  // slave ID 2
  p.Write(0xA1, 0x01);
}

void Pulse(PicPair& p, int irq) {
  p.SetIrq(irq, true);
  p.SetIrq(irq, false);
}

TEST(PicTest, InitialisationLeavesAllUnmaskedAndVectorsFromIcw2) {
  PicPair p;
  p.Write(0x21, 0xFF);  // OCW1 before initialisation
  InitPc(p);
  EXPECT_EQ(p.Read(0x21), 0x00);  // ICW1 clears IMR
  EXPECT_EQ(p.Read(0xA1), 0x00);
  EXPECT_FALSE(p.Intr());
  p.SetIrq(3, true);
  EXPECT_TRUE(p.Intr());
  EXPECT_EQ(p.Acknowledge(), 0x23);
  EXPECT_EQ(p.master().isr(), 0x08);
  EXPECT_EQ(p.master().irr(), 0x00);
  EXPECT_FALSE(p.Intr());
}

// From power-on until its first initialisation sequence ends, a PIC asserts nothing, whatever
// its lines, its mask or a half-done sequence (docs/machines/i486-system.md, "Power-on state").
TEST(PicTest, NothingIsAssertedBeforeTheFirstInitialisation) {
  PicPair p;
  p.SetIrq(0, true);
  p.SetIrq(9, true);
  EXPECT_FALSE(p.Intr());
  p.Write(0x21, 0x00);  // OCW1 alone
  EXPECT_FALSE(p.Intr());
  p.Write(0x20, 0x11);  // ICW1, ICW2: the sequence not done
  p.Write(0x21, 0x20);
  EXPECT_FALSE(p.Intr());
  p.Write(0x21, 0x04);
  p.Write(0x21, 0x01);  // ICW4: done, and a line high since before needs a new edge
  EXPECT_FALSE(p.Intr());
  p.SetIrq(1, true);
  EXPECT_TRUE(p.Intr());
  EXPECT_EQ(p.Acknowledge(), 0x21);
  // A single PIC without ICW4 is done at ICW2.
  PicPair single;
  single.Write(0x20, 0x1A);  // level triggered, single, no ICW4
  single.SetIrq(5, true);
  EXPECT_FALSE(single.Intr());
  single.Write(0x21, 0x40);
  EXPECT_TRUE(single.Intr());
}

TEST(PicTest, FixedPriorityNestingAndNonSpecificEoi) {
  PicPair p;
  InitPc(p);
  p.SetIrq(5, true);
  p.SetIrq(1, true);
  EXPECT_EQ(p.Acknowledge(), 0x21);  // IR1 beats IR5
  EXPECT_FALSE(p.Intr());            // IR5 is lower than IR1 in service
  p.SetIrq(0, true);
  EXPECT_TRUE(p.Intr());  // IR0 is higher: it nests
  EXPECT_EQ(p.Acknowledge(), 0x20);
  EXPECT_EQ(p.master().isr(), 0x03);
  p.Write(0x20, 0x20);  // non-specific EOI: the highest in service (IR0)
  EXPECT_EQ(p.master().isr(), 0x02);
  EXPECT_FALSE(p.Intr());
  p.Write(0x20, 0x20);
  EXPECT_EQ(p.master().isr(), 0x00);
  EXPECT_TRUE(p.Intr());
  EXPECT_EQ(p.Acknowledge(), 0x25);
}

TEST(PicTest, SpecificEoiClearsTheNamedLevel) {
  PicPair p;
  InitPc(p);
  p.SetIrq(4, true);
  EXPECT_EQ(p.Acknowledge(), 0x24);
  p.SetIrq(1, true);
  EXPECT_EQ(p.Acknowledge(), 0x21);
  p.Write(0x20, 0x64);  // specific EOI, level 4
  EXPECT_EQ(p.master().isr(), 0x02);
}

TEST(PicTest, MaskedRequestsWaitInIrr) {
  PicPair p;
  InitPc(p);
  p.Write(0x21, 0x40);  // mask IR6
  p.SetIrq(6, true);
  EXPECT_FALSE(p.Intr());
  p.Write(0x20, 0x0A);  // OCW3: read IRR
  EXPECT_EQ(p.Read(0x20), 0x40);
  p.Write(0x21, 0x00);
  EXPECT_TRUE(p.Intr());
  EXPECT_EQ(p.Acknowledge(), 0x26);
  p.Write(0x20, 0x0B);  // OCW3: read ISR
  EXPECT_EQ(p.Read(0x20), 0x40);
  EXPECT_EQ(p.Read(0x20), 0x40);  // the choice stays until the next OCW3
  p.Write(0x20, 0x0A);
  EXPECT_EQ(p.Read(0x20), 0x00);
  EXPECT_EQ(p.Read(0x21), 0x00);  // A0 = 1 reads IMR
}

TEST(PicTest, EdgeTriggeredNeedsANewRisingEdge) {
  PicPair p;
  InitPc(p);
  p.SetIrq(3, true);
  EXPECT_EQ(p.Acknowledge(), 0x23);
  p.Write(0x20, 0x20);
  EXPECT_FALSE(p.Intr());  // the line is still high: no new request
  p.SetIrq(3, false);
  p.SetIrq(3, true);
  EXPECT_TRUE(p.Intr());
}

TEST(PicTest, RequestWithdrawnBeforeAcknowledgeIsSpuriousIr7) {
  PicPair p;
  InitPc(p);
  p.SetIrq(3, true);
  EXPECT_TRUE(p.Intr());
  p.SetIrq(3, false);  // the line fell before INTA
  EXPECT_FALSE(p.Intr());
  EXPECT_EQ(p.Acknowledge(), 0x27);   // IR7's vector
  EXPECT_EQ(p.master().isr(), 0x00);  // and no ISR bit
}

TEST(PicTest, LevelTriggeredRequestsFollowTheLine) {
  PicPair p;
  InitPc(p, 0x01, 0x19);  // LTIM
  p.SetIrq(3, true);
  EXPECT_EQ(p.Acknowledge(), 0x23);
  p.Write(0x20, 0x20);
  EXPECT_TRUE(p.Intr());  // still high: requested again after the EOI
  p.SetIrq(3, false);
  EXPECT_FALSE(p.Intr());
}

TEST(PicTest, CascadeGivesTheSlaveVectorAndSetsBothIsrs) {
  PicPair p;
  InitPc(p);
  p.SetIrq(14, true);
  EXPECT_TRUE(p.Intr());
  EXPECT_EQ(p.Acknowledge(), 0x2E);
  EXPECT_EQ(p.master().isr(), 0x04);
  EXPECT_EQ(p.slave().isr(), 0x40);
  // Master IR1 beats the cascade input in service; slave IR8 does not get through it.
  p.SetIrq(8, true);
  EXPECT_FALSE(p.Intr());
  p.SetIrq(1, true);
  EXPECT_EQ(p.Acknowledge(), 0x21);
  p.Write(0x20, 0x61);  // EOI master IR1
  p.Write(0xA0, 0x20);  // EOI the slave, then the master's cascade level
  p.Write(0x20, 0x20);
  EXPECT_TRUE(p.Intr());
  EXPECT_EQ(p.Acknowledge(), 0x28);
}

TEST(PicTest, MaskingTheCascadeInputHidesTheSlave) {
  PicPair p;
  InitPc(p);
  p.Write(0x21, 0x04);
  p.SetIrq(12, true);
  EXPECT_FALSE(p.Intr());
  p.Write(0x21, 0x00);
  EXPECT_TRUE(p.Intr());
  EXPECT_EQ(p.Acknowledge(), 0x2C);
}

TEST(PicTest, SlaveWithNoRequestAtAcknowledgeGivesItsIr7) {
  // The chip on its own: no request at the first INTA, IR7's vector and no ISR bit.
  Pic8259 slave(false);
  slave.Write(0, 0x11);
  slave.Write(1, 0x70);
  slave.Write(1, 0x02);
  slave.Write(1, 0x01);
  EXPECT_EQ(slave.BeginAck(), -1);
  EXPECT_EQ(slave.Vector(7), 0x77);
  EXPECT_EQ(slave.isr(), 0x00);
}

TEST(PicTest, AutomaticEoiLeavesNothingInService) {
  PicPair p;
  InitPc(p, 0x03);  // AEOI on the master
  p.SetIrq(5, true);
  EXPECT_EQ(p.Acknowledge(), 0x25);
  EXPECT_EQ(p.master().isr(), 0x00);
  p.SetIrq(6, true);
  EXPECT_TRUE(p.Intr());  // nothing in service blocks it
}

TEST(PicTest, SetPriorityAndRotateOnEoi) {
  PicPair p;
  InitPc(p);
  p.Write(0x20, 0xC3);  // OCW2 set priority: IR3 lowest, so IR4 highest
  p.SetIrq(2 + 1, true);
  p.SetIrq(5, true);
  EXPECT_EQ(p.Acknowledge(), 0x25);  // IR5 ranks above IR3 now
  p.Write(0x20, 0xA0);               // rotate on non-specific EOI: IR5 becomes lowest
  EXPECT_EQ(p.master().isr(), 0x00);
  p.SetIrq(6, true);
  EXPECT_EQ(p.Acknowledge(), 0x26);  // IR6 is now the highest
  p.Write(0x20, 0xE6);               // rotate on specific EOI of 6: IR7 highest
  p.SetIrq(7, true);
  EXPECT_EQ(p.Acknowledge(), 0x27);
  p.Write(0x20, 0x67);
  EXPECT_EQ(p.Acknowledge(), 0x23);  // IR3 was waiting
}

TEST(PicTest, SpecialMaskModeLetsLowerLevelsThrough) {
  PicPair p;
  InitPc(p);
  p.SetIrq(1, true);
  EXPECT_EQ(p.Acknowledge(), 0x21);
  p.SetIrq(5, true);
  EXPECT_FALSE(p.Intr());
  p.Write(0x21, 0x02);  // mask IR1 (in service)
  p.Write(0x20, 0x68);  // OCW3: set special mask mode
  EXPECT_TRUE(p.Intr());
  EXPECT_EQ(p.Acknowledge(), 0x25);
  p.Write(0x20, 0x48);  // reset special mask mode
  p.Write(0x20, 0x65);
  p.SetIrq(6, true);
  EXPECT_FALSE(p.Intr());  // IR1 is in service again as far as priority goes
}

TEST(PicTest, PollCommandReadsTheLevelAndAcknowledges) {
  PicPair p;
  InitPc(p);
  p.SetIrq(6, true);
  p.Write(0x20, 0x0C);  // OCW3: poll
  EXPECT_EQ(p.Read(0x20), 0x86);
  EXPECT_EQ(p.master().isr(), 0x40);
  p.Write(0x20, 0x0C);
  EXPECT_EQ(p.Read(0x20), 0x00);  // nothing requesting
}

TEST(PicTest, SpecialFullyNestedModePassesHigherSlaveRequests) {
  for (bool sfnm : {false, true}) {
    PicPair p;
    InitPc(p, sfnm ? 0x11 : 0x01);
    p.SetIrq(14, true);
    EXPECT_EQ(p.Acknowledge(), 0x2E);
    p.SetIrq(8, true);  // higher than IRQ 14 on the same slave
    EXPECT_EQ(p.Intr(), sfnm) << "sfnm " << sfnm;
    if (sfnm) {
      EXPECT_EQ(p.Acknowledge(), 0x28);
    }
    p.SetIrq(3, true);  // a lower master level stays blocked by IR2 in service
    if (sfnm) {
      EXPECT_FALSE(p.Intr());
    }
  }
}

TEST(PicTest, ReinitialisingNeedsNewEdges) {
  PicPair p;
  InitPc(p);
  p.SetIrq(4, true);
  InitPc(p);
  EXPECT_FALSE(p.Intr());  // the edge-sense latch was reset with the line high
  Pulse(p, 4);
  EXPECT_FALSE(p.Intr());  // a pulse that is gone by the acknowledge requests nothing
  p.SetIrq(4, true);
  EXPECT_TRUE(p.Intr());
}

}  // namespace
}  // namespace citcat::machine
