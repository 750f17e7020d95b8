// The traced PC's system bus (docs/machines/i486-system.md): what the i486 core reaches beyond its
// cache. Memory (RAM with the hole at A0000h-FFFFFh, the boot ROM at the top of the 4 GB space),
// port I/O dispatched to the devices, interrupt acknowledge cycles answered by the PIC pair, the
// PICs' INTR driving the core, the IDE bus master's DMA, and a monitor that sees every bus
// transaction (the processor's, the bus master's) in bus order.
//
// Time is the machine's instruction time: the core's retired instructions plus the time it spent
// halted (AddIdle). The devices' clocks (the timer's input, the RTC's time base) come from the
// outside world as functions of it.
#ifndef CITCAT_MACHINE_I486_PC_BUS_H_
#define CITCAT_MACHINE_I486_PC_BUS_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cat_parser/record.h"
#include "machine/disk.h"
#include "machine/i486/ata.h"
#include "machine/i486/cmos.h"
#include "machine/i486/pic.h"
#include "machine/i486/pit.h"
#include "machine/i486/system.h"
#include "machine/i486/uart.h"
#include "machine/world.h"
#include "simcore/bus.h"
#include "simcore/x86/cpu.h"

namespace citcat::machine {

// Sees every bus transaction, in bus order, with its data. An error stops the machine (the CAT
// could not be written): the bus keeps the first one and passes no more records.
class BusMonitor {
 public:
  virtual ~BusMonitor() = default;
  virtual absl::Status OnRecord(const cat::BusRecord& record) = 0;
  // Whether the run should return to its caller now (after the step that made the record; the
  // monitor has stopped the processor's slice with RequestStop): once per request.
  virtual bool TakePause() { return false; }
};

struct PcConfig {
  uint64_t memory_bytes = 32ull << 20;  // 1 to 256 MiB in 4 KiB pages
  uint64_t seed = 1;                    // of the outside world
  std::vector<uint8_t> rom;             // the boot ROM image, up to 1 MiB (empty: 64 KiB of HLT)
  std::vector<uint8_t> disk;            // the disk image, whole 512-byte blocks (empty: no drive)
  // Reserved areas (memory-mapped or port windows outside RAM, the ROM and the devices): the
  // guest's CITCAT hooks store there and loads read back what was stored last.
  std::vector<cat::AddressWindow> reserved;
  // A bare-metal program traced from power-on: the header shows the ROM as ROM (and its copy
  // below 1 MiB) and says the trace starts at reset (pc::MakeFromResetHeader).
  bool from_reset = false;
};

class PcBus final : public simcore::Bus, private DmaMemory {
 public:
  static constexpr uint64_t kNever = ~uint64_t{0};

  // What a configuration gets wrong, if anything.
  static absl::Status Check(const PcConfig& config);
  explicit PcBus(PcConfig config);

  // The processor on the bus: its INTR follows the PICs, its retired instructions are the time,
  // its cache is snooped by DMA and told which addresses may be cached (RAM only).
  void Attach(x86::Cpu* cpu);
  void set_monitor(BusMonitor* monitor) { monitor_ = monitor; }
  const absl::Status& monitor_status() const { return monitor_status_; }

  // ---- simcore::Bus ----
  void Read(const cat::BusRecord& record, std::span<uint8_t> data) override;
  void Write(const cat::BusRecord& record) override;
  bool Peek(uint64_t address, std::span<uint8_t> data) const override;

  // ---- time ----
  uint64_t Now() const { return cpu_->steps() + idle_; }
  // The processor is halted until `time`: the machine skips to it.
  void IdleUntil(uint64_t time) {
    if (time > Now()) idle_ += time - Now();
  }
  uint64_t idle() const { return idle_; }
  // When a device next does something on its own (a timer output changes, the RTC raises its
  // interrupt, the disk moves a sector), or kNever.
  uint64_t NextEvent();
  // Does what is due by Now() and updates the interrupt lines.
  void Advance();
  // Whether the processor would take an interrupt now (INTR and EFLAGS.IF).
  bool InterruptReady() const;

  // The CAT header of this configuration (pc::I486SystemHeader).
  cat::CatHeader Header(std::string producer) const;
  // Copies bytes into RAM without a bus transaction (loading a program).
  absl::Status LoadRam(uint64_t address, std::span<const uint8_t> bytes);
  // Copies bytes out of RAM without a bus transaction (what a loader left there, for its tests).
  absl::Status ReadRam(uint64_t address, std::span<uint8_t> bytes) const;
  bool powered_off() const { return powered_off_; }
  const std::string& console() const { return uart_.output(); }
  uint64_t interrupt_acks() const { return interrupt_acks_; }
  uint64_t port_reads() const { return port_reads_; }
  uint64_t bus_records() const { return bus_records_; }

  PicPair& pics() { return pics_; }
  Pit8254& pit() { return pit_; }
  Uart16550& uart() { return uart_; }
  Cmos& cmos() { return cmos_; }
  AtaChannel& ata() { return ata_; }
  World& world() { return world_; }

 private:
  // Whether [address, address + size) is all RAM.
  bool IsRam(uint64_t address, uint64_t size) const {
    const uint64_t end = address + size;
    return end <= config_.memory_bytes && (end <= pc::kHoleBase || address >= pc::kHoleEnd);
  }
  void MemoryRead(uint64_t address, std::span<uint8_t> data);
  void MemoryWrite(uint64_t address, std::span<const uint8_t> data);
  uint8_t* Reserved(cat::WindowKind kind, uint64_t address);
  void PortRead(uint16_t port, std::span<uint8_t> data);
  void PortWrite(uint16_t port, std::span<const uint8_t> data);
  uint8_t PortReadByte(uint16_t port);
  bool PortWriteByte(uint16_t port, uint8_t value);  // true: the schedule may have changed
  void ClockRead(uint16_t port, std::span<uint8_t> data);
  // Device interrupt lines to the PICs, the PICs' INTR to the processor.
  void UpdateLines();
  uint64_t Ticks() { return world_.Ticks(Now()); }
  uint64_t Microseconds() { return world_.MicrosecondsSinceBoot(Now()); }
  void Monitor(const cat::BusRecord& record);

  // ---- DmaMemory: the IDE bus master ----
  bool DmaRead(uint32_t address, std::span<uint8_t> data) override;
  bool DmaWrite(uint32_t address, std::span<const uint8_t> data) override;

  PcConfig config_;
  std::vector<uint8_t> ram_;  // memory_bytes; the hole's bytes are never used
  std::vector<uint8_t> rom_;
  uint64_t rom_base_;
  uint64_t alias_base_;                         // the ROM's tail is also at [alias_base_, 1 MiB)
  std::vector<std::vector<uint8_t>> reserved_;  // storage of config_.reserved
  Disk disk_;
  World world_;
  PicPair pics_;
  Pit8254 pit_;
  Uart16550 uart_;
  Cmos cmos_;
  AtaChannel ata_;

  x86::Cpu* cpu_ = nullptr;
  uint64_t idle_ = 0;
  bool powered_off_ = false;
  BusMonitor* monitor_ = nullptr;
  absl::Status monitor_status_;
  uint64_t interrupt_acks_ = 0, port_reads_ = 0, bus_records_ = 0;
};

}  // namespace citcat::machine

#endif  // CITCAT_MACHINE_I486_PC_BUS_H_
