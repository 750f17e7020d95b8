#include <cstdio>

#include "absl/flags/flag.h"
#include "cat_parser/text.h"
#include "citcat/command.h"

namespace citcat::cli {

absl::Status RunAssemble(const std::vector<std::string>& args) {
  if (args.size() != 1) return UsageError("assemble", "INPUT.txt -o OUTPUT.cat");
  std::string output;
  if (absl::Status s = RequireOutput("assemble", output); !s.ok()) return s;
  if (absl::Status s = CheckOutputs({args[0]}, {output}); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<io::InputFile>> in = io::InputFile::Open(args[0]);
  if (!in.ok()) return in.status();
  absl::StatusOr<uint64_t> records = cat::AssembleText(**in, output);
  if (!records.ok()) return records.status();
  if (!absl::GetFlag(FLAGS_quiet)) {
    std::fprintf(stderr, "citcat assemble: %llu records written to %s\n",
                 static_cast<unsigned long long>(*records), output.c_str());
  }
  return absl::OkStatus();
}

}  // namespace citcat::cli
