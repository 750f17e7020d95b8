// Instruction-trace output speed (docs/trace-formats.md): replay of one captured R4400 workload
// writing each trace format to a file, against the same replay with no output, and against a
// tracer built on Unicorn writing ChampSim records for the same compiled program
// (unicorn_tracer.h), all in one run. A row writes the ChampSim trace's bytes from memory, the
// file system's share alone, which bounds what any ChampSim writer can reach here. Two more rows
// do the same into a pipe: `citcat replay --format champsim -o -` with a reader draining the other
// end, and the same bytes written from memory into the same kind of pipe. Each row is
// measured two ways: as the `citcat replay` command a user runs (a process: start, reading IMS and
// AES, replay, the file complete), and in process (systems::Replay with the writer as its sink,
// Finish included). Each round runs every row once, in turn; a row's figure is its best round (the
// machine is shared: a round that loses the CPU is noise, not the code). See bench/README.md.
//   build/bench/trace_figures [--workload=sort] [--seed=1] [--rounds=5] [--only=ROW,...]
//                             [--null] [--keep]
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "bench/unicorn_tracer.h"
#include "cat_parser/reader.h"
#include "guest/r4400/guest_paths.h"
#include "io/file.h"
#include "machine/r4400/capture.h"
#include "systems/system.h"
#include "traces/writers.h"

extern char** environ;

namespace {

using namespace citcat;  // NOLINT

struct Settings {
  std::string workload = "sort";
  uint64_t seed = 1;
  int rounds = 5;
  std::vector<std::string> only;  // run only the rows of these names (and the first)
  bool keep = false;              // leave the last round's files
  bool null_output = false;  // write every trace to /dev/null (the cost without the file system)
  std::string unicorn_elf, unicorn_out;  // run only the peer, as its command
  uint64_t write_bytes = 0;              // run only the file write, as its command
  std::string write_out;
};

Settings Parse(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* flag) { return a.substr(std::string(flag).size()); };
    if (a.rfind("--workload=", 0) == 0) s.workload = value("--workload=");
    if (a.rfind("--seed=", 0) == 0) s.seed = std::stoull(value("--seed="));
    if (a.rfind("--rounds=", 0) == 0) s.rounds = std::stoi(value("--rounds="));
    if (a.rfind("--only=", 0) == 0) s.only = absl::StrSplit(value("--only="), ',');
    if (a == "--keep") s.keep = true;
    if (a == "--null") s.null_output = true;
    if (a.rfind("--unicorn=", 0) == 0) s.unicorn_elf = value("--unicorn=");
    if (a.rfind("--unicorn-out=", 0) == 0) s.unicorn_out = value("--unicorn-out=");
    if (a.rfind("--write-bytes=", 0) == 0) s.write_bytes = std::stoull(value("--write-bytes="));
    if (a.rfind("--write-out=", 0) == 0) s.write_out = value("--write-out=");
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

// The IMS and AES as `citcat extract` leaves them, for the command rows.
void SaveExtraction(const extract::Extraction& x, const std::string& dir) {
  for (const auto& [name, message] :
       {std::pair<const char*, const google::protobuf::Message*>{"ims.pb", &x.ims},
        {"aes.pb", &x.aes}}) {
    std::string bytes;
    if (!message->SerializeToString(&bytes)) Die(absl::InternalError("cannot serialize"));
    auto out = io::OutputFile::Create(dir + "/" + name);
    if (!out.ok()) Die(out.status());
    if (absl::Status s = (*out)->Write(bytes); !s.ok()) Die(s);
    if (absl::Status s = (*out)->Commit(); !s.ok()) Die(s);
  }
}

// Writes `bytes` bytes to a new file at `path` ("-": standard output) from one buffer, 1 MiB per
// write(2), as the trace writers' output thread does: what the file system (or a pipe) takes to
// absorb a trace of that size.
void WriteFile(const std::string& path, uint64_t bytes) {
  const int fd = path == "-" ? 1 : open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) Die(absl::InternalError("cannot create " + path));
  std::vector<char> buffer(1 << 20, 'c');
  for (uint64_t left = bytes; left > 0;) {
    const ssize_t n = write(fd, buffer.data(), std::min<uint64_t>(left, buffer.size()));
    if (n <= 0) Die(absl::InternalError("cannot write " + path));
    left -= n;
  }
  if (close(fd) != 0) Die(absl::InternalError("cannot write " + path));
}

// Records looked at and dropped: the cost of the per-instruction path without a format.
class DropSink final : public traces::TraceSink {
 public:
  absl::Status Consume(const traces::Record&) override { return absl::OkStatus(); }
};

struct Measure {
  uint64_t instructions = 0;
  double seconds = 0;      // wall time
  double cpu_seconds = 0;  // of all the process's threads
};

double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

double Seconds(const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; }

// Runs `argv` with its errors to /dev/null and its output to /dev/null, or `into_pipe` into a pipe
// that this process drains 1 MiB per read(2); wall and CPU time (of the command alone).
Measure RunCommand(const std::vector<std::string>& argv, bool into_pipe = false) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int fds[2] = {-1, -1};
  if (into_pipe && pipe(fds) != 0) Die(absl::InternalError("cannot make a pipe"));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (into_pipe) {
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
  } else {
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  }
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid;
  if (posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ) != 0) {
    Die(absl::InternalError("cannot start " + argv[0]));
  }
  if (into_pipe) {
    close(fds[1]);
    std::vector<char> buffer(1 << 20);
    while (read(fds[0], buffer.data(), buffer.size()) > 0) {
    }
    close(fds[0]);
  }
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  Measure m;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.cpu_seconds = Seconds(usage.ru_utime) + Seconds(usage.ru_stime);
  posix_spawn_file_actions_destroy(&actions);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    Die(absl::InternalError(argv[0] + " failed; run it by hand: " + absl::StrJoin(argv, " ")));
  }
  return m;
}

// Times `run` in process.
Measure RunInProcess(const std::function<uint64_t()>& run) {
  const double cpu0 = ProcessCpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  Measure m;
  m.instructions = run();
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.cpu_seconds = ProcessCpuSeconds() - cpu0;
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
  Row(std::string name, std::string path, std::function<uint64_t()> run,
      std::vector<std::string> command, double target = 0)
      : name(std::move(name)),
        path(std::move(path)),
        run(std::move(run)),
        command(std::move(command)),
        target(target) {}
  std::string name;
  std::string path;                  // the trace it writes, if any
  std::function<uint64_t()> run;     // in process; returns the instructions traced
  std::vector<std::string> command;  // the same as a command, if there is one
  double target = 0;       // the least speed wanted, as a fraction of replay without output
  bool into_pipe = false;  // a command only, writing to standard output into a pipe
  std::vector<Measure> in_process, as_command;
  uint64_t bytes = 0;  // of the trace
  // The file or pipe write alone: writes as many bytes as this row's last trace (LinkWrites).
  const Row* bytes_of = nullptr;
};

constexpr char kFileWriteRow[] = "file write alone (champsim's bytes)";
constexpr char kPipeRow[] = "champsim into a pipe";
constexpr char kPipeWriteRow[] = "pipe write alone (champsim's bytes)";

std::vector<Row> Rows(const extract::Extraction& x, const std::string& dir,
                      const std::string& workload, bench::UnicornTrace* peer_trace) {
  const std::vector<std::string> citcat = {CITCAT_BINARY,   "replay", "--ims",
                                           dir + "/ims.pb", "--aes",  dir + "/aes.pb"};
  std::vector<Row> rows;
  rows.emplace_back(
      "replay (no output)", "", [&x] { return Replay(x, nullptr); }, citcat);
  rows.emplace_back(
      "replay (instructions observed)", "",
      [&x] {
        // The core stops at every instruction, as for a trace, but no record is made.
        replay::ReplayOptions options;
        options.on_instructions = [](std::span<const replay::ExecutedInstruction>) {};
        absl::StatusOr<replay::ReplaySummary> s = systems::Replay(x.ims, x.aes, options);
        if (!s.ok()) Die(s.status());
        return s->instructions;
      },
      std::vector<std::string>{});
  rows.emplace_back(
      "replay (records dropped)", "",
      [&x] {
        DropSink drop;
        return Replay(x, &drop);
      },
      std::vector<std::string>{});
  struct Output {
    const char* name;
    const char* format;
    traces::Format id;
    double target;
  };
  const Output outputs[] = {
      {"idtrace", "idtrace", traces::Format::kIdtrace, 0.25},
      {"idtrace-exec", "idtrace-exec", traces::Format::kIdtraceExec, 0.25},
      {"din", "din", traces::Format::kDin, 0.25},
      {"champsim", "champsim", traces::Format::kChampSim, 0.25},
      {"champsim .zst", "champsim", traces::Format::kChampSim, 0},
      {"champsim .xz", "champsim", traces::Format::kChampSim, 0},
      {"champsim .gz", "champsim", traces::Format::kChampSim, 0},
      {"text", "text", traces::Format::kText, 0.10},
      {"text-values", "text-values", traces::Format::kTextValues, 0},
      {"penn", "penn", traces::Format::kPenn, 0.10},
      {"text .zst", "text", traces::Format::kText, 0},
  };
  for (const Output& o : outputs) {
    std::string path = dir + "/" + absl::StrReplaceAll(o.name, {{" ", ""}});
    if (absl::EndsWith(path, "champsim.gz")) path = dir + "/champsim.gz";
    std::vector<std::string> command = citcat;
    for (const char* a : {"--format", o.format, "-o", path.c_str()}) command.push_back(a);
    const traces::Format format = o.id;
    rows.emplace_back(
        o.name, path,
        [&x, path, format] {
          auto writer = traces::OpenWriter(format, path);
          if (!writer.ok()) Die(writer.status());
          return Replay(x, writer->get());
        },
        command, o.target);
  }
  const std::string elf = std::string(CITCAT_R4400_GUEST_DIR) + "/" + workload + ".elf";
  const std::string peer = dir + "/unicorn.champsim";
  rows.emplace_back(
      "Unicorn peer (champsim)", peer,
      [peer, elf, peer_trace] {
        absl::StatusOr<bench::UnicornTrace> t = bench::TraceWithUnicorn(elf, peer);
        if (!t.ok()) Die(t.status());
        if (t->exit_code != 0) Die(absl::InternalError("the peer's program failed"));
        *peer_trace = *t;
        return t->records;
      },
      std::vector<std::string>{std::filesystem::read_symlink("/proc/self/exe"), "--unicorn=" + elf,
                               "--unicorn-out=" + peer});
  // Their runs and commands are made in each round, once the ChampSim row has written its trace.
  rows.emplace_back(kFileWriteRow, dir + "/write", nullptr, std::vector<std::string>{});
  std::vector<std::string> into_pipe = citcat;
  for (const char* a : {"--format", "champsim", "-o", "-"}) into_pipe.push_back(a);
  rows.emplace_back(kPipeRow, "", nullptr, into_pipe);
  rows.back().into_pipe = true;
  rows.emplace_back(kPipeWriteRow, "-", nullptr, std::vector<std::string>{});
  rows.back().into_pipe = true;
  return rows;
}

const Row* Find(const std::vector<Row>& rows, const char* name) {
  for (const Row& row : rows) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

// Ties the rows that go with the ChampSim row to it, once the rows no longer move; drops them
// without one, and the file write when the traces go to /dev/null.
void LinkWrites(std::vector<Row>& rows, bool null_output) {
  const auto follows_champsim = [](const Row& r) {
    return r.name == kFileWriteRow || r.name == kPipeRow || r.name == kPipeWriteRow;
  };
  const bool have = Find(rows, "champsim") != nullptr;
  std::erase_if(rows, [&](const Row& r) {
    return follows_champsim(r) && (!have || (null_output && r.name == kFileWriteRow));
  });
  const Row* champsim = Find(rows, "champsim");  // where it is now
  for (Row& row : rows) {
    if (follows_champsim(row)) row.bytes_of = champsim;
  }
}

// Removes a row's trace before a run (untimed: deleting a large file costs the file system as
// much as writing it), unless it leads to /dev/null.
void Clear(const Row& row) {
  std::error_code ignored;
  if (!row.path.empty() && !std::filesystem::is_symlink(row.path, ignored)) {
    std::filesystem::remove(row.path, ignored);
  }
}

void RunRound(Row& row) {
  if (row.name == kPipeRow) {
    Measure m = RunCommand(row.command, /*into_pipe=*/true);
    m.instructions = row.bytes_of->in_process.back().instructions;
    row.as_command.push_back(m);
    row.bytes = row.bytes_of->bytes;
    return;
  }
  if (row.bytes_of != nullptr) {
    const uint64_t bytes = row.bytes_of->bytes;
    const uint64_t instructions = row.bytes_of->in_process.back().instructions;
    row.bytes = bytes;
    if (row.into_pipe) {
      row.command = {std::filesystem::read_symlink("/proc/self/exe"),
                     "--write-bytes=" + std::to_string(bytes), "--write-out=-"};
      Measure m = RunCommand(row.command, /*into_pipe=*/true);
      m.instructions = instructions;
      row.as_command.push_back(m);
      return;
    }
    row.run = [path = row.path, bytes, instructions] {
      WriteFile(path, bytes);
      return instructions;  // so that its speed is the most the ChampSim row could reach
    };
    row.command = {std::filesystem::read_symlink("/proc/self/exe"),
                   "--write-bytes=" + std::to_string(bytes), "--write-out=" + row.path};
  }
  Clear(row);
  row.in_process.push_back(RunInProcess(row.run));
  std::error_code ignored;
  if (!row.path.empty() && !std::filesystem::is_symlink(row.path, ignored)) {
    row.bytes = std::filesystem::file_size(row.path, ignored);
  }
  if (row.command.empty()) return;
  Clear(row);
  Measure m = RunCommand(row.command);
  m.instructions = row.in_process.back().instructions;
  row.as_command.push_back(m);
}

const Measure* Best(const std::vector<Measure>& rounds) {
  const Measure* best = nullptr;
  for (const Measure& m : rounds) {
    if (best == nullptr || m.seconds < best->seconds) best = &m;
  }
  return best;
}

double Speed(const Measure& m) { return m.instructions / m.seconds / 1e6; }

// "| wall s | M instr/s | / no output |" of one way of measuring, or dashes.
std::string Cells(const Measure* m, const Measure* base) {
  if (m == nullptr) return " - | - | - |";
  char cells[96];
  std::snprintf(cells, sizeof cells, " %.3f | %.1f | %.1f%% |", m->seconds, Speed(*m),
                100 * Speed(*m) / Speed(*base));
  return cells;
}

// ChampSim into a pipe against its two targets (>= 50% of replay without output, or >= 80% of
// what the pipe alone absorbs, whichever is lower), and .gz against .xz (>= 3x the speed, at most
// 2x the size), all as commands.
void PrintPipeAndGzip(const std::vector<Row>& rows, const Measure& base) {
  const Row *piped = Find(rows, kPipeRow), *alone = Find(rows, kPipeWriteRow);
  if (piped != nullptr && alone != nullptr) {
    const double of_base = Speed(*Best(piped->as_command)) / Speed(base);
    const double of_pipe = Speed(*Best(piped->as_command)) / Speed(*Best(alone->as_command));
    const double target = std::min(0.5, 0.8 * Speed(*Best(alone->as_command)) / Speed(base));
    std::printf(
        "\nChampSim into a pipe: %.1f%% of replay without output, %.1f%% of what the pipe alone "
        "absorbs (%.1f%% of replay without output): target %.1f%% of replay without output, "
        "%s.\n",
        100 * of_base, 100 * of_pipe, 100 * Speed(*Best(alone->as_command)) / Speed(base),
        100 * target, of_base >= target ? "met" : "**missed**");
  }
  const Row *gz = Find(rows, "champsim .gz"), *xz = Find(rows, "champsim .xz");
  if (gz != nullptr && xz != nullptr) {
    const double speed = Speed(*Best(gz->as_command)) / Speed(*Best(xz->as_command));
    const double size = static_cast<double>(gz->bytes) / static_cast<double>(xz->bytes);
    std::printf(
        "ChampSim .gz against .xz: %.2fx the speed (target >= 3: %s), %.2fx the size "
        "(target <= 2: %s).\n",
        speed, speed >= 3 ? "met" : "**missed**", size, size <= 2 ? "met" : "**missed**");
  }
}

void Print(const std::vector<Row>& rows, const Settings& settings,
           const bench::UnicornTrace& peer_trace) {
  const Measure* base_command = Best(rows[0].as_command);
  const Measure* base_process = Best(rows[0].in_process);
  std::printf(
      "Workload %s, seed %llu: %.2f M instructions replayed; best of %d rounds; %d "
      "processors; traces written to %s.\n\n",
      settings.workload.c_str(), static_cast<unsigned long long>(settings.seed),
      base_process->instructions / 1e6, settings.rounds, traces::CompressionThreads(),
      settings.null_output ? "/dev/null" : "files");
  std::printf(
      "| output | file MB | command wall s | M instr/s | / no output | in process wall s | "
      "M instr/s | / no output | in process CPU s | target |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& row : rows) {
    const Measure* command = Best(row.as_command);
    const Measure* process = Best(row.in_process);
    std::string target;
    if (row.target > 0) {
      const bool met = command != nullptr && Speed(*command) / Speed(*base_command) >= row.target;
      target = std::string(met ? "met" : "**missed**") +
               " (>= " + std::to_string(static_cast<int>(row.target * 100)) + "% as a command)";
    }
    std::printf("| %s | %.1f |%s%s %s | %s |\n", row.name.c_str(), row.bytes / 1e6,
                Cells(command, base_command).c_str(), Cells(process, base_process).c_str(),
                process == nullptr ? "-" : absl::StrFormat("%.3f", process->cpu_seconds).c_str(),
                target.c_str());
  }
  PrintPipeAndGzip(rows, *base_command);
  const Row *champsim = nullptr, *peer = nullptr, *write = nullptr;
  for (const Row& row : rows) {
    if (row.name == "champsim") champsim = &row;
    if (row.name.rfind("Unicorn", 0) == 0) peer = &row;
    if (row.name == kFileWriteRow) write = &row;
  }
  if (write != nullptr) {
    std::printf(
        "\nThe file system alone (the ChampSim trace's %.1f MB written from memory, as a command) "
        "allows ChampSim at most %.1f%% of replay without output",
        write->bytes_of->bytes / 1e6, 100 * Speed(*Best(write->as_command)) / Speed(*base_command));
    if (peer != nullptr) {
      std::printf(" and at most %.2f times the peer's speed",
                  Speed(*Best(write->as_command)) / Speed(*Best(peer->as_command)));
    }
    std::printf(".\n");
  }
  if (peer == nullptr) return;
  std::printf(
      "The peer ran the program's %.2f M user instructions (%llu system calls) and wrote "
      "%.2f M records.\n",
      peer_trace.instructions / 1e6, static_cast<unsigned long long>(peer_trace.syscalls),
      peer_trace.records / 1e6);
  if (champsim == nullptr) return;
  std::printf(
      "CITCAT replay to champsim / Unicorn peer to champsim: %.2f as commands, %.2f in process "
      "(target >= 3)\n",
      Speed(*Best(champsim->as_command)) / Speed(*Best(peer->as_command)),
      Speed(*Best(champsim->in_process)) / Speed(*Best(peer->in_process)));
}

// The peer alone, as a command (a row of the table runs this).
int RunPeer(const Settings& settings) {
  absl::StatusOr<bench::UnicornTrace> t =
      bench::TraceWithUnicorn(settings.unicorn_elf, settings.unicorn_out);
  if (!t.ok()) Die(t.status());
  return t->exit_code == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Settings settings = Parse(argc, argv);
  if (!settings.unicorn_elf.empty()) return RunPeer(settings);
  if (!settings.write_out.empty()) {
    WriteFile(settings.write_out, settings.write_bytes);
    return 0;
  }
  const std::string dir = std::filesystem::temp_directory_path() / "citcat-trace-figures";
  std::filesystem::remove_all(dir);  // what an earlier run left (its links to /dev/null too)
  std::filesystem::create_directories(dir);
  const extract::Extraction x = CaptureAndExtract(settings, dir);
  SaveExtraction(x, dir);
  bench::UnicornTrace peer_trace;
  std::vector<Row> rows = Rows(x, dir, settings.workload, &peer_trace);
  if (!settings.only.empty()) {
    const std::string base = rows[0].name;  // every ratio needs it
    std::erase_if(rows, [&](const Row& r) {
      const bool follows = r.name == kFileWriteRow || r.name == kPipeRow || r.name == kPipeWriteRow;
      const std::string& name = follows ? "champsim" : r.name;  // goes with it
      return name != base && !absl::c_linear_search(settings.only, name);
    });
  }
  LinkWrites(rows, settings.null_output);
  for (const Row& row : rows) {
    if (settings.null_output && !row.path.empty() && row.path != "-") {
      std::filesystem::create_symlink("/dev/null", row.path);
    }
  }
  for (int round = 0; round < settings.rounds; ++round) {
    for (Row& row : rows) RunRound(row);
  }
  Print(rows, settings, peer_trace);
  if (settings.keep) {
    std::printf("\nThe files are in %s.\n", dir.c_str());
  } else {
    std::filesystem::remove_all(dir);
  }
  return 0;
}
