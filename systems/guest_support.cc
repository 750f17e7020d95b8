#include "systems/guest_support.h"

#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "guest/r4400/tools/disk_image.h"
#include "io/file.h"

extern char** environ;

namespace citcat::systems {
namespace {

// Runs argv[0] with the arguments as they are (no shell sees them); the child writes to our
// terminal. Fails when it cannot start or does not exit with 0.
absl::Status Run(const std::vector<std::string>& argv) {
  std::vector<char*> cargv;
  for (const std::string& arg : argv) cargv.push_back(const_cast<char*>(arg.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = 0;
  if (int error = posix_spawnp(&pid, cargv[0], nullptr, nullptr, cargv.data(), environ);
      error != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(argv[0], ": cannot run: ", std::strerror(error)));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return absl::InternalError(absl::StrCat(argv[0], ": ", std::strerror(errno)));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(argv[0]);
}

// The SDK's option template, one word per option, with %SDK% in each word replaced by the
// root (which may hold spaces: it is never split). Each such word names a file or directory of
// the SDK, which a build of citcat alone (scripts/demo) has not made.
absl::Status AppendTemplate(std::vector<std::string>& argv, const Sdk& sdk, const char* words,
                            const std::string& root) {
  for (absl::string_view word : absl::StrSplit(words, ' ', absl::SkipEmpty())) {
    std::string arg = absl::StrReplaceAll(word, {{"%SDK%", root}});
    if (arg != word && !std::filesystem::exists(arg)) {
      return absl::FailedPreconditionError(
          absl::StrCat("the ", sdk.machine, " guest SDK is not built (no ", arg,
                       "): build it with cmake --build build, or give a built ELF"));
    }
    argv.push_back(std::move(arg));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> SplitWords(absl::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch == ' ' || ch == '\t' || ch == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (ch == '\'') {
      const size_t end = text.find('\'', i + 1);
      if (end == absl::string_view::npos) {
        return absl::InvalidArgumentError(absl::StrCat("'", text, "': a ' is not closed"));
      }
      absl::StrAppend(&word, text.substr(i + 1, end - i - 1));
      i = end;
    } else if (ch == '"') {
      for (++i;; ++i) {
        if (i == text.size()) {
          return absl::InvalidArgumentError(absl::StrCat("'", text, "': a \" is not closed"));
        }
        if (text[i] == '"') break;
        // Inside double quotes a backslash keeps only \ and " literal, as in the shell.
        if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == '"' || text[i + 1] == '\\')) {
          ++i;
        }
        word += text[i];
      }
    } else if (ch == '\\') {
      if (i + 1 == text.size()) {
        return absl::InvalidArgumentError(absl::StrCat("'", text, "': ends with a \\"));
      }
      word += text[++i];
    } else {
      word += ch;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

ScratchDir::ScratchDir(const std::string& file) {
  std::string pattern = (std::filesystem::temp_directory_path() / "citcat-XXXXXX").string();
  io::BlockSignals hold;
  path_ = mkdtemp(pattern.data()) ? pattern : std::string();
  if (path_.empty()) return;
  on_signal_dir_ = io::SignalCleanup(path_, /*directory=*/true);
  on_signal_file_ = io::SignalCleanup(path_ + "/" + file);
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
}

std::string GuestFile(const char* built, const char* machine, const char* relative) {
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const std::filesystem::path installed =
        exe.parent_path().parent_path() / "share/citcat" / machine / relative;
    if (std::filesystem::exists(installed, error)) return installed.string();
  }
  return built;
}

absl::Status BuildWithSdk(const Sdk& sdk, const std::vector<std::string>& sources,
                          const std::string& cflags, const std::string& elf) {
  for (const std::string& source : sources) {
    if (!std::filesystem::exists(source)) {
      return absl::NotFoundError(absl::StrCat(source, ": cannot open: No such file or directory"));
    }
  }
  const std::string& first = sources.front();
  if (std::string_view(sdk.gcc).empty()) {
    return absl::FailedPreconditionError(absl::StrCat(first, ": this citcat was built without the ",
                                                      sdk.title,
                                                      " cross compiler; give a built ELF"));
  }
  absl::StatusOr<std::vector<std::string>> options = SplitWords(cflags);
  if (!options.ok())
    return absl::InvalidArgumentError(absl::StrCat("--cflags ", options.status().message()));
  const std::string root = GuestFile(sdk.root, sdk.machine, "sdk");
  std::vector<std::string> argv = {sdk.gcc};
  if (absl::Status s = AppendTemplate(argv, sdk, sdk.build, root); !s.ok()) return s;
  argv.insert(argv.end(), options->begin(), options->end());
  argv.insert(argv.end(), sources.begin(), sources.end());
  if (absl::Status s = AppendTemplate(argv, sdk, sdk.libs, root); !s.ok()) return s;
  argv.insert(argv.end(), {"-o", elf});
  if (absl::Status s = Run(argv); !s.ok()) {
    if (s.code() != absl::StatusCode::kInvalidArgument) return s;
    return absl::InvalidArgumentError(
        absl::StrCat(absl::StrJoin(sources, " "),
                     ": does not build against the guest SDK (compiler messages above)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> DiskWithElf(
    const std::string& disk, const std::string& elf_path,
    const std::function<absl::Status(const machine::ElfImage&)>& check) {
  absl::StatusOr<std::string> elf = io::ReadWholeFile(elf_path, guest::kDiskMaxProgramBytes);
  if (!elf.ok()) return elf.status();
  absl::StatusOr<machine::ElfImage> program =
      machine::ParseElf({reinterpret_cast<const uint8_t*>(elf->data()), elf->size()});
  absl::Status s = program.ok() ? check(*program) : program.status();
  if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat(elf_path, ": ", s.message()));
  absl::StatusOr<std::vector<guest::DiskFile>> files =
      guest::ReadDiskImage({reinterpret_cast<const uint8_t*>(disk.data()), disk.size()});
  if (!files.ok()) return files.status();
  guest::AddOrReplace(*files, {"elf", std::vector<uint8_t>(elf->begin(), elf->end())});
  absl::StatusOr<std::vector<uint8_t>> image = guest::BuildDiskImage(*files);
  if (!image.ok()) return image.status();
  return std::string(image->begin(), image->end());
}

absl::StatusOr<std::string> DiskWithProgram(
    const Sdk& sdk, const std::vector<std::string>& program, const std::string& cflags,
    const std::string& disk, const std::function<absl::Status(const machine::ElfImage&)>& check) {
  ScratchDir scratch("program.elf");
  std::string elf = program.front();
  if (absl::EndsWith(elf, ".c") || absl::EndsWith(elf, ".S")) {
    std::string built = scratch.path() + "/program.elf";
    if (absl::Status s = BuildWithSdk(sdk, program, cflags, built); !s.ok()) return s;
    elf = built;
  } else if (program.size() > 1 || !cflags.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(elf, ": an ELF is run as it is: more files and --cflags are for C sources"));
  }
  return DiskWithElf(disk, elf, check);
}

absl::Status CheckWorkloads(const std::string& disk, const std::string& workloads) {
  absl::StatusOr<std::vector<guest::DiskFile>> files =
      guest::ReadDiskImage({reinterpret_cast<const uint8_t*>(disk.data()), disk.size()});
  if (!files.ok()) return files.status();
  for (absl::string_view name : absl::StrSplit(workloads, ',', absl::SkipEmpty())) {
    if (std::none_of(files->begin(), files->end(),
                     [&](const guest::DiskFile& f) { return f.name == name; })) {
      return absl::InvalidArgumentError(absl::StrCat(
          "no workload '", name, "' on the disk image (citcat capture --list-workloads)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace citcat::systems
