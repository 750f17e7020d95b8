#include "machine/i486/pic.h"

namespace citcat::machine {

void Pic8259::Write(int a0, uint8_t value) {
  if (a0 == 0) {
    if (value & 0x10) return Icw1(value);
    if (value & 0x08) return Ocw3(value);
    return Ocw2(value);
  }
  switch (init_step_) {
    case 2:
      icw2_ = value;
      init_step_ = !single_ ? 3 : icw4_needed_ ? 4 : 0;
      initialized_ = init_step_ == 0;
      return;
    case 3:
      icw3_ = value;
      init_step_ = icw4_needed_ ? 4 : 0;
      initialized_ = init_step_ == 0;
      return;
    case 4:
      // uPM (bit 0) is taken as set: the MCS-80/85 CALL sequence is not modelled. BUF and M/S
      // (bits 2-3) only steer the chip's buffer pins.
      aeoi_ = value & 0x02;
      sfnm_ = value & 0x10;
      init_step_ = 0;
      initialized_ = true;
      return;
  }
  imr_ = value;  // OCW1
}

// ICW1 starts the initialisation over: the edge-sense latches, IMR, ISR and the priority rotation
// are reset, special mask mode ends, reads return IRR, and without IC4 the ICW4 features are off.
void Pic8259::Icw1(uint8_t value) {
  ltim_ = value & 0x08;
  single_ = value & 0x02;
  icw4_needed_ = value & 0x01;
  edges_ = 0;
  imr_ = isr_ = 0;
  lowest_ = 7;
  special_mask_ = read_isr_ = poll_ = false;
  rotate_in_aeoi_ = false;
  aeoi_ = sfnm_ = false;
  init_step_ = 2;
}

void Pic8259::Ocw2(uint8_t value) {
  const int level = value & 7;
  switch (value >> 5) {
    case 1:  // non-specific EOI
      Eoi(Highest(isr_), false);
      break;
    case 3:  // specific EOI
      Eoi(level, false);
      break;
    case 5:  // rotate on non-specific EOI
      Eoi(Highest(isr_), true);
      break;
    case 7:  // rotate on specific EOI
      Eoi(level, true);
      break;
    case 4:
      rotate_in_aeoi_ = true;
      break;
    case 0:
      rotate_in_aeoi_ = false;
      break;
    case 6:  // set priority
      lowest_ = level;
      break;
  }
}

void Pic8259::Ocw3(uint8_t value) {
  if (value & 0x40) special_mask_ = value & 0x20;
  if (value & 0x04) poll_ = true;
  if (value & 0x02) read_isr_ = value & 0x01;
}

void Pic8259::Eoi(int level, bool rotate) {
  if (level < 0) return;
  isr_ &= ~(1u << level);
  if (rotate) lowest_ = level;
}

uint8_t Pic8259::Read(int a0) {
  if (a0 == 1) return imr_;
  if (poll_) {
    // The poll word: the read acts as an interrupt acknowledge.
    poll_ = false;
    int level = BeginAck();
    if (level < 0) return 0;
    EndAck(level);
    return static_cast<uint8_t>(0x80 | level);
  }
  return read_isr_ ? isr_ : irr();
}

void Pic8259::SetLine(int level, bool high) {
  const uint8_t bit = static_cast<uint8_t>(1u << level);
  if (high) {
    if (!(lines_ & bit)) edges_ |= bit;
    lines_ |= bit;
  } else {
    // A request withdrawn before its acknowledge is lost, in either trigger mode.
    lines_ &= ~bit;
    edges_ &= ~bit;
  }
}

int Pic8259::Highest(uint8_t bits) const {
  int best = -1;
  for (int level = 0; level < 8; ++level) {
    if ((bits >> level & 1) && (best < 0 || Rank(level) < Rank(best))) best = level;
  }
  return best;
}

// The request the chip would acknowledge now: the highest-priority unmasked one, if it beats the
// highest level in service. In special mask mode masked levels do not count as in service; in
// special fully nested mode a master lets its in-service slave's further requests through.
int Pic8259::Pending() const {
  const int request = Highest(irr() & ~imr_);
  if (request < 0) return -1;
  const int serving = Highest(special_mask_ ? isr_ & ~imr_ : isr_);
  if (serving < 0 || Rank(request) < Rank(serving)) return request;
  if (sfnm_ && request == serving && Cascade(request)) return request;
  return -1;
}

int Pic8259::BeginAck() {
  const int level = Pending();
  if (level < 0) return -1;
  isr_ |= static_cast<uint8_t>(1u << level);
  edges_ &= ~(1u << level);
  return level;
}

void Pic8259::EndAck(int level) {
  if (level < 0 || !aeoi_) return;
  isr_ &= ~(1u << level);
  if (rotate_in_aeoi_) lowest_ = level;
}

void PicPair::Write(uint16_t port, uint8_t value) {
  if (port & 0x80) {
    slave_.Write(port & 1, value);
  } else {
    master_.Write(port & 1, value);
  }
  Cascade();
}

uint8_t PicPair::Read(uint16_t port) {
  uint8_t value = (port & 0x80) ? slave_.Read(port & 1) : master_.Read(port & 1);
  Cascade();  // a poll acknowledges
  return value;
}

void PicPair::SetIrq(int irq, bool high) {
  if (irq == 2) return;
  if (irq < 8) {
    master_.SetLine(irq, high);
  } else {
    slave_.SetLine(irq - 8, high);
    Cascade();
  }
}

uint8_t PicPair::Acknowledge() {
  const int level = master_.BeginAck();
  uint8_t vector;
  if (level < 0) {
    vector = master_.Vector(7);
  } else if (master_.Cascade(level)) {
    // The slave answers the second pulse; with no request left it is the slave's spurious IR7.
    const int slave_level = slave_.BeginAck();
    vector = slave_.Vector(slave_level < 0 ? 7 : slave_level);
    slave_.EndAck(slave_level);
  } else {
    vector = master_.Vector(level);
  }
  master_.EndAck(level);
  Cascade();
  return vector;
}

}  // namespace citcat::machine
