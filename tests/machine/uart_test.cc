// The 16550 console against the datasheet: THR/RBR, the divisor latch, IER/IIR and the interrupt
// line (gated by OUT2 as on a PC), FCR, LCR, LSR, MSR and the scratch register.
#include "machine/i486/uart.h"

#include "gtest/gtest.h"

namespace citcat::machine {
namespace {

TEST(UartTest, TransmitGoesToTheConsoleAndTheLineStatusIsAlwaysReady) {
  Uart16550 u;
  EXPECT_EQ(u.Read(5), 0x60);  // THRE and TEMT, no data
  u.Write(3, 0x03);            // 8N1
  for (char c : std::string("hi\n")) u.Write(0, static_cast<uint8_t>(c));
  EXPECT_EQ(u.output(), "hi\n");
  EXPECT_EQ(u.Read(5), 0x60);
  EXPECT_TRUE(u.WroteThr(0));
}

// At power-on LCR is 00h: 5-bit words, so the line carries the low five bits of a character.
TEST(UartTest, AtPowerOnCharactersHaveFiveBits) {
  Uart16550 u;
  EXPECT_EQ(u.Read(3), 0x00);
  u.Write(0, 'h');
  u.Write(3, 0x02);  // 7 bits
  u.Write(0, 0xE9);
  u.Write(3, 0x03);  // 8 bits
  u.Write(0, 0xE9);
  EXPECT_EQ(u.output(), std::string("\x08\x69\xE9"));
}

TEST(UartTest, DivisorLatchSharesTheFirstTwoRegisters) {
  Uart16550 u;
  u.Write(1, 0x00);
  u.Write(3, 0x83);  // DLAB, 8N1
  u.Write(0, 0x01);  // 115200 baud
  u.Write(1, 0x00);
  EXPECT_EQ(u.divisor(), 1);
  EXPECT_FALSE(u.WroteThr(0));
  EXPECT_EQ(u.Read(0), 0x01);
  EXPECT_EQ(u.Read(3), 0x83);
  u.Write(3, 0x03);
  EXPECT_EQ(u.Read(1), 0x00);  // IER again
  u.Write(0, 'x');
  EXPECT_EQ(u.output(), "x");  // the divisor writes printed nothing
}

TEST(UartTest, ThrEmptyInterrupt) {
  Uart16550 u;
  EXPECT_EQ(u.Read(2), 0x01);  // no interrupt pending
  u.Write(1, 0x02);            // enable THR empty: raised at once, THR being empty
  EXPECT_EQ(u.Read(1), 0x02);
  EXPECT_FALSE(u.Irq());  // OUT2 gates the line on a PC
  u.Write(4, 0x08);
  EXPECT_TRUE(u.Irq());
  EXPECT_EQ(u.Read(2), 0x02);  // THRE; reading IIR clears it
  EXPECT_FALSE(u.Irq());
  EXPECT_EQ(u.Read(2), 0x01);
  u.Write(0, 'a');  // the character leaves, THR is empty again
  EXPECT_TRUE(u.Irq());
  u.Write(1, 0x00);
  EXPECT_FALSE(u.Irq());
}

TEST(UartTest, ReceiveDataHasPriorityOverThrEmpty) {
  Uart16550 u;
  u.Write(4, 0x08);
  u.Write(1, 0x03);
  u.Receive('k');
  u.Receive('!');
  EXPECT_EQ(u.Read(5), 0x61);  // data ready
  EXPECT_EQ(u.Read(2), 0x04);  // received data available
  EXPECT_EQ(u.Read(0), 'k');
  EXPECT_EQ(u.Read(0), '!');
  EXPECT_EQ(u.Read(5), 0x60);
  EXPECT_EQ(u.Read(2), 0x02);  // then THR empty
  EXPECT_EQ(u.Read(0), 0x00);  // nothing left
}

TEST(UartTest, FifoControlScratchAndModemStatus) {
  Uart16550 u;
  u.Write(2, 0x07);  // enable and clear the FIFOs
  EXPECT_EQ(u.Read(2), 0xC1);
  u.Receive('q');
  u.Write(2, 0x03);  // clear the receive FIFO
  EXPECT_EQ(u.Read(5) & 0x01, 0);
  u.Write(7, 0x5A);
  EXPECT_EQ(u.Read(7), 0x5A);
  EXPECT_EQ(u.Read(6), 0xB0);  // CTS, DSR, DCD
  u.Write(3, 0x03);            // 8N1
  u.Write(4, 0x1B);            // loopback with DTR, RTS, OUT2
  EXPECT_EQ(u.Read(4), 0x1B);
  EXPECT_EQ(u.Read(6), 0xB0);
  u.Write(0, 'L');  // looped back to the receiver, not the console
  EXPECT_EQ(u.output(), "");
  EXPECT_EQ(u.Read(0), 'L');
}

}  // namespace
}  // namespace citcat::machine
