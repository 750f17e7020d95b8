#include "tests/cat_parser/cat_test_util.h"

#include <atomic>
#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "cat_parser/crc.h"
#include "cat_parser/format.h"
#include "cat_parser/reader.h"
#include "cat_parser/writer.h"
#include "gtest/gtest.h"

namespace citcat::cat::testing {

std::string TempPath(const std::string& name) {
  static std::atomic<int> counter{0};
  return absl::StrCat(::testing::TempDir(), "/", getpid(), "-", counter++, "-", name);
}

std::vector<uint8_t> EncodeCat(const CatHeader& header, const std::vector<OwnedRecord>& records) {
  std::string path = TempPath("encode.cat");
  auto writer = CatWriter::Create(path, header);
  EXPECT_TRUE(writer.ok()) << writer.status();
  for (const OwnedRecord& r : records) EXPECT_TRUE((*writer)->Write(r.view()).ok());
  EXPECT_TRUE((*writer)->Finish().ok());
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  return bytes;
}

absl::StatusOr<std::vector<OwnedRecord>> DecodeCat(const std::vector<uint8_t>& bytes) {
  auto reader = CatReader::Open(io::InputFile::FromMemory("test.cat", bytes));
  if (!reader.ok()) return reader.status();
  std::vector<OwnedRecord> records;
  BusRecord r;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->Next(r);
    if (!more.ok()) return more.status();
    if (!*more) return records;
    records.emplace_back(r);
  }
}

size_t FirstChunkOffset(const std::vector<uint8_t>& bytes) {
  return format::kFileHeaderPrefix + format::Load32(&bytes[12]) + 4;
}

void FixHeaderCrc(std::vector<uint8_t>& bytes) {
  size_t end = FirstChunkOffset(bytes) - 4;
  format::Store32(&bytes[end], Crc32({&bytes[8], end - 8}));
}

void FixChunkCrc(std::vector<uint8_t>& bytes, size_t at) {
  uint32_t length = format::Load32(&bytes[at + 4]);
  uint32_t crc = Crc32({&bytes[at], 20});
  format::Store32(&bytes[at + 20], Crc32({&bytes[at + 24], length}, crc));
}

std::vector<OwnedRecord> OneOfEachKind(const CatHeader& header) {
  std::vector<OwnedRecord> records;
  uint64_t bc = 0;
  auto add = [&](RecordKind kind, uint64_t address, size_t size, uint8_t master = kMasterCpu,
                 uint8_t flags = 0) {
    OwnedRecord r;
    r.kind = kind;
    r.address = address;
    r.master = master;
    r.flags = flags;
    r.branch_count = bc += 3;
    for (size_t i = 0; i < size; ++i)
      r.data.push_back(static_cast<uint8_t>(i * 7 + records.size()));
    records.push_back(r);
  };
  add(RecordKind::kFill, 0x1000, 32, kMasterCpu, kFlagCode);
  add(RecordKind::kWriteBack, 0x2000, 32);
  add(RecordKind::kWriteThrough, 0x2004, 4, kMasterCpu, kFlagLocked);
  add(RecordKind::kUncachedRead, 0x1f000000, 4);
  add(RecordKind::kUncachedWrite, 0x1fe00000, 8);
  add(RecordKind::kPortRead, 0x3f8, 1);
  add(RecordKind::kPortWrite, 0x3f8, 2);
  add(RecordKind::kDmaRead, 0x40000, 512, header.devices.empty() ? 0 : 1);
  add(RecordKind::kDmaWrite, 0x50000, kMaxRecordData, header.devices.empty() ? 0 : 1);
  add(RecordKind::kInterruptAck, 0, 1);
  add(RecordKind::kUncachedWrite, UINT64_MAX - 7, 0);
  return records;
}

}  // namespace citcat::cat::testing
