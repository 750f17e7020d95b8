// The CAT record model: one bus transaction as a hardware monitor sees it, and the header
// that describes the traced machine. Plain data with no dependencies, so that the CPU cores
// and the cache model can speak in bus records without knowing about files.
// The byte-level encoding is specified in docs/cat-format.md.
#ifndef CITCAT_CAT_PARSER_RECORD_H_
#define CITCAT_CAT_PARSER_RECORD_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace citcat::cat {

// What a bus transaction was. Values are the on-disk codes; never renumber.
// Codes 0x80-0xFF are reserved for optional kinds that readers may skip (docs/cat-format.md).
enum class RecordKind : uint8_t {
  kFill = 0x01,           // cacheable line read into a cache
  kWriteBack = 0x02,      // dirty line written back from a write-back cache
  kWriteThrough = 0x03,   // cacheable store passed through a write-through cache
  kUncachedRead = 0x04,   // load from an uncached address (devices, reserved areas)
  kUncachedWrite = 0x05,  // store to an uncached address
  kPortRead = 0x06,       // i486 IN
  kPortWrite = 0x07,      // i486 OUT
  kDmaRead = 0x08,        // a device reads memory (memory -> device)
  kDmaWrite = 0x09,       // a device writes memory (device -> memory)
  kInterruptAck = 0x0A,   // interrupt acknowledge cycle; data is the vector supplied
};

inline constexpr uint8_t kFirstOptionalKind = 0x80;

// Whether this reader knows a kind code (the known codes are contiguous).
inline constexpr bool IsKnownKind(uint8_t code) {
  return code >= static_cast<uint8_t>(RecordKind::kFill) &&
         code <= static_cast<uint8_t>(RecordKind::kInterruptAck);
}

// Record flags (bit values of BusRecord::flags).
inline constexpr uint8_t kFlagCode = 0x01;    // instruction fetch (i486 D/C# low)
inline constexpr uint8_t kFlagLocked = 0x02;  // locked cycle (i486 LOCK#)
inline constexpr uint8_t kKnownFlags = kFlagCode | kFlagLocked;

// Bus masters: 0 is the CPU; devices are numbered from 1 in the header's device list order.
inline constexpr uint8_t kMasterCpu = 0;

// The largest data payload of one record. A line fill is 16-128 bytes; a DMA burst may be
// larger, up to this bound, which keeps a damaged size field from asking for gigabytes.
inline constexpr uint32_t kMaxRecordData = 64 * 1024;

// One bus transaction. `data` holds the bytes in address order: data[i] is the byte at
// physical address `address + i`, whatever the machine's byte order. For port I/O,
// `address` is the port number; for an interrupt acknowledge it is 0.
struct BusRecord {
  RecordKind kind = RecordKind::kFill;
  uint8_t flags = 0;
  uint8_t master = kMasterCpu;
  uint64_t address = 0;
  uint64_t branch_count = 0;  // the side-band counter when the transaction happened
  std::span<const uint8_t> data;
};

// A record that owns its bytes (for tests, tools and small queues).
struct OwnedRecord {
  RecordKind kind = RecordKind::kFill;
  uint8_t flags = 0;
  uint8_t master = kMasterCpu;
  uint64_t address = 0;
  uint64_t branch_count = 0;
  std::vector<uint8_t> data;

  OwnedRecord() = default;
  explicit OwnedRecord(const BusRecord& r)
      : kind(r.kind),
        flags(r.flags),
        master(r.master),
        address(r.address),
        branch_count(r.branch_count),
        data(r.data.begin(), r.data.end()) {}
  BusRecord view() const { return {kind, flags, master, address, branch_count, data}; }
  bool operator==(const OwnedRecord&) const = default;
};

enum class Machine : uint8_t { kR4400 = 1, kI486 = 2 };
enum class ByteOrder : uint8_t { kLittle = 0, kBig = 1 };
enum class CacheType : uint8_t { kInstruction = 1, kData = 2, kUnified = 3 };
enum class WritePolicy : uint8_t { kWriteBack = 1, kWriteThrough = 2 };
enum class WindowKind : uint8_t { kMemoryMapped = 1, kPort = 2 };

// Side-band signals a monitor may record next to each transaction (bits of CatHeader::side_band).
inline constexpr uint32_t kSideBandBranchCount = 0x1;
inline constexpr uint32_t kKnownSideBand = kSideBandBranchCount;

struct CacheGeometry {
  uint8_t level = 1;
  CacheType type = CacheType::kUnified;
  uint8_t ways = 1;
  WritePolicy policy = WritePolicy::kWriteBack;
  uint32_t size_bytes = 0;
  uint32_t line_bytes = 0;
  bool operator==(const CacheGeometry&) const = default;
};

// An address range with a name: a device window or a reserved ("magic") area.
struct AddressWindow {
  std::string name;
  WindowKind kind = WindowKind::kMemoryMapped;
  uint64_t base = 0;
  uint64_t size = 0;
  bool Contains(uint64_t address) const { return address - base < size; }
  bool operator==(const AddressWindow&) const = default;
};

// Addresses [base, base + size) inside main memory that are not RAM, such as a PC's
// 0xA0000-0xFFFFF below the first megabyte.
struct MemoryHole {
  uint64_t base = 0;
  uint64_t size = 0;
  bool operator==(const MemoryHole&) const = default;
};

// Read-only memory [base, base + size) outside RAM (above main memory or inside a hole), such as
// a boot ROM: reads of it (line fills, uncached reads) are memory, writes to it are lost.
struct RomWindow {
  uint64_t base = 0;
  uint64_t size = 0;
  bool operator==(const RomWindow&) const = default;
};

struct CatHeader {
  Machine machine = Machine::kR4400;
  ByteOrder byte_order = ByteOrder::kBig;
  uint64_t memory_bytes = 0;
  std::vector<MemoryHole> holes;  // ascending, apart, inside [0, memory_bytes); none on the R4400
  std::vector<RomWindow> roms;    // ascending, apart, outside RAM
  // The trace starts at power-on: its first record is the first bus transaction after reset, with
  // no begin marker and no state dump before it.
  bool from_reset = false;
  uint32_t side_band = kSideBandBranchCount;
  std::vector<CacheGeometry> caches;
  std::vector<AddressWindow> devices;  // bus master N (N >= 1) is devices[N - 1]
  std::vector<AddressWindow> magic;    // reserved address map used by the CITCAT hooks
  std::string producer;                // free text: tool, workload, seed

  // The reserved area with this name, if the header has one.
  const AddressWindow* FindMagic(absl::string_view name) const {
    for (const AddressWindow& w : magic) {
      if (w.name == name) return &w;
    }
    return nullptr;
  }
  // The reserved area of this kind (memory-mapped, or ports for port I/O) that holds the access
  // of `size` bytes at `address` wholly; nullptr if none does, or if the access starts in an
  // area and runs past its end.
  const AddressWindow* MagicAt(uint64_t address, uint64_t size,
                               WindowKind kind = WindowKind::kMemoryMapped) const;
  // Whether the access of `size` bytes at `address` (a zero-size access: the byte at `address`)
  // is RAM: inside main memory and touching no hole, no memory-mapped device window and no
  // memory-mapped reserved area. Port windows are another address space and never count. ROM is
  // not RAM (RomAt): it is memory that reads like RAM, but keeps nothing written to it.
  bool IsMemory(uint64_t address, uint64_t size) const;
  // The ROM window that holds the access of `size` bytes at `address` wholly (a zero-size access:
  // the byte at `address`); nullptr if none does.
  const RomWindow* RomAt(uint64_t address, uint64_t size) const;
  bool operator==(const CatHeader&) const = default;
};

// CatHeader::IsMemory for the paths that ask it at every access (replay's bus, KEN#): answered
// from a bit per 4 KB page for an access inside a page that is memory throughout, from the
// header's map otherwise. The header must outlive it and not change.
class MemoryPages {
 public:
  explicit MemoryPages(const CatHeader& header);
  bool IsMemory(uint64_t address, uint64_t size) const {
    const uint64_t page = address / kPageBytes;
    if (page < whole_.size() && whole_[page] &&
        address % kPageBytes + std::max<uint64_t>(size, 1) <= kPageBytes) {
      return true;
    }
    return header_->IsMemory(address, size);
  }

 private:
  static constexpr uint64_t kPageBytes = 4096;
  const CatHeader* header_;
  std::vector<bool> whole_;  // pages of main memory below 4 GB that are memory throughout
};

absl::string_view KindName(RecordKind kind);
std::optional<RecordKind> KindFromName(absl::string_view name);
absl::string_view MachineName(Machine machine);

}  // namespace citcat::cat

#endif  // CITCAT_CAT_PARSER_RECORD_H_
