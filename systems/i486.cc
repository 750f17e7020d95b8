// The traced i486 PC: its core adapter, its capture with the guest this build made (boot ROM,
// kernel, disk), and what the guest's CITCAT hooks cost (docs/machines/i486-system.md,
// i486-guest.md).
#include "systems/i486.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cat_parser/writer.h"
#include "extract/i486_contract.h"
#include "guest/i486/guest_paths.h"
#include "guest/i486/tools/boot.h"
#include "guest/i486/tools/guest_info.h"
#include "io/file.h"
#include "machine/elf_loader.h"
#include "machine/i486/contract.h"
#include "machine/i486/machine.h"
#include "machine/i486/system.h"
#include "replay/i486_adapter.h"
#include "systems/guest_support.h"

namespace citcat::systems {
namespace {

constexpr Sdk kSdk = {"i486",
                      "i686",
                      CITCAT_I486_GCC,
                      CITCAT_I486_SDK_ROOT,
                      CITCAT_I486_SDK_BUILD,
                      CITCAT_I486_SDK_LIBS};

const std::string& KernelElf() {
  static const std::string* const path =
      new std::string(GuestFile(CITCAT_I486_KERNEL_ELF, "i486", "kernel.elf"));
  return *path;
}

absl::Status CheckI386Elf(const machine::ElfImage& elf) {
  if (elf.is64 || elf.big_endian || elf.machine != machine::kElfMachine386) {
    return absl::InvalidArgumentError(absl::StrCat("not a program for the i486 guest: built for ",
                                                   elf.Describe(),
                                                   ", not i386 ELF32 little-endian"));
  }
  return absl::OkStatus();
}

// Writes the CAT from the begin marker on and keeps what a capture reports: where the trace
// began and the state dump ended (in retired instructions), and whether an interrupt
// acknowledge still waits for its report (a trace must not end there: extraction would have
// half an interrupt).
class CatMonitor final : public machine::BusMonitor {
 public:
  CatMonitor(cat::CatWriter& writer, const x86::Cpu& cpu, const cat::CatHeader& header)
      : writer_(writer), cpu_(cpu) {
    contract_.Start(header).IgnoreError();  // the machine's own header has the areas
    done_ = header.FindMagic("state-done");
    report_eip_ = header.FindMagic("interrupt")->base + CITCAT_I486_INTERRUPT_EIP;
  }

  absl::Status OnRecord(const cat::BusRecord& r) override {
    if (!began_) {
      if (!contract_.IsBeginMarker(r)) return absl::OkStatus();
      began_ = true;
      begin_retired_ = cpu_.retired();
    }
    ++records_;
    bytes_ += r.data.size();
    if (r.kind == cat::RecordKind::kUncachedWrite && r.master == cat::kMasterCpu) {
      if (done_->Contains(r.address) && !dumped_) {
        dumped_ = true;
        driver_instructions_ = cpu_.retired() - begin_retired_;
      } else if (r.address == report_eip_) {
        ++reports_;
        ack_waiting_ = false;
      }
    }
    if (r.kind == cat::RecordKind::kInterruptAck) ack_waiting_ = true;
    return writer_.Write(r);
  }

  bool began() const { return began_; }
  bool ack_waiting() const { return ack_waiting_; }
  uint64_t begin_retired() const { return begin_retired_; }
  uint64_t records() const { return records_; }
  uint64_t bytes() const { return bytes_; }
  uint64_t reports() const { return reports_; }
  uint64_t driver_instructions() const { return driver_instructions_; }

 private:
  cat::CatWriter& writer_;
  const x86::Cpu& cpu_;
  extract::I486Contract contract_;
  const cat::AddressWindow* done_ = nullptr;
  uint64_t report_eip_ = 0;
  bool began_ = false, dumped_ = false, ack_waiting_ = false;
  uint64_t begin_retired_ = 0, records_ = 0, bytes_ = 0, reports_ = 0, driver_instructions_ = 0;
};

// Instructions allowed before the begin of the trace (boot, kernel start).
constexpr uint64_t kBootAllowance = 200'000'000;
constexpr uint64_t kSlice = 1'000'000;

absl::StatusOr<CaptureReport> Capture(const CaptureRequest& request, const std::string& output) {
  const std::string kernel_path = request.kernel.empty() ? KernelElf() : request.kernel;
  absl::StatusOr<machine::ElfImage> kernel = machine::LoadElfFile(kernel_path);
  if (!kernel.ok()) return kernel.status();
  absl::StatusOr<std::string> rom =
      io::ReadWholeFile(GuestFile(CITCAT_I486_BOOT_ROM, "i486", "boot.bin"), 1 << 20);
  if (!rom.ok()) return rom.status();
  absl::StatusOr<std::string> disk = io::ReadWholeFile(
      request.disk.empty() ? GuestFile(CITCAT_I486_DISK_IMAGE, "i486", "disk.img") : request.disk,
      1ull << 30);
  if (!disk.ok()) return disk.status();
  std::string workloads = request.workloads;
  if (!request.program.empty()) {
    if (!workloads.empty()) return absl::InvalidArgumentError("give --elf or --workload, not both");
    disk = DiskWithProgram(kSdk, request.program, request.cflags, *disk, CheckI386Elf);
    if (!disk.ok()) return disk.status();
    workloads = "elf";
  }
  if (absl::Status s = CheckWorkloads(*disk, workloads); !s.ok()) return s;

  machine::I486Options options;
  options.pc.memory_bytes = request.memory_bytes;
  options.pc.seed = request.seed;
  options.pc.rom.assign(rom->begin(), rom->end());
  options.pc.disk.assign(disk->begin(), disk->end());
  options.pc.reserved = guest::i486::ReservedWindows();
  options.producer =
      absl::StrCat("citcat capture --machine i486 --workload ",
                   workloads.empty() ? "default" : workloads, " --seed ", request.seed);
  absl::StatusOr<std::unique_ptr<machine::I486Machine>> machine =
      machine::I486Machine::Create(options);
  if (!machine.ok()) return machine.status();
  if (absl::Status s = guest::i486::LoadKernel(**machine, *kernel, workloads); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(kernel_path, ": ", s.message()));
  }

  const cat::CatHeader header = (*machine)->Header();
  absl::StatusOr<std::unique_ptr<cat::CatWriter>> writer = cat::CatWriter::Create(output, header);
  if (!writer.ok()) return writer.status();
  CatMonitor monitor(**writer, (*machine)->cpu(), header);
  const uint64_t max_traced =
      request.max_traced ? request.max_traced : std::numeric_limits<uint64_t>::max() / 2;
  machine::I486RunSummary run;
  const auto limit = [&] {
    const uint64_t now = (*machine)->cpu().retired();
    if (!monitor.began()) return std::min(now + kSlice, kBootAllowance);
    return std::min(now + kSlice, monitor.begin_retired() + max_traced);
  };
  while (true) {
    const uint64_t target = limit();
    absl::StatusOr<machine::I486RunSummary> slice =
        (*machine)->Run(&monitor, target, request.progress);
    if (!slice.ok()) return slice.status();
    run = *slice;
    if (run.powered_off || run.stuck || (*machine)->cpu().retired() < target) break;
    if (!monitor.began() && (*machine)->cpu().retired() >= kBootAllowance) break;
    if (monitor.began() && (*machine)->cpu().retired() >= monitor.begin_retired() + max_traced) {
      // Not between an interrupt acknowledge and its report.
      for (int i = 0; i < 1000 && monitor.ack_waiting() && !run.powered_off; ++i) {
        slice = (*machine)->Run(&monitor, (*machine)->cpu().retired() + 1);
        if (!slice.ok()) return slice.status();
        run = *slice;
      }
      break;
    }
  }
  if (!monitor.began()) {
    std::vector<absl::string_view> lines =
        absl::StrSplit((*machine)->console(), absl::ByAnyChar("\r\n"), absl::SkipWhitespace());
    return absl::FailedPreconditionError(
        absl::StrCat(kernel_path, ": the guest never began the trace (", run.instructions,
                     " instructions run); the last line on its console: ",
                     lines.empty() ? "(nothing)" : absl::StrCat("'", lines.back(), "'")));
  }
  if (absl::Status s = (*writer)->Finish(); !s.ok()) return s;

  CaptureReport report;
  report.console = (*machine)->console();
  report.instructions = run.instructions;
  report.traced_instructions = run.instructions - monitor.begin_retired();
  report.bus_records = monitor.records();
  report.bus_bytes = monitor.bytes();
  report.interrupts = monitor.reports();
  report.dma_transfers = run.dma_transfers;
  report.device_reads = run.device_reads;
  report.hook_instructions = guest::i486::HookInstructions(monitor.reports());
  report.hooks = absl::StrCat(monitor.reports(), " interrupt reports");
  report.driver_instructions = monitor.driver_instructions();
  report.halted = run.powered_off;
  report.cut_short = !run.powered_off;
  return report;
}

std::span<const Workload> Workloads() {
  static const std::vector<Workload>* const list = [] {
    auto* v = new std::vector<Workload>;
    for (const guest::i486::WorkloadInfo& w : guest::i486::kWorkloads) {
      v->push_back({w.name, w.description});
    }
    return v;
  }();
  return *list;
}

// The kernel's last act is its write to the power-off port.
bool PowersOff(const cat::CatHeader&, const cat::BusRecord& last) {
  return last.master == cat::kMasterCpu && last.kind == cat::RecordKind::kPortWrite &&
         last.address == machine::pc::kClockPowerOff;
}

}  // namespace

System I486() {
  return {
      .name = "i486",
      .title = "i486",
      .description = "Intel i486DX: x87, 8 KB unified write-through cache, a PC with its devices",
      .cat_machine = cat::Machine::kI486,
      .ims_machine = ims::MACHINE_I486,
      .replay = {.machine = ims::MACHINE_I486,
                 .make_core = replay::MakeI486Adapter,
                 .header = replay::I486Header,
                 .starts_after = extract::I486Contract::EndsStateDump,
                 .state_dump = extract::I486Contract::StateDump},
      .make_contract = [] { return std::make_unique<extract::I486Contract>(); },
      .capture = Capture,
      .workloads = Workloads(),
      .default_mix = CITCAT_I486_DEFAULT_MIX,
      .guest_kernel = KernelElf().c_str(),
      .kernel_address = [](uint64_t value, bool) { return value; },
      .powers_off = PowersOff,
      .hook_instructions =
          [](const aes::EventSchedule& aes) {
            return guest::i486::HookInstructions(aes.interrupts_size());
          },
  };
}

}  // namespace citcat::systems
