#include "machine/i486/cmos.h"

#include <algorithm>
#include <utility>

namespace citcat::machine {
namespace {

constexpr uint64_t kSecond = 1'000'000;
constexpr uint64_t kUipLead = 244;  // UIP rises this many microseconds before an update

enum Register {
  kSeconds = 0x00,
  kSecondsAlarm = 0x01,
  kMinutes = 0x02,
  kMinutesAlarm = 0x03,
  kHours = 0x04,
  kHoursAlarm = 0x05,
  kWeekday = 0x06,
  kDay = 0x07,
  kMonth = 0x08,
  kYear = 0x09,
  kRegA = 0x0A,
  kRegB = 0x0B,
  kRegC = 0x0C,
  kRegD = 0x0D,
  kCentury = 0x32,
};
constexpr uint8_t kPf = 0x40, kAf = 0x20, kUf = 0x10;
constexpr uint8_t kPie = 0x40, kAie = 0x20, kUie = 0x10, kBinary = 0x04, kHours24 = 0x02;

// 32.768 kHz time-base ticks before `us`.
uint64_t TimeBase(uint64_t us) { return us * 32768 / kSecond; }

int DaysIn(int month, int year) {
  if (month == 2) return (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28;
  return (month == 4 || month == 6 || month == 9 || month == 11) ? 30 : 31;
}

void Store16(std::array<uint8_t, 128>& ram, int index, uint64_t value) {
  value = std::min<uint64_t>(value, 0xFFFF);
  ram[index] = static_cast<uint8_t>(value);
  ram[index + 1] = static_cast<uint8_t>(value >> 8);
}

}  // namespace

Cmos::Cmos(uint64_t boot_seconds, uint64_t memory_bytes)
    : time_(FromSeconds(boot_seconds)), next_update_us_(kSecond) {
  // The memory and equipment bytes a PC BIOS keeps here, with their checksum.
  ram_[0x14] = 0x02;  // a maths coprocessor, no floppy drives, a VGA
  Store16(ram_, 0x15, 640);
  const uint64_t extended_kb = memory_bytes > (1u << 20) ? (memory_bytes - (1u << 20)) / 1024 : 0;
  Store16(ram_, 0x17, extended_kb);
  Store16(ram_, 0x30, extended_kb);
  Store16(ram_, 0x34, memory_bytes > (16u << 20) ? (memory_bytes - (16u << 20)) >> 16 : 0);
  unsigned sum = 0;
  for (int i = 0x10; i <= 0x2D; ++i) sum += ram_[i];
  ram_[0x2E] = static_cast<uint8_t>(sum >> 8);
  ram_[0x2F] = static_cast<uint8_t>(sum);
}

Cmos::Time Cmos::FromSeconds(uint64_t seconds) {
  const int64_t days = static_cast<int64_t>(seconds / 86400);
  const int64_t rest = static_cast<int64_t>(seconds % 86400);
  // Days since 1970-01-01 to a Gregorian date (the civil_from_days method).
  const int64_t z = days + 719468;
  const int64_t era = z / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  const int year = static_cast<int>(yoe + era * 400 + (month <= 2));
  Time t;
  t.second = static_cast<int>(rest % 60);
  t.minute = static_cast<int>(rest / 60 % 60);
  t.hour = static_cast<int>(rest / 3600);
  t.weekday = static_cast<int>((days + 4) % 7) + 1;  // 1970-01-01 was a Thursday
  t.day = day;
  t.month = month;
  t.year = year % 100;
  t.century = year / 100;
  return t;
}

// One second on, as the chip's update cycle counts: out-of-range values written by the guest roll
// over at the next boundary they reach.
void Cmos::NextSecond(Time& t) {
  if (++t.second < 60) return;
  t.second = 0;
  if (++t.minute < 60) return;
  t.minute = 0;
  if (++t.hour < 24) return;
  t.hour = 0;
  t.weekday = t.weekday % 7 + 1;
  if (++t.day <= DaysIn(t.month, t.century * 100 + t.year)) return;
  t.day = 1;
  if (++t.month <= 12) return;
  t.month = 1;
  if (++t.year < 100) return;
  t.year = 0;
  ++t.century;
}

uint64_t Cmos::PeriodicTicks() const {
  const int rate = a_ & 0x0F;
  if (rate == 0) return 0;
  if (rate <= 2) return uint64_t{1} << (rate + 6);  // 1, 2: as 8 and 9 with this time base
  return uint64_t{1} << (rate - 1);
}

void Cmos::Advance(uint64_t us) {
  if (us <= now_us_) return;
  if (Running()) {
    const uint64_t period = PeriodicTicks();
    if (period != 0 && TimeBase(us) / period > TimeBase(now_us_) / period) flags_ |= kPf;
    for (; next_update_us_ <= us; next_update_us_ += kSecond) {
      if (Set()) continue;  // SET holds the time registers
      NextSecond(time_);
      flags_ |= kUf;
      if (AlarmMatches()) flags_ |= kAf;
    }
  }
  now_us_ = us;
}

bool Cmos::Irq(uint64_t us) {
  Advance(us);
  return ((flags_ & kPf) && (b_ & kPie)) || ((flags_ & kAf) && (b_ & kAie)) ||
         ((flags_ & kUf) && (b_ & kUie));
}

uint64_t Cmos::NextIrq(uint64_t us) {
  if (Irq(us) || !Running()) return kNever;
  uint64_t next = kNever;
  const uint64_t period = PeriodicTicks();
  if ((b_ & kPie) && period != 0) {
    const uint64_t boundary = (TimeBase(us) / period + 1) * period;
    next = (boundary * kSecond + 32767) / 32768;
  }
  if ((b_ & (kAie | kUie)) && !Set()) next = std::min(next, next_update_us_);
  return next;
}

uint8_t Cmos::Encode(int value) const {
  if (b_ & kBinary) return static_cast<uint8_t>(value);
  return static_cast<uint8_t>((value / 10 % 10) << 4 | value % 10);
}

int Cmos::Decode(uint8_t value) const {
  if (b_ & kBinary) return value;
  return (value >> 4) * 10 + (value & 0x0F);
}

uint8_t Cmos::EncodeHour(int hour) const {
  if (b_ & kHours24) return Encode(hour);
  const int twelve = hour % 12 == 0 ? 12 : hour % 12;
  return static_cast<uint8_t>(Encode(twelve) | (hour >= 12 ? 0x80 : 0));
}

int Cmos::DecodeHour(uint8_t value) const {
  if (b_ & kHours24) return Decode(value);
  return Decode(value & 0x7F) % 12 + ((value & 0x80) ? 12 : 0);
}

// Each alarm byte matches its time byte as read, or anything when its two top bits are set.
bool Cmos::AlarmMatches() const {
  const std::pair<int, uint8_t> alarms[] = {{kSecondsAlarm, Encode(time_.second)},
                                            {kMinutesAlarm, Encode(time_.minute)},
                                            {kHoursAlarm, EncodeHour(time_.hour)}};
  for (const auto& [index, now] : alarms) {
    const uint8_t alarm = ram_[index];
    if ((alarm & 0xC0) != 0xC0 && alarm != now) return false;
  }
  return true;
}

void Cmos::Write(int port, uint8_t value, uint64_t us) {
  if (port == 0) {
    index_ = value & 0x7F;
    nmi_disabled_ = value & 0x80;
    return;
  }
  Advance(us);
  WriteRegister(index_, value, us);
}

uint8_t Cmos::Read(int port, uint64_t us) {
  if (port == 0) return 0xFF;  // the index register cannot be read
  Advance(us);
  return ReadRegister(index_, us);
}

void Cmos::WriteRegister(int index, uint8_t value, uint64_t us) {
  switch (index) {
    case kSeconds:
      time_.second = Decode(value);
      return;
    case kMinutes:
      time_.minute = Decode(value);
      return;
    case kHours:
      time_.hour = DecodeHour(value);
      return;
    case kWeekday:
      time_.weekday = Decode(value);
      return;
    case kDay:
      time_.day = Decode(value);
      return;
    case kMonth:
      time_.month = Decode(value);
      return;
    case kYear:
      time_.year = Decode(value);
      return;
    case kCentury:
      time_.century = Decode(value);
      return;
    case kRegA: {
      const bool was_running = Running();
      a_ = value & 0x7F;  // UIP is read-only
      // A divider leaving reset makes the first update half a second later.
      if (!was_running && Running()) next_update_us_ = us + kSecond / 2;
      return;
    }
    case kRegB: {
      const bool was_set = Set();
      b_ = value;
      if (Set()) b_ &= ~kUie;  // SET clears UIE
      if (was_set && !Set()) next_update_us_ = us + kSecond;
      return;
    }
    case kRegC:
    case kRegD:
      return;  // read-only
  }
  ram_[index] = value;
}

uint8_t Cmos::ReadRegister(int index, uint64_t us) {
  switch (index) {
    case kSeconds:
      return Encode(time_.second);
    case kMinutes:
      return Encode(time_.minute);
    case kHours:
      return EncodeHour(time_.hour);
    case kWeekday:
      return Encode(time_.weekday);
    case kDay:
      return Encode(time_.day);
    case kMonth:
      return Encode(time_.month);
    case kYear:
      return Encode(time_.year);
    case kCentury:
      return Encode(time_.century);
    case kRegA: {
      const bool uip = Running() && !Set() && next_update_us_ - us <= kUipLead;
      return static_cast<uint8_t>(a_ | (uip ? 0x80 : 0));
    }
    case kRegB:
      return b_;
    case kRegC: {
      const uint8_t value = static_cast<uint8_t>(flags_ | (Irq(us) ? 0x80 : 0));
      flags_ = 0;  // reading C clears the flags and IRQF
      return value;
    }
    case kRegD:
      return 0x80;  // VRT: the RAM and time are valid
  }
  return ram_[index];
}

}  // namespace citcat::machine
