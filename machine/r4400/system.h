// The fixed address map of the traced R4400 system (docs/machines/r4400-system.md), as the
// machine builds it and as replay, which never sees the machine, rebuilds its CAT header.
#ifndef CITCAT_MACHINE_R4400_SYSTEM_H_
#define CITCAT_MACHINE_R4400_SYSTEM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cat_parser/record.h"
#include "machine/r4400/contract.h"

namespace citcat::machine {

inline constexpr uint64_t kUartBase = 0x1F000000;
inline constexpr uint64_t kDiskBase = 0x1F100000;
inline constexpr uint64_t kClockBase = 0x1F200000;
inline constexpr uint64_t kDeviceWindow = 0x100;
// A store here powers the machine off: the guest kernel's last act, the end of a finished run.
inline constexpr uint64_t kClockPowerOff = kClockBase + 0x08;
inline constexpr uint64_t kMagicBase = r4400::kReservedBase;
inline constexpr uint64_t kMagicSize = r4400::kReservedSize;
// The boot ROM of a machine traced from reset: the reset vector 0xBFC00000 (kseg1) is its first
// byte, and it ends where the reserved area begins.
inline constexpr uint64_t kRomBase = 0x1FC00000;
inline constexpr uint64_t kRomSize = 0x200000;
inline constexpr uint64_t kResetVector = 0xFFFFFFFFBFC00000;
static_assert(kRomBase + kRomSize == r4400::kReservedBase);
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
  for (const r4400::ReservedArea& a : r4400::kReservedAreas) {
    h.magic.push_back(
        {std::string(a.name), WindowKind::kMemoryMapped, kMagicBase + a.offset, a.size});
  }
  h.producer = std::move(producer);
  return h;
}

}  // namespace citcat::machine

#endif  // CITCAT_MACHINE_R4400_SYSTEM_H_
