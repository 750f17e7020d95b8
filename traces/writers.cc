#include "traces/writers.h"

#include "absl/strings/str_cat.h"

namespace citcat::traces {

absl::StatusOr<Format> ParseFormat(absl::string_view name) {
  if (name == "text") return Format::kText;
  if (name == "champsim") return Format::kChampSim;
  if (name == "penn") return Format::kPenn;
  if (name == "din") return Format::kDin;
  if (name == "idtrace") return Format::kIdtrace;
  if (name == "idtrace-exec") return Format::kIdtraceExec;
  if (name == "text-values") return Format::kTextValues;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown trace format \"", name,
                   "\" (text, text-values, champsim, penn, din, idtrace or idtrace-exec)"));
}

std::unique_ptr<TraceSink> NewWriter(Format format, std::unique_ptr<ByteOutput> out) {
  switch (format) {
    case Format::kText:
      return NewTextWriter(std::move(out));
    case Format::kChampSim:
      return NewChampSimWriter(std::move(out));
    case Format::kPenn:
      return NewPennWriter(std::move(out));
    case Format::kDin:
      return NewDinWriter(std::move(out));
    case Format::kIdtrace:
      return NewIdtraceWriter(std::move(out));
    case Format::kIdtraceExec:
      return NewIdtraceExecWriter(std::move(out));
    case Format::kTextValues:
      return NewTextWriter(std::move(out), /*values=*/true);
  }
  return nullptr;
}

BufferedWriter::BufferedWriter(std::unique_ptr<ByteOutput> out) : out_(std::move(out)) {
  for (std::vector<char>& b : buffers_) b.resize(kBufferBytes);
  end_ = buffers_[0].data();
  limit_ = end_ + buffers_[0].size();
}

void BufferedWriter::SwitchBuffers(size_t bytes) {
  std::vector<char>& full = buffers_[current_];
  const size_t used = static_cast<size_t>(end_ - full.data());
  if (status_.ok() && used > 0) status_ = out_->Write(absl::string_view(full.data(), used));
  current_ ^= 1;
  std::vector<char>& next = buffers_[current_];
  if (next.size() < bytes) next.resize(bytes);  // a record longer than a buffer (never so far)
  end_ = next.data();
  limit_ = end_ + next.size();
}

absl::Status BufferedWriter::Finish() {
  SwitchBuffers(0);
  if (!status_.ok()) return status_;
  return out_->Close();
}

absl::StatusOr<std::unique_ptr<TraceSink>> OpenWriter(Format format, const std::string& path) {
  absl::StatusOr<std::unique_ptr<ByteOutput>> out = OpenOutput(path);
  if (!out.ok()) return out.status();
  return NewWriter(format, *std::move(out));
}

}  // namespace citcat::traces
