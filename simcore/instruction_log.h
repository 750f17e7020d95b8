// The instructions a core starts, in order, as its observer would be told them (simcore/
// observer.h: the same ones, with the instructions retired before each, its PC and its bytes),
// written by the core's own run loops into a ring, with no call per instruction. For consumers
// that need no more than that (an archive's instruction checksum, the last instructions before a
// divergence), at a fraction of an observer's cost: the core keeps its fast paths.
#ifndef CITCAT_SIMCORE_INSTRUCTION_LOG_H_
#define CITCAT_SIMCORE_INSTRUCTION_LOG_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "simcore/copy_bytes.h"

namespace citcat::simcore {

struct LoggedInstruction {
  uint64_t index = 0;  // the instructions retired before it
  uint64_t pc = 0;
  uint8_t size = 0;
  std::array<uint8_t, 15> bytes{};  // the first `size` are its bytes, as they lie in memory
  std::span<const uint8_t> Bytes() const { return {bytes.data(), size}; }
};

class InstructionLog {
 public:
  static constexpr size_t kSize = 1024;
  virtual ~InstructionLog() = default;

  // The instruction about to run; Full() gets the ring each time it has filled.
  void Add(uint64_t index, uint64_t pc, std::span<const uint8_t> bytes) {
    LoggedInstruction& e = ring_[count_ % kSize];
    e.index = index;
    e.pc = pc;
    e.size = static_cast<uint8_t>(bytes.size() < e.bytes.size() ? bytes.size() : e.bytes.size());
    CopyFewBytes(bytes.data(), e.size, e.bytes.data());
    if (++count_ % kSize == 0) Full(ring_);
  }
  // Instructions added so far, and one of the last kSize of them.
  uint64_t count() const { return count_; }
  const LoggedInstruction& at(uint64_t i) const { return ring_[i % kSize]; }
  // The instructions added since the ring last filled.
  std::span<const LoggedInstruction> Pending() const {
    return std::span<const LoggedInstruction>(ring_.data(), count_ % kSize);
  }

 protected:
  virtual void Full(std::span<const LoggedInstruction> ring) = 0;

 private:
  std::array<LoggedInstruction, kSize> ring_{};
  uint64_t count_ = 0;
};

}  // namespace citcat::simcore

#endif  // CITCAT_SIMCORE_INSTRUCTION_LOG_H_
