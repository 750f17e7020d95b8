// The main job on its built-in default. Until the reference machines and replay exist it
// exercises what does: a CAT is written, read back and checked record by record, and shown.
#include <chrono>
#include <cstdio>
#include <filesystem>

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "cat_parser/reader.h"
#include "cat_parser/synthetic.h"
#include "cat_parser/text.h"
#include "cat_parser/writer.h"
#include "citcat/command.h"

namespace citcat::cli {
namespace {

constexpr uint64_t kRecords = 1'000'000;
constexpr uint64_t kSeed = 1;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

absl::Status RunDemo(const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError("demo", "");
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              absl::StrCat("citcat-demo-", getpid());
  std::filesystem::create_directories(dir);
  struct Cleanup {
    std::filesystem::path dir;
    ~Cleanup() { std::filesystem::remove_all(dir); }
  } cleanup{dir};
  std::string path = (dir / "sample.cat").string();

  cat::CatHeader header = cat::SyntheticHeader(cat::Machine::kR4400);
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<cat::CatWriter>> writer = cat::CatWriter::Create(path, header);
  if (!writer.ok()) return writer.status();
  cat::SyntheticRecords source(header, kSeed);
  for (uint64_t i = 0; i < kRecords; ++i) {
    if (absl::Status s = (*writer)->Write(source.Next()); !s.ok()) return s;
  }
  if (absl::Status s = (*writer)->Finish(); !s.ok()) return s;
  double write_seconds = Seconds(start);
  uint64_t bytes = std::filesystem::file_size(path);

  start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<cat::CatReader>> reader = cat::CatReader::Open(path);
  if (!reader.ok()) return reader.status();
  cat::SyntheticRecords expected(header, kSeed);
  cat::BusRecord record;
  uint64_t count = 0;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->Next(record);
    if (!more.ok()) return more.status();
    if (!*more) break;
    if (cat::OwnedRecord(record) != cat::OwnedRecord(expected.Next())) {
      return absl::InternalError(absl::StrCat("record ", count, " read back differs"));
    }
    ++count;
  }
  double read_seconds = Seconds(start);
  if (count != kRecords) {
    return absl::InternalError(absl::StrCat("read back ", count, " of ", kRecords, " records"));
  }

  absl::StatusOr<std::unique_ptr<cat::CatReader>> again = cat::CatReader::Open(path);
  if (!again.ok()) return again.status();
  absl::StatusOr<std::unique_ptr<io::OutputFile>> out = io::OutputFile::Create("-");
  if (!out.ok()) return out.status();
  std::printf("First records of the sample CAT (citcat dump):\n");
  std::fflush(stdout);
  if (absl::Status s = cat::DumpText(**again, **out, 6); !s.ok()) return s;
  if (absl::Status s = (*out)->Commit(); !s.ok()) return s;

  double mb = static_cast<double>(bytes) / 1e6;
  std::printf(
      "\nSummary\n"
      "  machine          %s (synthetic bus traffic; capture and replay are not built yet)\n"
      "  records          %llu written, read back and compared: identical\n"
      "  file             %.1f MB, %.1f bytes per record\n"
      "  write            %.0f MB/s\n"
      "  read + check     %.0f MB/s\n",
      std::string(cat::MachineName(header.machine)).c_str(),
      static_cast<unsigned long long>(count), mb, static_cast<double>(bytes) / count,
      mb / write_seconds, mb / read_seconds);
  return absl::OkStatus();
}

}  // namespace citcat::cli
