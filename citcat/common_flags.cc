#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "citcat/command.h"

ABSL_FLAG(std::string, o, "",
          "output file (written under a temporary name, renamed when complete)");
ABSL_FLAG(bool, quiet, false, "no progress display");

namespace citcat::cli {

absl::Status RequireOutput(const char* command, std::string& path) {
  path = absl::GetFlag(FLAGS_o);
  if (path.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("citcat ", command, " needs -o OUTPUT"));
  }
  return absl::OkStatus();
}

absl::Status UsageError(const char* command, const char* synopsis) {
  return absl::InvalidArgumentError(
      absl::StrCat("usage: citcat ", command, " ", synopsis, " (see citcat ", command, " --help)"));
}

}  // namespace citcat::cli
