// citcat capture: runs a workload on a traced machine from the registry (systems/) and records
// its CAT.
#include <algorithm>
#include <cstdio>

#include "absl/algorithm/container.h"
#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "citcat/command.h"
#include "citcat/progress.h"
#include "systems/system.h"

ABSL_FLAG(std::string, machine, "",
          "the traced machine (--list-machines names them; default: the first one listed)");
ABSL_FLAG(bool, list_machines, false, "list the traced machines and exit");
ABSL_FLAG(std::string, workload, "",
          "workloads to run, comma-separated (default: the default mix)");
ABSL_FLAG(uint64_t, seed, 1, "seed of the outside world (interrupt, DMA and clock timing)");
ABSL_FLAG(uint64_t, instructions, 0,
          "stop after this many instructions from the begin of the trace (default: run until the "
          "guest halts)");
ABSL_FLAG(uint64_t, memory_mb, 32, "main memory in MiB");
ABSL_FLAG(std::string, elf, "",
          "a program to run instead of the workloads: an ELF built with the machine's guest SDK "
          "(guest/<machine>/sdk), or C files (--elf a.c b.c ...), which are built with it first");
ABSL_FLAG(std::string, cflags, "", "more compiler options for the C files of --elf");
ABSL_FLAG(bool, list_workloads, false, "list the workloads and exit");
ABSL_FLAG(std::string, rom, "",
          "a bare-metal program to trace from reset instead of the guest kernel: a raw ROM image "
          "placed at the reset vector, or an ELF (loaded at its addresses, entered from the reset "
          "vector); see docs/machines/<machine>-system.md, \"Traces from reset\"");
ABSL_FLAG(std::string, rom_address, "",
          "where in the ROM a raw --rom image goes (a physical or kseg0/kseg1 address on the "
          "R4400, a physical address in the top 1 MiB on the i486; hex with 0x; default: the "
          "reset vector on the R4400, the image's end at the top of the 4 GB space on the i486)");
ABSL_FLAG(
    std::string, disk, "",
    "the disk image holding the workloads (default: the one this build made for the machine)");
ABSL_FLAG(bool, from_boot, false,
          "with --linux: begin the trace at the kernel's first instruction, not when the "
          "workloads start");
ABSL_FLAG(std::string, initramfs, "",
          "with --linux: the userland, a cpio archive (default: the one this build made)");

namespace citcat::cli {
namespace {

// --rom and --rom-address into the request; --rom runs no kernel, so the kernel's options clash.
absl::Status RomRequest(systems::CaptureRequest& request) {
  request.rom = absl::GetFlag(FLAGS_rom);
  const std::string address = absl::GetFlag(FLAGS_rom_address);
  if (request.rom.empty()) {
    if (!address.empty()) return absl::InvalidArgumentError("--rom-address needs --rom");
    return absl::OkStatus();
  }
  if (!absl::GetFlag(FLAGS_workload).empty() || !absl::GetFlag(FLAGS_elf).empty() ||
      !absl::GetFlag(FLAGS_cflags).empty() || !absl::GetFlag(FLAGS_kernel).empty() ||
      !absl::GetFlag(FLAGS_disk).empty()) {
    return absl::InvalidArgumentError(
        "--rom runs a bare-metal program without the guest kernel: --workload, --elf, --cflags, "
        "--kernel and --disk do not go with it");
  }
  if (!address.empty()) {
    uint64_t value = 0;
    absl::string_view digits = address;
    const bool hex = absl::ConsumePrefix(&digits, "0x") || absl::ConsumePrefix(&digits, "0X");
    if (!(hex ? absl::SimpleHexAtoi(digits, &value) : absl::SimpleAtoi(digits, &value))) {
      return absl::InvalidArgumentError(
          absl::StrCat("--rom-address '", address, "' is not a number (0x... or decimal)"));
    }
    request.rom_address = value;
  }
  return absl::OkStatus();
}

void PrintFromResetSummary(const std::string& output, const systems::CaptureReport& r) {
  std::printf("%s", r.console.c_str());
  std::printf(
      "\ncitcat capture: %s (traced from reset)\n"
      "  instructions     %llu%s\n"
      "  bus records      %llu, %llu data bytes (%.3f bytes per instruction)\n"
      "  interrupts       %llu\n"
      "  DMA transfers    %llu\n"
      "  device reads     %llu\n"
      "  perturbation     none: no kernel, no hooks\n",
      output.c_str(), static_cast<unsigned long long>(r.traced_instructions),
      r.halted            ? ", the program powered off"
      : r.stopped.empty() ? ", cut short by --instructions"
                          : absl::StrCat(", the processor ", r.stopped).c_str(),
      static_cast<unsigned long long>(r.bus_records), static_cast<unsigned long long>(r.bus_bytes),
      r.traced_instructions ? static_cast<double>(r.bus_bytes) / r.traced_instructions : 0.0,
      static_cast<unsigned long long>(r.interrupts),
      static_cast<unsigned long long>(r.dma_transfers),
      static_cast<unsigned long long>(r.device_reads));
}

}  // namespace

absl::Status RunCapture(const std::vector<std::string>& args) {
  // Positional arguments are the further source files of `--elf a.c b.c ...`.
  if (!args.empty() && absl::GetFlag(FLAGS_elf).empty()) {
    return UsageError("capture",
                      "--machine M [--workload W | --elf PROG | --rom IMAGE] -o CAPTURE.cat");
  }
  if (absl::GetFlag(FLAGS_list_machines)) {
    for (const systems::System& s : systems::All()) std::printf("%-8s %s\n", s.name, s.description);
    return absl::OkStatus();
  }
  const std::string name = absl::GetFlag(FLAGS_machine);
  absl::StatusOr<const systems::System*> system =
      name.empty() ? &systems::All().front() : systems::ByName(name);
  if (!system.ok()) return system.status();
  const systems::System& machine = **system;
  if (absl::GetFlag(FLAGS_list_workloads)) {
    const bool on_linux = absl::GetFlag(FLAGS_linux);
    if (on_linux && machine.linux_workloads.empty()) {
      return BadUsage(absl::StrCat("--linux runs on the i486, not on the ", machine.name));
    }
    std::printf("%s workloads%s:\n", machine.name, on_linux ? " under Linux" : "");
    for (const systems::Workload& w : on_linux ? machine.linux_workloads : machine.workloads) {
      std::printf("  %-10.*s %.*s\n", static_cast<int>(w.name.size()), w.name.data(),
                  static_cast<int>(w.description.size()), w.description.data());
    }
    std::printf("default mix: %s\n", on_linux ? machine.linux_default_mix : machine.default_mix);
    return absl::OkStatus();
  }
  std::string output;
  if (absl::Status s = RequireOutput("capture", output); !s.ok()) return s;
  if (absl::Status s = CheckOutputs({absl::GetFlag(FLAGS_elf), absl::GetFlag(FLAGS_kernel),
                                     absl::GetFlag(FLAGS_disk), absl::GetFlag(FLAGS_rom)},
                                    {output});
      !s.ok()) {
    return s;
  }

  systems::CaptureRequest request;
  if (absl::Status s = RomRequest(request); !s.ok()) return s;
  // A machine that can be traced from reset says what its reset state is; one that cannot, yet,
  // would boot its kernel and ignore the image.
  if (!request.rom.empty() && !machine.replay.reset_state) {
    return absl::UnimplementedError(
        absl::StrCat("the ", machine.name, " cannot be traced from reset yet (--rom)"));
  }
  request.workloads = absl::GetFlag(FLAGS_workload);
  if (!request.workloads.empty() &&
      absl::c_linear_search(absl::StrSplit(request.workloads, ','), "")) {
    return BadUsage(absl::StrCat("--workload '", request.workloads,
                                 "' has an empty name (names are separated by one comma)"));
  }
  if (absl::GetFlag(FLAGS_elf).empty() && !absl::GetFlag(FLAGS_cflags).empty()) {
    return BadUsage("--cflags is for the C files of --elf, and there is no --elf");
  }
  if (std::string elf = absl::GetFlag(FLAGS_elf); !elf.empty()) {
    request.program.push_back(elf);
    request.program.insert(request.program.end(), args.begin(), args.end());
  }
  request.cflags = absl::GetFlag(FLAGS_cflags);
  request.linux_guest = absl::GetFlag(FLAGS_linux);
  request.from_boot = absl::GetFlag(FLAGS_from_boot);
  request.initramfs = absl::GetFlag(FLAGS_initramfs);
  if (request.linux_guest && machine.cat_machine != cat::Machine::kI486) {
    return BadUsage(absl::StrCat("--linux runs on the i486, not on the ", machine.name));
  }
  if (!request.linux_guest && (request.from_boot || !request.initramfs.empty())) {
    return BadUsage("--from-boot and --initramfs go with --linux");
  }
  if (request.linux_guest && !request.program.empty()) {
    return BadUsage("--elf builds a program for our own guest kernel, not for --linux");
  }
  request.kernel = absl::GetFlag(FLAGS_kernel);
  request.disk = absl::GetFlag(FLAGS_disk);
  request.seed = absl::GetFlag(FLAGS_seed);
  request.memory_bytes = absl::GetFlag(FLAGS_memory_mb) << 20;
  request.max_traced = absl::GetFlag(FLAGS_instructions);
  Progress progress("capture", 0, "instr");
  request.progress = [&](uint64_t n) { progress.Update(n); };
  absl::StatusOr<systems::CaptureReport> run = machine.capture(request, output);
  progress.Finish();
  if (!run.ok()) return run.status();

  const systems::CaptureReport& r = *run;
  if (!r.stopped.empty()) {
    std::fprintf(stderr, "citcat capture: the processor %s: the trace ends there\n",
                 r.stopped.c_str());
  } else if (r.cut_short) {
    std::fprintf(stderr,
                 "citcat capture: the run was cut short at --instructions %llu: the guest had not "
                 "finished\n",
                 static_cast<unsigned long long>(request.max_traced));
  }
  if (!absl::GetFlag(FLAGS_quiet) && r.from_reset) {
    PrintFromResetSummary(output, r);
  } else if (!absl::GetFlag(FLAGS_quiet)) {
    std::printf("%s", r.console.c_str());
    std::printf(
        "\ncitcat capture: %s\n"
        "  instructions     %llu traced (%llu in all, boot included)%s\n"
        "  bus records      %llu, %llu data bytes (%.3f bytes per instruction)\n"
        "  interrupts       %llu\n"
        "  DMA transfers    %llu\n"
        "  device reads     %llu\n"
        "%s"
        "  perturbation     %.3f%% (%llu hook instructions: %s; the begin-of-trace driver's %llu "
        "more are not counted)\n",
        output.c_str(), static_cast<unsigned long long>(r.traced_instructions),
        static_cast<unsigned long long>(r.instructions),
        r.halted ? ", the guest halted" : ", cut short by --instructions: the guest had not halted",
        static_cast<unsigned long long>(r.bus_records),
        static_cast<unsigned long long>(r.bus_bytes),
        r.traced_instructions ? static_cast<double>(r.bus_bytes) / r.traced_instructions : 0.0,
        static_cast<unsigned long long>(r.interrupts),
        static_cast<unsigned long long>(r.dma_transfers),
        static_cast<unsigned long long>(r.device_reads),
        *r.register_name
            ? absl::StrFormat("  %-16s %llu\n", absl::StrCat(r.register_name, " reads"),
                              static_cast<unsigned long long>(r.register_reads))
                  .c_str()
            : "",
        100.0 * r.hook_instructions /
            std::max<uint64_t>(1, r.traced_instructions - r.driver_instructions),
        static_cast<unsigned long long>(r.hook_instructions), r.hooks.c_str(),
        static_cast<unsigned long long>(r.driver_instructions));
  }
  return absl::OkStatus();
}

}  // namespace citcat::cli
