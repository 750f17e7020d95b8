#include "machine/i486/uart.h"

namespace citcat::machine {

Uart16550::IntId Uart16550::Pending() const {
  if ((ier_ & kIerRda) && !rx_.empty()) return kRda;
  if ((ier_ & kIerThre) && thre_pending_) return kThre;
  return kNone;
}

void Uart16550::Write(int offset, uint8_t value) {
  const bool dlab = lcr_ & kLcrDlab;
  switch (offset) {
    case 0:
      if (dlab) {
        divisor_ = static_cast<uint16_t>((divisor_ & 0xFF00) | value);
      } else {
        // A character has the word length LCR sets (5 bits at power-on): the bits above it
        // are not sent. In loopback it comes back to the receiver instead of the line.
        value &= static_cast<uint8_t>((1u << (5 + (lcr_ & 3))) - 1);
        if (mcr_ & kMcrLoop) {
          rx_.push_back(value);
        } else {
          output_.push_back(static_cast<char>(value));
        }
        thre_pending_ = true;  // sent at once: THR is empty again
      }
      return;
    case 1:
      if (dlab) {
        divisor_ = static_cast<uint16_t>((divisor_ & 0x00FF) | value << 8);
      } else {
        // Enabling the THR-empty interrupt while THR is empty raises it.
        if ((value & kIerThre) && !(ier_ & kIerThre)) thre_pending_ = true;
        ier_ = value & 0x0F;
      }
      return;
    case 2:  // FCR
      fifo_ = value & 0x01;
      if (value & 0x02) rx_.clear();
      return;
    case 3:
      lcr_ = value;
      return;
    case 4:
      mcr_ = value & 0x1F;
      return;
    case 7:
      scr_ = value;
      return;
  }
  // LSR and MSR are read-only.
}

uint8_t Uart16550::Read(int offset) {
  const bool dlab = lcr_ & kLcrDlab;
  switch (offset) {
    case 0: {
      if (dlab) return static_cast<uint8_t>(divisor_);
      if (rx_.empty()) return 0;
      uint8_t byte = rx_.front();
      rx_.pop_front();
      return byte;
    }
    case 1:
      return dlab ? static_cast<uint8_t>(divisor_ >> 8) : ier_;
    case 2: {
      const IntId source = Pending();
      if (source == kThre) thre_pending_ = false;  // reading IIR clears the THR-empty interrupt
      return static_cast<uint8_t>((fifo_ ? 0xC0 : 0x00) | source);
    }
    case 3:
      return lcr_;
    case 4:
      return mcr_;
    case 5:  // LSR: THR and transmitter empty, data ready when a character waits
      return static_cast<uint8_t>(0x60 | (rx_.empty() ? 0 : 0x01));
    case 6:
      // MSR: CTS, DSR and DCD asserted (no deltas); in loopback the inputs follow MCR's outputs.
      if (mcr_ & kMcrLoop) {
        return static_cast<uint8_t>((mcr_ & 0x02) << 3 | (mcr_ & 0x01) << 5 | (mcr_ & 0x04) << 4 |
                                    (mcr_ & 0x08) << 4);
      }
      return 0xB0;
    case 7:
      return scr_;
  }
  return 0xFF;
}

}  // namespace citcat::machine
