#include "systems/guest_support.h"

#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "guest/r4400/tools/disk_image.h"
#include "io/file.h"

namespace citcat::systems {
namespace {

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

}  // namespace

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
  const std::string root = ShellQuote(GuestFile(sdk.root, sdk.machine, "sdk"));
  std::string command =
      absl::StrCat(sdk.gcc, " ", absl::StrReplaceAll(sdk.build, {{"%SDK%", root}}), " ", cflags);
  for (const std::string& source : sources) absl::StrAppend(&command, " ", ShellQuote(source));
  absl::StrAppend(&command, " ", absl::StrReplaceAll(sdk.libs, {{"%SDK%", root}}), " -o ",
                  ShellQuote(elf));
  if (std::system(command.c_str()) != 0) {
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
