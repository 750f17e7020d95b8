// What a replay writes, kept in memory for tests that compare replays: its regenerated records,
// one per line, and its instruction trace in the formats asked for.
#ifndef CITCAT_TESTS_SUPPORT_REPLAY_OUTPUT_H_
#define CITCAT_TESTS_SUPPORT_REPLAY_OUTPUT_H_

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "replay/replay.h"
#include "systems/system.h"
#include "traces/output.h"
#include "traces/sink.h"
#include "traces/writers.h"

namespace citcat::testing {

// Fans one replay out to several sinks.
class Tee : public traces::TraceSink {
 public:
  explicit Tee(std::vector<traces::TraceSink*> sinks) : sinks_(std::move(sinks)) {}
  absl::Status Consume(const traces::Record& r) override {
    for (traces::TraceSink* s : sinks_) {
      if (absl::Status st = s->Consume(r); !st.ok()) return st;
    }
    return absl::OkStatus();
  }
  bool WantsRegisterValues() const override {
    for (const traces::TraceSink* s : sinks_) {
      if (s->WantsRegisterValues()) return true;
    }
    return false;
  }
  absl::Status Finish() override {
    for (traces::TraceSink* s : sinks_) {
      if (absl::Status st = s->Finish(); !st.ok()) return st;
    }
    return absl::OkStatus();
  }

 private:
  std::vector<traces::TraceSink*> sinks_;
};

inline const std::vector<traces::Format>& AllFormats() {
  static const std::vector<traces::Format> all = {
      traces::Format::kText,      traces::Format::kChampSim, traces::Format::kPenn,
      traces::Format::kDin,       traces::Format::kIdtrace,  traces::Format::kIdtraceExec,
      traces::Format::kTextValues};
  return all;
}

// The index of the instruction that follows each of the first `most` interrupt entries of a text
// trace (its "! interrupt" lines): where a cut right after the entry would fall.
inline std::vector<uint64_t> InstructionsAfterInterrupts(const std::string& text, size_t most) {
  std::vector<uint64_t> after;
  bool entered = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (after.size() >= most) break;
    const std::vector<absl::string_view> words = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (words.empty()) continue;
    if (words[0] == "!") {
      entered |= words.size() > 1 && words[1] == "interrupt";
      continue;
    }
    uint64_t index = 0;
    if (entered && absl::SimpleAtoi(words[0], &index)) after.push_back(index);
    entered = false;
  }
  return after;
}

struct ReplayOutput {
  absl::Status status;
  std::string records;
  std::vector<std::string> traces;  // by the formats asked for
  uint64_t instructions = 0;
};

inline ReplayOutput ReplayOf(const ims::InitialMachineState& ims, const aes::EventSchedule& aes,
                             replay::ReplayOptions options = {},
                             const std::vector<traces::Format>& formats = AllFormats()) {
  ReplayOutput out;
  options.on_record = [&](const cat::BusRecord& r) {
    absl::StrAppend(&out.records, static_cast<int>(r.kind), " ", r.flags, " ", r.master, " ",
                    r.address, " ", r.branch_count, " ");
    out.records.append(reinterpret_cast<const char*>(r.data.data()), r.data.size());
    out.records += '\n';
    return absl::OkStatus();
  };
  std::vector<std::unique_ptr<traces::TraceSink>> writers;
  std::vector<traces::TraceSink*> sinks;
  std::vector<std::string> paths;
  for (traces::Format f : formats) {
    paths.push_back(
        absl::StrCat(::testing::TempDir(), "/replay-output-", getpid(), "-", paths.size()));
    auto writer = traces::OpenWriter(f, paths.back());
    EXPECT_TRUE(writer.ok());
    sinks.push_back(writer->get());
    writers.push_back(*std::move(writer));
  }
  Tee tee(sinks);
  options.sink = &tee;
  auto summary = systems::Replay(ims, aes, options);
  out.status = summary.status();
  EXPECT_TRUE(tee.Finish().ok());
  for (const std::string& path : paths) {
    auto bytes = traces::ReadDecompressed(path);
    EXPECT_TRUE(bytes.ok());
    out.traces.push_back(bytes.ok() ? *bytes : "");
    std::remove(path.c_str());
  }
  if (summary.ok()) out.instructions = summary->instructions;
  return out;
}

}  // namespace citcat::testing

#endif  // CITCAT_TESTS_SUPPORT_REPLAY_OUTPUT_H_
