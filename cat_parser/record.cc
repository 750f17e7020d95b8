#include "cat_parser/record.h"

#include <array>
#include <utility>

namespace citcat::cat {
namespace {

constexpr std::array<std::pair<RecordKind, absl::string_view>, 10> kKindNames = {{
    {RecordKind::kFill, "fill"},
    {RecordKind::kWriteBack, "write-back"},
    {RecordKind::kWriteThrough, "write-through"},
    {RecordKind::kUncachedRead, "uncached-read"},
    {RecordKind::kUncachedWrite, "uncached-write"},
    {RecordKind::kPortRead, "port-read"},
    {RecordKind::kPortWrite, "port-write"},
    {RecordKind::kDmaRead, "dma-read"},
    {RecordKind::kDmaWrite, "dma-write"},
    {RecordKind::kInterruptAck, "interrupt-ack"},
}};

}  // namespace

absl::string_view KindName(RecordKind kind) {
  for (const auto& [k, name] : kKindNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

std::optional<RecordKind> KindFromName(absl::string_view name) {
  for (const auto& [k, n] : kKindNames) {
    if (n == name) return k;
  }
  return std::nullopt;
}

namespace {

// Whether [a, a + n) and [b, b + m) share a byte; n, m > 0, and [a, a + n) does not wrap.
bool Overlap(uint64_t a, uint64_t n, uint64_t b, uint64_t m) { return a - b < m || b - a < n; }

}  // namespace

const AddressWindow* CatHeader::MagicAt(uint64_t address, uint64_t size, WindowKind kind) const {
  for (const AddressWindow& w : magic) {
    if (w.kind == kind && w.Contains(address))
      return size <= w.size - (address - w.base) ? &w : nullptr;
  }
  return nullptr;
}

bool CatHeader::IsMemory(uint64_t address, uint64_t size) const {
  if (size == 0) size = 1;
  if (address >= memory_bytes || size > memory_bytes - address) return false;
  for (const MemoryHole& h : holes) {
    if (Overlap(address, size, h.base, h.size)) return false;
  }
  for (const std::vector<AddressWindow>* list : {&devices, &magic}) {
    for (const AddressWindow& w : *list) {
      if (w.kind == WindowKind::kMemoryMapped && w.size != 0 &&
          Overlap(address, size, w.base, w.size)) {
        return false;
      }
    }
  }
  return true;
}

MemoryPages::MemoryPages(const CatHeader& header)
    : header_(&header),
      whole_((std::min<uint64_t>(header.memory_bytes, uint64_t{1} << 32) + kPageBytes - 1) /
             kPageBytes) {
  for (uint64_t page = 0; page < whole_.size(); ++page) {
    whole_[page] = header.IsMemory(page * kPageBytes, kPageBytes);
  }
}

const RomWindow* CatHeader::RomAt(uint64_t address, uint64_t size) const {
  if (size == 0) size = 1;
  for (const RomWindow& w : roms) {
    if (address - w.base < w.size && size <= w.size - (address - w.base)) return &w;
  }
  return nullptr;
}

absl::string_view MachineName(Machine machine) {
  switch (machine) {
    case Machine::kR4400:
      return "r4400";
    case Machine::kI486:
      return "i486";
  }
  return "unknown";
}

}  // namespace citcat::cat
