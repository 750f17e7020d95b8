#include "machine/i486/ata.h"

#include <algorithm>
#include <string_view>

namespace citcat::machine {
namespace {

enum Command : uint8_t {
  kRecalibrate = 0x10,
  kReadSectors = 0x20,
  kReadSectorsNoRetry = 0x21,
  kInitializeParameters = 0x91,
  kReadDma = 0xC8,
  kReadDmaNoRetry = 0xC9,
  kStandbyImmediate = 0xE0,
  kFlushCache = 0xE7,
  kIdentifyDevice = 0xEC,
  kSetFeatures = 0xEF,
};

uint32_t Le32(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | uint32_t{p[3]} << 24; }

// An ATA string: two characters a word, the first in the high byte, padded with spaces.
void PutString(std::array<uint8_t, Disk::kBlockBytes>& b, int word, int words,
               std::string_view text) {
  for (int i = 0; i < 2 * words; ++i) {
    const char c = i < static_cast<int>(text.size()) ? text[i] : ' ';
    b[2 * word + (i ^ 1)] = static_cast<uint8_t>(c);
  }
}

void PutWord(std::array<uint8_t, Disk::kBlockBytes>& b, int word, uint32_t value) {
  b[2 * word] = static_cast<uint8_t>(value);
  b[2 * word + 1] = static_cast<uint8_t>(value >> 8);
}

}  // namespace

uint32_t AtaChannel::ReadData(int size, uint64_t now) {
  if (!Selected() || !(status_ & kDrq)) return 0xFFFFFFFFu >> (32 - 8 * size);
  uint32_t value = 0;
  for (int i = 0; i < size && buffer_pos_ < buffer_len_; ++i) {
    value |= uint32_t{buffer_[buffer_pos_++]} << (8 * i);
  }
  if (buffer_pos_ < buffer_len_) return value;
  // The buffer is empty: the next sector comes after a delay, or the command is done.
  if (remaining_ > 0) {
    status_ = kBsy;
    Schedule(Step::kPioSector, now + world_.DiskDelay(false));
  } else {
    status_ = kDrdy | kDsc;
  }
  return value;
}

uint8_t AtaChannel::ReadRegister(int offset) {
  // While the drive is busy every command block register reads as the status.
  if (offset == 7 || (Selected() && (status_ & kBsy))) {
    if (offset == 7 && Selected()) intrq_ = false;  // reading Status acknowledges INTRQ
    return Status();
  }
  switch (offset) {
    case 1:
      return error_;
    case 2:
      return count_;
    case 3:
      return lba_low_;
    case 4:
      return lba_mid_;
    case 5:
      return lba_high_;
    case 6:
      return device_ | 0xA0;  // bits 7 and 5 are obsolete and read as set
  }
  return 0xFF;
}

void AtaChannel::WriteRegister(int offset, uint8_t value, uint64_t now) {
  if (status_ & kBsy) return;  // ignored while busy
  switch (offset) {
    case 1:
      features_ = value;
      return;
    case 2:
      count_ = value;
      return;
    case 3:
      lba_low_ = value;
      return;
    case 4:
      lba_mid_ = value;
      return;
    case 5:
      lba_high_ = value;
      return;
    case 6:
      device_ = value;
      return;
    case 7:
      if (Selected()) Command(value, now);
      return;
  }
}

void AtaChannel::Command(uint8_t command, uint64_t now) {
  intrq_ = false;
  error_ = 0;
  buffer_pos_ = buffer_len_ = 0;
  remaining_ = 0;
  sector_waiting_ = false;
  status_ = kBsy;
  switch (command) {
    case kReadSectors:
    case kReadSectorsNoRetry:
      StartRead(now, Step::kPioSector);
      return;
    case kReadDma:
    case kReadDmaNoRetry:
      StartRead(now, Step::kDmaSector);
      return;
    case kIdentifyDevice:
      Schedule(Step::kIdentify, now + world_.DiskDelay(false));
      return;
    case kRecalibrate:
    case kInitializeParameters:
    case kStandbyImmediate:  // Linux's sd at power-off: the drive spins on, which no one sees
    case kFlushCache:
    case kSetFeatures:
      Schedule(Step::kNoData, now + world_.DiskDelay(false));
      return;
  }
  Fail(kAbrt, now + world_.DiskDelay(false));
}

// READ SECTORS and READ DMA: LBA28 only; a range past the disk's end fails with IDNF after the
// seek.
void AtaChannel::StartRead(uint64_t now, Step step) {
  const uint64_t at = now + world_.DiskDelay(true);
  if (!(device_ & 0x40)) return Fail(kAbrt, at);  // CHS addressing is not supported
  const uint64_t first = uint64_t{device_ & 0x0Fu} << 24 | uint64_t{lba_high_} << 16 |
                         uint64_t{lba_mid_} << 8 | lba_low_;
  const uint32_t count = count_ == 0 ? 256 : count_;
  if (!disk_.Holds(first, count)) return Fail(kIdnf, at);
  next_block_ = first;
  remaining_ = count;
  Schedule(step, at);
}

void AtaChannel::WriteControl(uint8_t value, uint64_t now) {
  const bool was_reset = control_ & kSrst;
  control_ = value & (kNien | kSrst);
  if (!was_reset && (control_ & kSrst)) {
    // Software reset: whatever the drive was doing stops.
    status_ = kBsy;
    intrq_ = false;
    remaining_ = 0;
    buffer_pos_ = buffer_len_ = 0;
    sector_waiting_ = false;
    Schedule(Step::kNone, kNever);
  } else if (was_reset && !(control_ & kSrst)) {
    Schedule(Step::kReset, now + world_.DiskDelay(false));
  }
}

uint8_t AtaChannel::ReadBusMaster(int offset) const {
  switch (offset) {
    case 0:
      return bm_command_;
    case 2:
      return bm_status_;
    case 4:
    case 5:
    case 6:
    case 7:
      return static_cast<uint8_t>(prd_table_ >> (8 * (offset - 4)));
  }
  return 0;
}

void AtaChannel::WriteBusMaster(int offset, uint8_t value, uint64_t now) {
  switch (offset) {
    case 0: {
      const bool was_started = bm_command_ & kBmStart;
      bm_command_ = value & (kBmStart | kBmToMemory);
      if (!was_started && (bm_command_ & kBmStart)) {
        // Start: the engine begins at the table's first entry.
        bm_status_ |= kBmActive;
        prd_next_ = prd_table_;
        prd_left_ = 0;
        prd_last_ = false;
        if (sector_waiting_) {
          sector_waiting_ = false;
          Schedule(Step::kDmaSector, now);
        }
      } else if (was_started && !(bm_command_ & kBmStart)) {
        bm_status_ &= ~kBmActive;  // stop: the transfer is abandoned
      }
      return;
    }
    case 2:
      // Bits 5-6 (drive DMA capable) are kept; writing 1 to Error or Interrupt clears it.
      bm_status_ = static_cast<uint8_t>((bm_status_ & (kBmActive | kBmError | kBmInterrupt) &
                                         ~(value & (kBmError | kBmInterrupt))) |
                                        (value & 0x60));
      return;
    case 4:
    case 5:
    case 6:
    case 7: {
      const int shift = 8 * (offset - 4);
      prd_table_ = (prd_table_ & ~(0xFFu << shift)) | uint32_t{value} << shift;
      prd_table_ &= ~3u;  // dword aligned
      return;
    }
  }
}

void AtaChannel::RaiseIntrq() {
  intrq_ = true;
  if (!(control_ & kNien)) bm_status_ |= kBmInterrupt;
}

void AtaChannel::Finish(uint8_t status, uint8_t error) {
  status_ = status;
  error_ = error;
  RaiseIntrq();
}

void AtaChannel::Advance(uint64_t now) {
  while (step_at_ <= now) {
    const Step step = step_;
    const uint64_t at = step_at_;
    Schedule(Step::kNone, kNever);
    switch (step) {
      case Step::kPioSector: {
        std::span<const uint8_t> block = disk_.Block(next_block_++);
        std::copy(block.begin(), block.end(), buffer_.begin());
        buffer_pos_ = 0;
        buffer_len_ = Disk::kBlockBytes;
        --remaining_;
        Finish(kDrdy | kDsc | kDrq, 0);
        break;
      }
      case Step::kIdentify:
        Identify();
        Finish(kDrdy | kDsc | kDrq, 0);
        break;
      case Step::kNoData:
        Finish(kDrdy | kDsc, 0);
        break;
      case Step::kDmaSector:
        if ((bm_command_ & (kBmStart | kBmToMemory)) != (kBmStart | kBmToMemory)) {
          sector_waiting_ = true;  // the drive waits for the engine
        } else {
          TransferSector(at);
        }
        break;
      case Step::kDmaDone:
        // A table that ended with this transfer leaves the engine idle; a longer one leaves it
        // active for the driver to stop.
        if (prd_left_ == 0 && prd_last_) bm_status_ &= ~kBmActive;
        ++dma_commands_;
        Finish(kDrdy | kDsc, 0);
        break;
      case Step::kError:
        Finish(kDrdy | kDsc | kErr, error_pending_);
        break;
      case Step::kReset:
        // The diagnostic code and the signature of an ATA device.
        status_ = kDrdy | kDsc;
        error_ = 0x01;
        count_ = lba_low_ = 1;
        lba_mid_ = lba_high_ = 0;
        device_ = 0;
        break;
      case Step::kNone:
        break;
    }
  }
}

// One sector from the drive into the PRD table's regions, fetching entries as they are needed.
void AtaChannel::TransferSector(uint64_t at) {
  std::span<const uint8_t> block = disk_.Block(next_block_);
  for (uint32_t done = 0; done < Disk::kBlockBytes;) {
    if (prd_left_ == 0 && !NextPrd()) return DmaFailed();
    const uint32_t n = std::min(prd_left_, Disk::kBlockBytes - done);
    if (!memory_.DmaWrite(prd_addr_, block.subspan(done, n))) return DmaFailed();
    prd_addr_ += n;
    prd_left_ -= n;
    done += n;
  }
  ++next_block_;
  --remaining_;
  Schedule(remaining_ > 0 ? Step::kDmaSector : Step::kDmaDone, at + world_.DiskDelay(false));
}

// Fetches the next PRD entry: base address (bit 0 ignored), byte count (0: 64 KiB), EOT in bit 31
// of the second dword. False when the table has ended or the entry is not in RAM.
bool AtaChannel::NextPrd() {
  if (prd_last_) return false;
  uint8_t entry[8];
  if (!memory_.DmaRead(prd_next_, entry)) return false;
  prd_next_ += 8;
  prd_addr_ = Le32(entry) & ~1u;
  const uint32_t count = (entry[4] | entry[5] << 8) & ~1u;
  prd_left_ = count == 0 ? 0x10000 : count;
  prd_last_ = entry[7] & 0x80;
  return true;
}

// The table ended before the transfer, or pointed outside RAM: the engine stops with Error set
// and the drive aborts the command.
void AtaChannel::DmaFailed() {
  bm_status_ = static_cast<uint8_t>((bm_status_ & ~kBmActive) | kBmError);
  remaining_ = 0;
  Finish(kDrdy | kDsc | kErr, kAbrt);
}

void AtaChannel::Identify() {
  buffer_.fill(0);
  const uint64_t blocks = std::min<uint64_t>(disk_.blocks(), 0x0FFFFFFF);
  PutWord(buffer_, 0, 0x0040);  // a fixed disk
  PutWord(buffer_, 1, static_cast<uint32_t>(std::min<uint64_t>(blocks / (16 * 63), 16383)));
  PutWord(buffer_, 3, 16);  // heads
  PutWord(buffer_, 6, 63);  // sectors per track
  PutString(buffer_, 10, 10, "CITCAT0001");
  PutString(buffer_, 23, 4, "1.0");
  PutString(buffer_, 27, 20, "CITCAT ATA DISK");
  PutWord(buffer_, 49, 0x0300);  // LBA and DMA
  PutWord(buffer_, 53, 0x0002);  // words 64-70 valid
  PutWord(buffer_, 60, static_cast<uint32_t>(blocks & 0xFFFF));
  PutWord(buffer_, 61, static_cast<uint32_t>(blocks >> 16));
  PutWord(buffer_, 63, 0x0407);  // multiword DMA modes 0-2, mode 2 selected
  PutWord(buffer_, 80, 0x001E);  // ATA-1 to ATA-4
  buffer_pos_ = 0;
  buffer_len_ = Disk::kBlockBytes;
}

}  // namespace citcat::machine
