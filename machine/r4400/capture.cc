#include "machine/r4400/capture.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cat_parser/writer.h"
#include "machine/elf_loader.h"
#include "machine/r4400/system.h"

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

namespace {

// A --rom-address as the ROM window's physical address: physical already, or kseg0 / kseg1 (32-bit
// or sign-extended).
uint64_t RomPhysical(uint64_t a) {
  const uint64_t wide = a <= 0xFFFFFFFF ? static_cast<uint64_t>(static_cast<int32_t>(a)) : a;
  if ((wide & 0xFFFFFFFFC0000000ull) == 0xFFFFFFFF80000000ull) return wide & 0x1FFFFFFF;
  return a;
}

}  // namespace

absl::StatusOr<CaptureResult> CaptureR4400FromReset(const ResetCaptureSettings& settings,
                                                    const std::string& output,
                                                    const std::function<void(uint64_t)>& progress) {
  const std::string& name = settings.image_name;
  const bool elf = IsElf(settings.image);
  if (elf && settings.rom_address) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": an ELF is loaded at its own addresses: --rom-address is for raw images"));
  }
  R4400Options options;
  options.memory_bytes = settings.memory_bytes;
  options.seed = settings.seed;
  options.from_reset = true;
  options.producer = absl::StrCat("citcat capture --machine r4400 --rom ", name);
  if (settings.rom_address) {
    absl::StrAppend(&options.producer, " --rom-address 0x", absl::Hex(*settings.rom_address));
  }
  absl::StrAppend(&options.producer, " --seed ", settings.seed);
  absl::StatusOr<std::unique_ptr<R4400Machine>> machine = R4400Machine::Create(options);
  if (!machine.ok()) return machine.status();
  absl::Status loaded;
  if (elf) {
    absl::StatusOr<ElfImage> image = ParseElf(settings.image);
    loaded = image.ok() ? (*machine)->LoadBareMetal(*image) : image.status();
  } else {
    loaded =
        (*machine)->LoadRom(RomPhysical(settings.rom_address.value_or(kRomBase)), settings.image);
  }
  if (!loaded.ok()) return absl::InvalidArgumentError(absl::StrCat(name, ": ", loaded.message()));

  absl::StatusOr<std::unique_ptr<cat::CatWriter>> writer =
      cat::CatWriter::Create(output, (*machine)->Header());
  if (!writer.ok()) return writer.status();
  absl::StatusOr<RunSummary> run = (*machine)->Run(writer->get(), settings.max_instructions,
                                                   settings.max_instructions, progress);
  if (absl::IsFailedPrecondition(run.status())) {  // the program did what the trace cannot show
    return absl::FailedPreconditionError(absl::StrCat(name, ": ", run.status().message()));
  }
  if (!run.ok()) return run.status();
  if (absl::Status s = (*writer)->Finish(); !s.ok()) return s;
  return CaptureResult{*run, (*machine)->console()};
}

}  // namespace citcat::machine
