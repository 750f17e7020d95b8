#include "absl/flags/flag.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "citcat/command.h"

ABSL_FLAG(std::string, o, "",
          "output file (written under a temporary name, renamed when complete)");
ABSL_FLAG(bool, quiet, false, "no progress display");

namespace citcat::cli {

namespace {
// Marks a status as a usage error (main.cc exits 2 for it).
constexpr char kUsagePayload[] = "citcat/usage-error";
}  // namespace

absl::Status RequireOutput(const char* command, std::string& path) {
  path = absl::GetFlag(FLAGS_o);
  if (path.empty()) {
    return BadUsage(absl::StrCat("needs -o OUTPUT (see citcat ", command, " --help)"));
  }
  return absl::OkStatus();
}

absl::Status UsageError(const char* command, const char* synopsis) {
  return BadUsage(
      absl::StrCat("usage: citcat ", command, " ", synopsis, " (see citcat ", command, " --help)"));
}

absl::Status BadUsage(absl::string_view problem) {
  absl::Status s = absl::InvalidArgumentError(problem);
  s.SetPayload(kUsagePayload, absl::Cord("1"));
  return s;
}

bool IsUsageError(const absl::Status& status) {
  return status.GetPayload(kUsagePayload).has_value();
}

}  // namespace citcat::cli
