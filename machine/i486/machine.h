// The traced i486 PC of docs/machines/i486-system.md: the i486 core with its cache on the PC bus
// (RAM, boot ROM, PICs, timer, UART, RTC, ATA disk with bus-master DMA, clock and power-off
// ports), the seeded outside world, and the loop that runs the processor between the devices'
// events. The processor starts at the reset vector, in the boot ROM.
#ifndef CITCAT_MACHINE_I486_MACHINE_H_
#define CITCAT_MACHINE_I486_MACHINE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cat_parser/record.h"
#include "machine/i486/pc_bus.h"
#include "simcore/x86/cpu.h"

namespace citcat::machine {

struct I486Options {
  PcConfig pc;
  std::string producer;  // free text for the CAT header
};

struct I486RunSummary {
  uint64_t instructions = 0;   // retired
  uint64_t idle = 0;           // instruction times the processor spent halted
  uint64_t interrupts = 0;     // interrupt acknowledge cycles
  uint64_t dma_transfers = 0;  // READ DMA commands completed
  uint64_t device_reads = 0;   // port reads
  uint64_t bus_records = 0;    // records the monitor saw
  bool powered_off = false;    // the guest switched the machine off
  // Halted with nothing left that could wake it: interrupts disabled, no device event to come,
  // or a minute (of a 33 MHz machine) of events none of which interrupted it; `stuck_why` says
  // which and where ("halted with interrupts off at EIP 0x...").
  bool stuck = false;
  std::string stuck_why;
};

class I486Machine {
 public:
  static absl::StatusOr<std::unique_ptr<I486Machine>> Create(const I486Options& options);

  // Copies bytes into RAM without a bus transaction (a program the ROM will run).
  absl::Status LoadRam(uint64_t address, std::span<const uint8_t> bytes) {
    return bus_.LoadRam(address, bytes);
  }
  // The CAT header this machine's monitor writes under.
  cat::CatHeader Header() const;

  // Runs until the guest powers off, the processor halts for good, or `max_instructions` have
  // retired in all. Every bus transaction goes to `monitor` (may be null). `progress`, if given,
  // is called now and then with the instructions retired so far. An error: the monitor's, or
  // the processor stopped (shutdown, or an instruction the core does not model).
  absl::StatusOr<I486RunSummary> Run(BusMonitor* monitor, uint64_t max_instructions,
                                     const std::function<void(uint64_t)>& progress = {});

  const std::string& console() const { return bus_.console(); }
  x86::Cpu& cpu() { return cpu_; }
  PcBus& bus() { return bus_; }

 private:
  explicit I486Machine(const I486Options& options);

  std::string producer_;
  PcBus bus_;
  x86::Cpu cpu_;
};

}  // namespace citcat::machine

#endif  // CITCAT_MACHINE_I486_MACHINE_H_
