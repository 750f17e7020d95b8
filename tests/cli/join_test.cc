// citcat join: the pieces of a trace and of a regenerated CAT, replayed segment by segment from
// the archives of citcat split, join to the whole's bytes; pieces missing, out of order,
// damaged or of another segment are refused, and nothing is written then.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

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
    ok(absl::StrCat("split --quiet ", d, "t.citcat --segments 3 -o ", d, "segs"));
    std::filesystem::create_directories(*dir_ / "p");
    for (int k = 1; k <= 3; ++k) {
      const std::string n = absl::StrCat("000", k);
      ok(absl::StrCat("replay --quiet ", d, "segs/segment-", n, ".citcat --format din -o ", d,
                      "p/piece-", n, ".din --cat ", d, "p/piece-", n, ".cat"));
      ok(absl::StrCat("replay --quiet ", d, "segs/segment-", n, ".citcat --format din -o ", d,
                      "p/piece-", n, ".din.zst"));
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
  // A refusal: exit code 1, one line naming `what`, no output left behind.
  static void Refused(const std::string& args, const std::string& what,
                      const std::string& out = "out") {
    SCOPED_TRACE(args);
    auto r = Run(absl::StrCat("join ", args, " -o ", Path(out)));
    EXPECT_EQ(r.exit_code, 1) << r.err;
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
  auto r = Run(absl::StrCat("join --segment-dir ", Path("segs"), " ", Pieces({1, 2, 3}, ".din"),
                            " -o ", Path("j.din")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("3 pieces"), std::string::npos) << r.err;
  EXPECT_TRUE(ReadFile(Path("j.din")) == ReadFile(Path("whole.din")));

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
  r = Run(absl::StrCat("join --quiet ", Pieces({1, 2, 3}, ".din.zst"), " -o ", Path("j.din.zst")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  auto bytes = traces::ReadDecompressed(Path("j.din.zst"));
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_TRUE(*bytes == ReadFile(Path("whole.din")));
}

TEST_F(Join, MissingOrOutOfOrderPiecesAreRefused) {
  Refused(Pieces({1, 3}, ".din"), "the piece of segment 2 is missing");
  Refused(Pieces({2, 1, 3}, ".din"), "pieces out of order or given twice");
  Refused(Pieces({1, 2, 2, 3}, ".din"), "pieces out of order or given twice");
  Refused(Pieces({1, 2}, ".din") + " " + Path("p/nothing-0003.din"),
          "the piece of segment 3 is missing");
  Refused(absl::StrCat("--segment-dir ", Path("segs"), " ", Pieces({1, 2}, ".cat")),
          "holds 3 segments, but 2 pieces were given");
  Refused(Path("whole.din"), "no segment number in the file name");
  Refused(Pieces({1, 2}, ".din") + " " + Path("p/piece-0003.cat"), "is a CAT");
  Refused(Pieces({1, 2, 3}, ".din.zst"), "must be uncompressed");
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
  Refused(absl::StrCat(Path("p/piece-0001.cat"), " ", Path("bad/piece-0002.cat"), " ",
                       Path("p/piece-0003.cat")),
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
  Refused(absl::StrCat(Path("p/piece-0001.din.zst"), " ", Path("bad/piece-0002.din.zst"), " ",
                       Path("p/piece-0003.din.zst")),
          "zstd data cut short", "out.zst");
  zst[zst.size() / 2] ^= 0x04;
  { std::ofstream(Path("bad/piece-0002.din.zst"), std::ios::binary) << zst; }
  Refused(absl::StrCat(Path("p/piece-0001.din.zst"), " ", Path("bad/piece-0002.din.zst"), " ",
                       Path("p/piece-0003.din.zst")),
          "bad zstd data", "out.zst");
}

}  // namespace
}  // namespace citcat
