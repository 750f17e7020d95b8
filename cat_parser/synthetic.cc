#include "cat_parser/synthetic.h"

#include <algorithm>
#include <cstring>

namespace citcat::cat {

CatHeader SyntheticHeader(Machine machine) {
  CatHeader h;
  h.machine = machine;
  h.side_band = kSideBandBranchCount;
  h.memory_bytes = 32 << 20;
  if (machine == Machine::kR4400) {
    h.byte_order = ByteOrder::kBig;
    h.caches = {{1, CacheType::kInstruction, 1, WritePolicy::kWriteBack, 16384, 32},
                {1, CacheType::kData, 1, WritePolicy::kWriteBack, 16384, 32}};
    h.devices = {{"uart", WindowKind::kMemoryMapped, 0x1f000000, 0x100},
                 {"disk", WindowKind::kMemoryMapped, 0x1f100000, 0x100}};
    h.magic = {{"trace-begin", WindowKind::kMemoryMapped, 0x1fe00000, 8},
               {"cpu-state", WindowKind::kMemoryMapped, 0x1fe01000, 0x1000}};
  } else {
    h.byte_order = ByteOrder::kLittle;
    h.caches = {{1, CacheType::kUnified, 4, WritePolicy::kWriteThrough, 8192, 16}};
    h.devices = {{"uart", WindowKind::kPort, 0x3f8, 8}, {"disk", WindowKind::kPort, 0x1f0, 8}};
    h.magic = {{"trace-begin", WindowKind::kMemoryMapped, 0xfee00000, 8}};
  }
  h.producer = "synthetic";
  return h;
}

SyntheticRecords::SyntheticRecords(const CatHeader& header, uint64_t seed)
    : header_(header),
      rng_(seed),
      line_bytes_(header.caches.empty() ? 32 : header.caches.front().line_bytes),
      data_(4096) {}

BusRecord SyntheticRecords::Next() {
  BusRecord r;
  branch_count_ += rng_() % 8;
  r.branch_count = branch_count_;
  uint64_t memory_lines = header_.memory_bytes / line_bytes_;
  uint32_t pick = rng_() % 100;
  size_t size = line_bytes_;
  r.address = (rng_() % memory_lines) * line_bytes_;
  bool i486 = header_.machine == Machine::kI486;
  if (pick < 60) {
    r.kind = RecordKind::kFill;
    if (i486 && pick < 30) r.flags = kFlagCode;
  } else if (pick < 85) {
    r.kind = i486 ? RecordKind::kWriteThrough : RecordKind::kWriteBack;
    if (i486) size = 4;
  } else if (pick < 93) {
    const AddressWindow& device = header_.devices[rng_() % header_.devices.size()];
    bool port = device.kind == WindowKind::kPort;
    r.kind = pick < 89 ? (port ? RecordKind::kPortRead : RecordKind::kUncachedRead)
                       : (port ? RecordKind::kPortWrite : RecordKind::kUncachedWrite);
    r.address = device.base;
    size = port ? 1 : 4;
  } else if (pick < 99) {
    r.kind = pick < 97 ? RecordKind::kDmaWrite : RecordKind::kDmaRead;
    r.master = static_cast<uint8_t>(1 + rng_() % header_.devices.size());
    size = 512;
    r.address &= ~uint64_t{511};
  } else {
    r.kind = i486 ? RecordKind::kInterruptAck : RecordKind::kUncachedWrite;
    r.address = i486 ? 0 : header_.magic.front().base;
    size = i486 ? 1 : 8;
  }
  for (size_t i = 0; i < size; i += 8) {
    uint64_t v = rng_() & 0x00FF00FF00FF00FFull;  // half the bytes zero, like real data
    std::memcpy(&data_[i], &v, std::min<size_t>(8, size - i));
  }
  r.data = {data_.data(), size};
  return r;
}

}  // namespace citcat::cat
