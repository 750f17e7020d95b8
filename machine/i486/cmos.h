// The PC's real-time clock and CMOS RAM: a Motorola MC146818A at ports 70h (index) and 71h
// (data) on IRQ 8 (docs/machines/i486-system.md, "Real-time clock"). Its time starts at the
// outside world's wall clock at power-on and runs with the world's clock; every call says how many
// microseconds have passed since power-on, and that never goes back.
#ifndef CITCAT_MACHINE_I486_CMOS_H_
#define CITCAT_MACHINE_I486_CMOS_H_

#include <array>
#include <cstdint>
#include <limits>

namespace citcat::machine {

class Cmos {
 public:
  static constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

  // `boot_seconds`: the wall clock at power-on (seconds since 1970-01-01 00:00:00 UTC);
  // `memory_bytes`: what the memory-size bytes of the CMOS RAM report.
  Cmos(uint64_t boot_seconds, uint64_t memory_bytes);

  // Port 70h (`port` 0) or 71h (1), `us` microseconds after power-on.
  void Write(int port, uint8_t value, uint64_t us);
  uint8_t Read(int port, uint64_t us);
  // The IRQ 8 line: register C's IRQF.
  bool Irq(uint64_t us);
  // The first microsecond after `us` at which IRQF may rise, or kNever.
  uint64_t NextIrq(uint64_t us);
  bool nmi_disabled() const { return nmi_disabled_; }

 private:
  // The time registers, in binary and 24-hour form whatever register B says.
  struct Time {
    int second, minute, hour, weekday, day, month, year, century;  // weekday 1 = Sunday
  };
  static Time FromSeconds(uint64_t seconds);
  static void NextSecond(Time& t);
  // Brings the clock and the flags of register C up to `us`.
  void Advance(uint64_t us);
  bool Running() const { return (a_ & 0x70) == 0x20; }  // the divider runs at 32.768 kHz
  bool Set() const { return b_ & 0x80; }
  uint64_t PeriodicTicks() const;  // 32.768 kHz ticks per periodic interrupt, 0: off
  uint8_t Encode(int value) const;
  int Decode(uint8_t value) const;
  uint8_t EncodeHour(int hour) const;
  int DecodeHour(uint8_t value) const;
  bool AlarmMatches() const;
  uint8_t ReadRegister(int index, uint64_t us);
  void WriteRegister(int index, uint8_t value, uint64_t us);

  Time time_;
  std::array<uint8_t, 128> ram_{};           // the alarm bytes and the CMOS RAM; the rest is unused
  uint8_t a_ = 0x26, b_ = 0x02, flags_ = 0;  // flags_: register C's PF, AF, UF
  int index_ = 0;
  bool nmi_disabled_ = false;
  uint64_t now_us_ = 0;      // how far Advance has brought the clock
  uint64_t next_update_us_;  // the next second's update
};

}  // namespace citcat::machine

#endif  // CITCAT_MACHINE_I486_CMOS_H_
