// The outside world of the traced R4400 system: everything a real computer takes from its
// surroundings, drawn from a seed so that a capture is reproducible. Time is measured in retired
// instructions.
//
// Count runs at about one tick per two instructions, with jitter: every period of 1024
// instructions advances it by 512 plus a random amount, spread evenly over the period. Count is
// therefore not a function of the instruction stream (replay must take it from the trace), but it
// is a function of the retired-instruction count alone, so the schedule does not depend on how a
// run is cut into slices. Device values and delays come from a second generator, drawn in the
// order the guest asks for them.
#ifndef CITCAT_MACHINE_R4400_WORLD_H_
#define CITCAT_MACHINE_R4400_WORLD_H_

#include <cstdint>
#include <deque>
#include <random>

namespace citcat::machine {

class World {
 public:
  explicit World(uint64_t seed)
      : clock_rng_(seed ^ 0x9E3779B97F4A7C15ull), device_rng_(seed ^ 0xC2B2AE3D27D4EB4Full) {}

  // Count (64 bits; the register holds the low 32) after `retired` instructions.
  uint64_t Count(uint64_t retired) {
    const Period& p = PeriodOf(retired);
    return p.start + (retired - p.first) * p.ticks / kPeriod + offset_;
  }
  // The first retired-instruction count, not before `retired`, at which Count reaches `target`;
  // or a point at least kFar instructions ahead when that is far away.
  uint64_t WhenCountReaches(uint64_t retired, uint64_t target);
  // The guest wrote Count: from here on Count continues from `value`.
  void SetCount(uint64_t retired, uint32_t value) {
    uint64_t now = Count(retired);
    offset_ += ((now & ~uint64_t{0xFFFFFFFF}) | value) - now;
  }
  // Forgets the periods before `retired` (it never goes back).
  void Forget(uint64_t retired) {
    while (periods_.size() > 1 && periods_[1].first <= retired) periods_.pop_front();
  }

  // Wall clock in microseconds: Count runs at 50 MHz.
  uint32_t Microseconds(uint64_t retired) { return static_cast<uint32_t>(Count(retired) / 50); }
  uint32_t Entropy() { return static_cast<uint32_t>(device_rng_()); }
  // Instructions until a disk controller step: the first DMA block of a command (seek and
  // rotation), or a following block or the completion.
  uint64_t DiskDelay(bool first) {
    return first ? 3000 + device_rng_() % 30000 : 200 + device_rng_() % 2000;
  }

  static constexpr uint64_t kFar = 1 << 20;

 private:
  static constexpr uint64_t kPeriod = 1024;
  struct Period {
    uint64_t first;  // the retired count where it starts
    uint64_t start;  // Count at its start, before offset_
    uint64_t ticks;  // Count advance over the period
  };
  const Period& PeriodOf(uint64_t retired) {
    while (periods_.back().first + kPeriod <= retired) Extend();
    for (const Period& p : periods_) {
      if (retired < p.first + kPeriod) return p;
    }
    return periods_.back();
  }
  void Extend() {
    const Period& last = periods_.back();
    periods_.push_back({last.first + kPeriod, last.start + last.ticks, NextTicks()});
  }
  uint64_t NextTicks() { return kPeriod / 2 + clock_rng_() % (kPeriod / 16 + 1); }

  std::mt19937_64 clock_rng_;  // fully specified by the C++ standard: the same everywhere
  std::mt19937_64 device_rng_;
  std::deque<Period> periods_ = {{0, 0, NextTicks()}};
  uint64_t offset_ = 0;  // what guest writes of Count added
};

inline uint64_t World::WhenCountReaches(uint64_t retired, uint64_t target) {
  if (Count(retired) >= target) return retired;
  if (target - Count(retired) > kFar / 2) return retired + kFar;
  PeriodOf(retired);
  for (size_t i = 0;; ++i) {
    if (i == periods_.size()) Extend();
    const Period& p = periods_[i];
    uint64_t end = p.start + p.ticks + offset_;
    if (p.first + kPeriod <= retired || end < target) continue;
    // Inside this period: the smallest r with start + (r - first) * ticks / kPeriod >= target.
    uint64_t need = target - (p.start + offset_);
    uint64_t r = p.first + (need * kPeriod + p.ticks - 1) / p.ticks;
    return r < retired ? retired : r;
  }
}

}  // namespace citcat::machine

#endif  // CITCAT_MACHINE_R4400_WORLD_H_
