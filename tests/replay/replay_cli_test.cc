// `citcat replay` and `citcat verify` as a user runs them: exit codes, one-line errors, no partial
// outputs after a divergence, and the two ways of verifying.

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cat_parser/reader.h"
#include "cat_parser/writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ims/ims.pb.h"
#include "tests/replay/guest_cli_fixture.h"
#include "tests/support/run_citcat.h"

namespace citcat {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using Result = testing::CommandResult;
using testing::ReadFile;

class ReplayCli : public replay_test::GuestCliTest<ReplayCli> {
 protected:
  static void SetUpTestSuite() { CaptureAndExtract("replay-cli", 4); }
};

TEST_F(ReplayCli, ReplayWritesTraceAndCatThenVerifyFindsThemIdentical) {
  Result r = Run(
      absl::StrCat(ReplayArgs(), " -o ", Path("trace.txt"), " --cat ", Path("regenerated.cat")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("instructions replayed"));
  EXPECT_THAT(ReadFile(Path("trace.txt")), HasSubstr(" - interrupt"));
  r = Run(absl::StrCat("verify ", Path("capture.cat"), " ", Path("regenerated.cat")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("identical"));
}

TEST_F(ReplayCli, VerifyInOneGo) {
  Result r = Run(absl::StrCat("verify ", Path("capture.cat")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("identical"));
  EXPECT_THAT(r.err, HasSubstr("M instructions/s"));
  r = Run(absl::StrCat("verify ", Path("capture.cat"), " --quiet"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

// A copy of the CAT at `from` with one data bit of record `index` flipped.
void CopyWithFlip(const std::string& from, const std::string& to, uint64_t index) {
  auto reader = cat::CatReader::Open(from);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto writer = cat::CatWriter::Create(to, (*reader)->header());
  ASSERT_TRUE(writer.ok()) << writer.status();
  cat::BusRecord r;
  for (uint64_t i = 0;; ++i) {
    auto more = (*reader)->Next(r);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    std::vector<uint8_t> data(r.data.begin(), r.data.end());
    if (i == index && !data.empty()) data[0] ^= 1;
    r.data = data;
    ASSERT_TRUE((*writer)->Write(r).ok());
  }
  ASSERT_TRUE((*writer)->Finish().ok());
}

TEST_F(ReplayCli, VerifyNamesTheFirstDifference) {
  // The capture against an exact copy is identical; against a copy with one bit changed after the
  // state dump, or inside it (a register value), it is not. Against itself it proves nothing, and
  // verify says so.
  Result self = Run(absl::StrCat("verify ", Path("capture.cat"), " ", Path("capture.cat")));
  EXPECT_EQ(self.exit_code, 2);
  EXPECT_THAT(self.err, HasSubstr("comparing a file with itself proves nothing"));
  std::filesystem::copy_file(Path("capture.cat"), Path("copy.cat"),
                             std::filesystem::copy_options::overwrite_existing);
  Result r = Run(absl::StrCat("verify ", Path("capture.cat"), " ", Path("copy.cat")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  uint64_t start = 0;  // "... compared from record N on"
  const size_t at = r.err.find("from record ");
  ASSERT_NE(at, std::string::npos) << r.err;
  ASSERT_TRUE(absl::SimpleAtoi(r.err.substr(at + 12, r.err.find(' ', at + 12) - at - 12), &start));
  // The last store of a register into the dump.
  uint64_t dump_store = 0;
  {
    auto reader = cat::CatReader::Open(Path("capture.cat"));
    ASSERT_TRUE(reader.ok());
    const cat::AddressWindow* state = (*reader)->header().FindMagic("cpu-state");
    ASSERT_NE(state, nullptr);
    cat::BusRecord rec;
    for (uint64_t i = 0; i < start; ++i) {
      ASSERT_TRUE(*(*reader)->Next(rec));
      if (rec.kind == cat::RecordKind::kUncachedWrite && state->Contains(rec.address)) {
        dump_store = i;
      }
    }
  }
  for (uint64_t flipped : {start + 100, dump_store}) {
    CopyWithFlip(Path("capture.cat"), Path("flipped.cat"), flipped);
    r = Run(absl::StrCat("verify ", Path("capture.cat"), " ", Path("flipped.cat")));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_THAT(r.err, StartsWith(absl::StrCat("citcat verify: not identical: record ",
                                               flipped < start ? start - 1 : flipped)));
    EXPECT_THAT(r.err, HasSubstr("original:"));
    EXPECT_THAT(r.err, HasSubstr("regenerated:"));
  }
}

TEST_F(ReplayCli, DivergenceLeavesNoOutputs) {
  // An AES of nothing but its format version: replay diverges at once.
  std::ofstream(Path("empty.pb")) << std::string("\x08\x01", 2);
  Result r = Run(absl::StrCat("replay --ims ", Path("x/ims.pb"), " --aes ", Path("empty.pb"),
                              " -o ", Path("diverged.txt"), " --cat ", Path("diverged.cat")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("citcat replay: divergence at CAT record "));
  EXPECT_FALSE(fs::exists(Path("diverged.txt")));
  EXPECT_FALSE(fs::exists(Path("diverged.cat")));
}

TEST_F(ReplayCli, BadInputIsOneLine) {
  Result r = Run("replay");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("usage: citcat replay"));
  r = Run(absl::StrCat("replay --ims ", Path("nonexistent.pb"), " --aes ", Path("x/aes.pb")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  // The AES where the IMS belongs.
  r = Run(absl::StrCat("replay --ims ", Path("x/aes.pb"), " --aes ", Path("x/aes.pb")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  std::ofstream(Path("garbage.pb")) << "\xff\xff\xff\xff not protobuf";
  r = Run(absl::StrCat("replay --ims ", Path("garbage.pb"), " --aes ", Path("x/aes.pb")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("not a citcat.ims.InitialMachineState message"));
  // A string field that is not UTF-8 fails the parse too, and Protocol Buffers' own account of
  // why does not add a line of its own.
  ims::InitialMachineState bad;
  ASSERT_TRUE(bad.ParseFromString(ReadFile(Path("x/ims.pb"))));
  bad.mutable_description()->set_producer("\xff");
  std::ofstream(Path("not-utf8.pb"), std::ios::binary) << bad.SerializePartialAsString();
  r = Run(absl::StrCat("replay --ims ", Path("not-utf8.pb"), " --aes ", Path("x/aes.pb")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("not a citcat.ims.InitialMachineState message"));
  r = Run("verify");
  EXPECT_EQ(r.exit_code, 2);
  r = Run(absl::StrCat("verify ", Path("nonexistent.cat")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace citcat
