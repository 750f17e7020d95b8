#include "machine/r4400/capture.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cat_parser/writer.h"
#include "machine/elf_loader.h"

namespace citcat::machine {

absl::StatusOr<CaptureResult> CaptureR4400(const CaptureSettings& settings,
                                           const std::string& output,
                                           const std::function<void(uint64_t)>& progress) {
  absl::StatusOr<ElfImage> kernel = LoadElfFile(settings.kernel_path);
  if (!kernel.ok()) return kernel.status();

  R4400Options options;
  options.memory_bytes = settings.memory_bytes;
  options.seed = settings.seed;
  options.disk = settings.disk;
  options.boot_args = settings.workloads;
  options.producer = absl::StrCat("citcat capture --machine r4400 --workload ",
                                  settings.workloads.empty() ? "default" : settings.workloads,
                                  " --seed ", settings.seed);
  absl::StatusOr<std::unique_ptr<R4400Machine>> machine = R4400Machine::Create(options);
  if (!machine.ok()) return machine.status();
  if (absl::Status s = (*machine)->LoadKernel(*kernel); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(settings.kernel_path, ": ", s.message()));
  }

  absl::StatusOr<std::unique_ptr<cat::CatWriter>> writer =
      cat::CatWriter::Create(output, (*machine)->Header());
  if (!writer.ok()) return writer.status();
  absl::StatusOr<RunSummary> run = (*machine)->Run(
      writer->get(), settings.max_traced, settings.max_traced + settings.boot_allowance, progress);
  if (!run.ok()) return run.status();
  if (!run->began) {
    // One line: the console's last line says where the guest stopped.
    std::vector<absl::string_view> lines =
        absl::StrSplit((*machine)->console(), absl::ByAnyChar("\r\n"), absl::SkipWhitespace());
    return absl::FailedPreconditionError(
        absl::StrCat(settings.kernel_path, ": the guest never began the trace (", run->instructions,
                     " instructions run); the last line on its console: ",
                     lines.empty() ? "(nothing)" : absl::StrCat("'", lines.back(), "'")));
  }
  if (absl::Status s = (*writer)->Finish(); !s.ok()) return s;
  return CaptureResult{*run, (*machine)->console()};
}

}  // namespace citcat::machine
