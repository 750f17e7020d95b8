// Runs the citcat binary as a user would, for the tests that check the command line: exit
// code, standard output and standard error, each captured in a directory of the test's own.
#ifndef CITCAT_TESTS_SUPPORT_RUN_CITCAT_H_
#define CITCAT_TESTS_SUPPORT_RUN_CITCAT_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace citcat::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A fresh directory for one test in one process, so that tests run in parallel never share
// files.
inline std::filesystem::path FreshTestDir(const std::string& name) {
  std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / absl::StrCat(name, "-", getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Runs `citcat ARGS`, with its output streams in `dir`/stdout and `dir`/stderr.
inline CommandResult RunCitcat(const std::filesystem::path& dir, const std::string& args) {
  std::string out = (dir / "stdout").string(), err = (dir / "stderr").string();
  std::string command = absl::StrCat(CITCAT_BINARY, " ", args, " >", out, " 2>", err);
  int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadFile(out), ReadFile(err)};
}

}  // namespace citcat::testing

#endif  // CITCAT_TESTS_SUPPORT_RUN_CITCAT_H_
