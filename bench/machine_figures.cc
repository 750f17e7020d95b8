// The figures of the CITCAT thesis (Fig. 4 and Fig. 5) for every workload of one traced machine,
// measured in one run: capture, extract, replay, check. For each workload: instructions traced,
// CAT size, bus bytes per instruction overall and after warm-up (the second half of the traced
// instructions, counted in a replay),
// IMS and AES sizes raw and zstd-compressed, the AES by part (the echoed register reads only on
// a machine whose outside world sets registers: the R4400's Count and Cause), the hooks'
// perturbation, and the speed of capture (boot included, CAT written) and of replay.
// With --linux (the i486): Linux's workloads under Linux (each a capture of its own, from the
// start of its init's workloads), its default mix, and the boot with one workload (--from-boot).
//   build/bench/machine_figures [--machine=r4400|i486] [--linux] [--seed=N]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "archive/archive.h"
#include "archive/stats.h"
#include "cat_parser/reader.h"
#include "systems/system.h"

namespace {

using namespace citcat;  // NOLINT

[[noreturn]] void Fail(const std::string& what, const absl::Status& s) {
  std::fprintf(stderr, "%s: %s\n", what.c_str(), std::string(s.message()).c_str());
  std::exit(1);
}

struct Run {
  systems::CaptureReport report;
  uint64_t cat_bytes = 0;
  double seconds = 0;
};

// The whole run, until the guest powers the machine off.
struct Row {
  std::string name, workloads;
  bool linux_guest = false, from_boot = false;
};

Run Capture(const systems::System& system, const Row& row, uint64_t seed,
            const std::string& path) {
  systems::CaptureRequest request;
  request.workloads = row.workloads;
  request.linux_guest = row.linux_guest;
  request.from_boot = row.from_boot;
  request.seed = seed;
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<systems::CaptureReport> c = system.capture(request, path);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!c.ok()) Fail(row.name, c.status());
  return {*c, std::filesystem::file_size(path), seconds};
}

// Bus bytes per instruction over the second half of the traced instructions: the bytes a capture
// cut at half the instructions would not have, counted in a replay of the extraction instead of
// a second capture. Replay starts where the state dump ends, after the begin of the trace and its
// driver: replayed instruction n is traced instruction n + driver_instructions + 1.
double AfterWarmUp(const extract::Extraction& x, const systems::CaptureReport& r) {
  const uint64_t half = r.traced_instructions / 2;
  const uint64_t skipped = r.driver_instructions + 1;
  const uint64_t from = half > skipped ? half - skipped : 0;
  uint64_t bytes = 0;
  replay::ReplayOptions options;
  options.on_record_retired = [&](const cat::BusRecord& record, uint64_t instructions) {
    if (instructions >= from) bytes += record.data.size();
  };
  auto replayed = systems::Replay(x.ims, x.aes, options);
  if (!replayed.ok()) Fail("warm-up replay", replayed.status());
  return static_cast<double>(bytes) / (r.traced_instructions - half);
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t seed = 1;
  std::string machine = "r4400";
  bool linux_guest = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--seed=", 0) == 0) {
      seed = std::stoull(a.substr(7));
    } else if (a.rfind("--machine=", 0) == 0) {
      machine = a.substr(10);
    } else if (a == "--linux") {
      linux_guest = true;
      machine = "i486";
    } else {
      std::fprintf(stderr, "usage: machine_figures [--machine=%s] [--linux] [--seed=N]\n",
                   systems::Names().c_str());
      return 2;
    }
  }
  absl::StatusOr<const systems::System*> found = systems::ByName(machine);
  if (!found.ok()) Fail("--machine", found.status());
  const systems::System& system = **found;
  std::string dir = std::filesystem::temp_directory_path() / "citcat-figures";
  std::filesystem::create_directories(dir);
  std::vector<Row> rows;
  for (const systems::Workload& w : linux_guest ? system.linux_workloads : system.workloads) {
    rows.push_back({std::string(w.name), std::string(w.name), linux_guest});
  }
  const std::string mix = linux_guest ? system.linux_default_mix : system.default_mix;
  rows.push_back({mix, mix, linux_guest});
  if (linux_guest) rows.push_back({"boot, then ostest (--from-boot)", "ostest", true, true});

  bool header_printed = false;
  for (const Row& row : rows) {
    const std::string& name = row.name;
    std::string path = dir + "/capture.cat";
    Run full = Capture(system, row, seed, path);
    const systems::CaptureReport& r = full.report;
    auto reader = cat::CatReader::Open(path);
    if (!reader.ok()) Fail(name, reader.status());
    auto x = systems::Extract(**reader);
    if (!x.ok()) Fail(name, x.status());
    // Fig. 5: register echoes, DMA, interrupts, device I/O, the AES, the IMS, as an archive
    // stores them (the interrupts in columns, keyed by what replay needs).
    auto packed = archive::Pack(x->ims, x->aes);
    if (!packed.ok()) Fail(name, packed.status());
    ims::InitialMachineState stored_ims;
    aes::EventSchedule stored_aes;
    if (absl::Status s = archive::Unpack(*packed, stored_ims, stored_aes); !s.ok()) Fail(name, s);
    auto stats = archive::ComputeStats(x->ims, stored_aes);
    if (!stats.ok()) Fail(name, stats.status());
    const std::vector<archive::PartSize>& sizes = stats->sizes;
    auto replayed = systems::Replay(x->ims, x->aes, {});
    if (!replayed.ok()) Fail(name, replayed.status());
    const double warm = AfterWarmUp(*x, r);

    // The echo column only where the outside world sets registers the guest reads (the R4400's
    // Count, and Cause with each interrupt); the i486's timer and interrupts have none.
    const bool echoes = r.register_name[0] != '\0';
    if (!header_printed) {
      std::string echo_names;
      for (const auto& [reg, n] : stats->register_reads) {
        absl::StrAppend(&echo_names, echo_names.empty() ? "" : "+", reg);
      }
      if (echo_names.empty()) echo_names = absl::StrCat(r.register_name, " echoes");
      std::printf(
          "| workload | instructions | CAT MB | bus B/instr | after warm-up | IMS raw / zstd | "
          "AES raw / zstd |%s DMA | interrupts | device I/O | perturbation | "
          "capture M instr/s | replay M instr/s |\n"
          "|---|---|---|---|---|---|---|%s---|---|---|---|---|---|\n",
          echoes ? absl::StrCat(" ", echo_names, " |").c_str() : "", echoes ? "---|" : "");
      header_printed = true;
    }
    std::printf("| %s | %.2f M | %.1f | %.2f | %.2f |", name.c_str(), r.traced_instructions / 1e6,
                full.cat_bytes / 1e6, static_cast<double>(r.bus_bytes) / r.traced_instructions,
                warm);
    // archive::Stats::sizes: register echoes, DMA, interrupts, device I/O, AES, IMS.
    std::vector<int> parts = {5, 4, 0, 1, 2, 3};
    if (!echoes) parts = {5, 4, 1, 2, 3};
    for (int part : parts) {
      std::printf(" %llu / %llu |", static_cast<unsigned long long>(sizes[part].raw),
                  static_cast<unsigned long long>(sizes[part].zstd));
    }
    std::printf(" %.3f%% | %.1f | %.1f |\n",
                100.0 * r.hook_instructions / (r.traced_instructions - r.driver_instructions),
                r.instructions / full.seconds / 1e6,
                replayed->instructions / replayed->seconds / 1e6);
    std::fflush(stdout);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
