// What a command does with its outputs, as a user runs it: all of them or none (a later output
// that fails takes the earlier ones with it), devices and "-" written in place, an output that
// names an input or another output refused before anything runs, arguments that would be
// ignored refused, one line on stderr for every failure, and never a temporary left behind; and
// an interrupted command that removes its temporaries and exits 128 + the signal.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/run_citcat.h"

namespace citcat {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::ReadFile;

int Lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// Names of files under `dir` that look like temporaries.
std::vector<std::string> Temporaries(const fs::path& dir) {
  std::vector<std::string> found;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().filename().string().find(".partial-") != std::string::npos) {
      found.push_back(e.path().string());
    }
  }
  return found;
}

class Outputs : public ::testing::Test {
 protected:
  // One capture of the io workload, its extraction and its archive, for every case.
  static void SetUpTestSuite() {
    dir_ = new fs::path(testing::FreshTestDir("outputs"));
    for (const std::string& step :
         {absl::StrCat("capture --workload io --instructions 300000 --quiet -o ", In("cap.cat")),
          absl::StrCat("extract --quiet ", In("cap.cat"), " -o ", In("x")),
          absl::StrCat("pack --quiet ", In("x"), " -o ", In("t.citcat"))}) {
      testing::CommandResult r = testing::RunCitcat(*dir_, step);
      ASSERT_EQ(r.exit_code, 0) << step << ": " << r.err;
    }
  }
  static std::string In(const std::string& name) { return (*dir_ / name).string(); }
  static std::string Replay() {
    return absl::StrCat("replay --quiet --ims ", In("x/ims.pb"), " --aes ", In("x/aes.pb"));
  }
  static inline fs::path* dir_ = nullptr;
};

struct Case {
  std::string name;
  std::function<void(const fs::path& d)> setup;  // may be empty
  std::string args;                              // "{D}" stands for the case's directory
  int exit_code;
  std::string err;                           // part of stderr ("" when it must be empty)
  std::vector<std::string> present, absent;  // in {D} afterwards
};

TEST_F(Outputs, EveryCaseOfTheTable) {
  const std::string cap = In("cap.cat"), ims = In("x/ims.pb"), aes = In("x/aes.pb");
  auto copy = [](const std::string& from, const std::string& to) {
    return [=](const fs::path& d) { fs::copy_file(from, d / to); };
  };
  auto directory = [](const std::string& name) {
    return [=](const fs::path& d) { fs::create_directories(d / name); };
  };
  const std::vector<Case> cases = {
      // All or nothing: a later output fails, the earlier one goes too.
      {"extract, aes.pb a directory",
       directory("out/aes.pb"),
       absl::StrCat("extract --quiet ", cap, " -o {D}/out"),
       1,
       "aes.pb: is a directory",
       {},
       {"out/ims.pb"}},
      {"replay, --cat a directory",
       directory("rc.cat"),
       absl::StrCat(Replay(), " -o {D}/t.txt --cat {D}/rc.cat"),
       1,
       "rc.cat: is a directory",
       {},
       {"t.txt"}},
      {"unpack, manifest.txt a directory",
       directory("u/manifest.txt"),
       absl::StrCat("unpack --quiet ", In("t.citcat"), " -o {D}/u"),
       1,
       "is a directory",
       {},
       {"u/ims.pb", "u/aes.pb"}},
      {"stats, --plot a directory",
       directory("c.svg"),
       absl::StrCat("stats ", In("t.citcat"), " -o {D}/s.txt --plot {D}/c.svg"),
       1,
       "is a directory",
       {},
       {"s.txt"}},
      {"replay -o names its --kernel",
       nullptr,
       absl::StrCat("replay --quiet ", In("t.citcat"), " -o {D}/t.txt --cat {D}/r.cat --kernel ",
                    "{D}/t.txt"),
       1,
       "the output {D}/t.txt is also an input",
       {},
       {"t.txt", "r.cat"}},
      // Inputs are never overwritten, nor one output by another.
      {"replay --cat names the AES",
       copy(aes, "aes.pb"),
       absl::StrCat("replay --quiet --ims ", ims, " --aes {D}/aes.pb --cat {D}/aes.pb"),
       1,
       "the output {D}/aes.pb is also an input; nothing was written",
       {"aes.pb"},
       {}},
      {"dump onto its input",
       copy(cap, "c.cat"),
       "dump {D}/c.cat -o {D}/c.cat",
       1,
       "is also an input",
       {"c.cat"},
       {}},
      {"dump onto its input by another name",
       [&](const fs::path& d) {
         fs::copy_file(cap, d / "c.cat");
         fs::create_symlink(d / "c.cat", d / "link.cat");
       },
       "dump {D}/link.cat -o {D}/./c.cat",
       1,
       "is also an input",
       {"c.cat"},
       {}},
      {"-o f --cat f",
       nullptr,
       absl::StrCat(Replay(), " -o {D}/f --cat {D}/f"),
       1,
       "is also another output",
       {},
       {"f"}},
      {"pack onto its IMS",
       nullptr,
       absl::StrCat("pack ", In("x"), " -o ", ims),
       1,
       "is also an input",
       {},
       {}},
      // Devices and standard output are written in place.
      {"replay -o /dev/null",
       nullptr,
       absl::StrCat(Replay(), " -o /dev/null --cat {D}/r.cat"),
       0,
       "",
       {"r.cat"},
       {}},
      {"replay --cat /dev/full",
       nullptr,
       absl::StrCat(Replay(), " --cat /dev/full"),
       1,
       "/dev/full: write error: No space left on device",
       {},
       {}},
      {"dump -o -", nullptr, absl::StrCat("dump ", cap, " --limit 2 -o -"), 0, "", {}, {}},
      {"dump -o /dev/stdout",
       nullptr,
       absl::StrCat("dump ", cap, " --limit 2 -o /dev/stdout"),
       0,
       "",
       {},
       {}},
      // Arguments that would be ignored.
      {"-o ''", nullptr, absl::StrCat("dump ", cap, " -o ''"), 2, "-o needs a value", {}, {}},
      {"--cat=", nullptr, absl::StrCat(Replay(), " --cat="), 2, "--cat needs a value", {}, {}},
      {"a flag twice",
       nullptr,
       absl::StrCat("dump ", cap, " --limit 1 --limit 2"),
       2,
       "--limit given more than once",
       {},
       {}},
      {"verify -o",
       nullptr,
       absl::StrCat("verify ", cap, " -o {D}/v"),
       2,
       "takes no -o",
       {},
       {"v"}},
      {"demo -o", nullptr, "demo -o {D}/v", 2, "takes no -o", {}, {"v"}},
      {"an unknown workload",
       nullptr,
       "capture --workload io,nosuch -o {D}/c.cat",
       1,
       "no workload 'nosuch' on the disk image",
       {},
       {"c.cat"}},
      // Loose checks.
      {"an IMS of a newer format version",
       [&](const fs::path& d) {
         // A repeated scalar field: the last one wins, so this sets format_version to 2.
         std::ofstream(d / "ims.pb", std::ios::binary)
             << ReadFile(ims) << std::string("\x08\x02", 2);
       },
       absl::StrCat("replay --ims {D}/ims.pb --aes ", aes, " --cat {D}/r.cat"),
       1,
       "the IMS has format version 2; this citcat reads version 1",
       {},
       {"r.cat"}},
      {"an AES of a newer format version",
       [&](const fs::path& d) {
         std::ofstream(d / "aes.pb", std::ios::binary)
             << ReadFile(aes) << std::string("\x08\x03", 2);
       },
       absl::StrCat("replay --ims ", ims, " --aes {D}/aes.pb --cat {D}/r.cat"),
       1,
       "the AES has format version 3",
       {},
       {"r.cat"}},
      {"a CAT whose producer is not UTF-8",
       [&](const fs::path& d) {
         std::string text = ReadFile(std::string(CITCAT_SOURCE_DIR) + "/examples/r4400-sample.txt");
         text = absl::StrReplaceAll(text, {{"producer hand-written example", "producer \xff\xfe"}});
         std::ofstream(d / "p.txt", std::ios::binary) << text;
         ASSERT_EQ(testing::RunCitcat(d, absl::StrCat("assemble --quiet ", (d / "p.txt").string(),
                                                      " -o ", (d / "p.cat").string()))
                       .exit_code,
                   0);
       },
       "extract {D}/p.cat -o {D}/px",
       1,
       "header producer field is not UTF-8 text",
       {},
       {"px/ims.pb"}},
      // One line for a guest that never begins its trace.
      {"a guest that does not boot",
       nullptr,
       "capture --memory-mb 2 -o {D}/c.cat",
       1,
       "the last line on its console: 'kernel: panic",
       {},
       {"c.cat"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const fs::path d = testing::FreshTestDir(absl::StrCat("outputs-case-", &c - cases.data()));
    if (c.setup) c.setup(d);
    const std::string before_aes = ReadFile(aes), before_cap = ReadFile(cap);
    auto expand = [&](const std::string& s) {
      return absl::StrReplaceAll(s, {{"{D}", d.string()}});
    };
    testing::CommandResult r = testing::RunCitcat(d, expand(c.args));
    EXPECT_EQ(r.exit_code, c.exit_code) << r.err;
    if (c.err.empty()) {
      EXPECT_EQ(r.err, "");
    } else {
      EXPECT_THAT(r.err, HasSubstr(expand(c.err)));
      EXPECT_EQ(Lines(r.err), 1) << r.err;
    }
    for (const std::string& name : c.present) EXPECT_TRUE(fs::exists(d / name)) << name;
    for (const std::string& name : c.absent) EXPECT_FALSE(fs::exists(d / name)) << name;
    EXPECT_THAT(Temporaries(d), ::testing::IsEmpty());
    EXPECT_THAT(Temporaries(*dir_), ::testing::IsEmpty());
    // Inputs stay as they were, devices stay devices.
    EXPECT_EQ(ReadFile(aes), before_aes);
    EXPECT_EQ(ReadFile(cap), before_cap);
    if (fs::exists(d / "aes.pb") && c.name == "replay --cat names the AES") {
      EXPECT_EQ(ReadFile((d / "aes.pb").string()), before_aes);
    }
    if (fs::exists(d / "c.cat") && c.name.rfind("dump onto", 0) == 0) {
      EXPECT_EQ(ReadFile((d / "c.cat").string()), before_cap);
    }
    struct stat st;
    ASSERT_EQ(stat("/dev/null", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
    ASSERT_EQ(stat("/dev/full", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
    EXPECT_TRUE(fs::is_symlink("/dev/stdout"));
    if (c.name.rfind("dump -o ", 0) == 0) {
      EXPECT_THAT(r.out, ::testing::StartsWith("citcat-cat "));
    }
  }
}

// Standard output that cannot be written, and a FIFO as an output.
TEST_F(Outputs, StandardOutputAndFifos) {
  const fs::path d = testing::FreshTestDir("outputs-streams");
  const std::string err = (d / "err").string();
  int status = std::system(
      absl::StrCat(CITCAT_BINARY, " capture --list-workloads >/dev/full 2>", err).c_str());
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_EQ(ReadFile(err),
            "citcat capture: standard output: write error: No space left on device\n");

  const std::string fifo = (d / "fifo").string(), copy = (d / "copy").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  status = std::system(absl::StrCat("cat ", fifo, " >", copy, " & ", CITCAT_BINARY, " dump ",
                                    In("cap.cat"), " --limit 3 -o ", fifo, "; s=$?; wait; exit $s")
                           .c_str());
  EXPECT_EQ(WEXITSTATUS(status), 0);
  struct stat st;
  ASSERT_EQ(stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_THAT(ReadFile(copy), ::testing::StartsWith("citcat-cat "));
  EXPECT_THAT(Temporaries(d), ::testing::IsEmpty());
}

// A file system that refuses more bytes (a full disk, here a file size limit between the sizes
// of ims.pb and aes.pb): the IMS, written whole first, does not stay without its AES.
TEST_F(Outputs, AWriteErrorLeavesNoOutput) {
  const uint64_t ims = fs::file_size(In("x/ims.pb")), aes = fs::file_size(In("x/aes.pb"));
  ASSERT_GT(aes, ims + 2048);
  const uint64_t limit_kib = (ims + aes) / 2 / 1024;
  for (const std::string& command :
       {absl::StrCat("extract --quiet ", In("cap.cat"), " -o {D}/out"),
        absl::StrCat("unpack --quiet ", In("t.citcat"), " -o {D}/out")}) {
    SCOPED_TRACE(command);
    const fs::path d = testing::FreshTestDir("outputs-full");
    const std::string err = (d / "err").string();
    const std::string script =
        absl::StrCat("trap '' XFSZ; ulimit -f ", limit_kib, "; exec ", CITCAT_BINARY, " ",
                     absl::StrReplaceAll(command, {{"{D}", d.string()}}), " 2>", err);
    std::ofstream(d / "run.sh") << script;
    const int status = std::system(absl::StrCat("bash ", (d / "run.sh").string()).c_str());
    EXPECT_EQ(WEXITSTATUS(status), 1);
    EXPECT_THAT(ReadFile(err), HasSubstr("aes.pb: write error: File too large"));
    EXPECT_EQ(Lines(ReadFile(err)), 1);
    EXPECT_FALSE(fs::exists(d / "out/ims.pb"));
    EXPECT_THAT(Temporaries(d), ::testing::IsEmpty());
  }
}

// A long replay interrupted by each signal: its temporaries go, it says so in one line and exits
// 128 + the signal.
TEST_F(Outputs, AnInterruptedReplayLeavesNothing) {
  const fs::path d = testing::FreshTestDir("outputs-signals");
  // Long enough to interrupt: a ChampSim trace through xz runs at about 3 M instructions/s.
  ASSERT_EQ(testing::RunCitcat(d, absl::StrCat("capture --workload sort --instructions 3000000 "
                                               "--quiet -o ",
                                               (d / "long.cat").string()))
                .exit_code,
            0);
  ASSERT_EQ(testing::RunCitcat(d, absl::StrCat("extract --quiet ", (d / "long.cat").string(),
                                               " -o ", (d / "long").string()))
                .exit_code,
            0);
  for (const auto& [signal, code, line] :
       {std::tuple{SIGINT, 130, "citcat replay: interrupted (SIGINT), temporary files removed\n"},
        std::tuple{SIGTERM, 143, "citcat replay: terminated (SIGTERM), temporary files removed\n"},
        std::tuple{SIGHUP, 129, "citcat replay: hung up (SIGHUP), temporary files removed\n"}}) {
    SCOPED_TRACE(signal);
    const fs::path out = d / absl::StrCat("out-", signal);
    fs::create_directories(out);
    const std::string err = (d / "err").string();
    const std::string ims = (d / "long/ims.pb").string(), aes = (d / "long/aes.pb").string();
    const std::string trace = (out / "t.champsim.xz").string(), cat = (out / "r.cat").string();
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      if (freopen(err.c_str(), "w", stderr) == nullptr) _exit(126);
      execl(CITCAT_BINARY, CITCAT_BINARY, "replay", "--ims", ims.c_str(), "--aes", aes.c_str(),
            "--format", "champsim", "-o", trace.c_str(), "--cat", cat.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    // Once both temporaries exist, the replay is under way.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (Temporaries(out).size() < 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_EQ(Temporaries(out).size(), 2u);
    kill(pid, signal);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), code);
    EXPECT_EQ(ReadFile(err), line);
    EXPECT_TRUE(fs::is_empty(out));
  }
}

}  // namespace
}  // namespace citcat
