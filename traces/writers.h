// The instruction-trace writers, one small file each (docs/trace-formats.md): each is a
// TraceSink that streams its format to a ByteOutput, holding only a fixed-size buffer.
#ifndef CITCAT_TRACES_WRITERS_H_
#define CITCAT_TRACES_WRITERS_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "traces/output.h"
#include "traces/sink.h"

namespace citcat::traces {

enum class Format { kText, kChampSim, kPenn, kDin, kIdtrace, kIdtraceExec };

// "text", "champsim", "penn", "din", "idtrace", "idtrace-exec".
absl::StatusOr<Format> ParseFormat(absl::string_view name);

std::unique_ptr<TraceSink> NewTextWriter(std::unique_ptr<ByteOutput> out);
std::unique_ptr<TraceSink> NewChampSimWriter(std::unique_ptr<ByteOutput> out);
std::unique_ptr<TraceSink> NewPennWriter(std::unique_ptr<ByteOutput> out);
std::unique_ptr<TraceSink> NewDinWriter(std::unique_ptr<ByteOutput> out);
std::unique_ptr<TraceSink> NewIdtraceWriter(std::unique_ptr<ByteOutput> out);
std::unique_ptr<TraceSink> NewIdtraceExecWriter(std::unique_ptr<ByteOutput> out);

std::unique_ptr<TraceSink> NewWriter(Format format, std::unique_ptr<ByteOutput> out);

// A writer to `path`, compressed by its suffix (.xz, .zst). The file appears on Finish().
absl::StatusOr<std::unique_ptr<TraceSink>> OpenWriter(Format format, const std::string& path);

// What the writers share: a buffer flushed to the output in large pieces.
class BufferedWriter : public TraceSink {
 public:
  explicit BufferedWriter(std::unique_ptr<ByteOutput> out) : out_(std::move(out)) {}
  absl::Status Finish() override {
    if (absl::Status s = Flush(); !s.ok()) return s;
    return out_->Close();
  }

 protected:
  // Call after appending to buffer_.
  absl::Status MaybeFlush() { return buffer_.size() >= (1 << 16) ? Flush() : absl::OkStatus(); }
  absl::Status Flush() {
    absl::Status s = out_->Write(buffer_);
    buffer_.clear();
    return s;
  }
  std::string buffer_;

 private:
  std::unique_ptr<ByteOutput> out_;
};

}  // namespace citcat::traces

#endif  // CITCAT_TRACES_WRITERS_H_
