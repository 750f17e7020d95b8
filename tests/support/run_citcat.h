// Runs the citcat binary as a user would, for the tests that check the command line: exit
// code, standard output and standard error, each captured in a directory of the test's own.
#ifndef CITCAT_TESTS_SUPPORT_RUN_CITCAT_H_
#define CITCAT_TESTS_SUPPORT_RUN_CITCAT_H_

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
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

#ifdef PEAK_RSS_BINARY
// A command run by RunCitcatMeasured, with the peak resident set size of its process.
struct MeasuredResult : CommandResult {
  long peak_rss_kib = -1;  // wait4's ru_maxrss, as support/peak_rss.cc reports it
};

// Runs `citcat ARGS` as RunCitcat does, with no shell in between (ARGS split at spaces, no
// quoting), under support/peak_rss.cc, which measures citcat's peak resident set alone.
inline MeasuredResult RunCitcatMeasured(const std::filesystem::path& dir, const std::string& args) {
  const std::string out = (dir / "stdout").string(), err = (dir / "stderr").string();
  const std::string report = (dir / "peak-rss").string();
  std::vector<std::string> words = {PEAK_RSS_BINARY, report, CITCAT_BINARY};
  for (absl::string_view w : absl::StrSplit(args, ' ', absl::SkipEmpty())) words.emplace_back(w);
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&files, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  pid_t pid;
  const int spawned = posix_spawn(&pid, argv[0], &files, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  MeasuredResult r;
  if (spawned != 0) return r;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  const std::string peak = ReadFile(report);
  r.peak_rss_kib = peak.empty() ? -1 : std::atol(peak.c_str());
  return r;
}
#endif  // PEAK_RSS_BINARY

}  // namespace citcat::testing

#endif  // CITCAT_TESTS_SUPPORT_RUN_CITCAT_H_
