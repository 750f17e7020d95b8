// Compression figures of the packed archive (docs/archive-format.md) for every workload of one
// traced machine and its default mix: the archive's bytes against
//   (a) a raw trace of 10 bytes per instruction (the thesis's yardstick: PC, word, a flag byte),
//   (b) the CAT itself, zstd-compressed (level 19, as the archive's sections),
//   (c) a ChampSim trace (traces/, 64-byte input_instr records) compressed with xz, with
//       --champsim only: writing and xz-compressing 64 bytes per instruction takes minutes.
// Output is a Markdown table.
//   build/bench/archive_figures [--machine=r4400|i486] [--seed=N] [--champsim]
//                               [--workloads=a;b,c;...]

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "archive/archive.h"
#include "archive/stats.h"
#include "cat_parser/reader.h"
#include "io/file.h"
#include "replay/replay.h"
#include "systems/system.h"
#include "traces/writers.h"

namespace {

using namespace citcat;  // NOLINT

[[noreturn]] void Fail(const std::string& what, const absl::Status& s) {
  std::fprintf(stderr, "%s: %s\n", what.c_str(), std::string(s.message()).c_str());
  std::exit(1);
}

uint64_t ZstdFileSize(const std::string& path) {
  auto bytes = io::ReadWholeFile(path, uint64_t{16} << 30);
  if (!bytes.ok()) Fail(path, bytes.status());
  return archive::ZstdSize(*bytes);
}

// The hook for (c): the ChampSim writer of traces/ fed by a replay, xz by the file's suffix.
uint64_t ChampSimXzSize(const ims::InitialMachineState& ims, const aes::EventSchedule& aes,
                        const std::string& path) {
  auto sink = traces::OpenWriter(traces::Format::kChampSim, path);
  if (!sink.ok()) Fail(path, sink.status());
  replay::ReplayOptions options;
  options.sink = sink->get();
  auto r = systems::Replay(ims, aes, options);
  if (!r.ok()) Fail(path, r.status());
  if (absl::Status s = (*sink)->Finish(); !s.ok()) Fail(path, s);
  return std::filesystem::file_size(path);
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t seed = 1;
  bool champsim = false;
  std::string machine = "r4400";
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--seed=", 0) == 0) {
      seed = std::stoull(a.substr(7));
    } else if (a == "--champsim") {
      champsim = true;
    } else if (a.rfind("--workloads=", 0) == 0) {
      names = absl::StrSplit(a.substr(12), ';');
    } else if (a.rfind("--machine=", 0) == 0) {
      machine = a.substr(10);
    } else {
      std::fprintf(stderr,
                   "usage: archive_figures [--machine=%s] [--seed=N] [--champsim] "
                   "[--workloads=a;b,c;...]\n",
                   systems::Names().c_str());
      return 2;
    }
  }
  absl::StatusOr<const systems::System*> found = systems::ByName(machine);
  if (!found.ok()) Fail("--machine", found.status());
  const systems::System& system = **found;
  if (names.empty()) {
    for (const systems::Workload& w : system.workloads) names.emplace_back(w.name);
    names.emplace_back(system.default_mix);
  }
  const std::string dir = std::filesystem::temp_directory_path() / "citcat-archive-figures";
  std::filesystem::create_directories(dir);

  std::printf(
      "| workload | instructions | archive bytes | (a) raw 10 B/instr | ratio (a) | CAT bytes | "
      "(b) CAT zstd | ratio (b) | (c) ChampSim .xz | ratio (c) |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& name : names) {
    const std::string cat_path = dir + "/capture.cat", archive_path = dir + "/trace.citcat";
    systems::CaptureRequest request;  // max_traced 0: until the guest powers off
    request.workloads = name;
    request.seed = seed;
    auto c = system.capture(request, cat_path);
    if (!c.ok()) Fail(name, c.status());
    auto reader = cat::CatReader::Open(cat_path);
    if (!reader.ok()) Fail(name, reader.status());
    auto x = systems::Extract(**reader);
    if (!x.ok()) Fail(name, x.status());
    auto packed = archive::Pack(x->ims, x->aes);
    if (!packed.ok()) Fail(name, packed.status());
    auto out = io::OutputFile::Create(archive_path);
    if (!out.ok()) Fail(name, out.status());
    if (absl::Status st = archive::Write(*packed, **out); !st.ok()) Fail(name, st);
    const uint64_t archive_bytes = (*out)->bytes_written();
    if (absl::Status st = (*out)->Commit(); !st.ok()) Fail(name, st);

    const uint64_t n = packed->manifest.instructions;
    const uint64_t raw = 10 * n, cat_bytes = std::filesystem::file_size(cat_path);
    const uint64_t cat_zstd = ZstdFileSize(cat_path);
    std::printf(
        "| %s | %.2f M | %llu | %llu | %.0f:1 | %llu | %llu | %.1f:1 |", name.c_str(), n / 1e6,
        static_cast<unsigned long long>(archive_bytes), static_cast<unsigned long long>(raw),
        static_cast<double>(raw) / archive_bytes, static_cast<unsigned long long>(cat_bytes),
        static_cast<unsigned long long>(cat_zstd), static_cast<double>(cat_zstd) / archive_bytes);
    if (champsim) {
      const uint64_t xz = ChampSimXzSize(x->ims, x->aes, dir + "/trace.champsim.xz");
      std::printf(" %llu | %.1f:1 |\n", static_cast<unsigned long long>(xz),
                  static_cast<double>(xz) / archive_bytes);
    } else {
      std::printf(" (--champsim) | |\n");
    }
    std::fflush(stdout);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
