// The citcat binary as a user runs it: exit codes, one-line errors, no partial outputs.

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "guest/r4400/guest_paths.h"
#include "tests/support/run_citcat.h"

namespace citcat {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

using Result = testing::CommandResult;
using testing::ReadFile;

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir(
        absl::StrCat("cli-", ::testing::UnitTest::GetInstance()->current_test_info()->name()));
  }

  Result Run(const std::string& args) { return testing::RunCitcat(dir_, args); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name, std::ios::binary) << text;
  }
  // Files in the test directory other than the captured output streams.
  std::vector<std::string> Files() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) {
      std::string name = e.path().filename().string();
      if (name != "stdout" && name != "stderr") names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir_;
};

const std::string kSample = std::string(CITCAT_SOURCE_DIR) + "/examples/r4400-sample.txt";

int Lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

TEST_F(Cli, OverviewAndHelp) {
  Result none = Run("");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.out, HasSubstr("commands:"));
  Result help = Run("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("dump"));
  EXPECT_THAT(help.out, HasSubstr("assemble"));

  Result dump_help = Run("dump --help");
  EXPECT_EQ(dump_help.exit_code, 0);
  std::string text = dump_help.out + dump_help.err;
  EXPECT_THAT(text, HasSubstr("citcat dump CAPTURE.cat"));
  EXPECT_THAT(text, HasSubstr("--limit"));
  Result assemble_help = Run("assemble --help");
  EXPECT_THAT(assemble_help.out + assemble_help.err, Not(HasSubstr("--limit")));
}

TEST_F(Cli, UnknownCommandAndOptionAreUsageErrors) {
  Result bogus = Run("bogus");
  EXPECT_EQ(bogus.exit_code, 2);
  EXPECT_EQ(bogus.err, "citcat: unknown command 'bogus' (see citcat --help)\n");
  Result foreign = Run(absl::StrCat("assemble --limit=3 ", kSample, " -o ", Path("x.cat")));
  EXPECT_EQ(foreign.exit_code, 2);
  EXPECT_THAT(foreign.err, HasSubstr("unknown option '--limit=3'"));
  Result no_output = Run(absl::StrCat("assemble ", kSample));
  EXPECT_NE(no_output.exit_code, 0);
  EXPECT_THAT(no_output.err, HasSubstr("needs -o OUTPUT"));
  EXPECT_TRUE(Files().empty());
}

// Every command words a usage error the same way: one line "citcat CMD: ...", exit code 2.
TEST_F(Cli, EveryCommandReportsUsageErrorsAlike) {
  for (const char* command : {"demo", "dump", "capture", "extract", "replay", "verify", "assemble",
                              "pack", "split", "join", "unpack", "stats"}) {
    Result r = Run(absl::StrCat(command, " --bogus x"));
    EXPECT_EQ(r.exit_code, 2) << command;
    EXPECT_EQ(r.err, absl::StrCat("citcat ", command, ": unknown option '--bogus' (see citcat ",
                                  command, " --help)\n"));
  }
  struct Case {
    std::string args, err;
  } cases[] = {
      {"split x.citcat -o " + Path("d"),
       "citcat split: give --segments K or --every N (one of them)\n"},
      {"replay x.citcat --jobs abc", "citcat replay: --jobs abc: not a valid value"},
      {"replay x.citcat --jobs 0", "citcat replay: --jobs must be 1 to 1024\n"},
      {"split x.citcat --segments=-1 -o " + Path("d"), "citcat split: --segments -1: not a valid"},
      {"dump x.cat --quiet=maybe", "citcat dump: --quiet maybe: not a valid value"},
      {"dump x.cat -o", "citcat dump: -o needs a value\n"},
      {"pack x", "citcat pack: needs -o OUTPUT (see citcat pack --help)\n"},
      {"join p-0001.txt -o " + Path("j"), "citcat join: needs --segment-dir DIR"},
  };
  for (const Case& c : cases) {
    Result r = Run(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_THAT(r.err, StartsWith(c.err)) << c.args;
    EXPECT_EQ(Lines(r.err), 1) << r.err;
  }
  EXPECT_TRUE(Files().empty());
}

TEST_F(Cli, AssembleDumpAssembleIsIdentical) {
  ASSERT_EQ(Run(absl::StrCat("assemble ", kSample, " -o ", Path("a.cat"))).exit_code, 0);
  Result dump = Run(absl::StrCat("dump ", Path("a.cat"), " -o ", Path("a.txt")));
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  ASSERT_EQ(Run(absl::StrCat("assemble --quiet ", Path("a.txt"), " -o ", Path("b.cat"))).exit_code,
            0);
  EXPECT_EQ(ReadFile(Path("a.cat")), ReadFile(Path("b.cat")));
  EXPECT_THAT(Files(), ::testing::ElementsAre("a.cat", "a.txt", "b.cat"));

  Result limited = Run(absl::StrCat("dump --limit 2 ", Path("a.cat")));
  ASSERT_EQ(limited.exit_code, 0);
  std::vector<std::string> lines = absl::StrSplit(limited.out, '\n', absl::SkipEmpty());
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[lines.size() - 3], "records");
  EXPECT_THAT(lines.back(), HasSubstr("uncached-write addr=0x1fe01008"));
}

TEST_F(Cli, BadInputsGiveOneLineAndLeaveNoOutput) {
  ASSERT_EQ(Run(absl::StrCat("assemble ", kSample, " -o ", Path("good.cat"))).exit_code, 0);
  std::string good = ReadFile(Path("good.cat"));
  Write("truncated.cat", good.substr(0, good.size() - 30));
  Write("text.cat", "this is not a trace\n");
  Write("bad.txt", "citcat-cat 1.0\nmachine vax\n");

  struct Case {
    std::string args, error;
  } cases[] = {
      {"dump " + Path("missing.cat"), "missing.cat: cannot open: No such file or directory"},
      {"dump " + Path("text.cat"), "text.cat: offset 0: not a CAT file"},
      {"dump " + Path("truncated.cat") + " -o " + Path("out.txt"), "truncated.cat: offset "},
      {"dump " + dir_.string(), "is a directory"},
      {"assemble " + Path("bad.txt") + " -o " + Path("out.cat"),
       "bad.txt:2: unknown machine 'vax'"},
      {"assemble " + Path("good.cat") + " -o " + Path("out.cat"), "good.cat:1:"},
      {"assemble " + kSample + " -o " + Path("no/such/dir/out.cat"), "cannot create"},
  };
  for (const Case& c : cases) {
    Result r = Run(c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args;
    EXPECT_THAT(r.err, HasSubstr(c.error)) << c.args;
    EXPECT_EQ(Lines(r.err), 1) << r.err;
  }
  EXPECT_THAT(Files(), ::testing::ElementsAre("bad.txt", "good.cat", "text.cat", "truncated.cat"));
}

TEST_F(Cli, ExtractWritesImsAndAes) {
  ASSERT_EQ(Run(absl::StrCat("assemble ", kSample, " -o ", Path("s.cat"))).exit_code, 0);
  Result x = Run(absl::StrCat("extract ", Path("s.cat"), " -o ", Path("out")));
  ASSERT_EQ(x.exit_code, 0) << x.err;
  EXPECT_THAT(x.err, HasSubstr("1 interrupts, 1 DMA, 2 device accesses, 2 register reads"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "ims.pb"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "aes.pb"));

  std::string good = ReadFile(Path("s.cat"));
  Write("cut.cat", good.substr(0, good.size() - 30));
  Result bad = Run(absl::StrCat("extract ", Path("cut.cat"), " -o ", Path("bad")));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(Lines(bad.err), 1);
  EXPECT_FALSE(fs::exists(dir_ / "bad"));
}

TEST_F(Cli, CaptureListsWorkloads) {
  Result r = Run("capture --list-workloads");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("pointer chasing"));
  EXPECT_THAT(r.out, HasSubstr(CITCAT_R4400_DEFAULT_MIX));
}

TEST_F(Cli, CaptureIsReproducibleAndTheSeedMatters) {
  for (const char* name : {"a", "b"}) {
    Result r = Run(absl::StrCat("capture --workload sort --seed 3 --quiet -o ", Path(name)));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  Result other = Run(absl::StrCat("capture --workload sort --seed 4 -o ", Path("c")));
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_THAT(other.out, HasSubstr("sort: checksum"));
  EXPECT_THAT(other.out, HasSubstr("interrupts"));
  EXPECT_THAT(other.out, HasSubstr("perturbation"));
  EXPECT_EQ(ReadFile(Path("a")), ReadFile(Path("b")));
  EXPECT_NE(ReadFile(Path("a")), ReadFile(Path("c")));
  Result x = Run(absl::StrCat("extract --quiet ", Path("a"), " -o ", Path("x")));
  EXPECT_EQ(x.exit_code, 0) << x.err;
}

TEST_F(Cli, CaptureRunsAProgramBuiltWithTheSdk) {
  Result r = Run(absl::StrCat("capture --elf ", CITCAT_R4400_SDK_EXAMPLE_ELF, " -o ", Path("h")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("fib(20) = 6765"));
}

TEST_F(Cli, CaptureBuildsACFileWithTheSdk) {
  Result r =
      Run(absl::StrCat("capture --elf ", CITCAT_R4400_SDK_DIR, "/example/hello.c -o ", Path("h")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("fib(20) = 6765"));
  Write("bad.c", "int main(void) { return undefined_name; }\n");
  Result bad = Run(absl::StrCat("capture --elf ", Path("bad.c"), " -o ", Path("b")));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("bad.c: does not build against the guest SDK"));
  EXPECT_THAT(Files(), ::testing::ElementsAre("bad.c", "h"));
}

// A user's program is held to warnings, not to our -Werror: it builds and runs.
TEST_F(Cli, CaptureBuildsACFileWithWarnings) {
  Write("warn.c",
        "#include \"citcat_sdk.h\"\n"
        "int main(void) { int unused; printf(\"warned\\n\"); return 0; }\n");
  Result r =
      Run(absl::StrCat("capture --instructions 300000 --elf ", Path("warn.c"), " -o ", Path("w")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("-Wunused-variable"));
  EXPECT_THAT(r.out, HasSubstr("warned"));
}

TEST_F(Cli, VersionIsTheProjects) {
  Result r = Run("--version");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, absl::StrCat("citcat ", CITCAT_VERSION, "\n"));
}

// `--elf a.c b.c --cflags ...`: several files, the user's options, standard C (newlib).
TEST_F(Cli, CaptureBuildsSeveralCFilesWithTheirOptions) {
  Write("main.c",
        "#include <stdio.h>\n#include <stdlib.h>\nint twice(int);\n"
        "int main(void) { printf(\"twice %d %.2f\\n\", twice(21), atof(\"2.5\")); return 0; }\n");
  Write("twice.c", "int twice(int x) { return SCALE * x; }\n");
  Result r = Run(absl::StrCat("capture --elf ", Path("main.c"), " ", Path("twice.c"),
                              " --cflags '-DSCALE=2 -O1' -o ", Path("m")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("twice 42 2.50\n"));
  EXPECT_THAT(r.out, HasSubstr("the guest halted"));
  Result stats = Run(absl::StrCat("stats ", Path("m")));
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_THAT(stats.out, HasSubstr("the run ends with the guest halting"));
  // More files only follow --elf.
  Result bare = Run(absl::StrCat("capture --workload sort ", Path("main.c"), " -o ", Path("x")));
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_THAT(bare.err, HasSubstr("usage: citcat capture"));
}

// --cflags reaches the compiler as words, never through a shell: what a shell would run or
// expand arrives literally (here as a macro the program prints).
TEST_F(Cli, CaptureCflagsReachTheCompilerWithoutAShell) {
  Write("say.c",
        "#include <stdio.h>\n#define STR(x) #x\n#define XSTR(x) STR(x)\n"
        "int main(void) { printf(\"[%s] [%s]\\n\", XSTR(MSG), GREETING); return 0; }\n");
  const std::string payload =
      absl::StrCat("$(touch${IFS}", Path("pwned"), ")`touch${IFS}", Path("pwned2"), "`;x>y|z");
  // The outer single quotes are for the test's own shell; citcat sees what is inside them.
  Result r = Run(absl::StrCat("capture --elf ", Path("say.c"), " --cflags '-DMSG=", payload,
                              " \"-DGREETING=\\\"a *\\\"\"' -o ", Path("s")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat("[", payload, "] [a *]\n")));
  EXPECT_FALSE(std::filesystem::exists(Path("pwned")));
  EXPECT_FALSE(std::filesystem::exists(Path("pwned2")));
  Result open =
      Run(absl::StrCat("capture --elf ", Path("say.c"), " --cflags '\"-O1' -o ", Path("t")));
  EXPECT_EQ(open.exit_code, 1);
  EXPECT_THAT(open.err, HasSubstr("is not closed"));
  EXPECT_FALSE(std::filesystem::exists(Path("t")));
}

// Options that would be ignored are refused instead.
TEST_F(Cli, CaptureRefusesOptionsItWouldIgnore) {
  Result cflags = Run(absl::StrCat("capture --cflags -O1 -o ", Path("o")));
  EXPECT_EQ(cflags.exit_code, 2);
  EXPECT_THAT(cflags.err, HasSubstr("--cflags is for the C files of --elf"));
  for (const char* list : {"sort,,hash", ",sort", "sort,"}) {
    Result r = Run(absl::StrCat("capture --workload ", list, " -o ", Path("o")));
    EXPECT_EQ(r.exit_code, 2) << list;
    EXPECT_THAT(r.err, HasSubstr("has an empty name")) << list;
  }
  EXPECT_TRUE(Files().empty());
}

// Capture runs to the end unless --instructions caps it; then the summary and stats say so.
TEST_F(Cli, CaptureSaysWhenACapCutTheRunShort) {
  Result r = Run(absl::StrCat("capture --workload sort --instructions 200000 -o ", Path("s")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("cut short by --instructions"));
  EXPECT_THAT(r.err, HasSubstr("cut short at --instructions 200000"));
  Result stats = Run(absl::StrCat("stats ", Path("s")));
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_THAT(stats.out, HasSubstr("the trace ends before the guest powered the machine off"));
}

TEST_F(Cli, CaptureRefusesWhatItCannotRun) {
  Write("not.elf", "not an executable");
  struct Case {
    std::string args, error;
  } cases[] = {
      {"capture --elf " + Path("missing.elf") + " -o " + Path("o"), "missing.elf: cannot open"},
      {"capture --elf " + Path("not.elf") + " -o " + Path("o"), "not.elf: "},
      {"capture --machine sparc -o " + Path("o"),
       "unknown machine 'sparc' (machines: r4400, i486)"},
      {"capture --machine i486 --elf " + Path("not.elf") + " -o " + Path("o"), "not.elf: "},
      {"capture --machine i486 --workload nosuch -o " + Path("o"), "no workload 'nosuch'"},
      {"capture --memory-mb 1000 -o " + Path("o"), "memory size"},
      {"capture --kernel " + Path("not.elf") + " -o " + Path("o"), "not.elf"},
  };
  for (const Case& c : cases) {
    Result r = Run(c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args;
    EXPECT_THAT(r.err, HasSubstr(c.error)) << c.args;
    EXPECT_EQ(Lines(r.err), 1) << r.err;
  }
  EXPECT_THAT(Files(), ::testing::ElementsAre("not.elf"));
}

// The SDK example built with the i486 SDK, captured on the traced PC and verified.
TEST_F(Cli, TheSdkExampleRunsOnTheI486) {
  const std::string example = std::string(CITCAT_SOURCE_DIR) + "/guest/r4400/sdk/example/hello.c";
  Result r = Run("capture --machine i486 --elf " + example + " -o " + Path("hello.cat"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("hello: fib(20) = 6765"));
  r = Run("verify " + Path("hello.cat"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("identical"));
}

TEST_F(Cli, DemoRunsTheMainJob) {
  Result demo = Run("demo");
  ASSERT_EQ(demo.exit_code, 0) << demo.err;
  EXPECT_THAT(demo.out, HasSubstr("sort: checksum"));
  EXPECT_THAT(demo.out, HasSubstr("IMS+AES vs CAT"));
  // Every machine, each verified.
  EXPECT_THAT(demo.out, HasSubstr("on the traced R4400"));
  EXPECT_THAT(demo.out, HasSubstr("on the traced i486"));
  const std::string verified = "the regenerated CAT is identical to the captured one";
  const size_t first = demo.out.find(verified);
  ASSERT_NE(first, std::string::npos);
  EXPECT_NE(demo.out.find(verified, first + 1), std::string::npos);
}

}  // namespace
}  // namespace citcat
