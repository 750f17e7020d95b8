// .xz and .zst traces are compressed on worker threads (liblzma's multi-threaded encoder, zstd's
// workers), .gz on one thread (ISA-L's igzip). Each file must read back as the raw trace, with
// the libraries (zlib, the reference reader, for gzip) and with the xz, zstd and gzip tools (what
// ChampSim reads its traces through), and must not depend on the number of threads that made it.
// Another compression's suffix is refused, never written as plain bytes.
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/file.h"
#include "traces/mips_registers.h"
#include "traces/output.h"
#include "traces/writers.h"

namespace citcat::traces {
namespace {

// Enough ChampSim records for two xz blocks (12 MiB each) and several zstd jobs: a loop over
// 64 instructions, each loading from an address that walks through memory.
constexpr int kRecords = 300'000;

void Feed(TraceSink& sink) {
  Record r;
  r.registers = &MipsRegisters();
  r.AddRead(29);
  r.AddWritten(4);
  r.accesses.push_back({0, 4, false, true, 0});
  for (int i = 0; i < kRecords; ++i) {
    r.index = i;
    r.pc = 0x400000 + 4 * (i % 64);
    r.next_pc = r.pc + 4;
    r.accesses[0].address = 0x10000000 + 4 * uint64_t(i) * 7 % (1 << 22);
    ASSERT_TRUE(sink.Consume(r).ok());
  }
  ASSERT_TRUE(sink.Finish().ok());
}

std::string Raw() {
  std::string out;
  Feed(*NewWriter(Format::kChampSim, std::make_unique<StringOutput>(&out)));
  return out;
}

// The compressed file made with `threads` threads.
std::string Compressed(const std::string& path, int threads) {
  auto out = OpenOutput(path, threads);
  EXPECT_TRUE(out.ok()) << out.status();
  Feed(*NewWriter(Format::kChampSim, *std::move(out)));
  auto bytes = io::ReadWholeFile(path, 1 << 30);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return *bytes;
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  EXPECT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
}

std::string Temp(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/compression-", getpid(), "-", name);
}

bool HaveTool(const char* tool) {
  return std::system(absl::StrCat("command -v ", tool, " >/dev/null 2>&1").c_str()) == 0;
}

// The standard output of `command`.
std::string Output(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return out;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, p)) > 0;) out.append(buffer, n);
  pclose(p);
  return out;
}

TEST(TraceCompression, XzOnThreadsReadsBackAsTheTraceWhateverTheThreads) {
  const std::string raw = Raw();
  ASSERT_EQ(raw.size(), 64u * kRecords);
  const std::string path = Temp("trace.champsim.xz");
  const std::string one = Compressed(path, 1);
  EXPECT_EQ(Compressed(path, 3), one);
  EXPECT_EQ(Compressed(path, 2), one);
  auto back = ReadDecompressed(path);  // liblzma's stream decoder
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == raw);
  if (HaveTool("xz")) {
    EXPECT_EQ(std::system(absl::StrCat("xz -t ", path).c_str()), 0);
    EXPECT_TRUE(Output(absl::StrCat("xz -dc ", path)) == raw);
    // `xz --robot --list`: "totals", streams, blocks, ...; blocks cut for the threads.
    for (absl::string_view line :
         absl::StrSplit(Output(absl::StrCat("xz --robot --list ", path)), '\n')) {
      const std::vector<absl::string_view> fields = absl::StrSplit(line, '\t');
      int blocks = 0;
      if (fields.size() > 2 && fields[0] == "totals") {
        ASSERT_TRUE(absl::SimpleAtoi(fields[2], &blocks));
        EXPECT_EQ(blocks, 2);  // 19.2 MB in 12 MiB blocks
      }
    }
  }
  std::remove(path.c_str());
}

TEST(TraceCompression, ZstdOnWorkersReadsBackAsTheTraceWhateverTheWorkers) {
  const std::string raw = Raw();
  const std::string path = Temp("trace.champsim.zst");
  const std::string one = Compressed(path, 1);
  EXPECT_EQ(Compressed(path, 3), one);
  EXPECT_EQ(Compressed(path, 2), one);
  auto back = ReadDecompressed(path);  // libzstd's streaming decoder
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == raw);
  // With workers the input is cut into jobs: zstd on the calling thread (0 workers) makes
  // other bytes.
  EXPECT_NE(Compressed(path, 0), one);
  if (HaveTool("zstd")) {
    EXPECT_EQ(std::system(absl::StrCat("zstd -q -t ", path).c_str()), 0);
    EXPECT_TRUE(Output(absl::StrCat("zstd -q -dc ", path)) == raw);
  }
  std::remove(path.c_str());
}

// zlib's gzread, which reads concatenated members as one.
std::string ReadWithZlib(const std::string& path) {
  std::string out;
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return out;
  char buffer[1 << 16];
  for (int n; (n = gzread(f, buffer, sizeof buffer)) > 0;) out.append(buffer, n);
  gzclose(f);
  return out;
}

TEST(TraceCompression, GzipReadsBackAsTheTraceWithZlibAndGzip) {
  const std::string raw = Raw();
  const std::string path = Temp("trace.champsim.gz");
  const std::string one = Compressed(path, 1);
  EXPECT_EQ(Compressed(path, 2), one);  // no name, no time in the header: the same bytes
  ASSERT_GE(one.size(), 10u);
  EXPECT_EQ(one.substr(0, 3), std::string("\x1f\x8b\x08", 3));
  EXPECT_LT(one.size(), raw.size() / 10);
  EXPECT_TRUE(ReadWithZlib(path) == raw);
  auto back = ReadDecompressed(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == raw);
  if (HaveTool("gzip")) {
    EXPECT_EQ(std::system(absl::StrCat("gzip -t ", path).c_str()), 0);
    EXPECT_TRUE(Output(absl::StrCat("gzip -dc ", path)) == raw);
  }
  // Two members (as --jobs writes one per segment) read as one trace.
  const std::string twice = Temp("twice.champsim.gz");
  WriteFile(twice, one + one);
  EXPECT_TRUE(ReadWithZlib(twice) == raw + raw);
  auto both = ReadDecompressed(twice);
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_TRUE(*both == raw + raw);
  auto checked = CheckCompressed(twice);
  ASSERT_TRUE(checked.ok()) << checked.status();
  EXPECT_EQ(*checked, 2 * raw.size());
  // Cut short, or damaged: a DataLoss naming the file.
  const std::string cut = Temp("cut.champsim.gz");
  WriteFile(cut, one.substr(0, one.size() - 5));
  EXPECT_THAT(std::string(CheckCompressed(cut).status().message()),
              ::testing::HasSubstr("cut.champsim.gz: gzip data cut short"));
  std::string damaged = one;
  damaged[damaged.size() - 6] ^= 0x55;  // the CRC-32 of the trailer
  WriteFile(cut, damaged);
  EXPECT_THAT(std::string(CheckCompressed(cut).status().message()),
              ::testing::HasSubstr("cut.champsim.gz: bad gzip data"));
  for (const std::string& p : {path, twice, cut}) std::remove(p.c_str());
}

TEST(TraceCompression, AnotherCompressionsSuffixIsRefusedAndNothingWritten) {
  for (const char* name : {"t.txt.bz2", "t.champsim.lz4", "t.zip", "t.lzma"}) {
    const std::string path = Temp(name);
    auto out = OpenOutput(path, 1);
    ASSERT_FALSE(out.ok()) << name;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(out.status().message()),
                ::testing::HasSubstr("citcat compresses traces as .gz, .xz or .zst"));
    EXPECT_FALSE(std::filesystem::exists(path)) << name;
  }
  EXPECT_EQ(CompressionOf("a.gz"), Compression::kGzip);
  EXPECT_EQ(CompressionOf("a.champsim"), Compression::kNone);
  EXPECT_EQ(SuffixOf(Compression::kZstd), ".zst");
}

}  // namespace
}  // namespace citcat::traces
