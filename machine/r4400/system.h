// The fixed address map of the traced R4400 system (docs/machines/r4400-system.md), as the
// machine builds it and as replay, which never sees the machine, rebuilds its CAT header.
#ifndef CITCAT_MACHINE_R4400_SYSTEM_H_
#define CITCAT_MACHINE_R4400_SYSTEM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cat_parser/record.h"

namespace citcat::machine {

inline constexpr uint64_t kUartBase = 0x1F000000;
inline constexpr uint64_t kDiskBase = 0x1F100000;
inline constexpr uint64_t kClockBase = 0x1F200000;
inline constexpr uint64_t kDeviceWindow = 0x100;
inline constexpr uint64_t kMagicBase = 0x1FE00000;
inline constexpr uint64_t kMagicSize = 0x10000;
inline constexpr uint64_t kBootArgs = 0x00000F00;  // NUL-terminated workload list, 256 bytes
inline constexpr uint64_t kBootArgsSize = 0x100;
inline constexpr uint32_t kDiskBlock = 512;

// The CAT header of the system: its devices (bus masters 1-3) and reserved areas.
inline cat::CatHeader R4400SystemHeader(uint64_t memory_bytes,
                                        std::vector<cat::CacheGeometry> caches,
                                        std::string producer) {
  using cat::WindowKind;
  cat::CatHeader h;
  h.machine = cat::Machine::kR4400;
  h.byte_order = cat::ByteOrder::kBig;
  h.memory_bytes = memory_bytes;
  h.side_band = cat::kSideBandBranchCount;
  h.caches = std::move(caches);
  h.devices = {{"uart", WindowKind::kMemoryMapped, kUartBase, kDeviceWindow},
               {"disk", WindowKind::kMemoryMapped, kDiskBase, kDeviceWindow},
               {"clock", WindowKind::kMemoryMapped, kClockBase, kDeviceWindow}};
  h.magic = {{"trace-begin", WindowKind::kMemoryMapped, kMagicBase, 8},
             {"cpu-state", WindowKind::kMemoryMapped, kMagicBase + 0x1000, 0x1000},
             {"tlb", WindowKind::kMemoryMapped, kMagicBase + 0x2000, 48 * 32},
             {"state-done", WindowKind::kMemoryMapped, kMagicBase + 0x3000, 8},
             {"exception", WindowKind::kMemoryMapped, kMagicBase + 0x4000, 0x10},
             {"cause", WindowKind::kMemoryMapped, kMagicBase + 0x5000, 4},
             {"count", WindowKind::kMemoryMapped, kMagicBase + 0x5008, 4},
             {"console", WindowKind::kMemoryMapped, kMagicBase + 0x6000, 8}};
  h.producer = std::move(producer);
  return h;
}

}  // namespace citcat::machine

#endif  // CITCAT_MACHINE_R4400_SYSTEM_H_
