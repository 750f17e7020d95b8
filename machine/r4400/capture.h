// A whole capture on the traced R4400 system: boot the guest kernel from its ELF with a disk
// image, run the workloads, and write the CAT. `citcat capture` and `citcat demo` use it.
#ifndef CITCAT_MACHINE_R4400_CAPTURE_H_
#define CITCAT_MACHINE_R4400_CAPTURE_H_

#include <cstdint>
#include <functional>
#include <string>

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

}  // namespace citcat::machine

#endif  // CITCAT_MACHINE_R4400_CAPTURE_H_
