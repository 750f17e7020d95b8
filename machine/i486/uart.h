// The console: a National Semiconductor 16550A UART at ports 3F8h-3FFh (COM1) on IRQ 4
// (docs/machines/i486-system.md, "Console UART"). A character written to THR leaves at once (LSR
// always says the transmitter is empty) and goes to the console buffer with the word length LCR
// sets (5 bits from power-on until a program sets another); received characters come from
// Receive().
#ifndef CITCAT_MACHINE_I486_UART_H_
#define CITCAT_MACHINE_I486_UART_H_

#include <cstdint>
#include <deque>
#include <string>

namespace citcat::machine {

class Uart16550 {
 public:
  // Register `offset` (0-7).
  void Write(int offset, uint8_t value);
  uint8_t Read(int offset);
  // A character arrives on the receive line.
  void Receive(uint8_t byte) { rx_.push_back(byte); }

  // The IRQ line: the chip's INTR output, gated by MCR.OUT2 as on a PC's serial port.
  bool Irq() const { return (mcr_ & kMcrOut2) && Pending() != kNone; }
  // Whether the last Write was to THR (the line drops while the character leaves).
  bool WroteThr(int offset) const { return offset == 0 && !(lcr_ & kLcrDlab); }

  const std::string& output() const { return output_; }
  uint16_t divisor() const { return divisor_; }

 private:
  static constexpr uint8_t kLcrDlab = 0x80, kMcrOut2 = 0x08, kMcrLoop = 0x10;
  static constexpr uint8_t kIerRda = 0x01, kIerThre = 0x02;
  // IIR interrupt identifications, highest priority first (line status and modem status never
  // occur: the line has no errors and the modem inputs never change).
  enum IntId : uint8_t { kRda = 0x04, kThre = 0x02, kNone = 0x01 };
  IntId Pending() const;

  std::string output_;
  std::deque<uint8_t> rx_;
  uint8_t ier_ = 0, lcr_ = 0, mcr_ = 0, scr_ = 0;
  bool fifo_ = false;
  bool thre_pending_ = false;  // the THR-empty interrupt, until IIR reports it or THR is written
  uint16_t divisor_ = 0;
};

}  // namespace citcat::machine

#endif  // CITCAT_MACHINE_I486_UART_H_
