// The traced R4400 system: its core adapter, its capture with the guest this build made, and
// what the guest's CITCAT hooks cost (docs/machines/r4400-system.md, r4400-guest.md).
#include "systems/r4400.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "extract/r4400_contract.h"
#include "guest/r4400/guest_paths.h"
#include "guest/r4400/tools/disk_image.h"
#include "guest/r4400/tools/guest_info.h"
#include "io/cleanup.h"
#include "io/file.h"
#include "machine/elf_loader.h"
#include "machine/r4400/capture.h"
#include "machine/r4400/machine.h"
#include "machine/r4400/system.h"
#include "replay/r4400_adapter.h"
#include "systems/guest_support.h"

namespace citcat::systems {
namespace {

const std::string& KernelElf() {
  static const std::string* const path =
      new std::string(GuestFile(CITCAT_R4400_KERNEL_ELF, "r4400", "kernel.elf"));
  return *path;
}

constexpr Sdk kSdk = {"r4400",
                      "MIPS",
                      CITCAT_R4400_GCC,
                      CITCAT_R4400_SDK_ROOT,
                      CITCAT_R4400_SDK_BUILD,
                      CITCAT_R4400_SDK_LIBS};

// What a machine run did, in every system's terms; the hooks' part is the caller's.
CaptureReport Report(const machine::CaptureResult& run) {
  const machine::RunSummary& r = run.summary;
  CaptureReport report;
  report.console = run.console;
  report.instructions = r.instructions;
  report.traced_instructions = r.traced_instructions;
  report.bus_records = r.bus_records;
  report.bus_bytes = r.bus_bytes;
  report.interrupts = r.interrupts;
  report.dma_transfers = r.dma_transfers;
  report.device_reads = r.device_reads;
  report.register_reads = r.count_reads;
  report.register_name = "Count";
  report.halted = r.halted;
  report.cut_short = !r.halted;
  return report;
}

// A bare-metal program from reset: no kernel, no disk, no hooks.
absl::StatusOr<CaptureReport> CaptureFromReset(const CaptureRequest& request,
                                               const std::string& output) {
  machine::ResetCaptureSettings settings;
  settings.image_name = request.rom;
  // Enough for any ELF with its symbols; a raw image's bound is the ROM's, which the machine says.
  absl::StatusOr<std::string> image = io::ReadWholeFile(request.rom, 64ull << 20);
  if (!image.ok()) return image.status();
  settings.image.assign(image->begin(), image->end());
  settings.rom_address = request.rom_address;
  settings.seed = request.seed;
  settings.memory_bytes = request.memory_bytes;
  settings.max_instructions =
      request.max_traced ? request.max_traced : std::numeric_limits<uint64_t>::max() / 2;
  absl::StatusOr<machine::CaptureResult> run =
      machine::CaptureR4400FromReset(settings, output, request.progress);
  if (!run.ok()) return run.status();
  CaptureReport report = Report(*run);
  report.from_reset = true;
  report.hooks = "none: a trace from reset";
  return report;
}

absl::StatusOr<CaptureReport> Capture(const CaptureRequest& request, const std::string& output) {
  if (!request.rom.empty()) return CaptureFromReset(request, output);
  machine::CaptureSettings settings;
  settings.kernel_path = request.kernel.empty() ? KernelElf() : request.kernel;
  absl::StatusOr<std::string> disk = io::ReadWholeFile(
      request.disk.empty() ? GuestFile(CITCAT_R4400_DISK_IMAGE, "r4400", "disk.img") : request.disk,
      1ull << 30);
  if (!disk.ok()) return disk.status();
  settings.workloads = request.workloads;
  if (!request.program.empty()) {
    if (!settings.workloads.empty()) {
      return absl::InvalidArgumentError("give --elf or --workload, not both");
    }
    disk = DiskWithProgram(kSdk, request.program, request.cflags, *disk, machine::CheckR4400Elf);
    if (!disk.ok()) return disk.status();
    settings.workloads = "elf";
  }
  if (absl::Status s = CheckWorkloads(*disk, settings.workloads); !s.ok()) return s;
  settings.disk.assign(disk->begin(), disk->end());
  settings.seed = request.seed;
  settings.memory_bytes = request.memory_bytes;
  // No cap: the run ends when the guest powers off (a guest that never does runs until stopped).
  settings.max_traced =
      request.max_traced ? request.max_traced : std::numeric_limits<uint64_t>::max() / 2;
  absl::StatusOr<machine::CaptureResult> run =
      machine::CaptureR4400(settings, output, request.progress);
  if (!run.ok()) return run.status();

  const machine::RunSummary& r = run->summary;
  CaptureReport report = Report(*run);
  report.hook_instructions =
      guest::HookInstructions(r.interrupt_reports, r.cause_echoes, r.count_echoes);
  report.hooks = absl::StrCat(r.interrupt_reports, " interrupt reports, ", r.cause_echoes,
                              " Cause and ", r.count_echoes, " Count echoes");
  report.driver_instructions = r.driver_instructions;
  return report;
}

// Each interrupt report is one Cause echo too; a schedule from elsewhere may break that.
uint64_t HookInstructions(const aes::EventSchedule& aes) {
  uint64_t count = 0, cause = 0;
  for (const aes::RegisterRead& r : aes.register_reads()) {
    if (r.register_() == aes::RegisterRead::REGISTER_MIPS_COUNT) ++count;
    if (r.register_() == aes::RegisterRead::REGISTER_MIPS_CAUSE) ++cause;
  }
  const uint64_t interrupts = aes.interrupts_size();
  return cause >= interrupts ? guest::HookInstructions(interrupts, cause, count) : 0;
}

std::span<const Workload> Workloads() {
  static const std::vector<Workload>* const list = [] {
    auto* v = new std::vector<Workload>;
    for (const guest::WorkloadInfo& w : guest::kWorkloads) v->push_back({w.name, w.description});
    return v;
  }();
  return *list;
}

// The kernel's last act is its store to the clock's power-off register (CLOCK_POWER_OFF).
bool PowersOff(const cat::CatHeader&, const cat::BusRecord& last) {
  return last.master == cat::kMasterCpu && last.kind == cat::RecordKind::kUncachedWrite &&
         last.address == machine::kClockPowerOff;
}

// Traced PCs are 64-bit; a 32-bit kernel's addresses are their sign extensions.
uint64_t KernelAddress(uint64_t value, bool elf64) {
  return elf64 ? value : static_cast<uint64_t>(int64_t{static_cast<int32_t>(value)});
}

// The CAT header the traced machine writes, rebuilt from the IMS (docs/machines/r4400-system.md):
// what its description carries plus the system's fixed map.
cat::CatHeader CatHeaderOf(const ims::InitialMachineState& ims) {
  const ims::MachineDescription& d = ims.description();
  std::vector<cat::CacheGeometry> caches;
  for (const ims::Cache& c : d.caches()) {
    caches.push_back(
        {static_cast<uint8_t>(c.level()), static_cast<cat::CacheType>(c.type()),
         static_cast<uint8_t>(c.ways()),
         c.write_through() ? cat::WritePolicy::kWriteThrough : cat::WritePolicy::kWriteBack,
         c.size_bytes(), c.line_bytes()});
  }
  cat::CatHeader h = machine::R4400SystemHeader(d.memory_bytes(), std::move(caches), d.producer());
  h.byte_order =
      d.byte_order() == ims::BYTE_ORDER_BIG ? cat::ByteOrder::kBig : cat::ByteOrder::kLittle;
  if (d.rom_bytes() != 0) h.roms = {{d.rom_base(), d.rom_bytes()}};
  h.from_reset = ims.start().from_reset();
  return h;
}

}  // namespace

System R4400() {
  return {
      .name = "r4400",
      .title = "R4400",
      .description = "MIPS R4400: MIPS III, 16 KB I and D caches, write-back, big-endian",
      .cat_machine = cat::Machine::kR4400,
      .ims_machine = ims::MACHINE_R4400,
      .replay = {.machine = ims::MACHINE_R4400,
                 .make_core = replay::MakeR4400Adapter,
                 .header = CatHeaderOf,
                 .starts_after = extract::R4400Contract::EndsStateDump,
                 .state_dump = extract::R4400Contract::StateDump,
                 .reset_state = extract::R4400Contract::ResetStateFor},
      .make_contract = [] { return std::make_unique<extract::R4400Contract>(); },
      .capture = Capture,
      .workloads = Workloads(),
      .default_mix = CITCAT_R4400_DEFAULT_MIX,
      .guest_kernel = KernelElf().c_str(),
      .kernel_address = KernelAddress,
      .powers_off = PowersOff,
      .hook_instructions = HookInstructions,
  };
}

}  // namespace citcat::systems
