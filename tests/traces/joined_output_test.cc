// Pieces written at once by several threads join in order (traces::JoinedOutput), whatever order
// they complete in and however little memory they may hold (the rest goes through scratch
// files, which never outlive the output); compressed pieces are one stream or frame each.
#include "traces/joined_output.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "traces/output.h"

namespace citcat::traces {
namespace {

// Piece k's bytes: `size` of them, its own.
std::string PieceBytes(size_t k, size_t size) {
  std::string s(size, '\0');
  std::mt19937 random(static_cast<uint32_t>(k));
  for (char& c : s) c = static_cast<char>('a' + random() % 26);
  return s;
}

// Writes `bytes` in chunks of 1 to `chunk` bytes.
void WriteInChunks(ByteOutput& out, const std::string& bytes, size_t chunk, uint32_t seed) {
  std::mt19937 random(seed);
  for (size_t at = 0; at < bytes.size();) {
    const size_t n = std::min(bytes.size() - at, 1 + random() % chunk);
    ASSERT_TRUE(out.Write(absl::string_view(bytes).substr(at, n)).ok());
    at += n;
  }
}

std::filesystem::path FreshDir(const std::string& name) {
  std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / absl::StrCat(name, "-", getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

size_t FilesIn(const std::filesystem::path& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

// Eight pieces on four threads, each thread's pieces written with pauses of its own, with a
// budget of 0, 4 KiB and 1 MiB: the file is the pieces in order, and nothing else is left.
TEST(JoinedOutput, PiecesFromManyThreadsJoinInOrder) {
  const std::filesystem::path dir = FreshDir("joined-output");
  const std::string path = (dir / "joined").string();
  std::vector<std::string> bytes;
  std::string whole;
  for (size_t k = 0; k < 8; ++k) {
    bytes.push_back(PieceBytes(k, k == 3 ? 0 : 20'000 + 37'000 * k));
    whole += bytes.back();
  }
  for (const uint64_t budget : {uint64_t{0}, uint64_t{4096}, uint64_t{1} << 20}) {
    SCOPED_TRACE(budget);
    auto joined = JoinedOutput::Create(path, budget);
    ASSERT_TRUE(joined.ok()) << joined.status();
    std::vector<std::unique_ptr<ByteOutput>> pieces;
    for (size_t k = 0; k < bytes.size(); ++k) pieces.push_back((*joined)->AddPiece());
    // Thread t writes pieces t and t + 4; the later pieces run ahead of the earlier ones.
    std::vector<std::thread> threads;
    for (size_t t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (size_t k : {t + 4, t}) {
          WriteInChunks(*pieces[k], bytes[k], 3000, static_cast<uint32_t>(k));
          ASSERT_TRUE(pieces[k]->Close().ok());
        }
      });
    }
    for (std::thread& t : threads) t.join();
    ASSERT_TRUE((*joined)->Commit().ok());
    EXPECT_EQ((*joined)->bytes_written(), whole.size());
    EXPECT_TRUE(ReadFile(path) == whole);
    EXPECT_EQ(FilesIn(dir), 1u);  // no scratch file left
  }
}

// A piece added after every earlier one is complete writes straight through; compressed, each
// piece is a stream of its own and the file reads back as the whole.
TEST(JoinedOutput, CompressedPiecesReadBackAsTheWhole) {
  const std::filesystem::path dir = FreshDir("joined-output-compressed");
  for (const char* suffix : {".xz", ".zst"}) {
    const std::string path = (dir / "joined").string() + suffix;
    auto joined = JoinedOutput::Create(path, 1 << 16);
    ASSERT_TRUE(joined.ok()) << joined.status();
    std::string whole;
    std::vector<std::unique_ptr<ByteOutput>> pieces;
    for (size_t k = 0; k < 3; ++k) {
      auto piece = EncodeInto((*joined)->AddPiece(), path, 2);
      ASSERT_TRUE(piece.ok()) << piece.status();
      pieces.push_back(*std::move(piece));
    }
    for (size_t k : {2, 0, 1}) {  // complete out of order
      const std::string b = PieceBytes(k, 300'000);
      WriteInChunks(*pieces[k], b, 70'000, static_cast<uint32_t>(k));
      ASSERT_TRUE(pieces[k]->Close().ok());
    }
    for (size_t k = 0; k < 3; ++k) whole += PieceBytes(k, 300'000);
    auto late = EncodeInto((*joined)->AddPiece(), path, 2);
    ASSERT_TRUE(late.ok());
    WriteInChunks(**late, PieceBytes(9, 1000), 100, 9);
    ASSERT_TRUE((*late)->Close().ok());
    whole += PieceBytes(9, 1000);
    ASSERT_TRUE((*joined)->Commit().ok());
    auto read = ReadDecompressed(path);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_TRUE(*read == whole) << suffix;
  }
}

// A piece never closed: Commit refuses, and the output and scratch files are gone with it.
TEST(JoinedOutput, AnUnfinishedPieceLeavesNothing) {
  const std::filesystem::path dir = FreshDir("joined-output-unfinished");
  {
    auto joined = JoinedOutput::Create((dir / "joined").string(), 0);
    ASSERT_TRUE(joined.ok());
    std::unique_ptr<ByteOutput> first = (*joined)->AddPiece();
    std::unique_ptr<ByteOutput> second = (*joined)->AddPiece();
    ASSERT_TRUE(second->Write(PieceBytes(2, 5000)).ok());  // spilled: the budget is 0
    ASSERT_TRUE(second->Close().ok());
    ASSERT_TRUE(first->Write("abc").ok());
    EXPECT_FALSE((*joined)->Commit().ok());
  }
  EXPECT_EQ(FilesIn(dir), 0u);
}

}  // namespace
}  // namespace citcat::traces
