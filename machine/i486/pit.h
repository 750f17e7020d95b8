// The PC's Intel 8254 programmable interval timer at ports 40h-43h, and system control port B
// (61h: channel 2's gate, its output and the refresh toggle). Time is the timer's input clock,
// counted in ticks (1.193182 MHz, from the outside world); every call says which tick it is, and
// ticks never go back (docs/machines/i486-system.md, "Interval timer").
#ifndef CITCAT_MACHINE_I486_PIT_H_
#define CITCAT_MACHINE_I486_PIT_H_

#include <array>
#include <cstdint>
#include <limits>

namespace citcat::machine {

class Pit8254 {
 public:
  static constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

  // At power-on every channel is as after a control word for mode 2, low byte then high byte,
  // binary, with no count written; channel 2's GATE (port 61h bit 0) is low.
  Pit8254() { ch_[2].gate = false; }

  // Ports 40h-43h (`index` 0-3) at input-clock tick `tick`.
  void Write(int index, uint8_t value, uint64_t tick);
  uint8_t Read(int index, uint64_t tick);
  // Channel `channel`'s GATE input. Channels 0 and 1 have theirs tied high on a PC.
  void SetGate(int channel, bool high, uint64_t tick);
  bool Out(int channel, uint64_t tick);
  // The first tick after `tick` at which OUT of `channel` changes, or kNever.
  uint64_t NextChange(int channel, uint64_t tick);

  // Port 61h.
  void WritePortB(uint8_t value, uint64_t tick);
  uint8_t ReadPortB(uint64_t tick);

 private:
  struct Channel {
    int mode = 2;
    int access = 3;  // 1: low byte, 2: high byte, 3: low then high
    bool bcd = false;
    bool gate = true;
    // The count in use (1 to 65536, or 10000 in BCD) and whether the counting element holds it:
    // it was loaded at tick `start` (the clock pulse after the count was written, or after a
    // trigger) and has counted `elapsed` pulses plus, unless paused (modes 0 and 4 while GATE is
    // low), those since `start`.
    uint32_t count = 0;
    bool armed = false;
    uint64_t start = 0;
    uint64_t elapsed = 0;
    bool paused = false;
    // Modes 2 and 3: a count written while counting, loaded at tick `pending_at`.
    bool pending = false;
    uint32_t pending_count = 0;
    uint64_t pending_at = 0;
    // Modes 1 and 5: the count the next trigger loads, and whether one was written since.
    uint32_t next_count = 0;
    bool waiting_trigger = false;
    // Access flip-flops and the output latch (counter latch and read-back).
    bool write_high_next = false;
    uint8_t low_written = 0;
    bool read_high_next = false;
    int latched_bytes = 0;  // count bytes still to read from `latch`
    uint16_t latch = 0;
    bool status_latched = false;
    uint8_t status = 0;
  };

  void ControlWord(uint8_t value, uint64_t tick);
  void ReadBack(uint8_t value, uint64_t tick);
  void WriteCount(Channel& c, uint8_t value, uint64_t tick);
  void LoadCount(Channel& c, uint32_t count, uint64_t tick);
  void Latch(Channel& c, uint64_t tick);
  uint8_t Status(int channel, uint64_t tick);
  // Applies a pending count whose time has come.
  static void Settle(Channel& c, uint64_t tick);
  static void Pause(Channel& c, uint64_t tick);
  static void Resume(Channel& c, uint64_t tick);
  // Pulses counted since the count was loaded, or -1 before it is.
  static int64_t Counted(const Channel& c, uint64_t tick);
  // OUT after `e` pulses counted (-1: before the count is loaded).
  static bool OutAfter(const Channel& c, int64_t e);
  // The counting element's value, 0 to 65535 (9999 in BCD).
  static uint32_t Element(const Channel& c, uint64_t tick);
  // Mode 3's high half: N/2 pulses for an even count, (N+1)/2 for an odd one.
  static uint32_t HighPulses(const Channel& c) { return (c.count + 1) / 2; }
  static uint32_t Modulus(const Channel& c) { return c.bcd ? 10000 : 65536; }

  std::array<Channel, 3> ch_;
  uint8_t port_b_ = 0;  // bits 0-3 as written
};

}  // namespace citcat::machine

#endif  // CITCAT_MACHINE_I486_PIT_H_
