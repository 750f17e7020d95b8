// The PC's interrupt controllers: two Intel 8259A PICs in 8086 mode, the slave's INT output on the
// master's IR2 (docs/machines/i486-system.md, "Interrupt controllers").
#ifndef CITCAT_MACHINE_I486_PIC_H_
#define CITCAT_MACHINE_I486_PIC_H_

#include <cstdint>

namespace citcat::machine {

// One 8259A. Lines are levels; what a request is depends on the trigger mode (ICW1.LTIM): in edge
// mode a rising edge latches it and it stays until acknowledged or until the line falls again; in
// level mode the request is the line.
class Pic8259 {
 public:
  explicit Pic8259(bool master) : master_(master) {}

  // A write to the port with A0 = `a0` (the master's 20h/21h, the slave's A0h/A1h).
  void Write(int a0, uint8_t value);
  // A read: IRR or ISR (OCW3) at A0 = 0, IMR at A0 = 1; after a poll command, the poll word.
  uint8_t Read(int a0);
  void SetLine(int level, bool high);

  // The INT output: an unmasked request of higher priority than every level in service. From
  // power-on until its first initialisation sequence ends the chip asserts nothing: its state is
  // undefined until ICW1 (8259A data sheet, "Initialization Command Words"), and the PC's BIOS
  // initialises it before it enables interrupts. Bochs models the same.
  bool Int() const { return initialized_ && Pending() >= 0; }
  // The first INTA pulse: the level acknowledged (its ISR bit set, its request cleared), or -1
  // when no request is left (a spurious interrupt: IR7's vector, no ISR bit).
  int BeginAck();
  // The second INTA pulse: the automatic EOI (ICW4.AEOI) of the level BeginAck returned.
  void EndAck(int level);
  // The vector the chip puts on the bus for `level`: ICW2's T7-T3 and the level.
  uint8_t Vector(int level) const { return static_cast<uint8_t>((icw2_ & 0xF8) | level); }
  // Whether `level` has a slave on it (a master in cascade mode, ICW3).
  bool Cascade(int level) const { return master_ && !single_ && (icw3_ >> level & 1); }

  uint8_t irr() const { return ltim_ ? lines_ : edges_; }
  uint8_t isr() const { return isr_; }
  uint8_t imr() const { return imr_; }

 private:
  void Icw1(uint8_t value);
  void Ocw2(uint8_t value);
  void Ocw3(uint8_t value);
  int Pending() const;
  // Priority rank of `level`: 0 is the highest (the level after the lowest-priority one).
  int Rank(int level) const { return (level - lowest_ - 1) & 7; }
  // The level of highest priority among `bits`, or -1.
  int Highest(uint8_t bits) const;
  void Eoi(int level, bool rotate);

  bool master_;
  uint8_t lines_ = 0;  // input levels
  uint8_t edges_ = 0;  // edge-mode requests
  uint8_t isr_ = 0, imr_ = 0;
  uint8_t icw2_ = 0, icw3_ = 0;
  int lowest_ = 7;  // the level of lowest priority (OCW2 rotation)
  bool ltim_ = false, single_ = false, icw4_needed_ = false;
  bool aeoi_ = false, sfnm_ = false, rotate_in_aeoi_ = false;
  bool special_mask_ = false, read_isr_ = false, poll_ = false;
  int init_step_ = 0;         // 0: ready; 2, 3, 4: the ICW expected next
  bool initialized_ = false;  // an initialisation sequence has ended since power-on
};

// The cascaded pair at ports 20h-21h (master, IRQ 0-7) and A0h-A1h (slave, IRQ 8-15).
class PicPair {
 public:
  PicPair() : master_(true), slave_(false) {}

  // `port`: 20h, 21h, A0h or A1h.
  void Write(uint16_t port, uint8_t value);
  uint8_t Read(uint16_t port);
  // IRQ line `irq` (0-15) of a device. IRQ 2 is the cascade: no device drives it.
  void SetIrq(int irq, bool high);
  // The master's INT output: the processor's INTR line.
  bool Intr() const { return master_.Int(); }
  // The interrupt acknowledge cycle (both INTA pulses): the vector put on the bus.
  uint8_t Acknowledge();

  const Pic8259& master() const { return master_; }
  const Pic8259& slave() const { return slave_; }

 private:
  void Cascade() { master_.SetLine(2, slave_.Int()); }

  Pic8259 master_, slave_;
};

}  // namespace citcat::machine

#endif  // CITCAT_MACHINE_I486_PIC_H_
