// The outside world of a traced machine: everything a real computer takes from its surroundings,
// drawn from a seed so that a capture is reproducible. Both traced systems use it, each with its
// own clock rate (docs/machines/r4400-system.md, docs/machines/i486-system.md).
//
// Time is measured in instruction times: every retired instruction is one (a machine that lets
// its processor halt adds the time it skips while halted). The world's clock (the R4400's Count,
// the PC's 1.193182 MHz timer input) advances with jitter: every period of `ClockRate::period`
// instruction times adds `min_ticks` plus a random amount up to `spread`, spread evenly over the
// period. The clock is therefore not a function of the instruction stream (replay must take what
// it drives from the trace), but it is a function of the instruction-time count alone, so the
// schedule does not depend on how a run is cut into slices. Device values and delays come from a
// second generator, drawn in the order the guest asks for them; the wall clock at power-on from a
// third.
#ifndef CITCAT_MACHINE_WORLD_H_
#define CITCAT_MACHINE_WORLD_H_

#include <cstdint>
#include <deque>
#include <random>

namespace citcat::machine {

// How fast a world's clock runs against instruction times.
struct ClockRate {
  uint64_t period;     // instruction times per period
  uint64_t min_ticks;  // ticks per period: min_ticks plus a draw in [0, spread]
  uint64_t spread;
  uint64_t ticks_per_second;  // the clock's nominal frequency, for the wall clock
};

// The R4400's Count: about one tick per two instructions (512 to 576 per 1024), read as 50 MHz.
inline constexpr ClockRate kR4400CountRate = {1024, 512, 64, 50'000'000};
// The PC's timer input, 1.193182 MHz, against a 33 MHz i486 retiring one instruction per clock:
// 4096 x 1.193182 / 33 = 148.1 ticks per 4096 instructions; here 146 to 150 (mean 148).
inline constexpr ClockRate kPcTimerRate = {4096, 146, 4, 1'193'182};

class World {
 public:
  World(uint64_t seed, ClockRate rate)
      : rate_(rate),
        clock_rng_(seed ^ 0x9E3779B97F4A7C15ull),
        device_rng_(seed ^ 0xC2B2AE3D27D4EB4Full),
        boot_seconds_(BootSeconds(seed)) {
    periods_.push_back({0, 0, NextTicks()});
  }

  // The clock (64 bits) after `now` instruction times.
  uint64_t Ticks(uint64_t now) {
    const Period& p = PeriodOf(now);
    return p.start + (now - p.first) * p.ticks / rate_.period + offset_;
  }
  // The first instruction time, not before `now`, at which the clock reaches `target`; or a
  // point kFar instruction times ahead when that is further.
  uint64_t WhenTicksReach(uint64_t now, uint64_t target);
  // The guest set the clock's low 32 bits (MIPS Count): from here on it continues from `value`.
  void SetTicks(uint64_t now, uint32_t value) {
    uint64_t ticks = Ticks(now);
    offset_ += ((ticks & ~uint64_t{0xFFFFFFFF}) | value) - ticks;
  }
  // Forgets the periods before `now` (time never goes back).
  void Forget(uint64_t now) {
    while (periods_.size() > 1 && periods_[1].first <= now) periods_.pop_front();
  }

  // Microseconds since power-on, from the clock at its nominal frequency (32 bits, wrapping).
  uint32_t Microseconds(uint64_t now) { return static_cast<uint32_t>(MicrosecondsSinceBoot(now)); }
  uint64_t MicrosecondsSinceBoot(uint64_t now) {
    uint64_t t = Ticks(now), hz = rate_.ticks_per_second;
    return t / hz * 1'000'000 + t % hz * 1'000'000 / hz;
  }
  // The first instruction time, not before `now`, at which MicrosecondsSinceBoot reaches `us`
  // (or kFar ahead, as WhenTicksReach).
  uint64_t WhenMicrosecondsReach(uint64_t now, uint64_t us) {
    const unsigned __int128 scaled = static_cast<unsigned __int128>(us) * rate_.ticks_per_second;
    return WhenTicksReach(now, static_cast<uint64_t>((scaled + 999'999) / 1'000'000));
  }
  // The wall clock at power-on: seconds since 1970-01-01 00:00:00 UTC, somewhere in 2000-2024.
  uint64_t boot_seconds() const { return boot_seconds_; }
  uint32_t Entropy() { return static_cast<uint32_t>(device_rng_()); }
  // Instruction times until a disk step: the first block of a command (seek and rotation), or a
  // following block or the completion.
  uint64_t DiskDelay(bool first) {
    return first ? 3000 + device_rng_() % 30000 : 200 + device_rng_() % 2000;
  }

  static constexpr uint64_t kFar = 1 << 20;

 private:
  struct Period {
    uint64_t first;  // the instruction time where it starts
    uint64_t start;  // the clock at its start, before offset_
    uint64_t ticks;  // the clock's advance over the period
  };
  const Period& PeriodOf(uint64_t now) {
    while (periods_.back().first + rate_.period <= now) Extend();
    for (const Period& p : periods_) {
      if (now < p.first + rate_.period) return p;
    }
    return periods_.back();
  }
  void Extend() {
    const Period& last = periods_.back();
    periods_.push_back({last.first + rate_.period, last.start + last.ticks, NextTicks()});
  }
  uint64_t NextTicks() { return rate_.min_ticks + clock_rng_() % (rate_.spread + 1); }
  static uint64_t BootSeconds(uint64_t seed) {
    constexpr uint64_t k2000 = 946'684'800;  // 2000-01-01 00:00:00 UTC
    constexpr uint64_t k25Years = 25 * 365 * 86'400ull;
    std::mt19937_64 rng(seed ^ 0x165667B19E3779F9ull);
    return k2000 + rng() % k25Years;
  }

  ClockRate rate_;
  std::mt19937_64 clock_rng_;  // fully specified by the C++ standard: the same everywhere
  std::mt19937_64 device_rng_;
  uint64_t boot_seconds_;
  std::deque<Period> periods_;
  uint64_t offset_ = 0;  // what guest writes of the clock added
};

inline uint64_t World::WhenTicksReach(uint64_t now, uint64_t target) {
  if (Ticks(now) >= target) return now;
  // The fewest ticks kFar instruction times can bring: beyond them, answer kFar.
  if (target - Ticks(now) > kFar * rate_.min_ticks / rate_.period) return now + kFar;
  PeriodOf(now);
  for (size_t i = 0;; ++i) {
    if (i == periods_.size()) Extend();
    const Period& p = periods_[i];
    uint64_t end = p.start + p.ticks + offset_;
    if (p.first + rate_.period <= now || end < target) continue;
    // Inside this period: the smallest t with start + (t - first) * ticks / period >= target.
    uint64_t need = target - (p.start + offset_);
    uint64_t t = p.first + (need * rate_.period + p.ticks - 1) / p.ticks;
    return t < now ? now : t;
  }
}

}  // namespace citcat::machine

#endif  // CITCAT_MACHINE_WORLD_H_
