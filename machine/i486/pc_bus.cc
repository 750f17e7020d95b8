#include "machine/i486/pc_bus.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace citcat::machine {
namespace {

using cat::RecordKind;
using cat::WindowKind;

bool Overlaps(uint64_t base_a, uint64_t size_a, uint64_t base_b, uint64_t size_b) {
  return base_a < base_b + size_b && base_b < base_a + size_a;
}

std::vector<uint8_t> RomImage(std::vector<uint8_t> rom) {
  if (!rom.empty()) return rom;
  return std::vector<uint8_t>(pc::kDefaultRomBytes, 0xF4);  // HLT
}

}  // namespace

absl::Status PcBus::Check(const PcConfig& config) {
  if (config.memory_bytes < (1 << 20) || config.memory_bytes > (uint64_t{256} << 20) ||
      config.memory_bytes % 4096 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("memory size ", config.memory_bytes, " is not 1 to 256 MiB in 4 KiB pages"));
  }
  if (config.rom.size() > pc::kMaxRomBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the boot ROM has ", config.rom.size(), " bytes, more than 1 MiB"));
  }
  if (absl::Status s = Disk::Check(config.disk); !s.ok()) return s;
  const uint64_t rom_bytes = config.rom.empty() ? pc::kDefaultRomBytes : config.rom.size();
  const std::vector<cat::AddressWindow> devices = pc::SystemDevices(rom_bytes);
  for (size_t i = 0; i < config.reserved.size(); ++i) {
    const cat::AddressWindow& w = config.reserved[i];
    bool clash = w.size == 0;
    if (w.kind == WindowKind::kPort) {
      clash = clash || w.base + w.size > 0x10000;
    } else {
      clash = clash || w.base < config.memory_bytes || w.base + w.size > pc::kAddressSpace;
    }
    for (const cat::AddressWindow& d : devices) {
      clash = clash || (d.kind == w.kind && Overlaps(d.base, d.size, w.base, w.size));
    }
    for (size_t j = 0; j < i; ++j) {
      const cat::AddressWindow& o = config.reserved[j];
      clash = clash || (o.kind == w.kind && Overlaps(o.base, o.size, w.base, w.size));
    }
    if (clash) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the reserved area '", w.name, "' at 0x", absl::Hex(w.base), " (", w.size,
          " bytes) is empty or overlaps memory, the boot ROM, a device or another area"));
    }
  }
  return absl::OkStatus();
}

PcBus::PcBus(PcConfig config)
    : config_(std::move(config)),
      ram_(config_.memory_bytes, 0),
      rom_(RomImage(std::move(config_.rom))),
      rom_base_(pc::kAddressSpace - rom_.size()),
      alias_base_(pc::kHoleEnd - std::min<uint64_t>(rom_.size(), pc::kRomAliasMax)),
      disk_(std::move(config_.disk)),
      world_(config_.seed, kPcTimerRate),
      cmos_(world_.boot_seconds(), config_.memory_bytes),
      ata_(disk_, world_, *this) {
  for (const cat::AddressWindow& w : config_.reserved) reserved_.emplace_back(w.size, 0);
}

void PcBus::Attach(x86::Cpu* cpu) {
  cpu_ = cpu;
  cpu_->set_cacheable([this](uint32_t page) { return IsRam(page, 1); });
  UpdateLines();
}

// ---- memory ----

void PcBus::Read(const cat::BusRecord& record, std::span<uint8_t> data) {
  switch (record.kind) {
    case RecordKind::kInterruptAck:
      data[0] = pics_.Acknowledge();
      ++interrupt_acks_;
      cpu_->SetIntr(pics_.Intr());
      break;
    case RecordKind::kPortRead:
      PortRead(static_cast<uint16_t>(record.address), data);
      break;
    default:
      MemoryRead(record.address, data);
  }
  Monitor(record);
}

void PcBus::Write(const cat::BusRecord& record) {
  if (record.kind == RecordKind::kPortWrite) {
    PortWrite(static_cast<uint16_t>(record.address), record.data);
  } else {
    MemoryWrite(record.address, record.data);
  }
  Monitor(record);
}

cat::CatHeader PcBus::Header(std::string producer) const {
  cat::CatHeader h = pc::I486SystemHeader(config_.memory_bytes, rom_.size(), config_.reserved,
                                          std::move(producer));
  if (config_.from_reset) pc::MakeFromResetHeader(h, rom_.size());
  return h;
}

bool PcBus::Peek(uint64_t address, std::span<uint8_t> data) const {
  if (!IsRam(address, data.size())) return false;
  std::memcpy(data.data(), &ram_[address], data.size());
  return true;
}

absl::Status PcBus::LoadRam(uint64_t address, std::span<const uint8_t> bytes) {
  if (!IsRam(address, bytes.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("0x", absl::Hex(address), " + ", bytes.size(), " bytes is not all RAM"));
  }
  std::memcpy(&ram_[address], bytes.data(), bytes.size());
  return absl::OkStatus();
}

absl::Status PcBus::ReadRam(uint64_t address, std::span<uint8_t> bytes) const {
  if (!IsRam(address, bytes.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("0x", absl::Hex(address), " + ", bytes.size(), " bytes is not all RAM"));
  }
  std::memcpy(bytes.data(), &ram_[address], bytes.size());
  return absl::OkStatus();
}

uint8_t* PcBus::Reserved(WindowKind kind, uint64_t address) {
  for (size_t i = 0; i < config_.reserved.size(); ++i) {
    const cat::AddressWindow& w = config_.reserved[i];
    if (w.kind == kind && w.Contains(address)) return &reserved_[i][address - w.base];
  }
  return nullptr;
}

// RAM; the boot ROM at the top of the address space and its tail again below 1 MiB; reserved
// areas; everything else (the rest of the hole, unmapped space) reads as an open bus, FFh.
void PcBus::MemoryRead(uint64_t address, std::span<uint8_t> data) {
  if (IsRam(address, data.size())) {
    std::memcpy(data.data(), &ram_[address], data.size());
    return;
  }
  for (size_t i = 0; i < data.size(); ++i) {
    const uint64_t a = address + i;
    uint8_t value = 0xFF;
    if (IsRam(a, 1)) {
      value = ram_[a];
    } else if (a >= rom_base_ && a < pc::kAddressSpace) {
      value = rom_[a - rom_base_];
    } else if (a >= alias_base_ && a < pc::kHoleEnd) {
      value = rom_[rom_.size() - (pc::kHoleEnd - a)];
    } else if (const uint8_t* r = Reserved(WindowKind::kMemoryMapped, a)) {
      value = *r;
    }
    data[i] = value;
  }
}

// Writes to the ROM, the hole and unmapped space are lost.
void PcBus::MemoryWrite(uint64_t address, std::span<const uint8_t> data) {
  if (IsRam(address, data.size())) {
    std::memcpy(&ram_[address], data.data(), data.size());
    return;
  }
  for (size_t i = 0; i < data.size(); ++i) {
    const uint64_t a = address + i;
    if (IsRam(a, 1)) {
      ram_[a] = data[i];
    } else if (uint8_t* r = Reserved(WindowKind::kMemoryMapped, a)) {
      *r = data[i];
    }
  }
}

// ---- ports ----

// The disk's data register and the clock registers take the access whole; every other device
// register is a byte, and a wider access is that many byte cycles on consecutive ports, as the
// ISA bus splits it.
void PcBus::PortRead(uint16_t port, std::span<uint8_t> data) {
  const int size = static_cast<int>(data.size());
  if (port == pc::kAtaPort) {
    const uint32_t v = ata_.ReadData(size, Now());
    for (int i = 0; i < size; ++i) data[i] = static_cast<uint8_t>(v >> (8 * i));
  } else if (port >= pc::kClockPort && port < pc::kClockPort + pc::kClockWindow) {
    ClockRead(port, data);
  } else {
    for (int i = 0; i < size; ++i) data[i] = PortReadByte(static_cast<uint16_t>(port + i));
  }
  ++port_reads_;
  UpdateLines();
}

uint8_t PcBus::PortReadByte(uint16_t port) {
  switch (port) {
    case pc::kPicMasterPort:
    case pc::kPicMasterPort + 1:
    case pc::kPicSlavePort:
    case pc::kPicSlavePort + 1:
      return pics_.Read(port);
    case pc::kPortB:
      return pit_.ReadPortB(Ticks());
    case pc::kAtaPort:
      return static_cast<uint8_t>(ata_.ReadData(1, Now()));
    case pc::kAtaControlPort:
      return ata_.ReadAltStatus();
  }
  if (port >= pc::kPitPort && port < pc::kPitPort + 4)
    return pit_.Read(port - pc::kPitPort, Ticks());
  if (port >= pc::kCmosPort && port < pc::kCmosPort + 2) {
    return cmos_.Read(port - pc::kCmosPort, Microseconds());
  }
  if (port >= pc::kUartPort && port < pc::kUartPort + 8) return uart_.Read(port - pc::kUartPort);
  if (port > pc::kAtaPort && port < pc::kAtaPort + 8) {
    return ata_.ReadRegister(port - pc::kAtaPort);
  }
  if (port >= pc::kBusMasterPort && port < pc::kBusMasterPort + 8) {
    return ata_.ReadBusMaster(port - pc::kBusMasterPort);
  }
  if (const uint8_t* r = Reserved(WindowKind::kPort, port)) return *r;
  return 0xFF;  // no device: an open bus
}

// 5C0h gives 32 fresh random bits, 5C4h the microseconds since power-on; a narrower read gets the
// low bytes of the value. Other ports of the window read as FFh.
void PcBus::ClockRead(uint16_t port, std::span<uint8_t> data) {
  uint32_t v;
  if (port == pc::kClockEntropy) {
    v = world_.Entropy();
  } else if (port == pc::kClockMicroseconds) {
    v = world_.Microseconds(Now());
  } else {
    std::fill(data.begin(), data.end(), 0xFF);
    return;
  }
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(v >> (8 * i));
}

void PcBus::PortWrite(uint16_t port, std::span<const uint8_t> data) {
  // A write to a device whose timing the machine plans ends the processor's slice.
  bool replan = false;
  if (port == pc::kAtaPort) {
    // The drive takes no data: it has no write commands.
  } else if (port >= pc::kClockPort && port < pc::kClockPort + pc::kClockWindow) {
    if (port <= pc::kClockPowerOff && pc::kClockPowerOff < port + data.size()) {
      powered_off_ = true;
      replan = true;
    }
  } else {
    for (size_t i = 0; i < data.size(); ++i) {
      replan |= PortWriteByte(static_cast<uint16_t>(port + i), data[i]);
    }
  }
  UpdateLines();
  if (replan) cpu_->RequestStop();
}

bool PcBus::PortWriteByte(uint16_t port, uint8_t value) {
  switch (port) {
    case pc::kPicMasterPort:
    case pc::kPicMasterPort + 1:
    case pc::kPicSlavePort:
    case pc::kPicSlavePort + 1:
      pics_.Write(port, value);
      return false;
    case pc::kPortB:
      pit_.WritePortB(value, Ticks());
      return true;
    case pc::kAtaPort:
      return false;
    case pc::kAtaControlPort:
      ata_.WriteControl(value, Now());
      return true;
  }
  if (port >= pc::kPitPort && port < pc::kPitPort + 4) {
    pit_.Write(port - pc::kPitPort, value, Ticks());
    return true;
  }
  if (port >= pc::kCmosPort && port < pc::kCmosPort + 2) {
    cmos_.Write(port - pc::kCmosPort, value, Microseconds());
    return true;
  }
  if (port >= pc::kUartPort && port < pc::kUartPort + 8) {
    // The character leaves at once: the THR-empty interrupt line drops and rises again.
    if (uart_.WroteThr(port - pc::kUartPort)) pics_.SetIrq(pc::kIrqUart, false);
    uart_.Write(port - pc::kUartPort, value);
    return false;
  }
  if (port > pc::kAtaPort && port < pc::kAtaPort + 8) {
    ata_.WriteRegister(port - pc::kAtaPort, value, Now());
    return true;
  }
  if (port >= pc::kBusMasterPort && port < pc::kBusMasterPort + 8) {
    ata_.WriteBusMaster(port - pc::kBusMasterPort, value, Now());
    return true;
  }
  if (uint8_t* r = Reserved(WindowKind::kPort, port)) *r = value;
  return false;
}

// ---- interrupts and time ----

void PcBus::UpdateLines() {
  pics_.SetIrq(pc::kIrqTimer, pit_.Out(0, Ticks()));
  pics_.SetIrq(pc::kIrqUart, uart_.Irq());
  pics_.SetIrq(pc::kIrqRtc, cmos_.Irq(Microseconds()));
  pics_.SetIrq(pc::kIrqDisk, ata_.Irq());
  cpu_->SetIntr(pics_.Intr());
}

bool PcBus::InterruptReady() const { return pics_.Intr() && (cpu_->eflags() & x86::flag::kIF); }

uint64_t PcBus::NextEvent() {
  const uint64_t now = Now();
  uint64_t next = ata_.NextEvent();
  const uint64_t tick = pit_.NextChange(0, world_.Ticks(now));
  if (tick != Pit8254::kNever) next = std::min(next, world_.WhenTicksReach(now, tick));
  const uint64_t us = cmos_.NextIrq(world_.MicrosecondsSinceBoot(now));
  if (us != Cmos::kNever) next = std::min(next, world_.WhenMicrosecondsReach(now, us));
  return next;
}

void PcBus::Advance() {
  const uint64_t now = Now();
  world_.Forget(now);
  ata_.Advance(now);
  UpdateLines();
}

// ---- the bus master and the monitor ----

bool PcBus::DmaRead(uint32_t address, std::span<uint8_t> data) {
  if (!IsRam(address, data.size())) return false;
  std::memcpy(data.data(), &ram_[address], data.size());
  cat::BusRecord r;
  r.kind = RecordKind::kDmaRead;
  r.master = pc::kMasterBusMasterIde;
  r.address = address;
  r.branch_count = cpu_->branch_count();
  r.data = data;
  Monitor(r);
  return true;
}

// DMA writes snoop the processor's cache (EADS#): every line they touch is invalidated.
bool PcBus::DmaWrite(uint32_t address, std::span<const uint8_t> data) {
  if (!IsRam(address, data.size())) return false;
  std::memcpy(&ram_[address], data.data(), data.size());
  const uint32_t line = x86::Cache::kLineBytes;
  for (uint64_t a = address & ~(line - 1); a < address + data.size(); a += line) {
    cpu_->cache().SnoopInvalidate(static_cast<uint32_t>(a));
  }
  cat::BusRecord r;
  r.kind = RecordKind::kDmaWrite;
  r.master = pc::kMasterBusMasterIde;
  r.address = address;
  r.branch_count = cpu_->branch_count();
  r.data = data;
  Monitor(r);
  return true;
}

void PcBus::Monitor(const cat::BusRecord& record) {
  if (monitor_ == nullptr || !monitor_status_.ok()) return;
  monitor_status_ = monitor_->OnRecord(record);
  ++bus_records_;
  if (!monitor_status_.ok()) cpu_->RequestStop();
}

}  // namespace citcat::machine
