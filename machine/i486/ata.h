// The PC's disk: an ATA drive (device 0) on the primary channel, command block at 1F0h-1F7h and
// device control / alternate status at 3F6h, on IRQ 14, with a PCI-IDE (SFF-8038i) bus-master DMA
// engine at ports C000h-C007h (docs/machines/i486-system.md, "Disk"). Reads only: READ SECTORS by
// PIO, READ DMA through a PRD table, IDENTIFY DEVICE. Time is in instruction times; the drive's
// delays come from the outside world.
#ifndef CITCAT_MACHINE_I486_ATA_H_
#define CITCAT_MACHINE_I486_ATA_H_

#include <array>
#include <cstdint>
#include <limits>
#include <span>

#include "machine/disk.h"
#include "machine/world.h"

namespace citcat::machine {

// What the bus master reaches memory through: bus cycles the machine's monitor sees.
class DmaMemory {
 public:
  virtual ~DmaMemory() = default;
  // One bus-master read or write of `data` at physical `address`; false, and nothing moved, where
  // the range is not all RAM.
  virtual bool DmaRead(uint32_t address, std::span<uint8_t> data) = 0;
  virtual bool DmaWrite(uint32_t address, std::span<const uint8_t> data) = 0;
};

class AtaChannel {
 public:
  static constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

  AtaChannel(const Disk& disk, World& world, DmaMemory& memory)
      : disk_(disk), world_(world), memory_(memory) {}

  // The data register (1F0h): `size` (1, 2 or 4) bytes of the sector buffer, little-endian.
  uint32_t ReadData(int size, uint64_t now);
  // Command block registers 1F1h-1F7h (`offset` 1-7).
  uint8_t ReadRegister(int offset);
  void WriteRegister(int offset, uint8_t value, uint64_t now);
  // 3F6h: alternate status (no side effect) and device control (nIEN, SRST).
  uint8_t ReadAltStatus() const { return Status(); }
  void WriteControl(uint8_t value, uint64_t now);
  // Bus-master registers C000h-C007h (`offset` 0-7): command, status, PRD table pointer.
  uint8_t ReadBusMaster(int offset) const;
  void WriteBusMaster(int offset, uint8_t value, uint64_t now);

  // The IRQ 14 line: INTRQ, unless nIEN.
  bool Irq() const { return intrq_ && !(control_ & kNien); }
  // When the drive next acts (a sector ready, a command done), or kNever.
  uint64_t NextEvent() const { return step_at_; }
  // Does what is due by `now`.
  void Advance(uint64_t now);

  uint64_t dma_commands() const { return dma_commands_; }  // READ DMA commands completed

  static constexpr uint8_t kBsy = 0x80, kDrdy = 0x40, kDsc = 0x10, kDrq = 0x08, kErr = 0x01;
  static constexpr uint8_t kAbrt = 0x04, kIdnf = 0x10;
  static constexpr uint8_t kNien = 0x02, kSrst = 0x04;
  static constexpr uint8_t kBmStart = 0x01, kBmToMemory = 0x08;
  static constexpr uint8_t kBmActive = 0x01, kBmError = 0x02, kBmInterrupt = 0x04;

 private:
  enum class Step { kNone, kPioSector, kIdentify, kNoData, kDmaSector, kDmaDone, kError, kReset };

  bool Selected() const { return disk_.present() && !(device_ & 0x10); }
  uint8_t Status() const { return Selected() ? status_ : 0; }
  void Command(uint8_t command, uint64_t now);
  // A READ command: its LBA28 range checked, the first sector scheduled after the seek.
  void StartRead(uint64_t now, Step step);
  void Schedule(Step step, uint64_t at) {
    step_ = step;
    step_at_ = at;
  }
  void Fail(uint8_t error, uint64_t at) {
    error_pending_ = error;
    Schedule(Step::kError, at);
  }
  void Finish(uint8_t status, uint8_t error);
  void RaiseIntrq();
  void TransferSector(uint64_t at);
  bool NextPrd();
  void DmaFailed();
  void Identify();

  const Disk& disk_;
  World& world_;
  DmaMemory& memory_;

  // Task file.
  uint8_t status_ = kDrdy | kDsc, error_ = 0x01, features_ = 0, count_ = 1;
  uint8_t lba_low_ = 1, lba_mid_ = 0, lba_high_ = 0, device_ = 0, control_ = 0;
  bool intrq_ = false;
  std::array<uint8_t, Disk::kBlockBytes> buffer_{};
  uint32_t buffer_pos_ = 0, buffer_len_ = 0;
  uint64_t next_block_ = 0;
  uint32_t remaining_ = 0;  // sectors of the command still to come
  Step step_ = Step::kNone;
  uint64_t step_at_ = kNever;
  uint8_t error_pending_ = 0;

  // Bus master.
  uint8_t bm_command_ = 0, bm_status_ = 0;
  uint32_t prd_table_ = 0;
  uint32_t prd_next_ = 0;  // the next entry to fetch
  uint32_t prd_addr_ = 0, prd_left_ = 0;
  bool prd_last_ = false;        // the entry being used has EOT set
  bool sector_waiting_ = false;  // a sector is ready but the engine is not started
  uint64_t dma_commands_ = 0;
};

}  // namespace citcat::machine

#endif  // CITCAT_MACHINE_I486_ATA_H_
