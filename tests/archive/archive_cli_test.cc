// citcat pack, unpack, replay TRACE.citcat and stats as a user runs them: the round trip
// reproducing the manifest's checksums, one-line errors for damaged archives, no partial outputs.
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "archive/archive.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/replay/guest_cli_fixture.h"
#include "tests/support/run_citcat.h"

namespace citcat {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using Result = testing::CommandResult;
using testing::ReadFile;

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

class ArchiveCli : public replay_test::GuestCliTest<ArchiveCli> {
 protected:
  static void SetUpTestSuite() {
    CaptureAndExtract("archive-cli", 6);
    Result r = Run(absl::StrCat("pack ", Path("x"), " -o ", Path("trace.citcat")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_THAT(r.err, HasSubstr("against 10 bytes per instruction"));
  }
};

// The IMS comes back byte for byte; the AES as the archive stores it (format version 2: the
// interrupts in columns, keyed by what replay needs), smaller, and replaying the same trace.
TEST_F(ArchiveCli, UnpackGivesBackTheExtractionAndTheManifest) {
  Result r = Run(absl::StrCat("unpack ", Path("trace.citcat"), " -o ", Path("u")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFile(Path("u/ims.pb")), ReadFile(Path("x/ims.pb")));
  EXPECT_THAT(ReadFile(Path("u/aes.pb")), StartsWith(std::string("\x08\x02", 2)));
  EXPECT_LT(ReadFile(Path("u/aes.pb")).size(), ReadFile(Path("x/aes.pb")).size());
  EXPECT_THAT(ReadFile(Path("u/manifest.txt")), StartsWith("citcat-archive-manifest 2\n"));
  r = Run(absl::StrCat("replay --ims ", Path("u/ims.pb"), " --aes ", Path("u/aes.pb"), " --cat ",
                       Path("u.cat"), " --quiet"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Run(absl::StrCat("verify ", Path("capture.cat"), " ", Path("u.cat")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Packing the unpacked files again gives the same archive, byte for byte.
  r = Run(absl::StrCat("pack ", Path("u"), " -o ", Path("again.citcat"), " --quiet"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFile(Path("again.citcat")), ReadFile(Path("trace.citcat")));
}

TEST_F(ArchiveCli, ReplayFromTheArchiveAloneRegeneratesTheCaptureAndTheTrace) {
  Result r = Run(absl::StrCat("replay ", Path("trace.citcat"), " -o ", Path("a.txt"), " --cat ",
                              Path("a.cat")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("instructions replayed"));
  r = Run(absl::StrCat("verify ", Path("capture.cat"), " ", Path("a.cat")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // The same trace as from the extraction's files.
  r = Run(absl::StrCat("replay --ims ", Path("x/ims.pb"), " --aes ", Path("x/aes.pb"), " -o ",
                       Path("b.txt"), " --quiet"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFile(Path("a.txt")), ReadFile(Path("b.txt")));
}

TEST_F(ArchiveCli, DamagedArchivesAreRefusedWithOneLineAndNoOutput) {
  const std::string good = ReadFile(Path("trace.citcat"));
  const std::pair<const char*, std::string> damaged[] = {
      {"empty", ""},
      {"truncated", good.substr(0, good.size() / 2)},
      {"flipped",
       [&] {
         std::string b = good;
         b[b.size() - 5] ^= 0x40;
         return b;
       }()},
      {"text", "hello, world\n"},
  };
  for (const auto& [name, bytes] : damaged) {
    const std::string path = Path(absl::StrCat("damaged-", name, ".citcat"));
    WriteFile(path, bytes);
    for (const std::string& command :
         {absl::StrCat("replay ", path, " -o ", Path("never.txt")),
          absl::StrCat("unpack ", path, " -o ", Path("never")), absl::StrCat("stats ", path)}) {
      Result r = Run(command);
      EXPECT_EQ(r.exit_code, 1) << name << ": " << command << "\n" << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << name << ": " << r.err;
      // stats reads whatever does not start with the archive magic as a CAT, which refuses it.
      if (command.rfind("stats", 0) != 0) {
        EXPECT_THAT(r.err, HasSubstr("byte offset")) << name;
      }
    }
    EXPECT_FALSE(fs::exists(Path("never.txt")));
    EXPECT_FALSE(fs::exists(Path("never/ims.pb")));
  }
}

TEST_F(ArchiveCli, AnArchiveWhoseReplayDiffersFromItsManifestIsAnError) {
  // A sound container whose manifest promises another CAT checksum: only the replay can tell.
  auto packed = archive::Read(Path("trace.citcat"));
  ASSERT_TRUE(packed.ok()) << packed.status();
  packed->manifest.cat_crc64 ^= 0x100;
  auto out = io::OutputFile::Create(Path("tampered.citcat"));
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE(archive::Write(*packed, **out).ok());
  ASSERT_TRUE((*out)->Commit().ok());
  Result r = Run(absl::StrCat("replay ", Path("tampered.citcat"), " -o ", Path("tampered.txt"),
                              " --cat ", Path("tampered.cat")));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("does not match the archive's manifest: cat-crc64 is 0x"));
  EXPECT_FALSE(fs::exists(Path("tampered.txt")));
  EXPECT_FALSE(fs::exists(Path("tampered.cat")));
}

TEST_F(ArchiveCli, AnEndPointBeyondTheTraceStopsAtTheManifestsInstructions) {
  // A sound container whose schedule ends a thousand times further on than the trace. The
  // guest kernel's last act is to switch the machine off, and then it spins: without the
  // manifest's instruction count, nothing would stop the replay before that far branch count.
  ASSERT_EQ(
      Run(absl::StrCat("capture --quiet --machine r4400 --workload int64 -o ", Path("int64.cat")))
          .exit_code,
      0);
  ASSERT_EQ(
      Run(absl::StrCat("extract --quiet ", Path("int64.cat"), " -o ", Path("int64"))).exit_code, 0);
  ASSERT_EQ(
      Run(absl::StrCat("pack --quiet ", Path("int64"), " -o ", Path("int64.citcat"))).exit_code, 0);
  auto packed = archive::Read(Path("int64.citcat"));
  ASSERT_TRUE(packed.ok()) << packed.status();
  aes::EventSchedule schedule;
  ASSERT_TRUE(schedule.ParseFromString(ReadFile(Path("int64/aes.pb"))));
  aes::EndPoint& end = *schedule.mutable_end();
  end.set_branch_count(end.branch_count() * 1000);
  end.set_cat_records(end.cat_records() * 1000);
  end.set_cpu_transactions(end.cpu_transactions() * 1000);
  const std::string bytes = schedule.SerializeAsString();
  packed->aes = aes::BytesInMemory(bytes, "aes.pb");
  packed->manifest.aes_bytes = bytes.size();
  auto out = io::OutputFile::Create(Path("endless.citcat"));
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE(archive::Write(*packed, **out).ok());
  ASSERT_TRUE((*out)->Commit().ok());
  const std::string past = absl::StrCat("went past the ", packed->manifest.instructions,
                                        " instructions the manifest records");
  for (const char* jobs : {"1", "2"}) {
    Result r = Run(absl::StrCat("replay --quiet --jobs ", jobs, " ", Path("endless.citcat"), " -o ",
                                Path("endless.txt")));
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr(past));
    EXPECT_FALSE(fs::exists(Path("endless.txt")));
  }
  Result r = Run(absl::StrCat("split --quiet ", Path("endless.citcat"), " --segments 2 -o ",
                              Path("endless-segments")));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(past));
}

TEST_F(ArchiveCli, AVersionOneArchiveStillReplaysAndUnpacksAndPacksAgainAsVersionTwo) {
  const std::string v1 = CITCAT_ARCHIVE_DATA "/int64-v1.citcat";
  Result r = Run(absl::StrCat("replay ", v1, " -o ", Path("v1.txt")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("183183 instructions replayed"));
  r = Run(absl::StrCat("unpack ", v1, " -o ", Path("v1"), " --quiet"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(ReadFile(Path("v1/manifest.txt")),
              StartsWith("citcat-archive-manifest 1\nmachine r4400\ninstructions 183183\n"));
  r = Run(absl::StrCat("pack ", Path("v1"), " -o ", Path("v2.citcat"), " --quiet"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Run(absl::StrCat("replay ", Path("v2.citcat"), " -o ", Path("v2.txt"), " --quiet"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFile(Path("v2.txt")), ReadFile(Path("v1.txt")));
  auto v2 = archive::Read(Path("v2.citcat"));
  ASSERT_TRUE(v2.ok()) << v2.status();
  EXPECT_EQ(v2->manifest.version, 2);
}

TEST_F(ArchiveCli, AnArchiveForAnotherMachineThanItsImsIsRefusedInOneLine) {
  auto packed = archive::Read(Path("trace.citcat"));
  ASSERT_TRUE(packed.ok()) << packed.status();
  packed->manifest.machine = "i486";
  auto out = io::OutputFile::Create(Path("i486.citcat"));
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE(archive::Write(*packed, **out).ok());
  ASSERT_TRUE((*out)->Commit().ok());
  for (const char* command : {"replay", "stats"}) {
    Result r = Run(absl::StrCat(command, " ", Path("i486.citcat")));
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << command << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("names the machine 'i486' but its IMS is for 'r4400'")) << command;
  }
}

TEST_F(ArchiveCli, StatsOfACaptureAndOfItsArchiveAgreeAndDrawTheCurve) {
  Result cat = Run(absl::StrCat("stats ", Path("capture.cat"), " --plot ", Path("curve.svg")));
  ASSERT_EQ(cat.exit_code, 0) << cat.err;
  EXPECT_THAT(cat.out, HasSubstr("records by kind"));
  EXPECT_THAT(cat.out, HasSubstr("record sizes (Fig. 5)"));
  EXPECT_THAT(cat.out, HasSubstr("perturbation"));
  const std::string svg = ReadFile(Path("curve.svg"));
  EXPECT_THAT(svg, StartsWith("<svg"));
  EXPECT_THAT(svg, HasSubstr("<polyline"));
  Result packed = Run(absl::StrCat("stats ", Path("trace.citcat"), " -o ", Path("stats.txt")));
  ASSERT_EQ(packed.exit_code, 0) << packed.err;
  // Everything after the first line (which names the input) is the same but the sizes of the
  // interrupts and of what holds them: the archive's are in columns.
  const auto without_sizes = [](const std::string& out) {
    const size_t first = out.find('\n'), table = out.find("record sizes");
    return out.substr(first, table - first) + out.substr(out.find("\nperturbation"));
  };
  const std::string from_archive = ReadFile(Path("stats.txt"));
  EXPECT_EQ(without_sizes(cat.out), without_sizes(from_archive));
  EXPECT_THAT(cat.out, HasSubstr("\n  interrupts   "));
  EXPECT_THAT(from_archive, HasSubstr("\n  interrupts (columns)   "));
}

TEST_F(ArchiveCli, UsageErrors) {
  EXPECT_EQ(Run("pack").exit_code, 2);
  EXPECT_EQ(Run(absl::StrCat("pack ", Path("x"))).exit_code, 2);  // -o missing
  EXPECT_EQ(Run("unpack").exit_code, 2);
  EXPECT_EQ(Run("stats").exit_code, 2);
  Result r = Run(absl::StrCat("pack ", Path("missing"), " -o ", Path("m.citcat")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(fs::exists(Path("m.citcat")));
}

}  // namespace
}  // namespace citcat
