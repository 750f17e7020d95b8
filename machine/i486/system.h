// The fixed map of the traced i486 PC (docs/machines/i486-system.md): memory, ports, interrupt
// lines and bus masters, as the machine builds them and as tools that never see the machine
// rebuild its CAT header.
#ifndef CITCAT_MACHINE_I486_SYSTEM_H_
#define CITCAT_MACHINE_I486_SYSTEM_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cat_parser/record.h"

namespace citcat::machine::pc {

// Memory.
inline constexpr uint64_t kHoleBase = 0xA0000;  // no RAM from here to 1 MiB
inline constexpr uint64_t kHoleEnd = 0x100000;
inline constexpr uint64_t kAddressSpace = uint64_t{1} << 32;  // the boot ROM ends here
inline constexpr uint64_t kRomAliasMax = 0x20000;  // the ROM's last 128 KiB also end at 1 MiB
inline constexpr uint64_t kMaxRomBytes = 1 << 20;
inline constexpr uint64_t kDefaultRomBytes = 0x10000;  // without an image: 64 KiB of HLT
// The reset vector: CS base FFFF0000h + IP FFF0h, the last 16 bytes of the ROM.
inline constexpr uint64_t kResetVector = 0xFFFFFFF0;
// A trace from reset's ROM is a whole number of these (docs/machines/i486-system.md, "Traces
// from reset"); the top one is what CS reaches after reset.
inline constexpr uint64_t kRomGranule = 0x10000;

// Ports.
inline constexpr uint16_t kPicMasterPort = 0x20;
inline constexpr uint16_t kPicSlavePort = 0xA0;
inline constexpr uint16_t kPitPort = 0x40;  // channels 0-2 at 40h-42h, control word at 43h
inline constexpr uint16_t kPortB = 0x61;    // system control port B
inline constexpr uint16_t kCmosPort = 0x70;
inline constexpr uint16_t kUartPort = 0x3F8;
inline constexpr uint16_t kAtaPort = 0x1F0;
inline constexpr uint16_t kAtaControlPort = 0x3F6;
inline constexpr uint16_t kBusMasterPort = 0xC000;
inline constexpr uint16_t kClockPort = 0x5C0;
inline constexpr uint16_t kClockEntropy = kClockPort + 0x0;       // read: 32 random bits
inline constexpr uint16_t kClockMicroseconds = kClockPort + 0x4;  // read: microseconds, 32 bits
inline constexpr uint16_t kClockPowerOff = kClockPort + 0x8;      // write: power off
inline constexpr uint16_t kClockWindow = 0x10;

// Interrupt lines (IRQ numbers: 0-7 on the master PIC, 8-15 on the slave).
inline constexpr int kIrqTimer = 0;
inline constexpr int kIrqCascade = 2;
inline constexpr int kIrqUart = 4;
inline constexpr int kIrqRtc = 8;
inline constexpr int kIrqDisk = 14;

// Bus masters: the devices' numbers in the CAT header (the order of SystemDevices).
inline constexpr uint8_t kMasterBusMasterIde = 9;

// The device windows of the CAT header, in bus-master order (1, 2, ...).
inline std::vector<cat::AddressWindow> SystemDevices(uint64_t rom_bytes) {
  using cat::WindowKind;
  return {{"pic-master", WindowKind::kPort, kPicMasterPort, 2},
          {"pic-slave", WindowKind::kPort, kPicSlavePort, 2},
          {"pit", WindowKind::kPort, kPitPort, 4},
          {"port-b", WindowKind::kPort, kPortB, 1},
          {"rtc", WindowKind::kPort, kCmosPort, 2},
          {"uart", WindowKind::kPort, kUartPort, 8},
          {"ata", WindowKind::kPort, kAtaPort, 8},
          {"ata-control", WindowKind::kPort, kAtaControlPort, 1},
          {"ide-dma", WindowKind::kPort, kBusMasterPort, 8},
          {"clock", WindowKind::kPort, kClockPort, kClockWindow},
          {"boot-rom", WindowKind::kMemoryMapped, kAddressSpace - rom_bytes, rom_bytes}};
}

// The CAT header of the system: little-endian, the PC's hole, the i486's 8 KiB unified
// write-through cache (4 ways, 16-byte lines), its devices and the reserved areas the guest's
// contract adds.
inline cat::CatHeader I486SystemHeader(uint64_t memory_bytes, uint64_t rom_bytes,
                                       std::vector<cat::AddressWindow> reserved,
                                       std::string producer) {
  cat::CatHeader h;
  h.machine = cat::Machine::kI486;
  h.byte_order = cat::ByteOrder::kLittle;
  h.memory_bytes = memory_bytes;
  h.holes = {{kHoleBase, kHoleEnd - kHoleBase}};
  h.side_band = cat::kSideBandBranchCount;
  h.caches = {{1, cat::CacheType::kUnified, 4, cat::WritePolicy::kWriteThrough, 8192, 16}};
  h.devices = SystemDevices(rom_bytes);
  h.magic = std::move(reserved);
  h.producer = std::move(producer);
  return h;
}

// The header of a trace from reset (docs/machines/i486-system.md, "Traces from reset"): the boot
// ROM is ROM, not a device: two ROM fields (its tail below 1 MiB, then the ROM at the top of the
// 4 GB space) instead of the `boot-rom` window, which is the last device, so the other devices
// keep their bus-master numbers; and the from-reset field.
inline void MakeFromResetHeader(cat::CatHeader& h, uint64_t rom_bytes) {
  std::erase_if(h.devices, [](const cat::AddressWindow& w) { return w.name == "boot-rom"; });
  const uint64_t alias = rom_bytes < kRomAliasMax ? rom_bytes : kRomAliasMax;
  h.roms = {{kHoleEnd - alias, alias}, {kAddressSpace - rom_bytes, rom_bytes}};
  h.from_reset = true;
}

}  // namespace citcat::machine::pc

#endif  // CITCAT_MACHINE_I486_SYSTEM_H_
