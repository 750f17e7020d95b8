// Whether a core that writes the instruction log itself (CoreAdapter::LogInstructions) logs what
// it would tell an observer: the same instructions, in the same order, with the same index, PC
// and bytes. `replay` runs one replay with the options it is given.
#ifndef CITCAT_TESTS_SUPPORT_INSTRUCTION_LOG_CHECK_H_
#define CITCAT_TESTS_SUPPORT_INSTRUCTION_LOG_CHECK_H_

#include <algorithm>
#include <functional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "replay/replay.h"
#include "traces/sink.h"

namespace citcat::testing {

inline void ExpectTheLogIsWhatAnObserverIsTold(
    const std::function<absl::StatusOr<replay::ReplaySummary>(const replay::ReplayOptions&)>&
        replay,
    size_t at_least) {
  class Drop final : public traces::TraceSink {
   public:
    absl::Status Consume(const traces::Record&) override { return absl::OkStatus(); }
  };
  const auto started = [&](bool observed) {
    std::vector<replay::ExecutedInstruction> all;
    Drop drop;
    replay::ReplayOptions options;
    options.on_instructions = [&](std::span<const replay::ExecutedInstruction> batch) {
      all.insert(all.end(), batch.begin(), batch.end());
    };
    if (observed) options.sink = &drop;  // a sink: the core tells an observer
    absl::StatusOr<replay::ReplaySummary> summary = replay(options);
    EXPECT_TRUE(summary.ok()) << summary.status();
    return all;
  };
  const std::vector<replay::ExecutedInstruction> logged = started(false), told = started(true);
  ASSERT_EQ(logged.size(), told.size());
  EXPECT_GT(logged.size(), at_least);
  for (size_t i = 0; i < logged.size(); ++i) {
    const replay::ExecutedInstruction &a = logged[i], &b = told[i];
    ASSERT_TRUE(a.index == b.index && a.pc == b.pc && std::ranges::equal(a.Bytes(), b.Bytes()))
        << "instruction " << i << ": logged " << a.index << " at " << std::hex << a.pc << ", told "
        << std::dec << b.index << " at " << std::hex << b.pc;
  }
}

}  // namespace citcat::testing

#endif  // CITCAT_TESTS_SUPPORT_INSTRUCTION_LOG_CHECK_H_
