// The figures of the CITCAT thesis (Fig. 4 and Fig. 5) for every R4400 workload, measured in one
// run: capture, extract, replay, check. For each workload: instructions traced, CAT size, bus
// bytes per instruction overall and after warm-up (the second half of the trace), IMS and AES
// sizes raw and zstd-compressed, the AES by part, the hooks' perturbation, and the speed of
// capture (boot included, CAT written) and of replay.
//   build/bench/r4400_figures [--seed=N]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "archive/stats.h"
#include "cat_parser/reader.h"
#include "guest/r4400/guest_paths.h"
#include "guest/r4400/tools/guest_info.h"
#include "io/file.h"
#include "machine/r4400/capture.h"
#include "replay/replay.h"
#include "systems/system.h"

namespace {

using namespace citcat;  // NOLINT

struct Run {
  machine::CaptureResult capture;
  uint64_t cat_bytes = 0;
  double seconds = 0;
};

Run Capture(const std::string& workloads, uint64_t seed, uint64_t max_traced,
            const std::string& path) {
  machine::CaptureSettings s;
  s.kernel_path = CITCAT_R4400_KERNEL_ELF;
  auto disk = io::ReadWholeFile(CITCAT_R4400_DISK_IMAGE, 1ull << 30);
  if (!disk.ok()) std::abort();
  s.disk.assign(disk->begin(), disk->end());
  s.workloads = workloads;
  s.seed = seed;
  s.max_traced = max_traced;
  auto start = std::chrono::steady_clock::now();
  auto c = machine::CaptureR4400(s, path);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!c.ok()) {
    std::fprintf(stderr, "%s\n", std::string(c.status().message()).c_str());
    std::exit(1);
  }
  return {*c, std::filesystem::file_size(path), seconds};
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--seed=", 0) == 0) seed = std::stoull(a.substr(7));
  }
  std::string dir = std::filesystem::temp_directory_path() / "citcat-figures";
  std::filesystem::create_directories(dir);
  std::vector<std::string> names;
  for (const guest::WorkloadInfo& w : guest::kWorkloads) names.emplace_back(w.name);
  names.emplace_back(guest::kDefaultMix);

  std::printf(
      "| workload | instructions | CAT MB | bus B/instr | after warm-up | IMS raw / zstd | "
      "AES raw / zstd | Count+Cause | DMA | interrupts | device I/O | perturbation | "
      "capture M instr/s | replay M instr/s |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& name : names) {
    std::string path = dir + "/capture.cat";
    Run full = Capture(name, seed, ~uint64_t{0} >> 1, path);
    const machine::RunSummary& r = full.capture.summary;
    Run half = Capture(name, seed, r.traced_instructions / 2, dir + "/half.cat");
    double warm = static_cast<double>(r.bus_bytes - half.capture.summary.bus_bytes) /
                  (r.traced_instructions - half.capture.summary.traced_instructions);

    auto reader = cat::CatReader::Open(path);
    auto x = systems::Extract(**reader);
    if (!x.ok()) {
      std::fprintf(stderr, "%s\n", std::string(x.status().message()).c_str());
      return 1;
    }
    // Fig. 5: Count/Cause echoes, DMA, interrupts, device I/O, the AES, the IMS.
    auto stats = archive::ComputeStats(x->ims, x->aes);
    if (!stats.ok()) {
      std::fprintf(stderr, "%s\n", std::string(stats.status().message()).c_str());
      return 1;
    }
    const std::vector<archive::PartSize>& sizes = stats->sizes;
    auto replayed = systems::Replay(x->ims, x->aes, {});
    if (!replayed.ok()) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(),
                   std::string(replayed.status().message()).c_str());
      return 1;
    }
    uint64_t hooks = guest::HookInstructions(r.interrupt_reports, r.cause_echoes, r.count_echoes);
    std::printf("| %s | %.2f M | %.1f | %.2f | %.2f |", name.c_str(), r.traced_instructions / 1e6,
                full.cat_bytes / 1e6, static_cast<double>(r.bus_bytes) / r.traced_instructions,
                warm);
    for (int part : {5, 4, 0, 1, 2, 3}) {
      std::printf(" %llu / %llu |", static_cast<unsigned long long>(sizes[part].raw),
                  static_cast<unsigned long long>(sizes[part].zstd));
    }
    std::printf(" %.3f%% | %.1f | %.1f |\n",
                100.0 * hooks / (r.traced_instructions - r.driver_instructions),
                r.instructions / full.seconds / 1e6,
                replayed->instructions / replayed->seconds / 1e6);
    std::fflush(stdout);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
