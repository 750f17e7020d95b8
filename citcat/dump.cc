#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/flags/flag.h"
#include "cat_parser/reader.h"
#include "cat_parser/text.h"
#include "citcat/command.h"
#include "citcat/progress.h"

ABSL_FLAG(uint64_t, limit, 0, "print at most this many records (0: all)");

namespace citcat::cli {

absl::Status RunDump(const std::vector<std::string>& args) {
  if (args.size() != 1) return UsageError("dump", "CAPTURE.cat [-o OUT.txt] [--limit N]");
  if (absl::Status s = CheckOutputs({args[0]}, {absl::GetFlag(FLAGS_o)}); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<cat::CatReader>> reader = cat::CatReader::Open(args[0]);
  if (!reader.ok()) return reader.status();
  std::string output = absl::GetFlag(FLAGS_o);
  absl::StatusOr<std::unique_ptr<io::OutputFile>> out =
      io::OutputFile::Create(output.empty() ? "-" : output);
  if (!out.ok()) return out.status();
  uint64_t limit = absl::GetFlag(FLAGS_limit);
  if (limit == 0) limit = std::numeric_limits<uint64_t>::max();
  cat::CatReader& in = **reader;
  // Progress only when the text goes to a file: on a terminal it would cut through the records.
  Progress progress("dump", std::max<int64_t>(in.file_size(), 0), "B");
  auto show = [&] {
    if (!output.empty()) progress.Update(in.bytes_read());
  };
  if (absl::Status s = cat::DumpText(in, **out, limit, show); !s.ok()) {
    return s;
  }
  return (*out)->Commit();
}

}  // namespace citcat::cli
