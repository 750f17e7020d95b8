// What every traced system's capture does the same way with its guest software: find it
// (installed beside the binary, or where this build made it), build a user's C files with the
// guest SDK, put a program on the disk image as the workload `elf`, and check the workload names
// a boot string gives against the disk.
#ifndef CITCAT_SYSTEMS_GUEST_SUPPORT_H_
#define CITCAT_SYSTEMS_GUEST_SUPPORT_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "io/cleanup.h"
#include "machine/elf_loader.h"

namespace citcat::systems {

// A private scratch directory, removed with everything in it, on a signal too (with the one file
// it holds).
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& file);
  ~ScratchDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  io::SignalCleanup on_signal_dir_, on_signal_file_;
};

// A guest file: <prefix>/share/citcat/<machine>/<relative> when citcat is installed, else
// `built`, where this build made it.
std::string GuestFile(const char* built, const char* machine, const char* relative);

// A machine's guest SDK as its build describes it (guest/<machine>/guest_paths.h).
struct Sdk {
  const char* machine;  // "r4400": its directory under share/citcat
  const char* title;    // "MIPS": in "built without the MIPS cross compiler"
  const char* gcc;      // the cross compiler, "" if the build had none
  const char* root;     // the SDK's directory in this build (%SDK%)
  const char* build;    // compiler options, %SDK% for the SDK's root
  const char* libs;     // libraries, likewise
};

// Splits compiler options into words as a shell would, but with nothing expanded: blanks
// separate words; '...' keeps everything literal; "..." too, but for \" and \\; a \ outside
// quotes keeps the next character literal. $, `, *, ; and the like are ordinary characters.
// An unclosed quote is an error.
absl::StatusOr<std::vector<std::string>> SplitWords(absl::string_view text);

// Builds C (and assembly) files against the SDK into `elf` by running the cross compiler
// directly, with no shell in between (`cflags` split by SplitWords); the compiler's messages go
// to the terminal, and a failure ends in one line.
absl::Status BuildWithSdk(const Sdk& sdk, const std::vector<std::string>& sources,
                          const std::string& cflags, const std::string& elf);

// `disk` with the program at `elf_path` added as the workload `elf`, once `check` accepts it.
absl::StatusOr<std::string> DiskWithElf(
    const std::string& disk, const std::string& elf_path,
    const std::function<absl::Status(const machine::ElfImage&)>& check);

// `disk` with the user's program as the workload `elf`: an ELF as it is, or C and assembly files
// built with `sdk` (and `cflags`) first.
absl::StatusOr<std::string> DiskWithProgram(
    const Sdk& sdk, const std::vector<std::string>& program, const std::string& cflags,
    const std::string& disk, const std::function<absl::Status(const machine::ElfImage&)>& check);

// Every name of the comma-separated `workloads` is a program on `disk`: the kernels run the
// disk's programs by name and would skip an unknown one in silence.
absl::Status CheckWorkloads(const std::string& disk, const std::string& workloads);

}  // namespace citcat::systems

#endif  // CITCAT_SYSTEMS_GUEST_SUPPORT_H_
