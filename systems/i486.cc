// The traced i486 PC: its core adapter, its capture with the guest this build made (boot ROM,
// kernel, disk), and what the guest's CITCAT hooks cost (docs/machines/i486-system.md,
// i486-guest.md).
#include "systems/i486.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cat_parser/writer.h"
#include "extract/i486_contract.h"
#include "guest/i486/guest_paths.h"
#include "guest/i486/tools/boot.h"
#include "guest/i486/tools/guest_info.h"
#include "guest/linux/linux_guest_paths.h"
#include "guest/linux/linux_kernel_paths.h"
#include "io/file.h"
#include "machine/elf_loader.h"
#include "machine/i486/contract.h"
#include "machine/i486/machine.h"
#include "machine/i486/reset_image.h"
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

const std::string& LinuxKernel() {
  static const std::string* const path =
      new std::string(GuestFile(CITCAT_LINUX_VMLINUX, "linux", "vmlinux"));
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
  CatMonitor(cat::CatWriter& writer, x86::Cpu& cpu, const cat::CatHeader& header)
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
      cpu_.RequestStop();  // the run's limit now counts from here
      pause_ = true;
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
  bool TakePause() override { return std::exchange(pause_, false); }

 private:
  cat::CatWriter& writer_;
  x86::Cpu& cpu_;  // stopped when the trace begins
  bool pause_ = false;
  extract::I486Contract contract_;
  const cat::AddressWindow* done_ = nullptr;
  uint64_t report_eip_ = 0;
  bool began_ = false, dumped_ = false, ack_waiting_ = false;
  uint64_t begin_retired_ = 0, records_ = 0, bytes_ = 0, reports_ = 0, driver_instructions_ = 0;
};

// Instructions allowed before the begin of the trace (boot, kernel start).
constexpr uint64_t kBootAllowance = 200'000'000;
constexpr uint64_t kSlice = 1'000'000;

// Writes the CAT of a trace from reset from the first record on, and stops the capture, through
// the machine's monitor error, when an interrupt is taken where the CAT alone cannot key it
// exactly: extraction keys it by the acknowledge's branch count and record index and the return
// EIP of the frame the stores after it fit (I486Contract::FindFrame), and replay enters it at the
// first instruction boundary with that key. So the monitor runs the contract on its own records
// and compares each key, once the contract has placed the frame, with what the processor did.
class ResetMonitor final : public machine::BusMonitor, public simcore::Observer {
 public:
  ResetMonitor(cat::CatWriter& writer, const x86::Cpu& cpu, const cat::CatHeader& header)
      : writer_(writer), cpu_(cpu) {
    contract_.Start(header).IgnoreError();  // the machine's own header has the areas
  }

  // The boundary before each instruction (each REP iteration): where it was, in the key's terms.
  // An interrupt's frame is whole by then.
  void OnInstruction(uint64_t eip, std::span<const uint8_t>) override {
    last_ = {static_cast<uint32_t>(eip), cpu_.branch_count(), records_, true};
    delivering_ = false;
  }

  absl::Status OnRecord(const cat::BusRecord& r) override {
    const uint64_t index = records_;
    if (r.master == cat::kMasterCpu) {
      if (r.kind == cat::RecordKind::kInterruptAck) {
        const uint32_t return_eip = cpu_.eip();
        if (last_.valid && last_.eip == return_eip && last_.branch_count == r.branch_count &&
            last_.records == index) {
          return Refuse(absl::StrCat(
              "took an interrupt (vector ", r.data.empty() ? 0 : r.data[0],
              ", acknowledged at CAT record ", index,
              ") between two iterations of the REP "
              "string instruction at EIP 0x",
              absl::Hex(return_eip),
              " with no bus transaction in between: a trace from reset cannot tell the "
              "iterations apart without ECX"));
        }
        expected_.push_back({index, return_eip});
      }
      if (absl::Status s = contract_.ResetTraceRecord(index, r, aes_); !s.ok()) return Refuse(s);
      if (r.kind == cat::RecordKind::kInterruptAck) {
        if (absl::Status s = contract_.InterruptAck(index, r, aes_); !s.ok()) return Refuse(s);
        delivering_ = true;
      }
      if (absl::Status s = Compare(); !s.ok()) return s;
    }
    ++records_;
    bytes_ += r.data.size();
    return writer_.Write(r);
  }

  // The end of the trace: the last acknowledge's frame is placed with the stores there are.
  absl::Status Finish() {
    if (absl::Status s = contract_.Finish(aes_); !s.ok()) return Refuse(s);
    return Compare();
  }

  bool ack_waiting() const { return delivering_; }
  uint64_t records() const { return records_; }
  uint64_t bytes() const { return bytes_; }
  uint64_t interrupts() const { return interrupts_; }

 private:
  // The keys the contract has placed, against the processor's return EIPs, in order.
  absl::Status Compare() {
    for (const aes::Interrupt& irq : aes_.interrupts()) {
      if (expected_.empty() || expected_.front().index != irq.cat_record()) {
        return Refuse(absl::StrCat("keyed an interrupt at CAT record ", irq.cat_record(),
                                   " that the processor did not acknowledge there"));
      }
      const Expected e = expected_.front();
      expected_.erase(expected_.begin());
      if (irq.pc() != e.return_eip) {
        return Refuse(absl::StrCat(
            "took an interrupt (vector ", irq.vector(), ", acknowledged at CAT record ",
            irq.cat_record(), ") returning to EIP 0x", absl::Hex(e.return_eip),
            ", but the frame the stores after the acknowledge fit returns to 0x",
            absl::Hex(irq.pc()),
            ": a trace from reset takes the return EIP from the frame's pushes, and these look "
            "like another frame's"));
      }
      ++interrupts_;
    }
    aes_.clear_interrupts();
    return absl::OkStatus();
  }
  absl::Status Refuse(const absl::Status& s) { return Refuse(std::string(s.message())); }
  absl::Status Refuse(const std::string& what) {
    return absl::FailedPreconditionError(absl::StrCat(
        "after ", cpu_.retired(), " instructions, at EIP 0x", absl::Hex(cpu_.eip()), ": ", what));
  }

  struct Boundary {
    uint32_t eip = 0;
    uint64_t branch_count = 0, records = 0;
    bool valid = false;
  };
  struct Expected {
    uint64_t index;
    uint32_t return_eip;
  };
  cat::CatWriter& writer_;
  const x86::Cpu& cpu_;
  extract::I486Contract contract_;
  aes::EventSchedule aes_;
  Boundary last_;
  std::vector<Expected> expected_;  // acknowledged, not yet keyed
  bool delivering_ = false;
  uint64_t records_ = 0, bytes_ = 0, interrupts_ = 0;
};

// A bare-metal program from reset (docs/machines/i486-system.md, "Traces from reset"): no
// kernel, no disk, no hooks.
absl::StatusOr<CaptureReport> CaptureFromReset(const CaptureRequest& request,
                                               const std::string& output) {
  const std::string& name = request.rom;
  // Enough for any ELF with its symbols; a raw image's bound is the ROM's, which is checked.
  absl::StatusOr<std::string> file = io::ReadWholeFile(name, 64ull << 20);
  if (!file.ok()) return file.status();
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(file->data()),
                                       file->size());
  absl::StatusOr<machine::ResetImage> image;
  if (machine::IsElf(bytes)) {
    if (request.rom_address) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": an ELF is loaded at its own addresses: --rom-address is for raw images"));
    }
    absl::StatusOr<machine::ElfImage> elf = machine::ParseElf(bytes);
    image = elf.ok() ? machine::ElfResetImage(*elf, request.memory_bytes) : elf.status();
  } else {
    image = machine::RawResetImage(bytes, request.rom_address);
  }
  if (!image.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", image.status().message()));
  }

  machine::I486Options options;
  options.pc.memory_bytes = request.memory_bytes;
  options.pc.seed = request.seed;
  options.pc.rom = std::move(image->rom);
  options.pc.reserved = guest::i486::ReservedWindows();
  options.pc.from_reset = true;
  options.producer = absl::StrCat("citcat capture --machine i486 --rom ", name);
  if (request.rom_address) {
    absl::StrAppend(&options.producer, " --rom-address 0x", absl::Hex(*request.rom_address));
  }
  absl::StrAppend(&options.producer, " --seed ", request.seed);
  absl::StatusOr<std::unique_ptr<machine::I486Machine>> machine =
      machine::I486Machine::Create(options);
  if (!machine.ok()) return machine.status();
  for (const machine::ResetImage::Piece& p : image->ram) {
    if (absl::Status s = (*machine)->LoadRam(p.address, p.bytes); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": ", s.message()));
    }
  }

  const cat::CatHeader header = (*machine)->Header();
  absl::StatusOr<std::unique_ptr<cat::CatWriter>> writer = cat::CatWriter::Create(output, header);
  if (!writer.ok()) return writer.status();
  x86::Cpu& cpu = (*machine)->cpu();
  ResetMonitor monitor(**writer, cpu, header);
  cpu.set_observer(&monitor);
  const uint64_t max =
      request.max_traced ? request.max_traced : std::numeric_limits<uint64_t>::max() / 2;
  absl::StatusOr<machine::I486RunSummary> run = (*machine)->Run(&monitor, max, request.progress);
  // Not inside an interrupt's entry: its frame is whole at the next instruction boundary.
  for (int i = 0; i < 1000 && run.ok() && monitor.ack_waiting() && !run->powered_off; ++i) {
    run = (*machine)->Run(&monitor, cpu.retired() + 1);
  }
  cpu.set_observer(nullptr);
  if (run.ok()) {
    if (absl::Status s = monitor.Finish(); !s.ok()) run = s;
  }
  if (absl::IsFailedPrecondition(run.status())) {  // what the trace cannot show, or a shutdown
    return absl::FailedPreconditionError(absl::StrCat(name, ": ", run.status().message()));
  }
  if (!run.ok()) return run.status();
  if (absl::Status s = (*writer)->Finish(); !s.ok()) return s;

  CaptureReport report;
  report.console = (*machine)->console();
  report.instructions = run->instructions;
  report.traced_instructions = run->instructions;
  report.bus_records = monitor.records();
  report.bus_bytes = monitor.bytes();
  report.interrupts = monitor.interrupts();
  report.dma_transfers = run->dma_transfers;
  report.device_reads = run->device_reads;
  report.from_reset = true;
  report.hooks = "none: a trace from reset";
  report.halted = run->powered_off;
  report.stopped = run->stuck ? run->stuck_why : "";
  report.cut_short = !run->powered_off && !run->stuck;
  return report;
}

// Runs a guest that carries the CITCAT hooks (ours or Linux's) to the begin of its trace, then
// writes the CAT until it powers off or `request.max_traced` instructions are traced.
absl::StatusOr<CaptureReport> RunHookedGuest(machine::I486Machine& machine,
                                             const CaptureRequest& request,
                                             const std::string& output,
                                             const std::string& kernel_path,
                                             uint64_t boot_allowance) {
  const cat::CatHeader header = machine.Header();
  absl::StatusOr<std::unique_ptr<cat::CatWriter>> writer = cat::CatWriter::Create(output, header);
  if (!writer.ok()) return writer.status();
  CatMonitor monitor(**writer, machine.cpu(), header);
  const uint64_t max_traced =
      request.max_traced ? request.max_traced : std::numeric_limits<uint64_t>::max() / 2;
  machine::I486RunSummary run;
  const auto limit = [&] {
    const uint64_t now = machine.cpu().retired();
    if (!monitor.began()) return std::min(now + kSlice, boot_allowance);
    return std::min(now + kSlice, monitor.begin_retired() + max_traced);
  };
  while (true) {
    const uint64_t target = limit();
    const bool began = monitor.began();
    absl::StatusOr<machine::I486RunSummary> slice = machine.Run(&monitor, target, request.progress);
    if (!slice.ok()) return slice.status();
    run = *slice;
    if (!began && monitor.began() && !run.powered_off && !run.stuck) continue;
    if (run.powered_off || run.stuck || machine.cpu().retired() < target) break;
    if (!monitor.began() && machine.cpu().retired() >= boot_allowance) break;
    if (monitor.began() && machine.cpu().retired() >= monitor.begin_retired() + max_traced) {
      // Not between an interrupt acknowledge and its report.
      for (int i = 0; i < 1000 && monitor.ack_waiting() && !run.powered_off; ++i) {
        slice = machine.Run(&monitor, machine.cpu().retired() + 1);
        if (!slice.ok()) return slice.status();
        run = *slice;
      }
      break;
    }
  }
  if (!monitor.began()) {
    std::vector<absl::string_view> lines =
        absl::StrSplit(machine.console(), absl::ByAnyChar("\r\n"), absl::SkipWhitespace());
    return absl::FailedPreconditionError(
        absl::StrCat(kernel_path, ": the guest never began the trace (", run.instructions,
                     " instructions run); the last line on its console: ",
                     lines.empty() ? "(nothing)" : absl::StrCat("'", lines.back(), "'")));
  }
  if (absl::Status s = (*writer)->Finish(); !s.ok()) return s;

  CaptureReport report;
  report.console = machine.console();
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
  report.stopped = run.stuck ? run.stuck_why : "";
  report.cut_short = !run.powered_off && !run.stuck;
  return report;
}

// The Linux guest's workloads (guest/linux/userland/workloads.txt).
constexpr Workload kLinuxWorkloads[] = {CITCAT_LINUX_WORKLOAD_TABLE};

// The PC that boots a hooked guest (ours or Linux) from our boot ROM, with `disk` on its drive.
absl::StatusOr<std::unique_ptr<machine::I486Machine>> HookedGuestMachine(
    const CaptureRequest& request, std::string_view disk, std::string producer) {
  absl::StatusOr<std::string> rom =
      io::ReadWholeFile(GuestFile(CITCAT_I486_BOOT_ROM, "i486", "boot.bin"), 1 << 20);
  if (!rom.ok()) return rom.status();
  machine::I486Options options;
  options.pc.memory_bytes = request.memory_bytes;
  options.pc.seed = request.seed;
  options.pc.rom.assign(rom->begin(), rom->end());
  options.pc.disk.assign(disk.begin(), disk.end());
  options.pc.reserved = guest::i486::ReservedWindows();
  options.producer = std::move(producer);
  return machine::I486Machine::Create(options);
}

// Linux's interrupt report costs its call and citcat_report_interrupt's 16 instructions, as GCC 12
// compiles guest/linux/kernel/src/arch/x86/kernel/citcat.c (docs/machines/i486-linux.md).
constexpr uint64_t kLinuxReportInstructions = 17;

// Linux boots in hundreds of millions of instructions before its init starts the workloads.
constexpr uint64_t kLinuxBootAllowance = 4'000'000'000;

// Linux with the CITCAT patches and its userland (docs/machines/i486-linux.md).
absl::StatusOr<CaptureReport> CaptureLinux(const CaptureRequest& request,
                                           const std::string& output) {
  const std::string kernel_path = !request.kernel.empty() ? request.kernel : LinuxKernel();
  // Our userland comes with its disk (an ext2 file system for the disk workload); another
  // initramfs runs with the disk it is given, or none.
  const bool our_userland = request.initramfs.empty();
  const std::string initramfs_path =
      our_userland ? GuestFile(CITCAT_LINUX_INITRAMFS, "linux", "initramfs.cpio")
                   : request.initramfs;
  const std::string disk_path = !request.disk.empty() ? request.disk
                                : our_userland
                                    ? GuestFile(CITCAT_LINUX_DISK_IMAGE, "linux", "disk.img")
                                    : "";
  for (const std::string* built : {&kernel_path, &initramfs_path, &disk_path}) {
    if (!built->empty() && !std::filesystem::exists(*built)) {
      return absl::FailedPreconditionError(
          absl::StrCat(*built,
                       ": not built (the Linux guest's kernel and userland are the build targets "
                       "linux_kernel and linux_userland: `scripts/build release linux_kernel "
                       "linux_userland`)"));
    }
  }
  if (our_userland) {  // its workloads are known
    for (absl::string_view w : absl::StrSplit(request.workloads, ',', absl::SkipEmpty())) {
      if (absl::c_none_of(kLinuxWorkloads, [&](const Workload& l) {
            return l.name == std::string_view(w.data(), w.size());
          })) {
        return absl::InvalidArgumentError(
            absl::StrCat("no Linux workload '", w, "' (--linux --list-workloads names them)"));
      }
    }
  }
  absl::StatusOr<machine::ElfImage> vmlinux = machine::LoadElfFile(kernel_path);
  if (!vmlinux.ok()) return vmlinux.status();
  absl::StatusOr<std::string> initramfs = io::ReadWholeFile(initramfs_path, 1ull << 30);
  if (!initramfs.ok()) return initramfs.status();
  absl::StatusOr<std::string> disk =
      disk_path.empty() ? std::string() : io::ReadWholeFile(disk_path, 1ull << 30);
  if (!disk.ok()) return disk.status();

  // pata_legacy probes six ISA channels unless told that the PC has one.
  std::string command_line = "console=ttyS0 pata_legacy.probe_mask=1";
  if (!request.workloads.empty())
    absl::StrAppend(&command_line, " citcat.workloads=", request.workloads);
  if (request.from_boot) absl::StrAppend(&command_line, " citcat.from_boot");

  absl::StatusOr<std::unique_ptr<machine::I486Machine>> machine = HookedGuestMachine(
      request, *disk,
      absl::StrCat("citcat capture --machine i486 --linux --workload ",
                   request.workloads.empty() ? "default" : request.workloads,
                   request.from_boot ? " --from-boot" : "", " --seed ", request.seed));
  if (!machine.ok()) return machine.status();
  const std::span<const uint8_t> cpio(reinterpret_cast<const uint8_t*>(initramfs->data()),
                                      initramfs->size());
  if (absl::Status s = guest::i486::LoadLinux(**machine, request.memory_bytes, *vmlinux,
                                              {.initramfs = cpio, .command_line = command_line});
      !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(kernel_path, ": ", s.message()));
  }
  absl::StatusOr<CaptureReport> report =
      RunHookedGuest(**machine, request, output, kernel_path, kLinuxBootAllowance);
  if (report.ok()) report->hook_instructions = kLinuxReportInstructions * report->interrupts;
  return report;
}

absl::StatusOr<CaptureReport> Capture(const CaptureRequest& request, const std::string& output) {
  if (!request.rom.empty()) return CaptureFromReset(request, output);
  if (request.linux_guest) return CaptureLinux(request, output);
  const std::string kernel_path = request.kernel.empty() ? KernelElf() : request.kernel;
  absl::StatusOr<machine::ElfImage> kernel = machine::LoadElfFile(kernel_path);
  if (!kernel.ok()) return kernel.status();
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

  absl::StatusOr<std::unique_ptr<machine::I486Machine>> machine = HookedGuestMachine(
      request, *disk,
      absl::StrCat("citcat capture --machine i486 --workload ",
                   workloads.empty() ? "default" : workloads, " --seed ", request.seed));
  if (!machine.ok()) return machine.status();
  if (absl::Status s = guest::i486::LoadKernel(**machine, *kernel, workloads); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(kernel_path, ": ", s.message()));
  }

  return RunHookedGuest(**machine, request, output, kernel_path, kBootAllowance);
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

// The CAT header the traced machine writes, rebuilt from the IMS (docs/machines/i486-system.md):
// what its description carries plus the system's fixed map.
cat::CatHeader CatHeaderOf(const ims::InitialMachineState& ims) {
  const ims::MachineDescription& d = ims.description();
  std::vector<cat::AddressWindow> reserved;
  for (const i486::ReservedArea& a : i486::kReservedAreas) {
    reserved.push_back({std::string(a.name), cat::WindowKind::kMemoryMapped,
                        i486::kReservedBase + a.offset, a.size});
  }
  const uint64_t rom_bytes = d.rom_bytes() != 0 ? d.rom_bytes() : machine::pc::kDefaultRomBytes;
  cat::CatHeader h =
      machine::pc::I486SystemHeader(d.memory_bytes(), rom_bytes, std::move(reserved), d.producer());
  if (ims.start().from_reset()) machine::pc::MakeFromResetHeader(h, rom_bytes);
  return h;
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
                 .header = CatHeaderOf,
                 .starts_after = extract::I486Contract::EndsStateDump,
                 .state_dump = extract::I486Contract::StateDump,
                 .reset_state = extract::I486Contract::ResetStateFor},
      .make_contract = [] { return std::make_unique<extract::I486Contract>(); },
      .capture = Capture,
      .workloads = Workloads(),
      .default_mix = CITCAT_I486_DEFAULT_MIX,
      .linux_workloads = kLinuxWorkloads,
      .linux_default_mix = CITCAT_LINUX_DEFAULT_MIX,
      .linux_kernel = LinuxKernel().c_str(),
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
