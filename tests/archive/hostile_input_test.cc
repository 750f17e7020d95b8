// Hostile archives and files on every command that reads them (docs/archive-format.md, "Hostile
// input"): sections and events whose few stored bytes decompress to gigabytes are refused in one
// line, with exit code 1 and no output left behind, by a citcat process whose peak resident set,
// measured, stays under 64 MB (CeilingKib: under AddressSanitizer, 64 MB above its own start-up
// cost). Each is made here from the fixture's own archive (never
// committed), once with the manifest's counts as they are (refused by its sizes at once) and once
// with counts forged as high as the bomb needs (refused by the checks behind that bound). And
// extract and unpack write their directory whole or not at all.
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "archive/archive.h"
#include "cat_parser/crc.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/replay/guest_cli_fixture.h"
#include "tests/support/run_citcat.h"

namespace citcat {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::ReadFile;

// What a command may take on a hostile input: 64 MB. (A sound replay of the fixture's archive
// peaks at about 14 MB; today's gigabyte sections and events ask for 1 to 4 GB.)
// Under AddressSanitizer every process starts with tens of MB of the sanitizer's own (shadow
// memory, quarantine): the ceiling is then 64 MB above what `citcat --version` takes there.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CITCAT_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define CITCAT_TEST_ASAN 1
#endif
long CeilingKib() {
  static const long ceiling = [] {
    long base = 0;
#ifdef CITCAT_TEST_ASAN
    base = testing::RunCitcatMeasured(testing::FreshTestDir("hostile-input-base"), "--version")
               .peak_rss_kib;
#endif
    return (64 << 10) + base;
  }();
  return ceiling;
}
constexpr uint64_t kGiB = uint64_t{1} << 30;

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::string Le(uint64_t v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
  return s;
}

std::string Varint(uint64_t v) {
  std::string s;
  for (; v >= 0x80; v >>= 7) s.push_back(static_cast<char>(v | 0x80));
  s.push_back(static_cast<char>(v));
  return s;
}

// A section's content: one zstd frame, the content's size and CRC-64.
struct Content {
  std::string frame;
  uint64_t raw = 0, crc64 = 0;
};

// `head`, then `zeros` zero bytes, then `tail`, as one zstd frame with its size in its header,
// compressed from a buffer of 1 MiB: the content is never in memory here either.
Content Zstd(const std::string& head, uint64_t zeros = 0, const std::string& tail = "") {
  Content c;
  c.raw = head.size() + zeros + tail.size();
  std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> z(ZSTD_createCCtx(), ZSTD_freeCCtx);
  ZSTD_CCtx_setParameter(z.get(), ZSTD_c_compressionLevel, 1);
  ZSTD_CCtx_setPledgedSrcSize(z.get(), c.raw);
  std::string out(ZSTD_CStreamOutSize(), '\0');
  auto feed = [&](const char* p, size_t n, bool last) {
    c.crc64 = archive::Crc64({reinterpret_cast<const uint8_t*>(p), n}, c.crc64);
    ZSTD_inBuffer in{p, n, 0};
    size_t left;
    do {
      ZSTD_outBuffer o{out.data(), out.size(), 0};
      left = ZSTD_compressStream2(z.get(), &o, &in, last ? ZSTD_e_end : ZSTD_e_continue);
      if (ZSTD_isError(left)) {
        ADD_FAILURE() << ZSTD_getErrorName(left);
        return;
      }
      c.frame.append(out.data(), o.pos);
    } while (last ? left != 0 : in.pos < in.size);
  };
  feed(head.data(), head.size(), false);
  const std::string block(1 << 20, '\0');
  for (uint64_t done = 0; done < zeros;) {
    const size_t n = std::min<uint64_t>(block.size(), zeros - done);
    feed(block.data(), n, false);
    done += n;
  }
  feed(tail.data(), tail.size(), true);
  return c;
}

// A zstd section (docs/archive-format.md, "Section header").
std::string Section(const std::string& type, const Content& c) {
  std::string h = type + std::string(1, '\1') + std::string(3, '\0') + Le(c.frame.size(), 8) +
                  Le(c.raw, 8) + Le(c.crc64, 8);
  h += Le(cat::Crc32(Bytes(c.frame), cat::Crc32(Bytes(h))), 4);
  return h + c.frame;
}

std::string ArchiveFile(const std::vector<std::string>& sections) {
  std::string f =
      "\x89"
      "CTZ\r\n\x1a\n" +
      Le(archive::kFormatVersion, 2) + Le(0, 2) + Le(sections.size(), 4);
  f += Le(cat::Crc32(Bytes(f).subspan(8)), 4);
  for (const std::string& s : sections) f += s;
  return f;
}

// Fields of the IMS and AES messages, as their schemas number them: the header of a
// length-delimited field of `length` bytes whose content follows.
std::string FieldHead(int number, uint64_t length) {
  return Varint(number << 3 | 2) + Varint(length);
}

class HostileInput : public replay_test::GuestCliTest<HostileInput> {
 protected:
  static void SetUpTestSuite() {
    CaptureAndExtract("hostile-input", 6);
    ASSERT_EQ(Run(absl::StrCat("pack --quiet ", Path("x"), " -o ", Path("trace.citcat"))).exit_code,
              0);
    absl::StatusOr<archive::Archive> a = archive::Read(Path("trace.citcat"));
    ASSERT_TRUE(a.ok()) << a.status();
    manifest_ = new archive::Manifest(a->manifest);
    ims_ = new std::string(a->ims);
    aes_ = new std::string(ReadFile(Path("x/aes.pb")));
  }

  // The fixture's archive with these contents (and `more` sections after them), its manifest
  // stating their sizes; with `forged`, its counts too, as high as the bombs need to pass the
  // bounds that follow from them.
  static std::string Hostile(const std::string& name, const Content& ims, const Content& aes,
                             bool forged, const std::vector<std::string>& more = {}) {
    archive::Manifest m = *manifest_;
    m.ims_bytes = ims.raw;
    m.aes_bytes = aes.raw;
    if (forged) {
      m.records = uint64_t{1} << 24;
      m.record_bytes = uint64_t{8} << 30;
    }
    const std::string stem = absl::StrCat(name, forged ? "-forged-counts" : "");
    const std::string path = Path(stem + ".citcat");
    std::vector<std::string> sections = {Section("MANI", Zstd(m.ToText())), Section("IMSP", ims),
                                         Section("AESP", aes)};
    sections.insert(sections.end(), more.begin(), more.end());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << ArchiveFile(sections);
    // The same as the one segment of a split directory, for join (which checks a segment's place
    // before it reads its sections).
    fs::create_directories(Path("segments-" + stem));
    sections[0] = Section("MANI", Zstd(m.ToText() + "segment 1 of 1\n"));
    std::ofstream(Path("segments-" + stem + "/segment-0001.citcat"), std::ios::binary)
        << ArchiveFile(sections);
    return path;
  }

  // Every command that reads an archive, on `path`: each must refuse it in one line naming
  // `expected`, exit 1, leave nothing in its output directory, and peak under CeilingKib().
  static void ExpectRefused(const std::string& path, const std::string& expected) {
    const std::string name = fs::path(path).stem().string();
    const std::string out = Path(absl::StrCat("out-", name));
    const std::string segments = Path(absl::StrCat("segments-", name));
    fs::create_directories(out);
    std::ofstream(out + "/piece-0001.txt") << "x\n";
    const std::string commands[] = {
        absl::StrCat("replay ", path, " -o ", out, "/r.txt --cat ", out, "/r.cat"),
        absl::StrCat("unpack ", path, " -o ", out, "/u"),
        absl::StrCat("stats ", path, " -o ", out, "/s.txt --plot ", out, "/s.svg"),
        absl::StrCat("split ", path, " --segments 2 -o ", out, "/split"),
        absl::StrCat("join ", out, "/piece-0001.txt -o ", out, "/j.txt --segment-dir ", segments),
    };
    for (const std::string& command : commands) {
      const testing::MeasuredResult r = testing::RunCitcatMeasured(*dir_, command);
      EXPECT_EQ(r.exit_code, 1) << command << "\n" << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << command << "\n" << r.err;
      EXPECT_THAT(r.err, HasSubstr(expected)) << command;
      EXPECT_GT(r.peak_rss_kib, 0) << command;
      EXPECT_LT(r.peak_rss_kib, CeilingKib()) << command << ": peak resident set in KiB";
      std::printf("%-8s %-40s peak %6ld KiB\n", command.substr(0, command.find(' ')).c_str(),
                  name.c_str(), r.peak_rss_kib);
      std::vector<std::string> left;
      for (const fs::directory_entry& e : fs::directory_iterator(out)) {
        if (e.path().filename() != "piece-0001.txt") left.push_back(e.path().filename().string());
      }
      EXPECT_TRUE(left.empty()) << command << " left " << left.front();
    }
  }

  static inline archive::Manifest* manifest_ = nullptr;
  static inline std::string* ims_ = nullptr;  // the serialized IMS and AES of the fixture
  static inline std::string* aes_ = nullptr;
};

TEST_F(HostileInput, AnAesSectionOfAGibibyteOfZerosCostsNoMemory) {
  const Content ims = Zstd(*ims_), zeros = Zstd("", kGiB);
  ASSERT_LT(zeros.frame.size(), 64u << 10);
  ExpectRefused(Hostile("aes-zeros", ims, zeros, false),
                "section 'AESP' claims 1073741824 bytes, more than the ");
  // Past the bound of the counts: checked streaming, then refused as no schedule.
  ExpectRefused(Hostile("aes-zeros", ims, zeros, true),
                "section 'AESP': not a citcat.aes.EventSchedule message");
}

TEST_F(HostileInput, AnAesSectionOfExactlyFourGibibytesIsRefusedNotUnpackedAsNothing) {
  // 4 GiB is the most a section may claim; an int-sized stream over it once counted nothing.
  const Content zeros = Zstd("", 4 * kGiB);
  ExpectRefused(Hostile("aes-4gib", Zstd(*ims_), zeros, false),
                "section 'AESP' claims 4294967296 bytes, more than the ");
}

TEST_F(HostileInput, ADmaTransferOfAGibibyteCostsNoMemory) {
  // The fixture's schedule and one more DMA transfer (field 4) whose data (its field 5) is a
  // gibibyte of zeros.
  const std::string data_head = FieldHead(5, kGiB);
  const Content aes = Zstd(*aes_ + FieldHead(4, data_head.size() + kGiB) + data_head, kGiB);
  ExpectRefused(Hostile("dma", Zstd(*ims_), aes, false), "section 'AESP' claims ");
  ExpectRefused(Hostile("dma", Zstd(*ims_), aes, true),
                "bytes, more than the 69632 an event may take");
}

TEST_F(HostileInput, AMemoryExtentOfAGibibyteCostsNoMemory) {
  // The fixture's IMS and one more memory extent (field 6) at 16 MiB of a gibibyte of zeros: more
  // than the machine's memory (32 MiB) could hold.
  const std::string address = Varint(1 << 3 | 0) + Varint(16 << 20);
  const std::string data_head = FieldHead(2, kGiB);
  const Content ims = Zstd(
      *ims_ + FieldHead(6, address.size() + data_head.size() + kGiB) + address + data_head, kGiB);
  ExpectRefused(Hostile("extent", ims, Zstd(*aes_), false), "section 'IMSP' claims ");
  ExpectRefused(Hostile("extent", ims, Zstd(*aes_), true),
                "holds 1073741824 bytes, more than the ");
}

TEST_F(HostileInput, AnImsSectionOfAGibibyteOfZerosCostsNoMemory) {
  const Content zeros = Zstd("", kGiB);
  ExpectRefused(Hostile("ims-zeros", zeros, Zstd(*aes_), false),
                "section 'IMSP' claims 1073741824 bytes, more than the ");
  ExpectRefused(Hostile("ims-zeros", zeros, Zstd(*aes_), true),
                "section 'IMSP': not a citcat.ims.InitialMachineState message (at byte 0)");
}

TEST_F(HostileInput, ASegmentStartsSectionOfAGibibyteOfZerosCostsNoMemory) {
  const std::vector<std::string> zeros = {Section("segs", Zstd("", kGiB))};
  ExpectRefused(Hostile("segs-zeros", Zstd(*ims_), Zstd(*aes_), false, zeros),
                "section 'segs' claims 1073741824 bytes, more than the ");
  // Within the bound of forged counts: parsed as it is decoded, and refused at its first byte.
  ExpectRefused(Hostile("segs-zeros", Zstd(*ims_), Zstd(*aes_), true, zeros),
                "section 'segs' is not a SegmentStarts message");
}

TEST_F(HostileInput, PackAndReplayReadImsAndAesFilesWithinTheirBounds) {
  // Files, not sections: an extent of 64 MiB on a machine of 32, and a DMA transfer of 64 MiB.
  const std::string dir = Path("files");
  fs::create_directories(dir);
  constexpr uint64_t kBig = 64 << 20;
  const std::string zeros(1 << 20, '\0');
  const std::string address = Varint(1 << 3 | 0) + Varint(16 << 20);
  std::ofstream ims(dir + "/ims.pb", std::ios::binary);
  ims << *ims_ << FieldHead(6, address.size() + FieldHead(2, kBig).size() + kBig) << address
      << FieldHead(2, kBig);
  std::ofstream aes(dir + "/aes.pb", std::ios::binary);
  aes << *aes_ << FieldHead(4, FieldHead(5, kBig).size() + kBig) << FieldHead(5, kBig);
  for (uint64_t done = 0; done < kBig; done += zeros.size()) ims << zeros, aes << zeros;
  ims.close();
  aes.close();
  const std::pair<std::string, std::string> cases[] = {
      {absl::StrCat("pack ", dir, " -o ", dir, "/p.citcat"),
       "holds 67108864 bytes, more than the "},
      {absl::StrCat("replay --ims ", Path("x/ims.pb"), " --aes ", dir, "/aes.pb -o ", dir,
                    "/r.txt"),
       "bytes, more than the 69632 an event may take"},
      {absl::StrCat("replay --ims ", dir, "/ims.pb --aes ", Path("x/aes.pb"), " -o ", dir,
                    "/r.txt"),
       "holds 67108864 bytes, more than the "},
  };
  for (const auto& [command, expected] : cases) {
    const testing::MeasuredResult r = testing::RunCitcatMeasured(*dir_, command);
    EXPECT_EQ(r.exit_code, 1) << command << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(expected)) << command;
    EXPECT_GT(r.peak_rss_kib, 0) << command;
    EXPECT_LT(r.peak_rss_kib, CeilingKib()) << command << ": peak resident set in KiB";
    std::printf("%-8s %-40s peak %6ld KiB\n", command.substr(0, command.find(' ')).c_str(),
                "64 MiB in ims.pb or aes.pb", r.peak_rss_kib);
  }
  EXPECT_FALSE(fs::exists(dir + "/p.citcat"));
  EXPECT_FALSE(fs::exists(dir + "/r.txt"));
}

// The directories extract and unpack write: whole, or not at all.
TEST_F(HostileInput, ExtractAndUnpackLeaveNoDirectoryBehindOnFailure) {
  const std::string out = Path("dirs");
  fs::create_directories(out);
  // A full disk, here a file size limit between the sizes of ims.pb and aes.pb: the directory
  // was begun, and the smaller file written, when the larger fails.
  const uint64_t ims = fs::file_size(Path("x/ims.pb")), aes = fs::file_size(Path("x/aes.pb"));
  ASSERT_GT(std::max(ims, aes), std::min(ims, aes) + 2048);
  const std::string larger = aes > ims ? "aes.pb" : "ims.pb";
  for (const std::string& command :
       {absl::StrCat("extract --quiet ", Path("capture.cat"), " -o ", out, "/full"),
        absl::StrCat("unpack --quiet ", Path("trace.citcat"), " -o ", out, "/full")}) {
    std::ofstream(Path("full.sh"))
        << "trap '' XFSZ; ulimit -f " << (ims + aes) / 2 / 1024 << "; exec " << CITCAT_BINARY << " "
        << command << " 2>" << Path("full.err");
    const int status = std::system(absl::StrCat("bash ", Path("full.sh")).c_str());
    EXPECT_EQ(WEXITSTATUS(status), 1) << command;
    EXPECT_THAT(ReadFile(Path("full.err")), HasSubstr(larger + ": write error: File too large"));
    EXPECT_TRUE(fs::is_empty(out)) << command << " left " << fs::directory_iterator(out)->path();
  }
  // A capture damaged halfway: extraction fails after its output directory was begun.
  std::string cat = ReadFile(Path("capture.cat"));
  cat[cat.size() / 2] ^= 0x55;
  std::ofstream(Path("damaged.cat"), std::ios::binary) << cat;
  testing::CommandResult r =
      Run(absl::StrCat("extract ", Path("damaged.cat"), " -o ", out, "/damaged"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(fs::is_empty(out)) << "extract left " << fs::directory_iterator(out)->path();
  // Into a directory that exists: it stays as it was.
  fs::create_directories(out + "/old");
  r = Run(absl::StrCat("extract ", Path("damaged.cat"), " -o ", out, "/old"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(fs::is_empty(out + "/old"));
  // Sound input: the directory, complete, and no temporary beside it.
  r = Run(absl::StrCat("unpack --quiet ", Path("trace.citcat"), " -o ", out, "/u/"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFile(out + "/u/ims.pb"), ReadFile(Path("x/ims.pb")));
  EXPECT_FALSE(ReadFile(out + "/u/aes.pb").empty());
  r = Run(absl::StrCat("extract --quiet ", Path("capture.cat"), " -o ", out, "/e"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFile(out + "/e/aes.pb"), ReadFile(Path("x/aes.pb")));
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(out)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"e", "old", "u"}));
}

}  // namespace
}  // namespace citcat
