// The instruction-trace writers, one small file each (docs/trace-formats.md): each is a
// TraceSink that streams its format to a ByteOutput, holding only two fixed-size buffers.
#ifndef CITCAT_TRACES_WRITERS_H_
#define CITCAT_TRACES_WRITERS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "traces/digits.h"
#include "traces/output.h"
#include "traces/sink.h"

namespace citcat::traces {

enum class Format { kText, kChampSim, kPenn, kDin, kIdtrace, kIdtraceExec, kTextValues };

// "text", "champsim", "penn", "din", "idtrace", "idtrace-exec", "text-values".
absl::StatusOr<Format> ParseFormat(absl::string_view name);

// `values`: each line also gives the registers the instruction wrote with their values after it
// (the text-values format).
std::unique_ptr<TraceSink> NewTextWriter(std::unique_ptr<ByteOutput> out, bool values = false);
std::unique_ptr<TraceSink> NewChampSimWriter(std::unique_ptr<ByteOutput> out);
std::unique_ptr<TraceSink> NewPennWriter(std::unique_ptr<ByteOutput> out);
std::unique_ptr<TraceSink> NewDinWriter(std::unique_ptr<ByteOutput> out);
std::unique_ptr<TraceSink> NewIdtraceWriter(std::unique_ptr<ByteOutput> out);
std::unique_ptr<TraceSink> NewIdtraceExecWriter(std::unique_ptr<ByteOutput> out);

std::unique_ptr<TraceSink> NewWriter(Format format, std::unique_ptr<ByteOutput> out);

// A writer to `path`, compressed by its suffix (.xz, .zst). The file appears on Finish().
absl::StatusOr<std::unique_ptr<TraceSink>> OpenWriter(Format format, const std::string& path);

// What the writers share: records are written straight into one of two buffers, and a full
// buffer goes to the output as one piece while the other fills (an output may write it on a
// thread of its own meanwhile: ByteOutput::Write).
class BufferedWriter : public TraceSink {
 public:
  explicit BufferedWriter(std::unique_ptr<ByteOutput> out);
  absl::Status Finish() override;

 protected:
  // Where to write at most `bytes` more; Commit(end) after writing them.
  char* Claim(size_t bytes) {
    if (static_cast<size_t>(limit_ - end_) < bytes) [[unlikely]]
      SwitchBuffers(bytes);
    return end_;
  }
  void Commit(char* end) { end_ = end; }
  void Append(absl::string_view bytes) { Commit(Put(Claim(bytes.size()), bytes)); }
  // OK, or the output's first error (Consume returns it: the replay stops).
  const absl::Status& status() const { return status_; }

 private:
  static constexpr size_t kBufferBytes = size_t{1} << 20;
  // Hands the filled buffer to the output and makes the other one current, with room for
  // `bytes`.
  void SwitchBuffers(size_t bytes);

  std::unique_ptr<ByteOutput> out_;
  std::vector<char> buffers_[2];
  int current_ = 0;
  char* end_ = nullptr;    // where the next byte goes in the current buffer
  char* limit_ = nullptr;  // the current buffer's end
  absl::Status status_;
};

}  // namespace citcat::traces

#endif  // CITCAT_TRACES_WRITERS_H_
