#include "machine/r4400/machine.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <optional>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "machine/disk.h"
#include "machine/r4400/contract.h"
#include "machine/world.h"

namespace citcat::machine {
namespace {

// Bus master numbers: the order of the devices in the CAT header.
constexpr uint8_t kMasterDisk = 2;

// Disk controller registers and states (docs/machines/r4400-system.md).
enum DiskReg : uint32_t {
  kDiskBlockReg = 0x00,
  kDiskAddrReg = 0x04,
  kDiskCountReg = 0x08,
  kDiskCommandReg = 0x0C,
  kDiskStatusReg = 0x10,
  kDiskAckReg = 0x14,
};
enum DiskStatus : uint32_t { kDiskIdle = 0, kDiskBusy = 1, kDiskDone = 2, kDiskError = 3 };
constexpr uint32_t kDiskMaxBlocks = 128;
constexpr int kDiskLine = 3;
constexpr int kTimerLine = 7;
constexpr uint32_t kDeviceLines = 0xFC00;  // Cause and Status bits of IP7..IP2

constexpr uint64_t kMaxSlice = 20000;  // instructions between looks at the outside world

using r4400::LoadBE;

void StoreBE32(uint8_t* p, uint32_t v) {
  p[0] = v >> 24;
  p[1] = v >> 16;
  p[2] = v >> 8;
  p[3] = v;
}

}  // namespace

struct R4400Machine::Impl : public simcore::Bus, public mips::Cp0Hooks {
  explicit Impl(const R4400Options& o)
      : options(o),
        ram(o.memory_bytes, 0),
        magic(kMagicSize, 0),
        rom(o.from_reset ? kRomSize : 0, 0),
        disk(std::move(options.disk)),  // the machine keeps one copy
        world(o.seed, kR4400CountRate),
        cpu(*this, CpuConfig(o)) {
    cpu.set_cp0_hooks(this);
    // From power-on, the monitor sees everything: the CPU's state is its reset state.
    began = o.from_reset;
  }

  static mips::CpuConfig CpuConfig(const R4400Options& o) {
    mips::CpuConfig c;
    c.icache_line = o.icache_line;
    c.dcache_line = o.dcache_line;
    return c;
  }

  // ---- simcore::Bus ----
  void Read(const cat::BusRecord& record, std::span<uint8_t> data) override {
    CheckLine(record, data.size());
    uint64_t a = record.address;
    std::fill(data.begin(), data.end(), 0);
    if (a + data.size() <= ram.size()) {
      std::memcpy(data.data(), &ram[a], data.size());
    } else if (InRom(a, data.size())) {
      std::memcpy(data.data(), &rom[a - kRomBase], data.size());
    } else if (a >= kMagicBase && a + data.size() <= kMagicBase + kMagicSize) {
      std::memcpy(data.data(), &magic[a - kMagicBase], data.size());
    } else if (data.size() == 4) {
      StoreBE32(data.data(), ReadDevice(a));
    }
    Monitor(record);
  }

  void Write(const cat::BusRecord& record) override {
    CheckLine(record, record.data.size());
    uint64_t a = record.address;
    std::span<const uint8_t> d = record.data;
    if (a + d.size() <= ram.size()) {
      std::memcpy(&ram[a], d.data(), d.size());
    } else if (InRom(a, d.size())) {
      // ROM keeps its bytes: the write is lost.
    } else if (a >= kMagicBase && a + d.size() <= kMagicBase + kMagicSize) {
      std::memcpy(&magic[a - kMagicBase], d.data(), d.size());
      CountHookStore(a - kMagicBase);
      if (a == kMagicBase && d.size() == 8 && !began) {
        if (LoadBE(d) == r4400::kBeginMarker) {
          began = true;
          began_at_retired = cpu.retired();
        }
      }
    } else if (d.size() == 4) {
      WriteDevice(a, static_cast<uint32_t>(LoadBE(d)));
    }
    Monitor(record);
  }

  bool Peek(uint64_t address, std::span<uint8_t> data) const override {
    if (InRom(address, data.size())) {
      std::memcpy(data.data(), &rom[address - kRomBase], data.size());
      return true;
    }
    if (address + data.size() > ram.size()) return false;
    std::memcpy(data.data(), &ram[address], data.size());
    return true;
  }

  bool InRom(uint64_t a, uint64_t n) const {
    return a - kRomBase < rom.size() && n <= rom.size() - (a - kRomBase);
  }

  // What a trace from reset cannot show stops the run (the first reason is kept).
  void Refuse(uint64_t pc, const std::string& what) {
    if (!refusal.ok()) return;
    refusal = absl::FailedPreconditionError(
        absl::StrCat("after ", cpu.retired(), " instructions, at 0x", absl::Hex(pc),
                     ": the program ", what, " (docs/replay.md, \"Traces from reset\")"));
    cpu.RequestStop();
  }

  // A cache line comes from RAM or the ROM: there is nothing else on this machine to fill it
  // from or write it back to. A real R4400 would take a bus error there, which the machine does
  // not model, and no replay could place such a line, so the capture stops with an error.
  void CheckLine(const cat::BusRecord& record, uint64_t size) {
    const bool line =
        record.kind == cat::RecordKind::kFill || record.kind == cat::RecordKind::kWriteBack;
    const uint64_t a = record.address;
    if (!line || a + size <= ram.size() || InRom(a, size) || !refusal.ok()) return;
    refusal = absl::FailedPreconditionError(absl::StrCat(
        "after ", cpu.retired(), " instructions, at 0x", absl::Hex(cpu.pc()), ": the program ",
        record.kind == cat::RecordKind::kFill ? "filled" : "wrote back",
        " a cache line at physical address 0x", absl::Hex(a), ", outside main memory (",
        ram.size() >> 20, " MiB) and the ROM (the machine has no bus error to give it)"));
    cpu.RequestStop();
  }

  // The hook stores of docs/machines/r4400-system.md, counted for the perturbation figures.
  void CountHookStore(uint64_t offset) {
    if (!began || options.from_reset) return;
    switch (offset) {
      case CITCAT_R4400_STATE_DONE:
        summary.driver_instructions = cpu.retired() - began_at_retired;
        break;
      case CITCAT_R4400_EXCEPTION + CITCAT_R4400_EXCEPTION_EPC:
        ++summary.interrupt_reports;
        break;
      case CITCAT_R4400_CAUSE:
        ++summary.cause_echoes;
        break;
      case CITCAT_R4400_COUNT:
        ++summary.count_echoes;
        break;
    }
  }

  // ---- devices ----
  uint32_t ReadDevice(uint64_t a) {
    if (began) ++summary.device_reads;
    if (a == kUartBase + 0x04) return 0x2;
    if (a >= kDiskBase && a < kDiskBase + kDeviceWindow) {
      switch (a - kDiskBase) {
        case kDiskBlockReg:
          return disk_block;
        case kDiskAddrReg:
          return disk_addr;
        case kDiskCountReg:
          return disk_count;
        case kDiskStatusReg:
          return disk_status;
      }
      return 0;
    }
    if (a == kClockBase + 0x00) return world.Entropy();
    if (a == kClockBase + 0x04) return world.Microseconds(cpu.retired());
    return 0;
  }

  void WriteDevice(uint64_t a, uint32_t v) {
    if (a == kUartBase) {
      console.push_back(static_cast<char>(v & 0xFF));
    } else if (a >= kDiskBase && a < kDiskBase + kDeviceWindow) {
      switch (a - kDiskBase) {
        case kDiskBlockReg:
          disk_block = v;
          break;
        case kDiskAddrReg:
          disk_addr = v;
          break;
        case kDiskCountReg:
          disk_count = v;
          break;
        case kDiskCommandReg:
          StartDiskCommand(v);
          break;
        case kDiskAckReg:
          if (disk_status == kDiskDone || disk_status == kDiskError) disk_status = kDiskIdle;
          cpu.SetInterruptLine(kDiskLine, false);
          break;
      }
    } else if (a == kClockPowerOff) {
      halted = true;
      cpu.RequestStop();
    }
  }

  void StartDiskCommand(uint32_t command) {
    if (disk_status == kDiskBusy) return;  // ignored while busy, as on the real controller
    uint64_t blocks = disk.blocks();
    bool valid = command == 1 && disk_count >= 1 && disk_count <= kDiskMaxBlocks &&
                 uint64_t{disk_block} + disk_count <= blocks && disk_addr % kDiskBlock == 0 &&
                 uint64_t{disk_addr} + uint64_t{disk_count} * kDiskBlock <= ram.size();
    disk_status = kDiskBusy;
    pending_blocks.clear();
    if (!valid) {
      disk_done_at = cpu.retired() + world.DiskDelay(true);
      disk_failed = true;
    } else {
      uint64_t at = cpu.retired() + world.DiskDelay(true);
      for (uint32_t i = 0; i < disk_count; ++i) {
        pending_blocks.push_back({at, disk_block + i, disk_addr + i * kDiskBlock});
        at += world.DiskDelay(false);
      }
      disk_done_at = at + world.DiskDelay(false);
      disk_failed = false;
    }
    cpu.RequestStop();  // the schedule changed: plan the next slice again
  }

  // ---- mips::Cp0Hooks: Count and Compare follow the outside world's clock ----
  uint32_t ReadCount(mips::Cpu&) override {
    if (began) ++summary.count_reads;
    if (options.from_reset) {
      Refuse(cpu.pc(),
             "read Count, which follows the outside world's clock: a trace from reset cannot "
             "show its value");
    }
    return static_cast<uint32_t>(world.Ticks(cpu.retired()));
  }
  void WriteCount(mips::Cpu&, uint32_t value) override {
    world.SetTicks(cpu.retired(), value);
    PlanTimer();
  }
  void WriteCompare(mips::Cpu&, uint32_t value) override {
    compare = value;
    cpu.SetInterruptLine(kTimerLine, false);
    PlanTimer();
  }
  uint32_t ReadCause(mips::Cpu&, uint32_t cause) override {
    if (options.from_reset && (cause & kDeviceLines) != 0) {
      Refuse(cpu.pc(), absl::StrCat("read Cause with a device interrupt line pending (Cause.IP 0x",
                                    absl::Hex((cause >> 8) & 0xFF),
                                    "): a trace from reset cannot show device lines"));
    }
    return cause;
  }
  // The 64-bit count at which the 32-bit Count next equals Compare.
  void PlanTimer() {
    uint64_t now = world.Ticks(cpu.retired());
    uint64_t ahead = (compare - static_cast<uint32_t>(now)) & 0xFFFFFFFFu;
    timer_at = now + (ahead == 0 ? (uint64_t{1} << 32) : ahead);
    cpu.RequestStop();
  }

  void ExceptionEntered(mips::Cpu&, mips::ExcCode code, uint64_t) override {
    if (began && code == mips::kExcInt) ++summary.interrupts;
    // A software interrupt (IP1..IP0) is the program's own doing; a device's is not on the bus.
    if (options.from_reset && code == mips::kExcInt &&
        (cpu.cause() & cpu.status() & kDeviceLines) != 0) {
      Refuse(cpu.epc(),
             absl::StrCat("took an interrupt from a device line (Cause.IP 0x",
                          absl::Hex((cpu.cause() >> 8) & 0xFF),
                          "): a trace from reset cannot place it, since the R4400 acknowledges "
                          "interrupts on no bus cycle"));
    }
  }

  // ---- the monitor ----
  void Monitor(const cat::BusRecord& record) {
    if (!began || monitor == nullptr || !monitor_status.ok()) return;
    monitor_status = monitor->Write(record);
    ++summary.bus_records;
    summary.bus_bytes += record.data.size();
    if (!monitor_status.ok()) cpu.RequestStop();
  }

  // ---- the outside world between slices ----
  // Instructions until the next thing the world will do.
  uint64_t NextEvent() {
    uint64_t next = kMaxSlice;
    uint64_t now = cpu.retired();
    auto consider = [&](uint64_t at) { next = std::min(next, at > now ? at - now : 1); };
    if (!pending_blocks.empty()) consider(pending_blocks.front().at);
    if (disk_status == kDiskBusy) consider(disk_done_at);
    consider(world.WhenTicksReach(now, timer_at));
    return next;
  }

  void AdvanceWorld() {
    uint64_t now = cpu.retired();
    world.Forget(now);
    while (!pending_blocks.empty() && pending_blocks.front().at <= now) {
      PendingBlock b = pending_blocks.front();
      pending_blocks.pop_front();
      uint8_t* dest = &ram[b.paddr];
      std::memcpy(dest, disk.Block(b.block).data(), kDiskBlock);
      cat::BusRecord r;
      r.kind = cat::RecordKind::kDmaWrite;
      r.master = kMasterDisk;
      r.address = b.paddr;
      r.branch_count = cpu.branch_count();
      r.data = {dest, kDiskBlock};
      Monitor(r);
    }
    if (disk_status == kDiskBusy && pending_blocks.empty() && disk_done_at <= now) {
      disk_status = disk_failed ? kDiskError : kDiskDone;
      if (began && !disk_failed) ++summary.dma_transfers;
      cpu.SetInterruptLine(kDiskLine, true);
    }
    if (world.Ticks(now) >= timer_at) {
      cpu.SetInterruptLine(kTimerLine, true);
      timer_at += uint64_t{1} << 32;
    }
  }

  R4400Options options;
  std::vector<uint8_t> ram;
  std::vector<uint8_t> magic;
  std::vector<uint8_t> rom;  // the boot ROM at kRomBase, when traced from reset
  Disk disk;
  World world;
  mips::Cpu cpu;
  std::string console;

  cat::CatWriter* monitor = nullptr;
  absl::Status monitor_status;
  absl::Status refusal;
  RunSummary summary;
  bool began = false;
  uint64_t began_at_retired = 0;
  bool halted = false;

  uint32_t compare = 0;
  uint64_t timer_at = uint64_t{1} << 32;

  struct PendingBlock {
    uint64_t at;
    uint32_t block;
    uint64_t paddr;
  };
  uint32_t disk_block = 0, disk_addr = 0, disk_count = 0, disk_status = kDiskIdle;
  bool disk_failed = false;
  std::deque<PendingBlock> pending_blocks;
  uint64_t disk_done_at = 0;
};

R4400Machine::R4400Machine() = default;
R4400Machine::~R4400Machine() = default;

absl::StatusOr<std::unique_ptr<R4400Machine>> R4400Machine::Create(const R4400Options& options) {
  if (options.memory_bytes < (1 << 20) || options.memory_bytes > (uint64_t{256} << 20) ||
      options.memory_bytes % 4096 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("memory size ", options.memory_bytes, " is not 1 to 256 MiB in 4 KiB pages"));
  }
  if (options.icache_line != 16 && options.icache_line != 32) {
    return absl::InvalidArgumentError("I-cache line must be 16 or 32 bytes");
  }
  if (options.dcache_line != 16 && options.dcache_line != 32) {
    return absl::InvalidArgumentError("D-cache line must be 16 or 32 bytes");
  }
  if (absl::Status s = Disk::Check(options.disk); !s.ok()) return s;
  if (options.boot_args.size() >= kBootArgsSize) {
    return absl::InvalidArgumentError("the boot string is longer than 255 bytes");
  }
  std::unique_ptr<R4400Machine> m(new R4400Machine());
  m->impl_ = std::make_unique<Impl>(options);
  std::memcpy(&m->impl_->ram[kBootArgs], options.boot_args.data(), options.boot_args.size());
  return m;
}

absl::Status R4400Machine::Load(std::span<const LoadSegment> segments, uint64_t entry) {
  std::vector<uint8_t>& ram = impl_->ram;
  for (const LoadSegment& s : segments) {
    if (s.bytes.size() > s.size || s.paddr > ram.size() || s.size > ram.size() - s.paddr) {
      return absl::InvalidArgumentError(absl::StrCat("segment at physical 0x", absl::Hex(s.paddr),
                                                     " of ", s.size, " bytes does not fit in RAM"));
    }
    std::memcpy(&ram[s.paddr], s.bytes.data(), s.bytes.size());
    std::memset(&ram[s.paddr + s.bytes.size()], 0, s.size - s.bytes.size());
  }
  mips::Cpu& cpu = impl_->cpu;
  cpu.Reset();
  // Kernel mode, BEV = 0, ERL = 0, interrupts off, CP0 usable.
  cpu.WriteCp0(mips::kCp0Status, mips::kStatusCu0);
  cpu.SetPc(entry);
  return absl::OkStatus();
}

absl::Status CheckR4400Elf(const ElfImage& elf) {
  if (elf.machine == kElfMachineMips && elf.big_endian) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("ELF: ", elf.Describe(), ", not a big-endian MIPS executable"));
}

absl::Status R4400Machine::LoadKernel(const ElfImage& kernel) {
  if (absl::Status s = CheckR4400Elf(kernel); !s.ok()) return s;
  // ELF32 addresses are 32 bits; the CPU's 64-bit addresses hold them sign-extended.
  auto widen = [&](uint64_t a) {
    return kernel.is64 ? a : static_cast<uint64_t>(static_cast<int32_t>(a));
  };
  std::vector<LoadSegment> segments;
  for (const ElfSegment& s : kernel.segments) {
    uint64_t segment = widen(s.vaddr) & 0xFFFFFFFFC0000000ull;
    if (segment != 0xFFFFFFFF80000000ull) {
      return absl::InvalidArgumentError(
          absl::StrCat("kernel segment at 0x", absl::Hex(s.vaddr), " is not in kseg0 or kseg1"));
    }
    segments.push_back({s.vaddr & 0x1FFFFFFF, s.memsz, s.data});
  }
  return Load(segments, widen(kernel.entry));
}

cat::CatHeader R4400Machine::Header() const {
  const R4400Options& o = impl_->options;
  cat::CatHeader h = R4400SystemHeader(
      o.memory_bytes,
      {{1, cat::CacheType::kInstruction, 1, cat::WritePolicy::kWriteBack, 16384, o.icache_line},
       {1, cat::CacheType::kData, 1, cat::WritePolicy::kWriteBack, 16384, o.dcache_line}},
      o.producer);
  if (o.from_reset) {
    h.roms = {{kRomBase, kRomSize}};
    h.from_reset = true;
  }
  return h;
}

absl::Status R4400Machine::LoadRom(uint64_t address, std::span<const uint8_t> image) {
  std::vector<uint8_t>& rom = impl_->rom;
  if (rom.empty()) return absl::FailedPreconditionError("the machine has no ROM (not from reset)");
  if (image.empty()) return absl::InvalidArgumentError("the ROM image is empty");
  if (address < kRomBase || address - kRomBase >= kRomSize || address % 4 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the ROM address 0x", absl::Hex(address), " is not a word in the ROM (physical 0x",
        absl::Hex(kRomBase), " to 0x", absl::Hex(kRomBase + kRomSize - 1), ", kseg1 0x",
        absl::Hex(kResetVector & 0xFFFFFFFF), " up)"));
  }
  const uint64_t room = kRomBase + kRomSize - address;
  if (image.size() > room) {
    return absl::InvalidArgumentError(
        absl::StrCat("the image has ", image.size(), " bytes, more than the ", room,
                     " the ROM holds from physical 0x", absl::Hex(address),
                     " (the ROM: ", kRomSize >> 20, " MiB from the reset vector)"));
  }
  std::copy(image.begin(), image.end(), rom.begin() + (address - kRomBase));
  return absl::OkStatus();
}

namespace {

// ELF32 addresses are 32 bits; the CPU's 64-bit addresses hold them sign-extended.
uint64_t Widen(const ElfImage& elf, uint64_t a) {
  return elf.is64 ? a : static_cast<uint64_t>(static_cast<int32_t>(a));
}

bool InKseg01(uint64_t a) { return (a & 0xFFFFFFFFC0000000ull) == 0xFFFFFFFF80000000ull; }

// The physical address a load address names: kseg0 and kseg1 map the low 512 MiB, and a load
// address below that is physical already.
std::optional<uint64_t> Physical(uint64_t a) {
  if (InKseg01(a)) return a & 0x1FFFFFFF;
  if (a < 0x20000000) return a;
  return std::nullopt;
}

}  // namespace

absl::Status R4400Machine::LoadBareMetal(const ElfImage& elf) {
  if (absl::Status s = CheckR4400Elf(elf); !s.ok()) return s;
  Impl& m = *impl_;
  if (m.rom.empty())
    return absl::FailedPreconditionError("the machine has no ROM (not from reset)");
  const uint64_t entry = Widen(elf, elf.entry);
  if (!InKseg01(entry)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the entry point 0x", absl::Hex(entry), " is not in kseg0 or kseg1"));
  }
  bool at_reset_vector = false;  // a segment holds the reset vector's first 16 bytes
  for (const ElfSegment& s : elf.segments) {
    if (s.memsz == 0) continue;
    const std::optional<uint64_t> pa = Physical(Widen(elf, s.paddr));
    const std::string what =
        absl::StrCat("the segment loaded at 0x", absl::Hex(s.paddr), " (", s.memsz, " bytes)");
    if (!pa) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " is not at a physical, kseg0 or kseg1 address"));
    }
    std::vector<uint8_t>* memory = nullptr;
    uint64_t offset = 0;
    if (*pa < m.ram.size() && s.memsz <= m.ram.size() - *pa) {
      memory = &m.ram;
      offset = *pa;
    } else if (m.InRom(*pa, s.memsz)) {
      memory = &m.rom;
      offset = *pa - kRomBase;
      at_reset_vector |= offset < 16;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " lies neither in RAM (physical 0 to 0x", absl::Hex(m.ram.size() - 1),
                       ") nor in the ROM (physical 0x", absl::Hex(kRomBase), " to 0x",
                       absl::Hex(kRomBase + kRomSize - 1), ")"));
    }
    std::copy(s.data.begin(), s.data.end(), memory->begin() + offset);
    std::fill(memory->begin() + offset + s.data.size(), memory->begin() + offset + s.memsz, 0);
  }
  if (entry == kResetVector) return absl::OkStatus();
  if (at_reset_vector) {
    return absl::InvalidArgumentError(
        absl::StrCat("the ELF puts bytes at the reset vector 0xbfc00000 but its entry point is 0x",
                     absl::Hex(entry), ": no room for the jump to it"));
  }
  // lui k0, %hi; ori k0, k0, %lo; jr k0; nop: the CPU leaves reset for the entry point.
  const uint32_t stub[] = {0x3C1A0000u | static_cast<uint32_t>((entry >> 16) & 0xFFFF),
                           0x375A0000u | static_cast<uint32_t>(entry & 0xFFFF), 0x03400008u, 0};
  for (int i = 0; i < 4; ++i) StoreBE32(&m.rom[4 * i], stub[i]);
  return absl::OkStatus();
}

absl::StatusOr<RunSummary> R4400Machine::Run(cat::CatWriter* monitor, uint64_t max_traced,
                                             uint64_t max_total,
                                             const std::function<void(uint64_t)>& progress) {
  Impl& m = *impl_;
  m.monitor = monitor;
  mips::Cpu& cpu = m.cpu;
  while (!m.halted && m.monitor_status.ok() && m.refusal.ok()) {
    uint64_t done = cpu.retired();
    if (done >= max_total) break;
    if (m.began && done - m.began_at_retired >= max_traced) break;
    uint64_t slice = std::min(m.NextEvent(), max_total - done);
    if (m.began) slice = std::min(slice, max_traced - (done - m.began_at_retired));
    cpu.Run(slice);
    m.AdvanceWorld();
    if (progress) progress(cpu.retired());
  }
  if (!m.monitor_status.ok()) return m.monitor_status;
  if (!m.refusal.ok()) return m.refusal;
  RunSummary s = m.summary;
  s.instructions = cpu.retired();
  s.traced_instructions = m.began ? cpu.retired() - m.began_at_retired : 0;
  s.began = m.began;
  s.halted = m.halted;
  return s;
}

const std::string& R4400Machine::console() const { return impl_->console; }
mips::Cpu& R4400Machine::cpu() { return impl_->cpu; }

}  // namespace citcat::machine
