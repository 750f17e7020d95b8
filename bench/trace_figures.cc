// Instruction-trace output speed (docs/trace-formats.md): `citcat replay` of one captured R4400
// workload writing each trace format to a file, against the same replay with no output, and a
// tracer built on Unicorn writing ChampSim records for the same compiled program
// (unicorn_tracer.h), all in one run. Each round runs every row once, in turn; a row's figure is
// its best round (the machine is shared: a round that loses the CPU is noise, not the code).
//   build/bench/trace_figures [--workload=sort] [--seed=1] [--rounds=5]
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "bench/unicorn_tracer.h"
#include "cat_parser/reader.h"
#include "guest/r4400/guest_paths.h"
#include "io/file.h"
#include "machine/r4400/capture.h"
#include "systems/system.h"
#include "traces/writers.h"

namespace {

using namespace citcat;  // NOLINT

struct Settings {
  std::string workload = "sort";
  uint64_t seed = 1;
  int rounds = 5;
  std::vector<std::string> only;  // run only the rows of these names (and the first)
  bool keep = false;              // leave the last round's files
  bool null_output = false;  // write every trace to /dev/null (the cost without the file system)
};

Settings Parse(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--workload=", 0) == 0) s.workload = a.substr(11);
    if (a.rfind("--seed=", 0) == 0) s.seed = std::stoull(a.substr(7));
    if (a.rfind("--rounds=", 0) == 0) s.rounds = std::stoi(a.substr(9));
    if (a.rfind("--only=", 0) == 0) s.only = absl::StrSplit(a.substr(7), ',');
    if (a == "--keep") s.keep = true;
    if (a == "--null") s.null_output = true;
  }
  return s;
}

[[noreturn]] void Die(const absl::Status& s) {
  std::fprintf(stderr, "trace_figures: %s\n", std::string(s.message()).c_str());
  std::exit(1);
}

extract::Extraction CaptureAndExtract(const Settings& settings, const std::string& dir) {
  machine::CaptureSettings s;
  s.kernel_path = CITCAT_R4400_KERNEL_ELF;
  absl::StatusOr<std::string> disk = io::ReadWholeFile(CITCAT_R4400_DISK_IMAGE, 1ull << 30);
  if (!disk.ok()) Die(disk.status());
  s.disk.assign(disk->begin(), disk->end());
  s.workloads = settings.workload;
  s.seed = settings.seed;
  const std::string path = dir + "/capture.cat";
  if (auto c = machine::CaptureR4400(s, path); !c.ok()) Die(c.status());
  auto reader = cat::CatReader::Open(path);
  if (!reader.ok()) Die(reader.status());
  absl::StatusOr<extract::Extraction> x = systems::Extract(**reader);
  if (!x.ok()) Die(x.status());
  return *std::move(x);
}

// Records looked at and dropped: the cost of the per-instruction path without a format.
class DropSink final : public traces::TraceSink {
 public:
  absl::Status Consume(const traces::Record&) override { return absl::OkStatus(); }
};

struct Measure {
  uint64_t instructions = 0;
  uint64_t bytes = 0;      // of the file written
  double seconds = 0;      // wall time
  double cpu_seconds = 0;  // of all the process's threads
};

double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

// Times `run` (wall and CPU), then takes the size of `path` and, unless `keep`, removes it
// (untimed: deleting a large file costs the file system as much as writing it). A `path` that
// leads to /dev/null stays.
Measure Time(const std::function<uint64_t()>& run, const std::string& path, bool keep) {
  std::error_code ignored;
  const bool null = std::filesystem::is_symlink(path, ignored);
  if (!null) std::filesystem::remove(path, ignored);
  const double cpu0 = ProcessCpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  Measure m;
  m.instructions = run();
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.cpu_seconds = ProcessCpuSeconds() - cpu0;
  if (path.empty() || null) return m;
  m.bytes = std::filesystem::file_size(path, ignored);
  if (!keep) std::filesystem::remove(path, ignored);
  return m;
}

uint64_t Replay(const extract::Extraction& x, traces::TraceSink* sink) {
  replay::ReplayOptions options;
  options.sink = sink;
  absl::StatusOr<replay::ReplaySummary> s = systems::Replay(x.ims, x.aes, options);
  if (!s.ok()) Die(s.status());
  if (sink != nullptr) {
    if (absl::Status f = sink->Finish(); !f.ok()) Die(f);
  }
  return s->instructions;
}

struct Row {
  Row(std::string name, std::string path, std::function<uint64_t()> run, double target = 0)
      : name(std::move(name)), path(std::move(path)), run(std::move(run)), target(target) {}
  std::string name;
  std::string path;  // the file it writes, if any
  std::function<uint64_t()> run;
  double target = 0;  // the least speed wanted, as a fraction of replay without output
  std::vector<Measure> rounds;
};

std::vector<Row> Rows(const extract::Extraction& x, const std::string& dir,
                      const std::string& workload, bench::UnicornTrace* peer_trace) {
  std::vector<Row> rows;
  rows.push_back({"replay, no output", "", [&x] { return Replay(x, nullptr); }});
  rows.push_back({"replay, records dropped", "", [&x] {
                    DropSink drop;
                    return Replay(x, &drop);
                  }});
  struct Output {
    const char* name;
    traces::Format format;
    const char* suffix;
    double target;
  };
  const Output outputs[] = {
      {"idtrace", traces::Format::kIdtrace, "", 0.25},
      {"idtrace-exec", traces::Format::kIdtraceExec, "", 0.25},
      {"din", traces::Format::kDin, "", 0.25},
      {"champsim", traces::Format::kChampSim, "", 0.25},
      {"champsim .zst", traces::Format::kChampSim, ".zst", 0},
      {"champsim .xz", traces::Format::kChampSim, ".xz", 0},
      {"text", traces::Format::kText, "", 0.10},
      {"penn", traces::Format::kPenn, "", 0.10},
      {"text .zst", traces::Format::kText, ".zst", 0},
  };
  for (const Output& o : outputs) {
    const std::string path = dir + "/" + absl::StrReplaceAll(o.name, {{" ", ""}});
    const traces::Format format = o.format;
    rows.push_back({o.name, path,
                    [&x, path, format] {
                      auto writer = traces::OpenWriter(format, path);
                      if (!writer.ok()) Die(writer.status());
                      return Replay(x, writer->get());
                    },
                    o.target});
  }
  const std::string peer = dir + "/unicorn.champsim";
  const std::string elf = std::string(CITCAT_R4400_GUEST_DIR) + "/" + workload + ".elf";
  rows.push_back({"Unicorn peer, champsim", peer, [peer, elf, peer_trace] {
                    absl::StatusOr<bench::UnicornTrace> t = bench::TraceWithUnicorn(elf, peer);
                    if (!t.ok()) Die(t.status());
                    if (t->exit_code != 0) Die(absl::InternalError("the peer's program failed"));
                    *peer_trace = *t;
                    return t->records;
                  }});
  return rows;
}

const Measure& Best(const Row& row) {
  const Measure* best = &row.rounds[0];
  for (const Measure& m : row.rounds) {
    if (m.seconds < best->seconds) best = &m;
  }
  return *best;
}

double Speed(const Measure& m) { return m.instructions / m.seconds / 1e6; }

void Print(const std::vector<Row>& rows, const Settings& settings,
           const bench::UnicornTrace& peer_trace) {
  const double base = Speed(Best(rows[0]));
  std::printf(
      "Workload %s, seed %llu: %.2f M instructions replayed; best of %d rounds; "
      "%u processors.\n\n",
      settings.workload.c_str(), static_cast<unsigned long long>(settings.seed),
      Best(rows[0]).instructions / 1e6, settings.rounds,
      static_cast<unsigned>(traces::CompressionThreads()));
  std::printf("| output | file MB | wall s | CPU s | M instr/s | / no output | target |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const Row& row : rows) {
    const Measure& m = Best(row);
    const double ratio = Speed(m) / base;
    std::string target = "";
    if (row.target > 0) {
      target = (ratio >= row.target ? "met (>= " : "**missed** (>= ") +
               std::to_string(static_cast<int>(row.target * 100)) + "%)";
    }
    std::printf("| %s | %.1f | %.3f | %.3f | %.1f | %.1f%% | %s |\n", row.name.c_str(),
                m.bytes / 1e6, m.seconds, m.cpu_seconds, Speed(m), 100 * ratio, target.c_str());
  }
  double champsim = 0, peer = 0;
  for (const Row& row : rows) {
    if (row.name == "champsim") champsim = Speed(Best(row));
    if (row.name.rfind("Unicorn", 0) == 0) peer = Speed(Best(row));
  }
  if (peer > 0) {
    std::printf(
        "\nThe peer ran the program's %.2f M user instructions (%llu system calls) and "
        "wrote %.2f M records.\n",
        peer_trace.instructions / 1e6, static_cast<unsigned long long>(peer_trace.syscalls),
        peer_trace.records / 1e6);
  }
  if (champsim > 0 && peer > 0) {
    std::printf("\nCITCAT replay to champsim / Unicorn peer to champsim: %.2f (target >= 3)\n",
                champsim / peer);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Settings settings = Parse(argc, argv);
  const std::string dir = std::filesystem::temp_directory_path() / "citcat-trace-figures";
  std::filesystem::remove_all(dir);  // what an earlier run left (its links to /dev/null too)
  std::filesystem::create_directories(dir);
  const extract::Extraction x = CaptureAndExtract(settings, dir);
  bench::UnicornTrace peer_trace;
  std::vector<Row> rows = Rows(x, dir, settings.workload, &peer_trace);
  for (const Row& row : rows) {
    if (settings.null_output && !row.path.empty()) {
      std::filesystem::create_symlink("/dev/null", row.path);
    }
  }
  if (!settings.only.empty()) {
    const std::string base = rows[0].name;  // every ratio needs it
    std::erase_if(rows, [&](const Row& r) {
      return r.name != base && !absl::c_linear_search(settings.only, r.name);
    });
  }
  for (int round = 0; round < settings.rounds; ++round) {
    const bool last = round + 1 == settings.rounds;
    for (Row& row : rows) row.rounds.push_back(Time(row.run, row.path, settings.keep && last));
  }
  Print(rows, settings, peer_trace);
  if (settings.keep) {
    std::printf("\nThe files are in %s.\n", dir.c_str());
  } else {
    std::filesystem::remove_all(dir);
  }
  return 0;
}
