// citcat capture: runs a workload on a traced machine from the registry (systems/) and records
// its CAT.
#include <algorithm>
#include <cstdio>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
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
ABSL_FLAG(
    std::string, disk, "",
    "the disk image holding the workloads (default: the one this build made for the machine)");

namespace citcat::cli {

absl::Status RunCapture(const std::vector<std::string>& args) {
  // Positional arguments are the further source files of `--elf a.c b.c ...`.
  if (!args.empty() && absl::GetFlag(FLAGS_elf).empty()) {
    return UsageError("capture", "--machine M [--workload W | --elf PROG] -o CAPTURE.cat");
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
    std::printf("%s workloads:\n", machine.name);
    for (const systems::Workload& w : machine.workloads) {
      std::printf("  %-10.*s %.*s\n", static_cast<int>(w.name.size()), w.name.data(),
                  static_cast<int>(w.description.size()), w.description.data());
    }
    std::printf("default mix: %s\n", machine.default_mix);
    return absl::OkStatus();
  }
  std::string output;
  if (absl::Status s = RequireOutput("capture", output); !s.ok()) return s;
  if (absl::Status s = CheckOutputs(
          {absl::GetFlag(FLAGS_elf), absl::GetFlag(FLAGS_kernel), absl::GetFlag(FLAGS_disk)},
          {output});
      !s.ok()) {
    return s;
  }

  systems::CaptureRequest request;
  request.workloads = absl::GetFlag(FLAGS_workload);
  if (std::string elf = absl::GetFlag(FLAGS_elf); !elf.empty()) {
    request.program.push_back(elf);
    request.program.insert(request.program.end(), args.begin(), args.end());
  }
  request.cflags = absl::GetFlag(FLAGS_cflags);
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
  if (r.cut_short) {
    std::fprintf(stderr,
                 "citcat capture: the run was cut short at --instructions %llu: the guest had not "
                 "finished\n",
                 static_cast<unsigned long long>(request.max_traced));
  }
  if (!absl::GetFlag(FLAGS_quiet)) {
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
