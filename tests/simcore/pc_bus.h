// A PC's memory for tests of the i486 core: 16 MB of RAM at 0 (as `qemu-system-i386 -m 16`) and a
// 64 KB ROM at the top of the 4 GB space and again at F0000h (as a PC maps its BIOS), filled with
// HLT until a test loads one (writes to it are lost unless `rom_writable`). Every bus
// record is logged; port cycles touch no memory (reads give FFh), and an interrupt acknowledge
// cycle gets `vector`, as an interrupt controller would put on the bus.
#ifndef CITCAT_TESTS_SIMCORE_PC_BUS_H_
#define CITCAT_TESTS_SIMCORE_PC_BUS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "cat_parser/record.h"
#include "simcore/bus.h"

namespace citcat::x86::testing {

class PcBus final : public simcore::Bus {
 public:
  PcBus() : ram_(16 << 20), rom_(1 << 16, 0xF4) {}

  void Read(const cat::BusRecord& r, std::span<uint8_t> data) override {
    if (r.kind == cat::RecordKind::kInterruptAck) {
      data[0] = vector;
    } else {
      for (size_t i = 0; i < data.size(); ++i) data[i] = IsPort(r) ? 0xFF : *At(r.address + i);
    }
    log_.emplace_back(r);
  }
  void Write(const cat::BusRecord& r) override {
    if (!IsPort(r)) {
      for (size_t i = 0; i < r.data.size(); ++i) {
        if (rom_writable || !InRom(r.address + i)) *At(r.address + i) = r.data[i];
      }
    }
    log_.emplace_back(r);
  }
  // Bytes in place without a bus cycle (loading a program or a ROM).
  void Poke(uint32_t address, const std::vector<uint8_t>& bytes) {
    for (size_t i = 0; i < bytes.size(); ++i) *At(address + static_cast<uint32_t>(i)) = bytes[i];
  }
  uint8_t ByteAt(uint32_t address) { return *At(address); }
  const uint8_t* Bytes(uint32_t address) { return At(address); }
  const std::vector<cat::OwnedRecord>& log() const { return log_; }

  uint8_t vector = 0;  // supplied in interrupt acknowledge cycles
  // Writes to the ROM are lost, as on a PC (and on Bochs), unless set (QEMU's isapc machine backs
  // its firmware with RAM).
  bool rom_writable = false;

 private:
  static bool IsPort(const cat::BusRecord& r) {
    return r.kind == cat::RecordKind::kPortRead || r.kind == cat::RecordKind::kPortWrite;
  }
  static constexpr uint64_t kRomBase = 0xFFFF0000u, kRomAlias = 0xF0000;
  // The ROM at the top of the 4 GB space and again at F0000h, below 1 MiB, as on a PC.
  static bool InRom(uint64_t a) { return a >= kRomBase || (a >= kRomAlias && a < 0x100000); }
  uint8_t* At(uint64_t a) {
    if (a >= kRomBase) return &rom_[a - kRomBase];
    if (a >= kRomAlias && a < 0x100000) return &rom_[a - kRomAlias];
    return &ram_[a % ram_.size()];
  }
  std::vector<uint8_t> ram_, rom_;
  std::vector<cat::OwnedRecord> log_;
};

}  // namespace citcat::x86::testing

#endif  // CITCAT_TESTS_SIMCORE_PC_BUS_H_
