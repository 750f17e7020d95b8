#include <cstdio>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cat_parser/writer.h"
#include "citcat/command.h"
#include "citcat/progress.h"
#include "io/file.h"
#include "machine/elf_loader.h"
#include "machine/r4400/machine.h"

ABSL_FLAG(std::string, machine, "r4400", "the traced machine: r4400 (i486 is not available yet)");
ABSL_FLAG(std::string, workload, "", "workloads to run, comma-separated (default: the default mix)");
ABSL_FLAG(uint64_t, seed, 1, "seed of the outside world (interrupt, DMA and clock timing)");
ABSL_FLAG(uint64_t, instructions, 20'000'000,
          "stop after this many instructions from the begin of the trace (if the guest runs on)");
ABSL_FLAG(uint64_t, memory_mb, 32, "main memory in MiB");
ABSL_FLAG(std::string, kernel, CITCAT_R4400_KERNEL, "the guest kernel (an ELF file)");
ABSL_FLAG(std::string, disk, CITCAT_R4400_DISK, "the disk image holding the workloads");

namespace citcat::cli {
namespace {

// Instructions the kernel may run before it begins the trace (boot, loading the programs).
constexpr uint64_t kBootAllowance = 200'000'000;

// kseg0 and kseg1 addresses map to physical memory by dropping the segment bits.
uint64_t Physical(uint64_t vaddr) { return vaddr & 0x1FFFFFFF; }

absl::StatusOr<std::vector<machine::LoadSegment>> KernelSegments(const machine::ElfImage& elf,
                                                                  const std::string& path) {
  std::vector<machine::LoadSegment> segments;
  for (const machine::ElfSegment& s : elf.segments) {
    uint64_t kseg = s.vaddr & 0xFFFFFFFFE0000000ull;
    if (kseg != 0xFFFFFFFF80000000ull && kseg != 0x80000000ull) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": segment at 0x", absl::Hex(s.vaddr), " is not in kseg0, where kernels run"));
    }
    segments.push_back({Physical(s.vaddr), s.memsz, s.data});
  }
  return segments;
}

}  // namespace

absl::Status RunCapture(const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError("capture", "--machine r4400 [--workload W] -o CAPTURE.cat");
  std::string output;
  if (absl::Status s = RequireOutput("capture", output); !s.ok()) return s;
  if (absl::GetFlag(FLAGS_machine) != "r4400") {
    return absl::UnimplementedError(
        absl::StrCat("machine '", absl::GetFlag(FLAGS_machine), "' is not available yet"));
  }

  std::string kernel_path = absl::GetFlag(FLAGS_kernel);
  absl::StatusOr<machine::ElfImage> kernel = machine::LoadElfFile(kernel_path);
  if (!kernel.ok()) return kernel.status();
  absl::StatusOr<std::vector<machine::LoadSegment>> segments =
      KernelSegments(*kernel, kernel_path);
  if (!segments.ok()) return segments.status();
  absl::StatusOr<std::string> disk = io::ReadWholeFile(absl::GetFlag(FLAGS_disk), 1ull << 30);
  if (!disk.ok()) return disk.status();

  machine::R4400Options options;
  options.memory_bytes = absl::GetFlag(FLAGS_memory_mb) << 20;
  options.seed = absl::GetFlag(FLAGS_seed);
  options.disk.assign(disk->begin(), disk->end());
  options.boot_args = absl::GetFlag(FLAGS_workload);
  options.producer = absl::StrCat("citcat capture --machine r4400 --workload ",
                                  options.boot_args.empty() ? "default" : options.boot_args,
                                  " --seed ", options.seed);
  absl::StatusOr<std::unique_ptr<machine::R4400Machine>> m = machine::R4400Machine::Create(options);
  if (!m.ok()) return m.status();
  if (absl::Status s = (*m)->Load(*segments, kernel->entry); !s.ok()) return s;

  absl::StatusOr<std::unique_ptr<cat::CatWriter>> writer =
      cat::CatWriter::Create(output, (*m)->Header());
  if (!writer.ok()) return writer.status();
  uint64_t budget = absl::GetFlag(FLAGS_instructions);
  Progress progress("capture", 0, "instr");
  absl::StatusOr<machine::RunSummary> run = (*m)->Run(
      writer->get(), budget, budget + kBootAllowance, [&](uint64_t n) { progress.Update(n); });
  progress.Finish();
  if (!run.ok()) return run.status();
  if (!run->began) {
    return absl::FailedPreconditionError(
        absl::StrCat(kernel_path, ": the guest never began the trace (",
                     run->instructions, " instructions run); console: ", (*m)->console()));
  }
  if (absl::Status s = (*writer)->Finish(); !s.ok()) return s;

  if (!absl::GetFlag(FLAGS_quiet)) {
    const machine::RunSummary& r = *run;
    std::printf("%s", (*m)->console().c_str());
    std::printf(
        "\ncitcat capture: %s\n"
        "  instructions     %llu traced (%llu in all, boot included)%s\n"
        "  bus records      %llu, %llu data bytes (%.3f bytes per instruction)\n"
        "  interrupts       %llu\n"
        "  DMA transfers    %llu\n"
        "  device reads     %llu\n"
        "  Count reads      %llu\n",
        output.c_str(), static_cast<unsigned long long>(r.traced_instructions),
        static_cast<unsigned long long>(r.instructions), r.halted ? ", the guest halted" : "",
        static_cast<unsigned long long>(r.bus_records),
        static_cast<unsigned long long>(r.bus_bytes),
        r.traced_instructions ? static_cast<double>(r.bus_bytes) / r.traced_instructions : 0.0,
        static_cast<unsigned long long>(r.interrupts),
        static_cast<unsigned long long>(r.dma_transfers),
        static_cast<unsigned long long>(r.device_reads),
        static_cast<unsigned long long>(r.count_reads));
  }
  return absl::OkStatus();
}

}  // namespace citcat::cli
