// Traces straight into another program (docs/trace-formats.md, "Into a pipe or a FIFO"): every
// format, plain and compressed, written with `-o -` into a pipe and with `-o FIFO` into a named
// pipe a reader opened by name (as ChampSim opens its trace), must give the reader the bytes of
// the same trace written to a file; a reader that stops early leaves no temporary behind.
#include <sys/stat.h>
#include <sys/wait.h>

#include <filesystem>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/run_citcat.h"

namespace citcat {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;

// Runs `script` with bash; its exit status.
int Bash(const fs::path& dir, const std::string& script) {
  const fs::path file = dir / "run.sh";
  {
    std::FILE* f = std::fopen(file.c_str(), "w");
    std::fputs(script.c_str(), f);
    std::fclose(f);
  }
  const int status = std::system(absl::StrCat("bash ", file.string()).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// What decompresses a suffix's bytes from standard input.
std::string Decompressor(const std::string& suffix) {
  if (suffix == ".gz") return "gzip -dc";
  if (suffix == ".zst") return "zstd -q -dc";
  if (suffix == ".xz") return "xz -dc";
  return "cat";
}

// A format (empty: the plain text trace), a compression suffix.
class Pipes : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(testing::FreshTestDir("pipes"));
    for (const std::string& step :
         {absl::StrCat("capture --workload io --instructions 200000 --quiet -o ", In("cap.cat")),
          absl::StrCat("extract --quiet ", In("cap.cat"), " -o ", In("x")),
          absl::StrCat("pack --quiet ", In("x"), " -o ", In("t.citcat"))}) {
      testing::CommandResult r = testing::RunCitcat(*dir_, step);
      ASSERT_EQ(r.exit_code, 0) << step << ": " << r.err;
    }
  }
  static std::string In(const std::string& name) { return (*dir_ / name).string(); }
  static std::string Replay(const std::string& format) {
    return absl::StrCat(CITCAT_BINARY, " replay --quiet ", In("t.citcat"),
                        format.empty() ? "" : " --format " + format);
  }
  static inline fs::path* dir_ = nullptr;
};

TEST_P(Pipes, AReaderGetsTheBytesOfTheFile) {
  const auto& [format, suffix] = GetParam();
  const fs::path d = testing::FreshTestDir(absl::StrCat("pipes-", format, suffix));
  const std::string name = absl::StrCat("t.", format.empty() ? "txt" : format, suffix);
  const std::string file = (d / name).string(), fifo = (d / ("fifo-" + name)).string();
  ASSERT_EQ(Bash(d, absl::StrCat(Replay(format), " -o ", file)), 0);
  ASSERT_GT(fs::file_size(file), 0u);

  // -o - into a pipe: the plain trace (a pipeline compresses with a program of its own).
  const std::string plain = (d / "plain").string();
  ASSERT_EQ(Bash(d, absl::StrCat(Decompressor(suffix), " <", file, " >", plain)), 0);
  const std::string piped = (d / "piped").string();
  EXPECT_EQ(Bash(d, absl::StrCat("set -o pipefail; ", Replay(format), " -o - | cat >", piped)), 0);
  EXPECT_TRUE(ReadFile(piped) == ReadFile(plain)) << "-o - into a pipe";

  // -o FIFO, the reader opening it by name; the suffix decides the compression as for a file.
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string read = (d / "read").string();
  EXPECT_EQ(Bash(d, absl::StrCat(Decompressor(suffix), " <", fifo, " >", read, " & ",
                                 Replay(format), " -o ", fifo, "; s=$?; wait $! && exit $s")),
            0);
  EXPECT_TRUE(ReadFile(read) == ReadFile(plain)) << "-o FIFO";
  struct stat st;
  ASSERT_EQ(stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

INSTANTIATE_TEST_SUITE_P(EveryFormat, Pipes,
                         ::testing::Combine(::testing::Values("", "champsim", "penn", "din",
                                                              "idtrace", "idtrace-exec"),
                                            ::testing::Values("", ".gz", ".zst", ".xz")),
                         [](const auto& info) {
                           std::string name = absl::StrCat(
                               std::get<0>(info.param).empty() ? "text" : std::get<0>(info.param),
                               std::get<1>(info.param).empty() ? "Plain"
                                                               : std::get<1>(info.param).substr(1));
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

// A reader that stops early (head): the replay ends by SIGPIPE as any program in a pipeline does,
// quietly, and takes the other outputs' temporaries with it.
TEST(PipesClosed, AReaderThatStopsEarlyLeavesNothingBehind) {
  const fs::path d = testing::FreshTestDir("pipes-closed");
  const std::string cat = (d / "c.cat").string(), x = (d / "x").string();
  for (const std::string& step :
       {absl::StrCat("capture --workload sort --instructions 2000000 --quiet -o ", cat),
        absl::StrCat("extract --quiet ", cat, " -o ", x),
        absl::StrCat("pack --quiet ", x, " -o ", (d / "t.citcat").string())}) {
    ASSERT_EQ(testing::RunCitcat(d, step).exit_code, 0) << step;
  }
  for (const std::string output : {"-", "t.champsim.gz"}) {
    SCOPED_TRACE(output);
    const fs::path out = d / "out";
    fs::create_directories(out);
    if (output != "-") {
      ASSERT_EQ(mkfifo((out / output).c_str(), 0600), 0);
    }
    const std::string replay = absl::StrCat(CITCAT_BINARY, " replay ", (d / "t.citcat").string(),
                                            " --format champsim --cat ", (out / "r.cat").string(),
                                            " -o ", output == "-" ? "-" : (out / output).string());
    const std::string script =
        output == "-" ? absl::StrCat(replay, " 2>", (d / "err").string(),
                                     " | head -c 100 >/dev/null;"
                                     " exit ${PIPESTATUS[0]}")
                      : absl::StrCat("head -c 100 <", (out / output).string(), " >/dev/null & ",
                                     replay, " 2>", (d / "err").string(), "; s=$?; wait; exit $s");
    EXPECT_EQ(Bash(d, script), 128 + SIGPIPE);
    EXPECT_EQ(ReadFile((d / "err").string()), "");
    if (output != "-") fs::remove(out / output);
    EXPECT_TRUE(fs::is_empty(out)) << fs::directory_iterator(out)->path();
    fs::remove_all(out);
  }
}

}  // namespace
}  // namespace citcat
