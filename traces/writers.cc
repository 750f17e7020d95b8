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
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown trace format \"", name, "\" (text, champsim, penn, din, idtrace or idtrace-exec)"));
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
  }
  return nullptr;
}

absl::StatusOr<std::unique_ptr<TraceSink>> OpenWriter(Format format, const std::string& path) {
  absl::StatusOr<std::unique_ptr<ByteOutput>> out = OpenOutput(path);
  if (!out.ok()) return out.status();
  return NewWriter(format, *std::move(out));
}

}  // namespace citcat::traces
