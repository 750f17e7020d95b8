// A whole capture on the traced R4400 system: boot the guest kernel from its ELF with a disk
// image, run the workloads, and write the CAT. `citcat capture` and `citcat demo` use it.
#ifndef CITCAT_MACHINE_R4400_CAPTURE_H_
#define CITCAT_MACHINE_R4400_CAPTURE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "machine/r4400/machine.h"

namespace citcat::machine {

struct CaptureSettings {
  std::string kernel_path;    // the guest kernel's ELF
  std::vector<uint8_t> disk;  // the disk image with the programs
  std::string workloads;      // the boot string: comma-separated names, empty for the default mix
  uint64_t seed = 1;
  uint64_t memory_bytes = 32ull << 20;
  uint64_t max_traced = 20'000'000;       // instructions after the begin marker
  uint64_t boot_allowance = 200'000'000;  // instructions allowed before it
};

struct CaptureResult {
  RunSummary summary;
  std::string console;
};

// Writes the CAT to `output` (renamed into place only when complete). `progress` is called now
// and then with the instructions retired so far.
absl::StatusOr<CaptureResult> CaptureR4400(const CaptureSettings& settings,
                                           const std::string& output,
                                           const std::function<void(uint64_t)>& progress = {});

// A bare-metal program traced from reset (docs/machines/r4400-system.md, "Traces from reset").
struct ResetCaptureSettings {
  std::string image_name;      // the file the image came from, for messages and the producer
  std::vector<uint8_t> image;  // a raw ROM image, or a bare-metal ELF (told by its magic number)
  // Where a raw image goes: a physical address in the ROM window, or its kseg0 or kseg1 address;
  // default the reset vector. An ELF is loaded at its own addresses.
  std::optional<uint64_t> rom_address;
  uint64_t seed = 1;
  uint64_t memory_bytes = 32ull << 20;
  uint64_t max_instructions = 20'000'000;
};

absl::StatusOr<CaptureResult> CaptureR4400FromReset(
    const ResetCaptureSettings& settings, const std::string& output,
    const std::function<void(uint64_t)>& progress = {});

}  // namespace citcat::machine

#endif  // CITCAT_MACHINE_R4400_CAPTURE_H_
