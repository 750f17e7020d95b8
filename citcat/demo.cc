// The main job on its built-in default: on every traced machine of the registry (with --linux:
// Linux on the i486), capture the default workload mix, extract the IMS and AES from the CAT alone,
// replay them, and check that the regenerated bus traffic is the captured CAT, record for record.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "archive/stats.h"
#include "cat_parser/reader.h"
#include "citcat/command.h"
#include "io/cleanup.h"
#include "io/file.h"
#include "replay/verify.h"
#include "systems/system.h"

namespace citcat::cli {
namespace {

constexpr uint64_t kSeed = 1;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

namespace {

absl::Status DemoOne(const systems::System& machine, bool linux_guest) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / absl::StrCat("citcat-demo-", getpid());
  std::filesystem::create_directories(dir);
  std::string cat_path = (dir / "capture.cat").string();
  // Removed on return, and on a signal (the capture first, then the directory).
  struct Cleanup {
    std::filesystem::path dir;
    io::SignalCleanup on_signal_dir, on_signal_cat;
    ~Cleanup() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  } cleanup{dir, io::SignalCleanup(dir.string(), /*directory=*/true), io::SignalCleanup(cat_path)};

  systems::CaptureRequest request;
  request.seed = kSeed;
  request.linux_guest = linux_guest;
  std::printf(
      "citcat demo: capturing %sthe default workload mix (%s) on the traced %s, seed %llu\n\n",
      linux_guest ? "Linux and " : "",
      linux_guest ? machine.linux_default_mix : machine.default_mix, machine.title,
      static_cast<unsigned long long>(kSeed));
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<systems::CaptureReport> capture = machine.capture(request, cat_path);
  if (!capture.ok()) return capture.status();
  double capture_seconds = Seconds(start);
  std::printf("%s\n", capture->console.c_str());

  start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<cat::CatReader>> reader = cat::CatReader::Open(cat_path);
  if (!reader.ok()) return reader.status();
  absl::StatusOr<extract::Extraction> x = systems::Extract(**reader);
  if (!x.ok()) return x.status();
  double extract_seconds = Seconds(start);
  std::string ims = x->ims.SerializeAsString(), aes = x->aes.SerializeAsString();

  replay::ReplaySummary replayed;
  absl::StatusOr<replay::VerifyResult> verified =
      systems::ReplayAgainst(cat_path, x->ims, x->aes, {}, &replayed);
  if (!verified.ok()) return verified.status();
  if (!verified->identical) {
    return absl::DataLossError(absl::StrCat("replay diverged: ", verified->report));
  }

  const systems::CaptureReport& r = *capture;
  uint64_t cat_bytes = std::filesystem::file_size(cat_path);
  std::printf(
      "Summary\n"
      "  capture          %llu instructions traced in %.2f s (%.0f M/s), the guest %s\n"
      "  CAT              %llu records, %.1f MB (%.2f bus bytes per instruction)\n"
      "  events           %llu interrupts, %llu DMA transfers, %llu device reads%s\n"
      "  extract          %.2f s\n"
      "  IMS              %zu bytes, %zu with zstd (%d memory extents)\n"
      "  AES              %zu bytes, %zu with zstd (%d interrupts, %d DMA, %d device, %d echoes)\n"
      "  IMS+AES vs CAT   %.0f:1 with zstd; %.0f:1 against a 10-byte-per-instruction trace\n"
      "  replay           %llu instructions in %.2f s (%.0f M/s), %llu records regenerated\n"
      "  verify           the regenerated CAT is identical to the captured one\n",
      static_cast<unsigned long long>(r.traced_instructions), capture_seconds,
      r.instructions / capture_seconds / 1e6, r.halted ? "halted" : "ran on",
      static_cast<unsigned long long>(r.bus_records), cat_bytes / 1e6,
      static_cast<double>(r.bus_bytes) / r.traced_instructions,
      static_cast<unsigned long long>(r.interrupts),
      static_cast<unsigned long long>(r.dma_transfers),
      static_cast<unsigned long long>(r.device_reads),
      *r.register_name
          ? absl::StrCat(", ", r.register_reads, " ", r.register_name, " reads").c_str()
          : "",
      extract_seconds, ims.size(), archive::ZstdSize(ims), x->ims.memory_size(), aes.size(),
      archive::ZstdSize(aes), x->aes.interrupts_size(), x->aes.dma_size(), x->aes.device_io_size(),
      x->aes.register_reads_size(),
      static_cast<double>(cat_bytes) / (archive::ZstdSize(ims) + archive::ZstdSize(aes)),
      10.0 * r.traced_instructions / (archive::ZstdSize(ims) + archive::ZstdSize(aes)),
      static_cast<unsigned long long>(replayed.instructions), replayed.seconds,
      replayed.instructions / replayed.seconds / 1e6,
      static_cast<unsigned long long>(replayed.records));
  return absl::OkStatus();
}

}  // namespace

absl::Status RunDemo(const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError("demo", "[--linux]");
  if (!absl::GetFlag(FLAGS_kernel).empty()) {
    return BadUsage("demo boots the kernels this build made: --kernel is for capture and replay");
  }
  const bool linux_guest = absl::GetFlag(FLAGS_linux);
  for (const systems::System& machine : systems::All()) {
    if (linux_guest && machine.linux_workloads.empty()) continue;
    if (&machine != &systems::All().front()) std::printf("\n");
    if (absl::Status s = DemoOne(machine, linux_guest); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat(machine.title, ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace citcat::cli
