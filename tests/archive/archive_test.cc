// The archive library on a real small capture: the manifest's checksums against independent
// computations (the text trace and the regenerated CAT file), the container round trip, every
// damage of docs/archive-format.md refused with one line, a version 1 archive kept from before
// version 2 still replaying to its checksums, and the statistics and their plot.
#include "archive/archive.h"

#include <lzma.h>
#include <sys/resource.h>
#include <zstd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "aes/aes_util.h"
#include "archive/stats.h"
#include "cat_parser/crc.h"
#include "cat_parser/reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "replay/verify.h"
#include "systems/system.h"
#include "tests/replay/r4400_guest.h"
#include "traces/output.h"

namespace citcat::archive {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

class ArchiveTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::path(::testing::TempDir()) / absl::StrCat("archive-", getpid()));
    fs::create_directories(*dir_);
    capture_ = new std::string((*dir_ / "capture.cat").string());
    replay_test::CaptureGuest(5, {}, *capture_);
    auto reader = cat::CatReader::Open(*capture_);
    ASSERT_TRUE(reader.ok()) << reader.status();
    auto x = systems::Extract(**reader);
    ASSERT_TRUE(x.ok()) << x.status();
    extraction_ = new extract::Extraction(*std::move(x));
    auto a = Pack(extraction_->ims, extraction_->aes);
    ASSERT_TRUE(a.ok()) << a.status();
    archive_ = new Archive(*std::move(a));
    auto out = io::OutputFile::Create((*dir_ / "trace.citcat").string());
    ASSERT_TRUE(out.ok());
    ASSERT_TRUE(Write(*archive_, **out).ok());
    ASSERT_TRUE((*out)->Commit().ok());
    bytes_ = new std::string(ReadFile((*dir_ / "trace.citcat").string()));
  }
  static void TearDownTestSuite() { fs::remove_all(*dir_); }

  static fs::path* dir_;
  static std::string* capture_;
  static extract::Extraction* extraction_;
  static Archive* archive_;
  static std::string* bytes_;  // the archive file
};

fs::path* ArchiveTest::dir_ = nullptr;
std::string* ArchiveTest::capture_ = nullptr;
extract::Extraction* ArchiveTest::extraction_ = nullptr;
Archive* ArchiveTest::archive_ = nullptr;
std::string* ArchiveTest::bytes_ = nullptr;

TEST(Crc64, CheckValue) {
  const std::string check = "123456789";
  EXPECT_EQ(Crc64(Bytes(check)), 0x995DC9BBDF1939FAull);
  // Extending in pieces is the same as one go.
  EXPECT_EQ(Crc64(Bytes(check.substr(4)), Crc64(Bytes(check.substr(0, 4)))), 0x995DC9BBDF1939FAull);
}

// The same sums as liblzma's CRC-64 (xz's check), which it may be computed by, on lengths on
// either side of every unrolling and alignment, from any starting sum.
TEST(Crc64, IsLiblzmasCrc64) {
  std::mt19937_64 random(7);
  for (int i = 0; i < 2200; ++i) {
    std::vector<uint8_t> bytes(i < 2000 ? i % 300 : random() % 70000);
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(random());
    const size_t skip = bytes.empty() ? 0 : random() % std::min<size_t>(16, bytes.size());
    const std::span<const uint8_t> s = std::span<const uint8_t>(bytes).subspan(skip);
    const uint64_t start = i % 3 == 0 ? 0 : random();
    ASSERT_EQ(Crc64(s, start), lzma_crc64(s.data(), s.size(), start)) << s.size();
  }
}

// The sum of a whole from the sums of its pieces, without their bytes, at every cut point and
// for pieces long enough to take many squarings.
TEST(Crc64, CombinePieces) {
  std::string text;
  for (int i = 0; i < 5000; ++i) text.push_back(static_cast<char>(i * 131 + i / 7));
  for (size_t cut : {size_t{0}, size_t{1}, size_t{9}, size_t{1000}, size_t{4999}, size_t{5000}}) {
    const std::string a = text.substr(0, cut), b = text.substr(cut);
    EXPECT_EQ(Crc64Combine(Crc64(Bytes(a)), Crc64(Bytes(b)), b.size()), Crc64(Bytes(text))) << cut;
  }
}

TEST_F(ArchiveTest, ManifestChecksumsMatchTheTextTraceAndTheRegeneratedCat) {
  // Replay again with a text trace and a regenerated CAT file, then recompute both checksums
  // from those files alone, as a user of another tool would.
  const std::string trace_path = (*dir_ / "trace.txt").string();
  const std::string regen_path = (*dir_ / "regenerated.cat").string();
  auto trace = traces::OpenOutput(trace_path);
  ASSERT_TRUE(trace.ok());
  auto writer = cat::CatWriter::Create(regen_path, *systems::CatHeaderFor(extraction_->ims));
  ASSERT_TRUE(writer.ok());
  replay::ReplayOptions options;
  options.trace = trace->get();
  options.regenerated = writer->get();
  auto summary = systems::Replay(extraction_->ims, extraction_->aes, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_TRUE((*trace)->Close().ok());
  ASSERT_TRUE((*writer)->Finish().ok());

  // Version 2's stream: PC, length and the bytes as they lie in memory; the traced R4400 is
  // big-endian, so a word's bytes lie most significant first.
  ASSERT_EQ(extraction_->ims.description().byte_order(), ims::BYTE_ORDER_BIG);
  uint64_t crc = 0, entries = 0;
  for (absl::string_view line : absl::StrSplit(ReadFile(trace_path), '\n')) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() < 3 || f[0] == "-") continue;  // events, not instructions
    uint64_t pc = 0;
    uint32_t word = 0;
    ASSERT_TRUE(absl::SimpleHexAtoi(f[1], &pc) && absl::SimpleHexAtoi(f[2], &word)) << line;
    uint8_t entry[13];
    for (int i = 0; i < 8; ++i) entry[i] = static_cast<uint8_t>(pc >> (8 * i));
    entry[8] = 4;
    for (int i = 0; i < 4; ++i) entry[9 + i] = static_cast<uint8_t>(word >> (8 * (3 - i)));
    crc = Crc64(entry, crc);
    ++entries;
  }
  const Manifest& m = archive_->manifest;
  EXPECT_EQ(entries, m.trace_entries);
  EXPECT_EQ(crc, m.instruction_crc64);
  EXPECT_EQ(summary->instructions, m.instructions);
  EXPECT_GT(m.instructions, 10000u);

  auto reader = cat::CatReader::Open(regen_path);
  ASSERT_TRUE(reader.ok());
  // The checksums cover the records replay made, not the state dump ahead of them.
  auto system = systems::ForCat((*reader)->header().machine);
  ASSERT_TRUE(system.ok()) << system.status();
  ASSERT_TRUE(replay::ReadStateDump((*system)->replay, **reader).ok());
  cat::BusRecord r;
  uint64_t cat_crc = 0, records = 0;
  while (true) {
    auto more = (*reader)->Next(r);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    uint8_t h[24] = {static_cast<uint8_t>(r.kind), r.flags, r.master, 0};
    for (int i = 0; i < 4; ++i) h[4 + i] = static_cast<uint8_t>(r.data.size() >> (8 * i));
    for (int i = 0; i < 8; ++i) h[8 + i] = static_cast<uint8_t>(r.address >> (8 * i));
    for (int i = 0; i < 8; ++i) h[16 + i] = static_cast<uint8_t>(r.branch_count >> (8 * i));
    cat_crc = Crc64(r.data, Crc64(h, cat_crc));
    ++records;
  }
  EXPECT_EQ(records, m.records);
  EXPECT_EQ(cat_crc, m.cat_crc64);
  // And the regenerated CAT is the capture's, so the checksum speaks for the original too.
  auto same = systems::CompareCats(*capture_, regen_path);
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(same->identical) << same->report;
}

TEST_F(ArchiveTest, RoundTripKeepsEverything) {
  auto back = Parse(Bytes(*bytes_), "trace.citcat");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ims, archive_->ims);
  EXPECT_EQ(*aes::ReadAll(*back->aes, 1 << 30), *aes::ReadAll(*archive_->aes, 1 << 30));
  EXPECT_EQ(back->manifest.ToText(), archive_->manifest.ToText());
  // Version 2, in the file header and the manifest; the machine and start PC are the IMS's.
  EXPECT_EQ(bytes_->substr(8, 2), std::string("\x02\x00", 2));
  EXPECT_THAT(archive_->manifest.ToText(),
              StartsWith("citcat-archive-manifest 2\nmachine r4400\n"));
  EXPECT_EQ(back->manifest.start_pc, extraction_->ims.mips().pc());
  ims::InitialMachineState ims;
  aes::EventSchedule aes;
  ASSERT_TRUE(Unpack(*back, ims, aes).ok());
  EXPECT_GT(aes.dma_size(), 0);  // the guest reads its disk: every AES part is exercised
  EXPECT_GT(aes.interrupts_size(), 0);
  // Smaller than the IMS and AES alone.
  EXPECT_LT(bytes_->size(), archive_->ims.size() + archive_->manifest.aes_bytes);
}

TEST_F(ArchiveTest, ReplayChecksumsMatchTheManifestAndAMismatchIsNamed) {
  replay::ReplayOptions options;
  ReplayChecksums sums;
  sums.Attach(options, extraction_->ims);
  auto summary = systems::Replay(extraction_->ims, extraction_->aes, options);
  ASSERT_TRUE(summary.ok());
  Manifest replayed;
  sums.Fill(*summary, replayed);
  EXPECT_TRUE(CompareWithManifest(archive_->manifest, replayed).ok());
  Manifest wrong = archive_->manifest;
  wrong.cat_crc64 ^= 1;
  wrong.instructions += 1;
  absl::Status s = CompareWithManifest(wrong, replayed);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("cat-crc64"));
  EXPECT_THAT(s.message(), HasSubstr("instructions"));
  EXPECT_THAT(s.message(), Not(HasSubstr("instruction-crc64")));
  EXPECT_THAT(std::string(s.message()), Not(HasSubstr("\n")));
}

// Sets a little-endian field and, for the file header, its CRC again, so that the check under
// test is the one that fires.
void Put(std::string& b, size_t at, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b[at + i] = static_cast<char>(v >> (8 * i));
}
void FixHeaderCrc(std::string& b) { Put(b, 16, cat::Crc32(Bytes(b).subspan(8, 8)), 4); }
void FixSectionCrc(std::string& b, size_t at) {
  uint64_t stored = 0;
  for (int i = 7; i >= 0; --i) stored = stored << 8 | static_cast<uint8_t>(b[at + 8 + i]);
  if (at + 36 + stored > b.size()) return;
  Put(b, at + 32,
      cat::Crc32(Bytes(b).subspan(at + 36, stored), cat::Crc32(Bytes(b).subspan(at, 32))), 4);
}

TEST_F(ArchiveTest, DamagedArchivesAreRefusedWithOneLine) {
  const std::string& good = *bytes_;
  // Section offsets, from the headers.
  std::vector<size_t> sections;
  for (size_t at = 20; at < good.size();) {
    sections.push_back(at);
    uint64_t stored = 0;
    for (int i = 7; i >= 0; --i) stored = stored << 8 | static_cast<uint8_t>(good[at + 8 + i]);
    at += 36 + stored;
  }
  ASSERT_EQ(sections.size(), 3u);

  struct Case {
    std::string name;
    std::string bytes;
    std::string expected;  // part of the message
  };
  std::vector<Case> cases;
  auto add = [&](std::string name, auto change, std::string expected) {
    std::string b = good;
    change(b);
    cases.push_back({std::move(name), std::move(b), std::move(expected)});
  };
  add(
      "empty", [](std::string& b) { b.clear(); }, "empty");
  for (size_t n : {size_t{1}, size_t{19}, size_t{20}, size_t{40}, sections[1] + 10,
                   sections[2] + 36, good.size() - 1}) {
    add(
        absl::StrCat("truncated to ", n), [n](std::string& b) { b.resize(n); }, "offset");
  }
  add(
      "wrong magic", [](std::string& b) { b[1] = 'X'; }, "wrong magic");
  add(
      "text-mode transfer", [](std::string& b) { b.erase(4, 1); }, "wrong magic");
  add(
      "unknown major version", [](std::string& b) { Put(b, 8, 3, 2), FixHeaderCrc(b); },
      "major version 3 is not one this reader knows (1 to 2)");
  add(
      "major version 0", [](std::string& b) { Put(b, 8, 0, 2), FixHeaderCrc(b); },
      "major version 0");
  add(
      "major version 1 with a version 2 manifest",
      [](std::string& b) { Put(b, 8, 1, 2), FixHeaderCrc(b); },
      "the manifest's version 2 differs from the file's major version 1");
  add(
      "header checksum", [](std::string& b) { b[10] ^= 1; }, "header checksum");
  add(
      "no sections", [](std::string& b) { Put(b, 12, 0, 4), FixHeaderCrc(b); }, "section count");
  add(
      "absurd section count", [](std::string& b) { Put(b, 12, 1u << 30, 4), FixHeaderCrc(b); },
      "section count");
  add(
      "fewer sections than stored", [](std::string& b) { Put(b, 12, 2, 4), FixHeaderCrc(b); },
      "bytes after the last section");
  add(
      "bytes after the end", [](std::string& b) { b += "x"; }, "bytes after the last section");
  for (size_t i = 0; i < sections.size(); ++i) {
    const size_t at = sections[i];
    const std::string tag = absl::StrCat(" in section ", i);
    add(
        "flipped type" + tag, [at](std::string& b) { b[at] ^= 0x20; }, "checksum mismatch");
    add(
        "flipped stored byte" + tag, [at](std::string& b) { b[at + 40] ^= 0x10; },
        "checksum mismatch");
    add(
        "flipped last byte" + tag,
        [&, i](std::string& b) {
          size_t end = i + 1 < sections.size() ? sections[i + 1] : b.size();
          b[end - 1] ^= 0x01;
        },
        "checksum mismatch");
    add(
        "absurd stored length" + tag, [at](std::string& b) { Put(b, at + 8, ~0ull >> 1, 8); },
        "runs past the end");
    add(
        "absurd content length" + tag,
        [at](std::string& b) { Put(b, at + 16, 1ull << 40, 8), FixSectionCrc(b, at); },
        "claims 1099511627776 bytes");
    add(
        "wrong content length" + tag,
        [at](std::string& b) { Put(b, at + 16, 7, 8), FixSectionCrc(b, at); },
        // The manifest's size is checked before the frame: the IMS's and AES's are stated there.
        i == 0 ? "zstd frame" : "bytes, the manifest ");
    add(
        "wrong content checksum" + tag,
        [at](std::string& b) { b[at + 24] ^= 1, FixSectionCrc(b, at); }, "content checksum");
    add(
        "unknown codec" + tag, [at](std::string& b) { b[at + 4] = 9, FixSectionCrc(b, at); },
        "unknown codec");
    add(
        "unknown required type" + tag, [at](std::string& b) { b[at] = 'Q', FixSectionCrc(b, at); },
        "unknown required section");
  }
  add(
      "repeated section",
      [&](std::string& b) {
        std::memcpy(&b[sections[1]], "AESP", 4), FixSectionCrc(b, sections[1]);
      },
      "repeated section");

  // The same in memory and from a file by ReadForReplay, which checks the AES section by reading
  // it from the file.
  const std::string path = (*dir_ / "damaged.citcat").string();
  for (const Case& c : cases) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << c.bytes;
    for (const bool from_file : {false, true}) {
      auto a = from_file ? ReadForReplay(path) : Parse(Bytes(c.bytes), path);
      ASSERT_FALSE(a.ok()) << c.name << (from_file ? ", from the file" : "");
      const std::string message(a.status().message());
      EXPECT_THAT(message, HasSubstr(c.expected)) << c.name << (from_file ? ", from the file" : "");
      EXPECT_THAT(message, HasSubstr(path + ": not a valid CITCAT archive at byte offset "))
          << c.name;
      EXPECT_EQ(message.find('\n'), std::string::npos) << c.name;
    }
  }
}

// Replay's reading of an archive leaves the AES in the file and streams it: the same schedule,
// event for event, as the whole message.
TEST_F(ArchiveTest, ReplayStreamsTheAesFromTheFile) {
  const std::string path = (*dir_ / "trace.citcat").string();
  auto a = ReadForReplay(path);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->aes->name(), path + ": section 'AESP'");
  ims::InitialMachineState ims;
  ASSERT_TRUE(UnpackIms(*a, ims).ok());
  auto streamed = ScheduleOf(*a);
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  const aes::EventSchedule& whole = extraction_->aes;
  ASSERT_GT(whole.interrupts_size() + whole.register_reads_size(), 0);
  EXPECT_EQ(streamed->interrupts(), static_cast<uint64_t>(whole.interrupts_size()));
  EXPECT_EQ(streamed->register_reads(), static_cast<uint64_t>(whole.register_reads_size()));
  EXPECT_EQ(streamed->end().SerializeAsString(), whole.end().SerializeAsString());
  // The archive's interrupts are keyed by what replay needs: on the R4400, Cause.BD in place of
  // the record.
  auto reader = streamed->Read();
  for (const aes::Interrupt& i : whole.interrupts()) {
    ASSERT_FALSE(reader->interrupts().empty());
    const aes::Interrupt& key = reader->interrupts().Pop();
    EXPECT_EQ(key.branch_count(), i.branch_count());
    EXPECT_EQ(key.pc(), i.pc());
    EXPECT_EQ(key.cause_ip(), i.cause_ip());
    EXPECT_TRUE(key.has_delay_slot());
    EXPECT_FALSE(key.has_cat_record());
  }
  EXPECT_TRUE(reader->interrupts().empty());
  // The other events as extracted, less the record each came from.
  for (aes::RegisterRead r : whole.register_reads()) {
    ASSERT_FALSE(reader->register_reads().empty());
    r.clear_cat_record();
    EXPECT_EQ(reader->register_reads().Pop().SerializeAsString(), r.SerializeAsString());
  }
  EXPECT_TRUE(reader->register_reads().empty());
  EXPECT_TRUE(reader->status().ok());
  // And replay from it matches the manifest.
  ReplayChecksums checksums;
  replay::ReplayOptions options;
  checksums.Attach(options, ims, a->manifest.version);
  auto summary = systems::Replay(ims, *streamed, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  Manifest replayed;
  checksums.Fill(*summary, replayed);
  EXPECT_TRUE(CompareWithManifest(a->manifest, replayed).ok());
  // Read from the file, not from memory: without the file there is no schedule.
  const std::string copy = (*dir_ / "moved.citcat").string();
  fs::copy_file(path, copy);
  auto b = ReadForReplay(copy);
  ASSERT_TRUE(b.ok()) << b.status();
  fs::remove(copy);
  EXPECT_FALSE(ScheduleOf(*b).ok());
  auto in_memory = Read(path);
  ASSERT_TRUE(in_memory.ok());
  EXPECT_TRUE(ScheduleOf(*in_memory).ok());
}

// A section whose few stored bytes decompress to far more than it could hold, made here (never
// committed): refused by its size before any decompression, or, when within every limit, after a
// streaming pass that never holds the content.
TEST_F(ArchiveTest, DecompressionBombsCostNeitherMemoryNorMuchTime) {
  constexpr uint64_t kZeros = uint64_t{192} << 20;
  // One zstd frame of kZeros zero bytes, its size in its header, made from a small buffer.
  std::string frame;
  {
    std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> c(ZSTD_createCCtx(), ZSTD_freeCCtx);
    ZSTD_CCtx_setPledgedSrcSize(c.get(), kZeros);
    const std::string zeros(1 << 20, '\0');
    std::string out(ZSTD_CStreamOutSize(), '\0');
    for (uint64_t done = 0; done <= kZeros; done += zeros.size()) {
      const bool last = done == kZeros;
      ZSTD_inBuffer in{zeros.data(), last ? 0 : zeros.size(), 0};
      size_t left;
      do {
        ZSTD_outBuffer o{out.data(), out.size(), 0};
        left = ZSTD_compressStream2(c.get(), &o, &in, last ? ZSTD_e_end : ZSTD_e_continue);
        ASSERT_FALSE(ZSTD_isError(left));
        frame.append(out.data(), o.pos);
      } while (last ? left != 0 : in.pos < in.size);
    }
  }
  ASSERT_LT(frame.size(), 64u << 10);
  // The archive with that frame as its IMS (`manifest_ims_bytes` in its manifest) or manifest;
  // `record_bytes` raises the bound the manifest's counts set to the IMS.
  auto bomb = [&](const char* type, uint64_t manifest_ims_bytes, uint64_t record_bytes = 0) {
    Archive a = *archive_;
    a.manifest.ims_bytes = manifest_ims_bytes;
    a.manifest.record_bytes = std::max(a.manifest.record_bytes, record_bytes);
    a.ims = "x";
    auto out = io::OutputFile::Create((*dir_ / "bomb.citcat").string());
    EXPECT_TRUE(out.ok() && Write(a, **out).ok() && (*out)->Commit().ok());
    std::string b = ReadFile((*dir_ / "bomb.citcat").string());
    std::vector<size_t> at;
    for (size_t p = 20; p < b.size();) {
      at.push_back(p);
      uint64_t stored = 0;
      for (int i = 7; i >= 0; --i) stored = stored << 8 | static_cast<uint8_t>(b[p + 8 + i]);
      p += 36 + stored;
    }
    const size_t which = std::string(type) == "MANI" ? 0 : 1;
    const size_t end = which + 1 < at.size() ? at[which + 1] : b.size();
    std::string h = type;
    h += std::string(1, '\1') + std::string(3, '\0');
    for (uint64_t v : {uint64_t{frame.size()}, kZeros, uint64_t{0x0123456789abcdef}}) {
      for (int i = 0; i < 8; ++i) h.push_back(static_cast<char>(v >> (8 * i)));
    }
    const uint32_t crc = cat::Crc32(Bytes(frame), cat::Crc32(Bytes(h)));
    for (int i = 0; i < 4; ++i) h.push_back(static_cast<char>(crc >> (8 * i)));
    return b.substr(0, at[which]) + h + frame + b.substr(end);
  };
  struct rusage before;
  getrusage(RUSAGE_SELF, &before);
  auto manifest = Parse(Bytes(bomb("MANI", 1)), "bomb.citcat");
  EXPECT_THAT(manifest.status().message(),
              HasSubstr("more than the 65536 such a section may hold"));
  auto unstated = Parse(Bytes(bomb("IMSP", 1)), "bomb.citcat");
  EXPECT_THAT(unstated.status().message(), HasSubstr("bytes, the manifest 1"));
  auto counted = Parse(Bytes(bomb("IMSP", kZeros)), "bomb.citcat");
  EXPECT_THAT(counted.status().message(),
              HasSubstr("section 'IMSP' claims 201326592 bytes, more than the "));
  auto streamed = Parse(Bytes(bomb("IMSP", kZeros, kZeros)), "bomb.citcat");
  EXPECT_THAT(streamed.status().message(), HasSubstr("section 'IMSP' content checksum mismatch"));
  struct rusage after;
  getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 32 << 10) << "KiB more at the peak";
}

TEST_F(ArchiveTest, OptionalSectionsAreSkippedAndManifestKeysFromLaterVersionsIgnored) {
  // An optional section appended (lower-case type), and the count raised to match.
  std::string b = *bytes_;
  std::string extra = "note";
  extra += std::string(1, '\0') + std::string(3, '\0');
  std::string payload = "a later minor version's note";
  for (int i = 0; i < 8; ++i) extra.push_back(static_cast<char>(payload.size() >> (8 * i)));
  for (int i = 0; i < 8; ++i) extra.push_back(static_cast<char>(payload.size() >> (8 * i)));
  const uint64_t crc = Crc64(Bytes(payload));
  for (int i = 0; i < 8; ++i) extra.push_back(static_cast<char>(crc >> (8 * i)));
  const uint32_t section_crc = cat::Crc32(Bytes(payload), cat::Crc32(Bytes(extra)));
  for (int i = 0; i < 4; ++i) extra.push_back(static_cast<char>(section_crc >> (8 * i)));
  b += extra + payload;
  Put(b, 12, 4, 4);
  FixHeaderCrc(b);
  EXPECT_TRUE(Parse(Bytes(b), "t").ok());

  auto m = Manifest::FromText(archive_->manifest.ToText() + "future-key 12\n");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->cat_crc64, archive_->manifest.cat_crc64);
  EXPECT_FALSE(Manifest::FromText("citcat-archive-manifest 1\nmachine r4400\n").ok());
}

// One text per manifest: each line as Manifest::ToText writes it, or the archive is refused in
// one line naming the line.
TEST_F(ArchiveTest, ManifestLinesAreInTheWritersFormOnly) {
  const std::string text = archive_->manifest.ToText();
  ASSERT_TRUE(Manifest::FromText(text).ok());
  auto with = [&text](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    return Manifest::FromText(t);
  };
  const std::string records = absl::StrCat("records ", archive_->manifest.records, "\n");
  const std::string pc = absl::StrFormat("start-pc 0x%016x\n", archive_->manifest.start_pc);
  const std::pair<std::string, std::string> bad[] = {
      {records, absl::StrCat("records ", archive_->manifest.records, " \n")},    // trailing space
      {records, absl::StrCat("records  ", archive_->manifest.records, "\n")},    // double space
      {records, absl::StrCat("records 0", archive_->manifest.records, "\n")},    // leading zero
      {records, absl::StrCat("records +", archive_->manifest.records, "\n")},    // a sign
      {records, absl::StrFormat("records 0x%x\n", archive_->manifest.records)},  // hex
      {records, absl::StrCat("records ", archive_->manifest.records, "\r\n")},   // CRLF
      {records, "records\n"},                                                    // no value
      {records, "records \n"},
      {records, absl::StrCat(records, "\n")},                               // an empty line
      {pc, absl::StrFormat("start-pc %d\n", archive_->manifest.start_pc)},  // decimal
      {pc, absl::StrFormat("start-pc 0x%x\n", archive_->manifest.start_pc & 0xffff)},
      {pc, absl::StrFormat("start-pc 0x%016X\n", archive_->manifest.start_pc)},
      {"machine r4400\n", "machine  r4400\n"},
      {"machine r4400\n", "Machine r4400\n"},
      {"ims-bytes", "future-key\nims-bytes"},  // a key without a value, known or not
  };
  for (const auto& [from, to] : bad) {
    auto m = with(from, to);
    EXPECT_FALSE(m.ok()) << to;
    EXPECT_THAT(std::string(m.status().message()), StartsWith("manifest line ")) << to;
  }
  // The last line ends with a line break too.
  EXPECT_FALSE(Manifest::FromText(text.substr(0, text.size() - 1)).ok());

  // A segment names its place of how many; older splits wrote the place alone.
  for (const char* good : {"segment 1 of 1\n", "segment 2 of 3\n", "segment 2\n"}) {
    auto m = Manifest::FromText(text + good);
    ASSERT_TRUE(m.ok()) << good << m.status();
    EXPECT_EQ(m->ToText(),
              text.substr(0, text.find("producer")) + good + text.substr(text.find("producer")));
  }
  for (const char* wrong : {"segment 0 of 3\n", "segment 4 of 3\n", "segment 1 of 0\n",
                            "segment 01 of 3\n", "segment 1 of\n", "segment 1  of 3\n",
                            "segment 1 of 3 \n", "segment 1 from 3\n", "segment\n"}) {
    EXPECT_FALSE(Manifest::FromText(text + wrong).ok()) << wrong;
  }
  // A producer is free text, empty too (as the writer writes an IMS without one).
  Manifest empty = archive_->manifest;
  empty.producer.clear();
  ASSERT_TRUE(Manifest::FromText(empty.ToText()).ok());
  EXPECT_TRUE(Manifest::FromText(empty.ToText()).value().producer.empty());
  auto spaced =
      Manifest::FromText(text.substr(0, text.find("\nproducer ") + 1) + "producer  two  spaces \n");
  ASSERT_TRUE(spaced.ok()) << spaced.status();
  EXPECT_EQ(spaced->producer, " two  spaces ");
}

// `segment K of N` only in a segment: after the first it starts at a cut, before the last it
// ends at one. A whole trace is no segment 1 of 2, nor (older splits' form) a bare segment 1.
TEST_F(ArchiveTest, OnlyASegmentNamesASegmentsPlace) {
  ims::InitialMachineState ims;
  aes::EventSchedule aes;
  Archive a = *archive_;
  for (const auto& [segment, segments] :
       std::vector<std::pair<uint64_t, uint64_t>>{{1, 0}, {1, 2}, {2, 2}, {2, 0}}) {
    a.manifest.segment = segment;
    a.manifest.segments = segments;
    absl::Status s = Unpack(a, ims, aes);
    EXPECT_FALSE(s.ok()) << segment << " of " << segments;
    EXPECT_THAT(std::string(s.message()), HasSubstr("the archive's manifest names segment"));
  }
  a.manifest.segment = a.manifest.segments = 1;  // a split into one segment: the whole
  EXPECT_TRUE(Unpack(a, ims, aes).ok());
}

TEST_F(ArchiveTest, ManifestVersionsAndMachinesAreTheOnesTheReaderKnows) {
  const std::string text = archive_->manifest.ToText();
  auto with = [&text](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    return Manifest::FromText(t);
  };
  auto v1 = with("manifest 2", "manifest 1");
  ASSERT_TRUE(v1.ok()) << v1.status();
  EXPECT_EQ(v1->version, 1);
  for (const char* bad : {"manifest 3", "manifest 0", "manifest 02", "manifest 2x", "manifest "}) {
    auto m = with("manifest 2", bad);
    ASSERT_FALSE(m.ok()) << bad;
    EXPECT_THAT(std::string(m.status().message()), HasSubstr("manifest")) << bad;
  }
  // Every machine the IMS schema names is accepted, and nothing else.
  auto i486 = with("r4400", "i486");
  ASSERT_TRUE(i486.ok()) << i486.status();
  EXPECT_EQ(i486->machine, "i486");
  for (const char* bad : {"vax", "R4400", "unspecified", "machine_r4400", ""}) {
    auto m = with("r4400", bad);
    ASSERT_FALSE(m.ok()) << bad;
    EXPECT_THAT(std::string(m.status().message()),
                HasSubstr(*bad != '\0' ? "not one the IMS schema names" : "machine"))
        << bad;
  }
}

TEST_F(ArchiveTest, AnArchiveWhoseManifestMachineDisagreesWithItsImsIsRefused) {
  Archive other = *archive_;
  other.manifest.machine = "i486";
  auto out = io::OutputFile::Create((*dir_ / "other.citcat").string());
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE(Write(other, **out).ok());
  ASSERT_TRUE((*out)->Commit().ok());
  auto back = Read((*dir_ / "other.citcat").string());
  ASSERT_TRUE(back.ok()) << back.status();  // the container is sound
  ims::InitialMachineState ims;
  aes::EventSchedule aes;
  absl::Status s = Unpack(*back, ims, aes);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_EQ(s.message(),
            "the archive's manifest names the machine 'i486' but its IMS is for 'r4400'");
  // An IMS naming no machine is refused too, and cannot be packed.
  ims::InitialMachineState nameless = extraction_->ims;
  nameless.mutable_description()->set_machine(ims::MACHINE_UNSPECIFIED);
  other = *archive_;
  other.ims = nameless.SerializeAsString();
  EXPECT_THAT(std::string(Unpack(other, ims, aes).message()),
              HasSubstr("no machine the schema names"));
  EXPECT_FALSE(Pack(nameless, extraction_->aes).ok());
}

TEST_F(ArchiveTest, EveryManifestKeyIsCheckedOnce) {
  const std::string text = archive_->manifest.ToText();
  for (const char* repeated : {"machine r4400\n", "producer another\n", "records 1\n"}) {
    auto m = Manifest::FromText(text + repeated);
    EXPECT_FALSE(m.ok()) << repeated;
    EXPECT_THAT(m.status().message(), HasSubstr("repeated")) << repeated;
  }
  // The start the manifest states is the IMS's, or the archive is refused before any replay.
  ims::InitialMachineState ims;
  aes::EventSchedule aes;
  Archive moved = *archive_;
  moved.manifest.start_pc += 4;
  EXPECT_THAT(std::string(Unpack(moved, ims, aes).message()),
              HasSubstr("the archive's manifest starts at branch count "));
  moved = *archive_;
  moved.manifest.start_branch_count += 1;
  EXPECT_THAT(std::string(Unpack(moved, ims, aes).message()), HasSubstr("its IMS at branch count"));
  EXPECT_TRUE(Unpack(*archive_, ims, aes).ok());
}

TEST_F(ArchiveTest, ADamagedInstructionChecksumIsRefusedByTheReplay) {
  // A sound version 2 container whose manifest promises another instruction stream.
  Archive tampered = *archive_;
  tampered.manifest.instruction_crc64 ^= 0x8000;
  auto out = io::OutputFile::Create((*dir_ / "tampered.citcat").string());
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE(Write(tampered, **out).ok());
  ASSERT_TRUE((*out)->Commit().ok());
  auto back = Read((*dir_ / "tampered.citcat").string());
  ASSERT_TRUE(back.ok()) << back.status();
  ims::InitialMachineState ims;
  aes::EventSchedule aes;
  ASSERT_TRUE(Unpack(*back, ims, aes).ok());
  replay::ReplayOptions options;
  ReplayChecksums sums;
  sums.Attach(options, ims, back->manifest.version);
  auto summary = systems::Replay(ims, aes, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  Manifest replayed;
  sums.Fill(*summary, replayed);
  absl::Status s = CompareWithManifest(back->manifest, replayed);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("instruction-crc64 is 0x"));
  EXPECT_THAT(s.message(), Not(HasSubstr("cat-crc64")));
  EXPECT_EQ(std::string(s.message()).find('\n'), std::string::npos);
}

// tests/archive/data/int64-v1.citcat: `citcat capture --workload int64 --instructions 200000`,
// extracted and packed by citcat before format version 2 (commit 7db6dee).
TEST(VersionOneArchive, StillReadsReplaysAndVerifies) {
  auto a = Read(CITCAT_ARCHIVE_DATA "/int64-v1.citcat");
  ASSERT_TRUE(a.ok()) << a.status();
  const Manifest& m = a->manifest;
  EXPECT_EQ(m.version, 1);
  EXPECT_EQ(m.machine, "r4400");
  EXPECT_EQ(m.instructions, 183183u);
  EXPECT_EQ(m.trace_entries, 183185u);
  EXPECT_EQ(m.start_branch_count, 102161u);
  EXPECT_EQ(m.start_pc, 0xffffffff80011f10u);
  EXPECT_EQ(m.end_branch_count, 107965u);
  EXPECT_EQ(m.records, 304u);
  EXPECT_EQ(m.record_bytes, 8648u);
  EXPECT_EQ(m.instruction_crc64, 0x01cdb835b20c7218u);
  EXPECT_EQ(m.cat_crc64, 0x6f60ff5cab041054u);
  EXPECT_EQ(m.producer, "citcat capture --machine r4400 --workload int64 --seed 1");
  EXPECT_THAT(m.ToText(), StartsWith("citcat-archive-manifest 1\nmachine r4400\n"));

  ims::InitialMachineState ims;
  aes::EventSchedule aes;
  ASSERT_TRUE(Unpack(*a, ims, aes).ok());
  auto replay_with = [&](int version) {
    replay::ReplayOptions options;
    ReplayChecksums sums;
    sums.Attach(options, ims, version);
    auto summary = systems::Replay(ims, aes, options);
    EXPECT_TRUE(summary.ok()) << summary.status();
    Manifest replayed;
    if (summary.ok()) sums.Fill(*summary, replayed);
    return replayed;
  };
  const Manifest v1 = replay_with(1);
  EXPECT_TRUE(CompareWithManifest(m, v1).ok()) << CompareWithManifest(m, v1);
  // The version decides the instruction stream: version 2's sum of the same replay differs, and
  // only that.
  const Manifest v2 = replay_with(2);
  EXPECT_NE(v2.instruction_crc64, m.instruction_crc64);
  EXPECT_THAT(std::string(CompareWithManifest(m, v2).message()),
              ::testing::MatchesRegex("[^;]*: instruction-crc64 is 0x[0-9a-f]+, the manifest says "
                                      "0x01cdb835b20c7218"));

  // Packed again today, the same IMS and AES give a version 2 archive with the same replay, its
  // AES version 2 too: the interrupts in columns, smaller.
  auto repacked = Pack(ims, aes);
  ASSERT_TRUE(repacked.ok()) << repacked.status();
  EXPECT_EQ(repacked->manifest.version, 2);
  EXPECT_EQ(repacked->manifest.instruction_crc64, v2.instruction_crc64);
  EXPECT_LT(repacked->manifest.aes_bytes, m.aes_bytes);
  auto schedule = ScheduleOf(*repacked);
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  EXPECT_EQ(schedule->format_version(), aes::kPackedFormatVersion);
  EXPECT_EQ(schedule->interrupts(), static_cast<uint64_t>(aes.interrupts_size()));
  Manifest same = repacked->manifest;
  same.version = 1;
  same.instruction_crc64 = m.instruction_crc64;
  same.aes_bytes = m.aes_bytes;
  EXPECT_EQ(same.ToText(), m.ToText());
}

// tests/archive/data/i486-rep-aes-v1.citcat: `citcat capture --machine i486 --workload rep
// --instructions 1500000`, extracted and packed by citcat before interrupts were stored in
// columns (commit 842fba3): its AES is version 1, every interrupt keyed by ECX.
TEST(VersionOneAes, StillReplaysAndPacksIntoColumns) {
  auto a = Read(CITCAT_ARCHIVE_DATA "/i486-rep-aes-v1.citcat");
  ASSERT_TRUE(a.ok()) << a.status();
  auto old = ScheduleOf(*a);
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->format_version(), aes::kFormatVersion);
  ims::InitialMachineState ims;
  aes::EventSchedule aes;
  ASSERT_TRUE(Unpack(*a, ims, aes).ok());
  ASSERT_GT(aes.interrupts_size(), 50);
  for (const aes::Interrupt& irq : aes.interrupts()) EXPECT_TRUE(irq.has_rep_remaining());
  const auto replayed = [&ims](const aes::Schedule& schedule) {
    replay::ReplayOptions options;
    ReplayChecksums sums;
    sums.Attach(options, ims);
    auto summary = systems::Replay(ims, schedule, options);
    EXPECT_TRUE(summary.ok()) << summary.status();
    Manifest m;
    if (summary.ok()) sums.Fill(*summary, m);
    return m;
  };
  EXPECT_TRUE(CompareWithManifest(a->manifest, replayed(*old)).ok());

  // Packed today: interrupts in columns, a REP iteration told by the steps after the first
  // arrival, where one is needed; the same replay, in fewer bytes.
  auto repacked = Pack(ims, aes);
  ASSERT_TRUE(repacked.ok()) << repacked.status();
  auto packed = ScheduleOf(*repacked);
  ASSERT_TRUE(packed.ok()) << packed.status();
  EXPECT_EQ(packed->format_version(), aes::kPackedFormatVersion);
  EXPECT_LT(repacked->manifest.aes_bytes, a->manifest.aes_bytes * 2 / 3);
  int between_iterations = 0;
  std::unique_ptr<aes::ScheduleReader> keys = packed->Read();
  for (const aes::Interrupt& irq : aes.interrupts()) {
    ASSERT_FALSE(keys->interrupts().empty());
    const aes::Interrupt& key = keys->interrupts().Pop();
    EXPECT_EQ(key.branch_count(), irq.branch_count());
    EXPECT_EQ(key.pc(), irq.pc());
    EXPECT_FALSE(key.has_rep_remaining() || key.has_cat_record());
    between_iterations += key.has_steps_after_arrival();
  }
  EXPECT_GT(between_iterations, 3);
  EXPECT_TRUE(CompareWithManifest(a->manifest, replayed(*packed)).ok());
}

TEST_F(ArchiveTest, StatsCountTheReplayAndPlotTheCurve) {
  auto stats = ComputeStats(extraction_->ims, extraction_->aes, 64);
  ASSERT_TRUE(stats.ok()) << stats.status();
  const Manifest& m = archive_->manifest;
  EXPECT_EQ(stats->records, m.records);
  EXPECT_EQ(stats->bus_bytes, m.record_bytes);
  EXPECT_EQ(stats->instructions, m.instructions);
  EXPECT_EQ(stats->dma, static_cast<uint64_t>(extraction_->aes.dma_size()));
  // The curve: bounded, rising, ending at the totals.
  ASSERT_GE(stats->curve.size(), 64u);
  EXPECT_LE(stats->curve.size(), 2 * 64u + 2);
  for (size_t i = 1; i < stats->curve.size(); ++i) {
    EXPECT_GE(stats->curve[i].instructions, stats->curve[i - 1].instructions);
    EXPECT_GE(stats->curve[i].bus_bytes, stats->curve[i - 1].bus_bytes);
  }
  EXPECT_EQ(stats->curve.back().instructions, m.instructions);
  EXPECT_EQ(stats->curve.back().bus_bytes, m.record_bytes);

  const std::string text = FormatStats(*stats, "capture.cat");
  EXPECT_THAT(text, HasSubstr("record sizes (Fig. 5)"));
  for (const char* part : {"Count/Cause echoes", "DMA", "interrupts", "device I/O", "IMS + AES"}) {
    EXPECT_THAT(text, HasSubstr(part));
  }
  EXPECT_THAT(text, HasSubstr("fill"));

  const std::string svg = CurveSvg(stats->curve, "a <title> & more");
  EXPECT_THAT(svg, StartsWith("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(svg, HasSubstr("a &lt;title&gt; &amp; more"));
  EXPECT_THAT(svg, HasSubstr("</svg>\n"));
  const size_t p = svg.find("<polyline");
  ASSERT_NE(p, std::string::npos);
  const size_t q = svg.find("points=\"", p) + 8;
  const std::string points = svg.substr(q, svg.find('"', q) - q);
  std::vector<std::string> pairs = absl::StrSplit(points, ' ');
  EXPECT_EQ(pairs.size(), stats->curve.size());
  for (const std::string& pair : pairs) {
    std::vector<std::string> xy = absl::StrSplit(pair, ',');
    ASSERT_EQ(xy.size(), 2u) << pair;
    double x = 0, y = 0;
    EXPECT_TRUE(absl::SimpleAtod(xy[0], &x) && absl::SimpleAtod(xy[1], &y)) << pair;
    EXPECT_TRUE(x >= 0 && x <= 800 && y >= 0 && y <= 500) << pair;
  }
}

}  // namespace
}  // namespace citcat::archive
