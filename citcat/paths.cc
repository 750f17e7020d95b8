// Outputs that would overwrite an input, or each other: refused before anything runs.
#include <sys/stat.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "citcat/command.h"

namespace citcat::cli {
namespace {

struct Identity {
  bool exists = false;
  dev_t device = 0;
  ino_t inode = 0;
  std::string path;  // lexically normal and absolute, for files not there yet
  bool operator==(const Identity& o) const {
    return exists == o.exists && (exists ? device == o.device && inode == o.inode : path == o.path);
  }
};

Identity Identify(const std::string& path) {
  Identity id;
  struct stat st;
  if (path == "-") {
    id.path.assign(1, '-');  // standard output: one stream, so two outputs there would interleave
  } else if (stat(path.c_str(), &st) == 0) {
    id.exists = true;
    id.device = st.st_dev;
    id.inode = st.st_ino;
  } else {
    std::error_code error;
    id.path = std::filesystem::weakly_canonical(std::filesystem::absolute(path, error), error)
                  .lexically_normal()
                  .string();
  }
  return id;
}

}  // namespace

bool SameFile(const std::string& a, const std::string& b) { return Identify(a) == Identify(b); }

absl::Status CheckOutputs(const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs) {
  std::vector<Identity> seen;
  for (const std::string& in : inputs) {
    if (!in.empty() && in != "-") seen.push_back(Identify(in));
  }
  const size_t input_count = seen.size();
  for (const std::string& out : outputs) {
    if (out.empty()) continue;
    const Identity id = Identify(out);
    for (size_t i = 0; i < seen.size(); ++i) {
      if (!(seen[i] == id)) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          "the output ", out, " is ", i < input_count ? "also an input" : "also another output",
          "; nothing was written"));
    }
    seen.push_back(id);
  }
  return absl::OkStatus();
}

}  // namespace citcat::cli
