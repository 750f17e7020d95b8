// The traced R4400 system of docs/machines/r4400-system.md: the R4400 core with its caches, RAM,
// the console UART, the DMA disk controller, the clock/entropy source, the seeded outside world,
// and the bus monitor that writes the CAT from the begin-of-trace marker on.
#ifndef CITCAT_MACHINE_R4400_MACHINE_H_
#define CITCAT_MACHINE_R4400_MACHINE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cat_parser/record.h"
#include "cat_parser/writer.h"
#include "machine/elf_loader.h"
#include "machine/r4400/system.h"
#include "simcore/mips/cpu.h"

namespace citcat::machine {

struct R4400Options {
  uint64_t memory_bytes = 32ull << 20;
  uint64_t seed = 1;
  uint32_t icache_line = 32;
  uint32_t dcache_line = 32;
  std::vector<uint8_t> disk;  // the disk image, a multiple of 512 bytes
  std::string boot_args;      // written at kBootArgs for the kernel to read
  std::string producer;       // free text for the CAT header
  // A bare-metal run traced from power-on (docs/machines/r4400-system.md, "Traces from reset"):
  // the boot ROM is mapped, the CPU starts in its reset state at the reset vector, and the
  // monitor records from the first fetch. The run stops with an error when the program does what
  // such a trace cannot show: a device interrupt taken, Count read, Cause read with a device
  // line pending.
  bool from_reset = false;
};

// One loadable piece of a program: `bytes` at physical address `paddr`, zero-filled to `size`.
struct LoadSegment {
  uint64_t paddr = 0;
  uint64_t size = 0;
  std::vector<uint8_t> bytes;
};

struct RunSummary {
  uint64_t instructions = 0;         // retired, whole run
  uint64_t traced_instructions = 0;  // retired since the begin marker
  uint64_t bus_records = 0;          // records written to the CAT
  uint64_t bus_bytes = 0;            // data bytes of those records
  uint64_t interrupts = 0;
  uint64_t dma_transfers = 0;  // disk commands completed
  uint64_t device_reads = 0;
  uint64_t count_reads = 0;
  // What the kernel's CITCAT hooks stored (docs/machines/r4400-system.md), for the perturbation.
  uint64_t interrupt_reports = 0;  // EPC stores to `exception`
  uint64_t cause_echoes = 0;
  uint64_t count_echoes = 0;
  uint64_t driver_instructions = 0;  // from the begin marker to `state-done`
  bool began = false;                // the begin marker was seen
  bool halted = false;               // the guest powered the machine off
};

// The system runs big-endian MIPS code: the error says what `elf` is built for instead.
absl::Status CheckR4400Elf(const ElfImage& elf);

class R4400Machine {
 public:
  static absl::StatusOr<std::unique_ptr<R4400Machine>> Create(const R4400Options& options);
  ~R4400Machine();

  // Loads a program's segments into RAM (no bus transactions) and sets the entry point: the CPU
  // starts there in kernel mode, BEV=0, ERL=0, interrupts off.
  absl::Status Load(std::span<const LoadSegment> segments, uint64_t entry);
  // Loads a kernel linked to run in kseg0 (or kseg1) from its ELF image (CheckR4400Elf first).
  absl::Status LoadKernel(const ElfImage& kernel);

  // A machine traced from reset: puts a raw image into the boot ROM at physical `address`
  // (kRomBase and up); the rest of the ROM reads as zero.
  absl::Status LoadRom(uint64_t address, std::span<const uint8_t> image);
  // A machine traced from reset: loads a bare-metal ELF's segments at their load addresses, into
  // RAM or the ROM, and, unless its entry point is the reset vector, puts a jump to it there
  // (`lui k0; ori k0; jr k0; nop`).
  absl::Status LoadBareMetal(const ElfImage& elf);
  // The CAT header this machine writes.
  cat::CatHeader Header() const;

  // Runs until the guest halts, or `max_traced` instructions have retired after the begin marker,
  // or `max_total` instructions in all. Bus records from the begin marker on go to `monitor` (may
  // be null to run without recording). `progress`, if given, is called now and then with the
  // instructions retired so far.
  absl::StatusOr<RunSummary> Run(cat::CatWriter* monitor, uint64_t max_traced, uint64_t max_total,
                                 const std::function<void(uint64_t)>& progress = {});

  // Everything the guest wrote to the console UART.
  const std::string& console() const;
  mips::Cpu& cpu();

 private:
  R4400Machine();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace citcat::machine

#endif  // CITCAT_MACHINE_R4400_MACHINE_H_
