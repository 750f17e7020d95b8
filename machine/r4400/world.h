// The outside world of the traced R4400 system: everything a real computer takes from its
// surroundings, drawn from one seeded generator so that a capture is reproducible. Time is
// measured in retired instructions; Count runs at about one tick per two instructions with
// jitter, so it is not a function of the instruction stream (replay must take it from the trace).
#ifndef CITCAT_MACHINE_R4400_WORLD_H_
#define CITCAT_MACHINE_R4400_WORLD_H_

#include <cstdint>
#include <random>

namespace citcat::machine {

class World {
 public:
  explicit World(uint64_t seed) : rng_(seed ^ 0x9E3779B97F4A7C15ull) {}

  // Moves the world to `retired` instructions, adding the clock's jitter for the time passed.
  void Advance(uint64_t retired) {
    uint64_t passed = retired - now_;
    count_base_ += passed / 2 + (passed >= 16 ? Draw(passed / 16 + 1) : 0);
    now_ = retired;
  }
  uint64_t Now() const { return now_; }

  // Count (64 bits; the register holds the low 32) at `retired` instructions, never decreasing.
  uint64_t Count(uint64_t retired) const { return count_base_ + (retired - now_) / 2; }
  void SetCount(uint64_t retired, uint32_t value) {
    Advance(retired);
    count_base_ = (count_base_ & ~uint64_t{0xFFFFFFFF}) | value;
  }
  // Instructions from now until Count reaches `target` at the latest (jitter only brings it sooner).
  uint64_t InstructionsUntilCount(uint64_t retired, uint64_t target) const {
    uint64_t count = Count(retired);
    return target > count ? (target - count) * 2 : 1;
  }

  // Wall clock in microseconds: Count runs at 50 MHz.
  uint32_t Microseconds() const { return static_cast<uint32_t>(count_base_ / 50); }
  uint32_t Entropy() { return static_cast<uint32_t>(rng_()); }

  // Instructions until a disk controller step: the first DMA block of a command (seek and
  // rotation), or a following block or the completion.
  uint64_t DiskDelay(bool first) { return first ? 3000 + Draw(30000) : 200 + Draw(2000); }

 private:
  uint64_t Draw(uint64_t bound) { return rng_() % bound; }

  std::mt19937_64 rng_;  // fully specified by the C++ standard: the same stream everywhere
  uint64_t now_ = 0;
  uint64_t count_base_ = 0;
};

}  // namespace citcat::machine

#endif  // CITCAT_MACHINE_R4400_WORLD_H_
