// The subcommands of the `citcat` binary. Each lives in its own file, holds its own flags and
// does nothing but turn arguments into calls of the libraries.
#ifndef CITCAT_CITCAT_COMMAND_H_
#define CITCAT_CITCAT_COMMAND_H_

#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

// Flags every subcommand may use (citcat/common_flags.cc).
ABSL_DECLARE_FLAG(std::string, o);
ABSL_DECLARE_FLAG(bool, quiet);
// The guest kernel ELF, for the commands that name citcat/kernel_flag.cc (capture, replay).
ABSL_DECLARE_FLAG(std::string, kernel);
ABSL_DECLARE_FLAG(bool, linux);

namespace citcat::cli {

struct Command {
  const char* name;
  const char* summary;  // one line for `citcat --help`
  const char* usage;    // synopsis and description for `citcat NAME --help`
  const char* source;   // the file defining its flags, to list them in its --help
  // Runs with the positional arguments; flags are already parsed.
  absl::Status (*run)(const std::vector<std::string>& args);
  // A file of flags it shares with other commands, or none: absl flags are global, so a flag has
  // one defining file, and a command accepts only the flags of the files it names.
  const char* shared_source = nullptr;
  // Whether it takes -o; a command that does not refuses it.
  bool takes_output = true;
  // Whether it reads back files it wrote (demo): its outputs appear as each one is complete, not
  // all together at the end (io::OutputGroup).
  bool reads_back_outputs = false;
};

absl::Status RunDump(const std::vector<std::string>& args);
absl::Status RunAssemble(const std::vector<std::string>& args);
absl::Status RunDemo(const std::vector<std::string>& args);
absl::Status RunExtract(const std::vector<std::string>& args);
absl::Status RunReplay(const std::vector<std::string>& args);
absl::Status RunVerify(const std::vector<std::string>& args);
absl::Status RunCapture(const std::vector<std::string>& args);
absl::Status RunPack(const std::vector<std::string>& args);
absl::Status RunUnpack(const std::vector<std::string>& args);
absl::Status RunStats(const std::vector<std::string>& args);
absl::Status RunSplit(const std::vector<std::string>& args);
absl::Status RunJoin(const std::vector<std::string>& args);

// The output path from -o, or an error naming the subcommand when it is required and missing.
absl::Status RequireOutput(const char* command, std::string& path);
// Refuses, before anything runs, an output that names one of the inputs or another output (the
// same file by device and inode, or the same path if it does not exist yet). "-" is exempt as
// an input (standard input is no file an output could name).
absl::Status CheckOutputs(const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs);
// Whether two paths name the same file (by device and inode, or the same path if it does not
// exist yet), as CheckOutputs tells them.
bool SameFile(const std::string& a, const std::string& b);
// An error for a wrong number of positional arguments.
absl::Status UsageError(const char* command, const char* synopsis);
// An error in how the command was called (`problem`, one line): the command exits 2, not 1.
absl::Status BadUsage(absl::string_view problem);
bool IsUsageError(const absl::Status& status);

}  // namespace citcat::cli

#endif  // CITCAT_CITCAT_COMMAND_H_
