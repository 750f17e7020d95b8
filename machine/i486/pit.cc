#include "machine/i486/pit.h"

namespace citcat::machine {
namespace {

uint32_t FromBcd(uint32_t v) {
  return (v >> 12 & 15) * 1000 + (v >> 8 & 15) * 100 + (v >> 4 & 15) * 10 + (v & 15);
}
uint32_t ToBcd(uint32_t v) {
  return (v / 1000 % 10) << 12 | (v / 100 % 10) << 8 | (v / 10 % 10) << 4 | v % 10;
}

// Refresh requests toggle port 61h bit 4 every 15.08 us: 18 input-clock ticks.
constexpr uint64_t kRefreshTicks = 18;

}  // namespace

void Pit8254::Write(int index, uint8_t value, uint64_t tick) {
  if (index == 3) return ControlWord(value, tick);
  Channel& c = ch_[index];
  Settle(c, tick);
  WriteCount(c, value, tick);
}

void Pit8254::ControlWord(uint8_t value, uint64_t tick) {
  const int select = value >> 6;
  if (select == 3) return ReadBack(value, tick);
  Channel& c = ch_[select];
  Settle(c, tick);
  const int access = value >> 4 & 3;
  if (access == 0) return Latch(c, tick);  // counter latch command
  // A new mode: the channel waits for its count; OUT is low in mode 0 and high in the others.
  const int mode = value >> 1 & 7;
  c.mode = mode > 5 ? mode - 4 : mode;
  c.access = access;
  c.bcd = value & 1;
  c.armed = c.pending = c.waiting_trigger = false;
  c.paused = false;
  c.write_high_next = c.read_high_next = false;
  c.latched_bytes = 0;
  c.status_latched = false;
}

// Read-back: bit 5 clear latches the counts, bit 4 clear the status, of the counters in bits 1-3.
void Pit8254::ReadBack(uint8_t value, uint64_t tick) {
  for (int i = 0; i < 3; ++i) {
    if (!(value >> (i + 1) & 1)) continue;
    Channel& c = ch_[i];
    Settle(c, tick);
    if (!(value & 0x20)) Latch(c, tick);
    if (!(value & 0x10) && !c.status_latched) {
      c.status = Status(i, tick);
      c.status_latched = true;
    }
  }
}

void Pit8254::WriteCount(Channel& c, uint8_t value, uint64_t tick) {
  uint32_t raw;
  if (c.access == 1) {
    raw = value;
  } else if (c.access == 2) {
    raw = uint32_t{value} << 8;
  } else if (!c.write_high_next) {
    c.low_written = value;
    c.write_high_next = true;
    if (c.mode == 0) c.armed = false;  // the first byte stops mode 0 and sets OUT low
    return;
  } else {
    raw = c.low_written | uint32_t{value} << 8;
    c.write_high_next = false;
  }
  uint32_t count = c.bcd ? FromBcd(raw) : raw;
  if (count == 0) count = Modulus(c);
  LoadCount(c, count, tick);
}

void Pit8254::LoadCount(Channel& c, uint32_t count, uint64_t tick) {
  // An initial count of 1 is illegal in modes 2 and 3; it acts as 2 here.
  if ((c.mode == 2 || c.mode == 3) && count == 1) count = 2;
  if (c.mode == 1 || c.mode == 5) {
    c.next_count = count;  // loaded by the next trigger
    c.waiting_trigger = true;
    return;
  }
  const int64_t e = Counted(c, tick);
  if ((c.mode == 2 || c.mode == 3) && c.gate && e >= 0) {
    // Counting goes on; the new count is loaded at the end of the current cycle.
    c.pending = true;
    c.pending_count = count;
    c.pending_at = c.start + (static_cast<uint64_t>(e) / c.count + 1) * c.count;
    return;
  }
  c.count = count;
  c.armed = true;
  c.pending = false;
  c.start = tick + 1;
  c.elapsed = 0;
  c.paused = !c.gate;  // modes 0 and 4 hold the count; 2 and 3 reload when GATE rises
}

void Pit8254::Settle(Channel& c, uint64_t tick) {
  if (!c.pending || tick < c.pending_at) return;
  c.count = c.pending_count;
  c.start = c.pending_at;
  c.elapsed = 0;
  c.pending = false;
}

int64_t Pit8254::Counted(const Channel& c, uint64_t tick) {
  if (!c.armed || tick < c.start) return -1;
  return static_cast<int64_t>(c.elapsed + (c.paused ? 0 : tick - c.start));
}

void Pit8254::Pause(Channel& c, uint64_t tick) {
  if (c.paused) return;
  int64_t e = Counted(c, tick);
  c.elapsed = e < 0 ? 0 : static_cast<uint64_t>(e);
  c.paused = true;
}

void Pit8254::Resume(Channel& c, uint64_t tick) {
  if (!c.paused) return;
  if (tick >= c.start) c.start = tick;
  c.paused = false;
}

bool Pit8254::OutAfter(const Channel& c, int64_t e) {
  const int64_t n = c.count;
  switch (c.mode) {
    case 0:
      return e >= 0 && e >= n;
    case 1:
      return e < 0 || e >= n;
    case 2:
      return e < 0 || e % n != n - 1;
    case 3:
      return e < 0 || e % n < HighPulses(c);
    default:  // 4, 5
      return e != n;
  }
}

uint32_t Pit8254::Element(const Channel& c, uint64_t tick) {
  const int64_t e = Counted(c, tick);
  const int64_t m = Modulus(c), n = c.count;
  if (e < 0) return static_cast<uint32_t>(n % m);
  int64_t v;
  if (c.mode == 2) {
    v = n - e % n;
  } else if (c.mode == 3) {
    const int64_t p = e % n, high = HighPulses(c);
    if (n % 2 == 0) {
      v = n - 2 * (p % (n / 2));
    } else {
      v = n - 1 - 2 * (p < high ? p : p - high);
    }
  } else {
    v = n - e % m;
  }
  return static_cast<uint32_t>(((v % m) + m) % m);
}

void Pit8254::Latch(Channel& c, uint64_t tick) {
  if (c.latched_bytes != 0) return;  // a latched count stays until it is read
  uint32_t v = Element(c, tick);
  c.latch = static_cast<uint16_t>(c.bcd ? ToBcd(v) : v);
  c.latched_bytes = c.access == 3 ? 2 : 1;
}

uint8_t Pit8254::Status(int channel, uint64_t tick) {
  const Channel& c = ch_[channel];
  bool null_count;
  if (c.mode == 1 || c.mode == 5) {
    null_count = c.waiting_trigger || !c.armed;
  } else {
    null_count = c.pending || !c.armed || tick < c.start;
  }
  return static_cast<uint8_t>(Out(channel, tick) << 7 | null_count << 6 | c.access << 4 |
                              c.mode << 1 | c.bcd);
}

uint8_t Pit8254::Read(int index, uint64_t tick) {
  if (index == 3) return 0xFF;  // the control register cannot be read
  Channel& c = ch_[index];
  Settle(c, tick);
  if (c.status_latched) {
    c.status_latched = false;
    return c.status;
  }
  uint16_t v;
  bool high;
  if (c.latched_bytes != 0) {
    v = c.latch;
    high = c.access == 2 || (c.access == 3 && c.latched_bytes == 1);
    --c.latched_bytes;
  } else {
    uint32_t e = Element(c, tick);
    v = static_cast<uint16_t>(c.bcd ? ToBcd(e) : e);
    high = c.access == 2 || (c.access == 3 && c.read_high_next);
    if (c.access == 3) c.read_high_next = !c.read_high_next;
  }
  return static_cast<uint8_t>(high ? v >> 8 : v);
}

void Pit8254::SetGate(int channel, bool high, uint64_t tick) {
  Channel& c = ch_[channel];
  Settle(c, tick);
  if (c.gate == high) return;
  c.gate = high;
  switch (c.mode) {
    case 0:
    case 4:
      if (high) {
        Resume(c, tick);
      } else {
        Pause(c, tick);
      }
      return;
    case 2:
    case 3:
      if (!high) {
        Pause(c, tick);  // OUT goes high and counting stops
        return;
      }
      if (c.pending) {
        c.count = c.pending_count;
        c.pending = false;
      }
      if (c.armed) {  // a rising GATE reloads the count
        c.start = tick + 1;
        c.elapsed = 0;
        c.paused = false;
      }
      return;
    default:  // 1, 5: a rising GATE triggers
      if (high && (c.armed || c.waiting_trigger)) {
        if (c.waiting_trigger) c.count = c.next_count;
        c.waiting_trigger = false;
        c.armed = true;
        c.start = tick + 1;
        c.elapsed = 0;
        c.paused = false;
      }
  }
}

bool Pit8254::Out(int channel, uint64_t tick) {
  Channel& c = ch_[channel];
  Settle(c, tick);
  if ((c.mode == 2 || c.mode == 3) && !c.gate) return true;
  return OutAfter(c, Counted(c, tick));
}

uint64_t Pit8254::NextChange(int channel, uint64_t tick) {
  Channel& c = ch_[channel];
  Settle(c, tick);
  if (!c.armed || c.paused) return kNever;
  if ((c.mode == 2 || c.mode == 3) && !c.gate) return kNever;
  const int64_t e0 = Counted(c, tick);
  const bool out = OutAfter(c, e0);
  const int64_t n = c.count;
  // The first count of pulses after e0 at which OUT differs.
  int64_t e = e0 < 0 ? 0 : e0;
  int64_t change = -1;
  if (OutAfter(c, e) != out) {
    change = e;
  } else {
    switch (c.mode) {
      case 0:
      case 1:
        if (e < n) change = n;
        break;
      case 2:
        change = e % n < n - 1 ? e + (n - 1 - e % n) : e + 1;
        break;
      case 3: {
        const int64_t p = e % n, high = HighPulses(c);
        change = p < high ? e + (high - p) : e + (n - p);
        break;
      }
      default:  // 4, 5
        if (e < n) {
          change = n;
        } else if (e == n) {
          change = n + 1;
        }
    }
  }
  if (change < 0) return kNever;
  return c.start + static_cast<uint64_t>(change) - c.elapsed;
}

void Pit8254::WritePortB(uint8_t value, uint64_t tick) {
  port_b_ = value & 0x0F;
  SetGate(2, value & 1, tick);
}

// Bits 0-3 as written, 4 the refresh toggle, 5 channel 2's OUT; no parity errors (6-7).
uint8_t Pit8254::ReadPortB(uint64_t tick) {
  return static_cast<uint8_t>(port_b_ | (tick / kRefreshTicks & 1) << 4 | Out(2, tick) << 5);
}

}  // namespace citcat::machine
