// The in-process consumer API: anything that wants the instruction trace (a writer, a cache
// model, a branch predictor) implements TraceSink and is handed each record in execution order.
// See docs/trace-formats.md for a worked example.
#ifndef CITCAT_TRACES_SINK_H_
#define CITCAT_TRACES_SINK_H_

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "traces/record.h"

namespace citcat::traces {

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  // One executed instruction. The record is only valid during the call. A non-OK status stops
  // the replay and is returned from it.
  virtual absl::Status Consume(const Record& record) = 0;
  // After the last record of a successful replay (writers commit their file here).
  virtual absl::Status Finish() { return absl::OkStatus(); }
  // Whether records should carry the written registers' values (Record::values): asked once,
  // before the first record; it costs the replay a look at those registers after every
  // instruction.
  virtual bool WantsRegisterValues() const { return false; }
};

// Which records to pass on: by privilege mode, and without an address range (the kernel idle
// loop: the thesis left it out of its counts).
struct Filter {
  std::optional<Mode> mode;               // keep only records run in this mode
  uint64_t idle_begin = 0, idle_end = 0;  // drop records with idle_begin <= pc < idle_end
};

// Passes the records `filter` keeps on to `next` (not owned).
class FilterSink final : public TraceSink {
 public:
  FilterSink(const Filter& filter, TraceSink& next) : filter_(filter), next_(next) {}
  absl::Status Consume(const Record& record) override {
    if (filter_.mode && record.mode != *filter_.mode) return absl::OkStatus();
    if (record.pc >= filter_.idle_begin && record.pc < filter_.idle_end) return absl::OkStatus();
    return next_.Consume(record);
  }
  absl::Status Finish() override { return next_.Finish(); }
  bool WantsRegisterValues() const override { return next_.WantsRegisterValues(); }

 private:
  const Filter filter_;
  TraceSink& next_;
};

}  // namespace citcat::traces

#endif  // CITCAT_TRACES_SINK_H_
