// citcat join: the pieces of a trace and of a regenerated CAT, replayed segment by segment from
// the archives of citcat split, join to the whole's bytes; pieces missing, out of order,
// damaged or of another segment are refused, and nothing is written then.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/support/run_citcat.h"
#include "traces/output.h"

namespace citcat {
namespace {

using citcat::testing::ReadFile;
using citcat::testing::RunCitcat;

class Join : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::filesystem::path(citcat::testing::FreshTestDir("join"));
    const std::string d = dir_->string() + "/";
    auto ok = [](const std::string& args) {
      auto r = RunCitcat(*dir_, args);
      ASSERT_EQ(r.exit_code, 0) << args << ": " << r.err;
    };
    ok(absl::StrCat("capture --quiet --machine i486 --workload rep --instructions 1500000 -o ", d,
                    "c.cat"));
    ok(absl::StrCat("extract --quiet ", d, "c.cat -o ", d, "x"));
    ok(absl::StrCat("pack --quiet ", d, "x -o ", d, "t.citcat"));
    ok(absl::StrCat("replay --quiet ", d, "t.citcat --format din -o ", d, "whole.din --cat ", d,
                    "whole.cat"));
    ok(absl::StrCat("replay --quiet ", d, "t.citcat -o ", d, "whole.txt"));
    ok(absl::StrCat("split --quiet ", d, "t.citcat --segments 3 -o ", d, "segs"));
    std::filesystem::create_directories(*dir_ / "p");
    for (int k = 1; k <= 3; ++k) {
      const std::string n = absl::StrCat("000", k);
      ok(absl::StrCat("replay --quiet ", d, "segs/segment-", n, ".citcat --format din -o ", d,
                      "p/piece-", n, ".din --cat ", d, "p/piece-", n, ".cat"));
      ok(absl::StrCat("replay --quiet ", d, "segs/segment-", n, ".citcat --format din -o ", d,
                      "p/piece-", n, ".din.zst"));
      ok(absl::StrCat("replay --quiet ", d, "segs/segment-", n, ".citcat -o ", d, "p/piece-", n,
                      ".txt"));
    }
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }

  static std::string Path(const std::string& name) { return (*dir_ / name).string(); }
  // "p/piece-0001.cat p/piece-0002.cat ..." for the given segments and suffix.
  static std::string Pieces(std::initializer_list<int> segments, const std::string& suffix) {
    std::vector<std::string> paths;
    for (int k : segments) paths.push_back(Path(absl::StrCat("p/piece-000", k, suffix)));
    return absl::StrJoin(paths, " ");
  }
  static citcat::testing::CommandResult Run(const std::string& args) {
    return RunCitcat(*dir_, args);
  }
  // A refusal: exit code 1 (2 for a usage error), one line naming `what`, no output left behind.
  static void Refused(const std::string& args, const std::string& what,
                      const std::string& out = "out", int exit_code = 1) {
    SCOPED_TRACE(args);
    auto r = Run(absl::StrCat("join ", args, " -o ", Path(out)));
    EXPECT_EQ(r.exit_code, exit_code) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    // Neither the output nor a temporary of it.
    for (const auto& entry : std::filesystem::directory_iterator(*dir_)) {
      EXPECT_NE(entry.path().filename().string().substr(0, 3), "out") << entry.path();
    }
  }

  static std::filesystem::path* dir_;
};

std::filesystem::path* Join::dir_ = nullptr;

TEST_F(Join, PiecesJoinToTheWhole) {
  // The plain text trace: each piece checked against its segment's manifest.
  auto r = Run(absl::StrCat("join --segment-dir ", Path("segs"), " ", Pieces({1, 2, 3}, ".txt"),
                            " -o ", Path("j.txt")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("3 pieces"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("as its segment's manifest sums it"), std::string::npos) << r.err;
  EXPECT_TRUE(ReadFile(Path("j.txt")) == ReadFile(Path("whole.txt")));

  // The CAT: the first piece's state dump and every piece's records as their segments' manifests
  // count and sum them.
  r = Run(absl::StrCat("join --segment-dir ", Path("segs"), " ", Pieces({1, 2, 3}, ".cat"), " -o ",
                       Path("j.cat")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("as its segment's manifest sums it"), std::string::npos) << r.err;
  EXPECT_TRUE(ReadFile(Path("j.cat")) == ReadFile(Path("whole.cat")));
  r = Run(absl::StrCat("verify ", Path("c.cat"), " ", Path("j.cat")));
  EXPECT_EQ(r.exit_code, 0) << r.err;

  // Compressed: one zstd frame per piece, the whole's bytes decompressed.
  r = Run(absl::StrCat("join --quiet --segment-dir ", Path("segs"), " ",
                       Pieces({1, 2, 3}, ".din.zst"), " -o ", Path("j.din.zst")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  auto bytes = traces::ReadDecompressed(Path("j.din.zst"));
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_TRUE(*bytes == ReadFile(Path("whole.din")));
  // Compressed pieces into a plain output: each decompressed, and so checked, on the way.
  r = Run(absl::StrCat("join --quiet --segment-dir ", Path("segs"), " ",
                       Pieces({1, 2, 3}, ".din.zst"), " -o ", Path("j.din")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(ReadFile(Path("j.din")) == ReadFile(Path("whole.din")));
}

TEST_F(Join, MissingOrOutOfOrderPiecesAreRefused) {
  const std::string segs = absl::StrCat("--segment-dir ", Path("segs"), " ");
  Refused(segs + Pieces({1, 3}, ".txt"), "the piece of segment 2 is missing");
  Refused(segs + Pieces({2, 1, 3}, ".txt"), "pieces out of order or given twice");
  Refused(segs + Pieces({1, 2, 2, 3}, ".txt"), "pieces out of order or given twice");
  Refused(segs + Pieces({1, 2}, ".txt") + " " + Path("p/nothing-0003.txt"),
          "the piece of segment 3 is missing");
  Refused(segs + Pieces({1, 2}, ".cat"), "holds 3 segments, but 2 pieces were given");
  Refused(segs + Pieces({1, 2}, ".txt"), "holds 3 segments, but 2 pieces were given");
  Refused(segs + Path("whole.txt"), "no segment number in the file name");
  Refused(segs + Pieces({1, 2}, ".txt") + " " + Path("p/piece-0003.cat"), "is a CAT");
  Refused(segs + Pieces({1, 2}, ".din.zst") + " " + Path("p/piece-0003.din"),
          "must be compressed like the first piece (.zst)");
  // Without the split's directory nothing tells a missing last piece: join refuses to guess.
  Refused(Pieces({1, 2}, ".txt"), "needs --segment-dir DIR", "out", 2);
  Refused(Pieces({1, 2, 3}, ".din.zst"), "needs --segment-dir DIR", "out.zst", 2);
  // Uncompressed pieces of a format with no checksum and no instruction in them to check.
  Refused(segs + Pieces({1, 2, 3}, ".din"), "join cannot check an uncompressed piece");
}

TEST_F(Join, PlainTextPiecesAreCheckedAgainstTheirSegments) {
  const std::string segs = absl::StrCat("--segment-dir ", Path("segs"), " ");
  std::filesystem::create_directories(Path("txt"));
  // Swapped under the right names.
  std::filesystem::copy_file(Path("p/piece-0002.txt"), Path("txt/piece-0001.txt"));
  std::filesystem::copy_file(Path("p/piece-0001.txt"), Path("txt/piece-0002.txt"));
  Refused(segs + Path("txt/piece-0001.txt") + " " + Path("txt/piece-0002.txt") + " " +
              Path("p/piece-0003.txt"),
          "segment 1's manifest has");
  // Cut short: at a line's end, and in the middle of one.
  const std::string last = ReadFile(Path("p/piece-0003.txt"));
  const size_t cut = last.rfind('\n', last.size() / 2) + 1;
  { std::ofstream(Path("txt/piece-0003.txt"), std::ios::binary) << last.substr(0, cut); }
  Refused(segs + Pieces({1, 2}, ".txt") + " " + Path("txt/piece-0003.txt"),
          "segment 3's manifest has");
  { std::ofstream(Path("txt/piece-0003.txt"), std::ios::binary) << last.substr(0, cut + 5); }
  Refused(segs + Pieces({1, 2}, ".txt") + " " + Path("txt/piece-0003.txt"),
          "a last line cut short");
  // A damaged line (a digit of the first one's PC).
  std::string bad = last;
  bad[20] = 'x';
  { std::ofstream(Path("txt/piece-0003.txt"), std::ios::binary) << bad; }
  Refused(segs + Pieces({1, 2}, ".txt") + " " + Path("txt/piece-0003.txt"),
          "line 1 is not a line of the plain text trace");
}

// A copy of the split directory without, with an extra or with reordered segment archives.
TEST_F(Join, ASplitDirectoryMissingAnySegmentIsRefused) {
  const auto variant = [](const std::string& name, const std::vector<std::string>& from) {
    std::filesystem::create_directories(Path(name));
    for (size_t k = 0; k < from.size(); ++k) {
      std::filesystem::copy_file(Path(absl::StrCat("segs/segment-000", from[k], ".citcat")),
                                 Path(absl::StrCat(name, "/segment-000", k + 1, ".citcat")));
    }
    return Path(name);
  };
  const auto refused = [](const std::string& dir, const std::string& what) {
    SCOPED_TRACE(dir);
    auto r = Run(absl::StrCat("replay --quiet ", dir, " --jobs 2 -o ", Path("out.txt"), " --cat ",
                              Path("out.cat")));
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(Path("out.txt")));
    EXPECT_FALSE(std::filesystem::exists(Path("out.cat")));
  };
  refused(variant("no-last", {"1", "2"}),
          "segment 1 of 3 by its manifest, but segment archive 1 of the 2");
  refused(variant("no-middle", {"1", "3"}), "a segment missing, extra or out of its place");
  refused(variant("extra", {"1", "2", "3", "3"}), "segment archive 1 of the 4");
  refused(variant("swapped", {"2", "1", "3"}),
          "segment 2 of 3 by its manifest, but segment archive 1");
  // join checks the same against the directory.
  Refused(absl::StrCat("--segment-dir ", Path("no-last"), " ", Pieces({1, 2}, ".cat")),
          "names segment 1 of 3, not 1 of 2");
  // The whole directory replays to the whole.
  auto r = Run(absl::StrCat("replay --quiet ", Path("segs"), " --jobs 2 -o ", Path("d.txt")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(ReadFile(Path("d.txt")) == ReadFile(Path("whole.txt")));
}

// Every segment archive but the last ends at a cut; --jobs cuts it again and still ends there.
TEST_F(Join, ASegmentArchiveReplaysTheSameWithJobs) {
  for (int k = 1; k <= 3; ++k) {
    SCOPED_TRACE(k);
    const std::string n = absl::StrCat("000", k);
    auto r =
        Run(absl::StrCat("replay --quiet ", Path("segs/segment-" + n + ".citcat"), " --jobs 2 -o ",
                         Path("jobs-" + n + ".txt"), " --cat ", Path("jobs-" + n + ".cat")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(ReadFile(Path("jobs-" + n + ".txt")) == ReadFile(Path("p/piece-" + n + ".txt")));
    EXPECT_TRUE(ReadFile(Path("jobs-" + n + ".cat")) == ReadFile(Path("p/piece-" + n + ".cat")));
  }
}

TEST_F(Join, OutputsNeverOverwriteInputs) {
  // A segment archive of --segment-dir, by its name and through a hard link.
  std::filesystem::create_directories(Path("linked"));
  std::filesystem::create_hard_link(Path("segs/segment-0002.citcat"), Path("linked/seg.citcat"));
  const std::string before = ReadFile(Path("segs/segment-0002.citcat"));
  for (const std::string out : {"segs/segment-0002.citcat", "linked/seg.citcat"}) {
    auto r = Run(absl::StrCat("join --segment-dir ", Path("segs"), " ", Pieces({1, 2, 3}, ".cat"),
                              " -o ", Path(out)));
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("is also an input"), std::string::npos) << r.err;
  }
  EXPECT_TRUE(ReadFile(Path("segs/segment-0002.citcat")) == before);
  // verify of a file with itself, by name or through a link, proves nothing.
  std::filesystem::create_hard_link(Path("whole.cat"), Path("linked/whole.cat"));
  for (const std::string other : {"whole.cat", "linked/whole.cat"}) {
    auto r = Run(absl::StrCat("verify ", Path("whole.cat"), " ", Path(other)));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("are the same file: comparing a file with itself proves nothing"),
              std::string::npos)
        << r.err;
  }
}

TEST_F(Join, JobsErrorsNameTheUsersFiles) {
  auto r = Run(absl::StrCat("replay --quiet ", Path("t.citcat"), " --jobs 2 --cat ",
                            Path("no-such-dir/x.cat")));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(Path("no-such-dir/x.cat") + ":"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(".piece-"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// A signal at any moment of a split leaves neither the directory nor its temporary behind
// (or, when it comes too late, the whole directory).
TEST_F(Join, AnInterruptedSplitLeavesNothing) {
  int outcomes[2] = {0, 0};  // interrupted, finished first
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
    for (int delay_ms : {30, 120, 250}) {
      SCOPED_TRACE(absl::StrCat("signal ", signal, " after ", delay_ms, " ms"));
      const std::filesystem::path root = Path(absl::StrCat("sig-", signal, "-", delay_ms));
      std::filesystem::create_directories(root);
      const std::string dir = (root / "d").string(), archive = Path("t.citcat");
      const pid_t child = fork();
      ASSERT_GE(child, 0);
      if (child == 0) {
        const int null = open("/dev/null", O_WRONLY);
        dup2(null, STDERR_FILENO);
        execl(CITCAT_BINARY, CITCAT_BINARY, "split", "--quiet", archive.c_str(), "--every", "20000",
              "-o", dir.c_str(), static_cast<char*>(nullptr));
        _exit(127);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      kill(child, signal);
      int status = 0;
      ASSERT_EQ(waitpid(child, &status, 0), child);
      std::vector<std::string> left;
      for (const auto& e : std::filesystem::directory_iterator(root)) {
        left.push_back(e.path().filename().string());
      }
      if (WIFSIGNALED(status)) {  // before it had set its handlers, or made anything
        EXPECT_TRUE(left.empty()) << absl::StrJoin(left, " ");
      } else if (WEXITSTATUS(status) == 128 + signal) {
        ++outcomes[0];
        EXPECT_TRUE(left.empty()) << absl::StrJoin(left, " ");
      } else {
        ++outcomes[1];
        EXPECT_EQ(WEXITSTATUS(status), 0);
        EXPECT_EQ(left, std::vector<std::string>{"d"});
      }
    }
  }
  EXPECT_GT(outcomes[0], 0) << "no signal came while split ran";
}

TEST_F(Join, DamagedPiecesAreRefused) {
  // A CAT piece of another segment under the right name, and one with a flipped bit.
  std::filesystem::create_directories(Path("bad"));
  std::filesystem::copy_file(Path("p/piece-0002.cat"), Path("bad/piece-0003.cat"));
  Refused(absl::StrCat("--segment-dir ", Path("segs"), " ", Pieces({1, 2}, ".cat"), " ",
                       Path("bad/piece-0003.cat")),
          "segment 3's manifest has");
  std::string cat = ReadFile(Path("p/piece-0002.cat"));
  cat[cat.size() / 2] ^= 0x10;
  { std::ofstream(Path("bad/piece-0002.cat"), std::ios::binary) << cat; }
  Refused(absl::StrCat("--segment-dir ", Path("segs"), " ", Path("p/piece-0001.cat"), " ",
                       Path("bad/piece-0002.cat"), " ", Path("p/piece-0003.cat")),
          "checksum mismatch");
  // The first piece without its state dump.
  std::filesystem::copy_file(Path("p/piece-0002.cat"), Path("bad/piece-0001.cat"));
  Refused(absl::StrCat("--segment-dir ", Path("segs"), " ", Path("bad/piece-0001.cat"), " ",
                       Pieces({2, 3}, ".cat")),
          "is not the state dump");

  // A compressed piece cut short, and one with a flipped bit.
  std::string zst = ReadFile(Path("p/piece-0002.din.zst"));
  {
    std::ofstream(Path("bad/piece-0002.din.zst"), std::ios::binary)
        << zst.substr(0, zst.size() - 5);
  }
  Refused(absl::StrCat("--segment-dir ", Path("segs"), " ", Path("p/piece-0001.din.zst"), " ",
                       Path("bad/piece-0002.din.zst"), " ", Path("p/piece-0003.din.zst")),
          "zstd data cut short", "out.zst");
  zst[zst.size() / 2] ^= 0x04;
  { std::ofstream(Path("bad/piece-0002.din.zst"), std::ios::binary) << zst; }
  Refused(absl::StrCat("--segment-dir ", Path("segs"), " ", Path("p/piece-0001.din.zst"), " ",
                       Path("bad/piece-0002.din.zst"), " ", Path("p/piece-0003.din.zst")),
          "bad zstd data", "out.zst");
}

}  // namespace
}  // namespace citcat
