#include "machine/r4400/capture.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "citcat/command.h"
#include "citcat/progress.h"
#include "guest/r4400/guest_paths.h"
#include "guest/r4400/tools/disk_image.h"
#include "guest/r4400/tools/guest_info.h"
#include "io/file.h"
#include "machine/elf_loader.h"

ABSL_FLAG(std::string, machine, "r4400", "the traced machine: r4400 (i486 is not available yet)");
ABSL_FLAG(std::string, workload, "",
          "workloads to run, comma-separated (default: the default mix)");
ABSL_FLAG(uint64_t, seed, 1, "seed of the outside world (interrupt, DMA and clock timing)");
ABSL_FLAG(uint64_t, instructions, 20'000'000,
          "stop after this many instructions from the begin of the trace (if the guest runs on)");
ABSL_FLAG(uint64_t, memory_mb, 32, "main memory in MiB");
ABSL_FLAG(std::string, elf, "",
          "a program to run instead of the workloads: an ELF built with the guest SDK "
          "(guest/r4400/sdk), or a C file, which is built with it first");
ABSL_FLAG(bool, list_workloads, false, "list the workloads and exit");
ABSL_FLAG(std::string, disk, CITCAT_R4400_DISK_IMAGE, "the disk image holding the workloads");

namespace citcat::cli {
namespace {

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

// Builds a C file against the guest SDK (guest/r4400/sdk/README.md) into `elf`.
absl::Status BuildWithSdk(const std::string& source, const std::string& elf) {
  if (!std::filesystem::exists(source)) {
    return absl::NotFoundError(absl::StrCat(source, ": cannot open: No such file or directory"));
  }
  if (std::string_view(CITCAT_R4400_GCC).empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        source, ": this citcat was built without the MIPS cross compiler; give a built ELF"));
  }
  std::string command = absl::StrCat(CITCAT_R4400_GCC, " ", CITCAT_R4400_SDK_BUILD, " ",
                                     ShellQuote(source), " -o ", ShellQuote(elf));
  if (std::system(command.c_str()) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": does not build against the guest SDK (compiler messages above)"));
  }
  return absl::OkStatus();
}

// The disk image with the user's program added as the workload `elf`.
absl::StatusOr<std::string> DiskWithElf(const std::string& disk, const std::string& elf_path) {
  absl::StatusOr<std::string> elf = io::ReadWholeFile(elf_path, guest::kDiskMaxProgramBytes);
  if (!elf.ok()) return elf.status();
  absl::StatusOr<machine::ElfImage> program =
      machine::ParseElf({reinterpret_cast<const uint8_t*>(elf->data()), elf->size()});
  absl::Status s = program.ok() ? machine::CheckR4400Elf(*program) : program.status();
  if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat(elf_path, ": ", s.message()));
  absl::StatusOr<std::vector<guest::DiskFile>> files =
      guest::ReadDiskImage({reinterpret_cast<const uint8_t*>(disk.data()), disk.size()});
  if (!files.ok()) return files.status();
  guest::AddOrReplace(*files, {"elf", std::vector<uint8_t>(elf->begin(), elf->end())});
  absl::StatusOr<std::vector<uint8_t>> image = guest::BuildDiskImage(*files);
  if (!image.ok()) return image.status();
  return std::string(image->begin(), image->end());
}

}  // namespace

// A private scratch directory, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "citcat-XXXXXX").string();
    path_ = mkdtemp(pattern.data()) ? pattern : std::string();
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

absl::Status RunCapture(const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError("capture", "--machine r4400 [--workload W] -o CAPTURE.cat");
  if (absl::GetFlag(FLAGS_list_workloads)) {
    std::printf("r4400 workloads:\n");
    for (const guest::WorkloadInfo& w : guest::kWorkloads) {
      std::printf("  %-10.*s %.*s\n", static_cast<int>(w.name.size()), w.name.data(),
                  static_cast<int>(w.description.size()), w.description.data());
    }
    std::printf("default mix: %s\n", CITCAT_R4400_DEFAULT_MIX);
    return absl::OkStatus();
  }
  std::string output;
  if (absl::Status s = RequireOutput("capture", output); !s.ok()) return s;
  if (absl::GetFlag(FLAGS_machine) != "r4400") {
    return absl::UnimplementedError(
        absl::StrCat("machine '", absl::GetFlag(FLAGS_machine), "' is not available yet"));
  }

  machine::CaptureSettings settings;
  settings.kernel_path = absl::GetFlag(FLAGS_kernel);
  absl::StatusOr<std::string> disk = io::ReadWholeFile(absl::GetFlag(FLAGS_disk), 1ull << 30);
  if (!disk.ok()) return disk.status();
  settings.workloads = absl::GetFlag(FLAGS_workload);
  if (std::string elf = absl::GetFlag(FLAGS_elf); !elf.empty()) {
    if (!settings.workloads.empty()) {
      return absl::InvalidArgumentError("give --elf or --workload, not both");
    }
    TempDir scratch;
    if (absl::EndsWith(elf, ".c")) {
      std::string built = scratch.path() + "/program.elf";
      if (absl::Status s = BuildWithSdk(elf, built); !s.ok()) return s;
      elf = built;
    }
    disk = DiskWithElf(*disk, elf);
    if (!disk.ok()) return disk.status();
    settings.workloads = "elf";
  }
  settings.disk.assign(disk->begin(), disk->end());
  settings.seed = absl::GetFlag(FLAGS_seed);
  settings.memory_bytes = absl::GetFlag(FLAGS_memory_mb) << 20;
  settings.max_traced = absl::GetFlag(FLAGS_instructions);

  Progress progress("capture", 0, "instr");
  absl::StatusOr<machine::CaptureResult> run =
      machine::CaptureR4400(settings, output, [&](uint64_t n) { progress.Update(n); });
  progress.Finish();
  if (!run.ok()) return run.status();

  if (!absl::GetFlag(FLAGS_quiet)) {
    const machine::RunSummary& r = run->summary;
    uint64_t hooks = guest::HookInstructions(r.interrupt_reports, r.cause_echoes, r.count_echoes);
    std::printf("%s", run->console.c_str());
    std::printf(
        "\ncitcat capture: %s\n"
        "  instructions     %llu traced (%llu in all, boot included)%s\n"
        "  bus records      %llu, %llu data bytes (%.3f bytes per instruction)\n"
        "  interrupts       %llu\n"
        "  DMA transfers    %llu\n"
        "  device reads     %llu\n"
        "  Count reads      %llu\n"
        "  perturbation     %.3f%% (%llu hook instructions: %llu interrupt reports, %llu Cause "
        "and %llu Count echoes; the begin-of-trace driver's %llu more are not counted)\n",
        output.c_str(), static_cast<unsigned long long>(r.traced_instructions),
        static_cast<unsigned long long>(r.instructions), r.halted ? ", the guest halted" : "",
        static_cast<unsigned long long>(r.bus_records),
        static_cast<unsigned long long>(r.bus_bytes),
        r.traced_instructions ? static_cast<double>(r.bus_bytes) / r.traced_instructions : 0.0,
        static_cast<unsigned long long>(r.interrupts),
        static_cast<unsigned long long>(r.dma_transfers),
        static_cast<unsigned long long>(r.device_reads),
        static_cast<unsigned long long>(r.count_reads),
        100.0 * hooks / std::max<uint64_t>(1, r.traced_instructions - r.driver_instructions),
        static_cast<unsigned long long>(hooks),
        static_cast<unsigned long long>(r.interrupt_reports),
        static_cast<unsigned long long>(r.cause_echoes),
        static_cast<unsigned long long>(r.count_echoes),
        static_cast<unsigned long long>(r.driver_instructions));
  }
  return absl::OkStatus();
}

}  // namespace citcat::cli
