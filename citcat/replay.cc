#include "replay/replay.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "archive/archive.h"
#include "cat_parser/reader.h"
#include "cat_parser/writer.h"
#include "citcat/command.h"
#include "citcat/join.h"
#include "citcat/progress.h"
#include "machine/elf_loader.h"
#include "systems/system.h"
#include "traces/output.h"
#include "traces/writers.h"

ABSL_FLAG(std::string, ims, "", "the initial machine state (ims.pb from citcat extract)");
ABSL_FLAG(std::string, aes, "", "the asynchronous event schedule (aes.pb from citcat extract)");
ABSL_FLAG(std::string, cat, "", "also write the regenerated CAT here");
ABSL_FLAG(std::string, format, "",
          "the instruction trace format for -o: text, champsim, penn, din, idtrace or idtrace-exec "
          "(.xz and .zst suffixes compress; without --format, the plain text trace)");
ABSL_FLAG(std::string, mode, "",
          "with --format: only instructions run in this mode (user, kernel)");
ABSL_FLAG(bool, filter_idle, false,
          "with --format: leave out the kernel idle loop, found by its symbols citcat_idle_begin "
          "and citcat_idle_end in the kernel ELF (--kernel)");
ABSL_FLAG(int, jobs, 1,
          "replay in segments on this many threads: the same trace and CAT (a compressed trace "
          "as one compressed stream per segment, the same bytes decompressed)");
ABSL_FLAG(std::string, idle_range, "",
          "with --format: leave out instructions at START <= PC < END (hex, START:END), e.g. the "
          "kernel idle loop between citcat_idle_begin and citcat_idle_end");

namespace citcat::cli {

absl::Status ReadMessage(const std::string& path, google::protobuf::Message& message) {
  // The IMS holds at most the memory image; 4 GiB bounds both files.
  absl::StatusOr<std::string> bytes = io::ReadWholeFile(path, uint64_t{4} << 30);
  if (!bytes.ok()) return bytes.status();
  if (!message.ParseFromString(*bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a ", message.GetDescriptor()->full_name(), " message"));
  }
  return absl::OkStatus();
}

void PrintReplaySummary(const char* command, const replay::ReplaySummary& s) {
  std::fprintf(
      stderr,
      "citcat %s: %llu instructions replayed, %llu records (%llu interrupts, %llu DMA, "
      "%llu device accesses, %llu Count/Cause reads) in %.2f s: %.1f M instructions/s\n",
      command, static_cast<unsigned long long>(s.instructions),
      static_cast<unsigned long long>(s.records), static_cast<unsigned long long>(s.interrupts),
      static_cast<unsigned long long>(s.dma), static_cast<unsigned long long>(s.device_accesses),
      static_cast<unsigned long long>(s.register_reads), s.seconds,
      s.seconds > 0 ? s.instructions / s.seconds / 1e6 : 0.0);
}

// --format, --mode and --idle-range: the trace writer and its filter, or none.
struct TraceOutput {
  std::unique_ptr<traces::TraceSink> writer;
  std::unique_ptr<traces::FilterSink> filter;
  traces::TraceSink* sink() { return filter ? filter.get() : writer.get(); }
};

// --format, --mode and the idle range, checked (and the kernel ELF read) once per command.
struct TraceSettings {
  std::optional<traces::Format> format;  // none: no --format
  traces::Filter filter;
  bool filtered = false;
};

absl::StatusOr<TraceSettings> ParseTraceSettings(const ims::InitialMachineState& ims) {
  TraceSettings t;
  const std::string format = absl::GetFlag(FLAGS_format), path = absl::GetFlag(FLAGS_o);
  const std::string mode = absl::GetFlag(FLAGS_mode), idle = absl::GetFlag(FLAGS_idle_range);
  if (format.empty()) {
    if (!mode.empty() || !idle.empty() || absl::GetFlag(FLAGS_filter_idle)) {
      return absl::InvalidArgumentError(
          "--mode, --idle-range and --filter-idle need --format and -o");
    }
    return t;
  }
  if (path.empty()) return absl::InvalidArgumentError("--format needs -o FILE");
  absl::StatusOr<traces::Format> f = traces::ParseFormat(format);
  if (!f.ok()) return f.status();
  t.format = *f;
  traces::Filter& filter = t.filter;
  if (mode == "user") {
    filter.mode = traces::Mode::kUser;
  } else if (mode == "kernel") {
    filter.mode = traces::Mode::kKernel;
  } else if (!mode.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--mode ", mode, ": user or kernel"));
  }
  if (!idle.empty()) {
    std::vector<std::string> parts = absl::StrSplit(idle, ':');
    if (parts.size() != 2 || !absl::SimpleHexAtoi(parts[0], &filter.idle_begin) ||
        !absl::SimpleHexAtoi(parts[1], &filter.idle_end) || filter.idle_begin >= filter.idle_end) {
      return absl::InvalidArgumentError(
          absl::StrCat("--idle-range ", idle, ": expected START:END in hex, START < END"));
    }
  }
  if (absl::GetFlag(FLAGS_filter_idle)) {
    if (!idle.empty()) return absl::InvalidArgumentError("--filter-idle or --idle-range, not both");
    absl::StatusOr<const systems::System*> system = systems::ForIms(ims);
    if (!system.ok()) return system.status();
    std::string elf_path = absl::GetFlag(FLAGS_kernel);
    if (elf_path.empty()) elf_path = (*system)->guest_kernel;
    absl::StatusOr<machine::ElfImage> elf = machine::LoadElfFile(elf_path);
    if (!elf.ok()) return elf.status();
    const machine::ElfSymbol* begin = elf->FindSymbol("citcat_idle_begin");
    const machine::ElfSymbol* end = elf->FindSymbol("citcat_idle_end");
    if (begin == nullptr || end == nullptr || begin->value >= end->value) {
      return absl::InvalidArgumentError(absl::StrCat(
          elf_path, ": no citcat_idle_begin/citcat_idle_end symbols around the idle loop"));
    }
    filter.idle_begin = (*system)->kernel_address(begin->value, elf->is64);
    filter.idle_end = (*system)->kernel_address(end->value, elf->is64);
  }
  t.filtered = filter.mode || filter.idle_end != 0;
  return t;
}

// The writer of `settings` to `path` (-o, or as scratch a segment's piece of it); none without
// --format.
absl::StatusOr<TraceOutput> OpenTraceOutput(const TraceSettings& settings, const std::string& path,
                                            bool scratch = false) {
  TraceOutput t;
  if (!settings.format) return t;
  absl::StatusOr<std::unique_ptr<traces::ByteOutput>> out =
      traces::OpenOutput(path, traces::CompressionThreads(), scratch);
  if (!out.ok()) return out.status();
  t.writer = traces::NewWriter(*settings.format, *std::move(out));
  if (settings.filtered)
    t.filter = std::make_unique<traces::FilterSink>(settings.filter, *t.writer);
  return t;
}

// ---- --jobs N ----

// What one segment's replay made.
struct Piece {
  replay::Segment segment;
  std::string trace, cat;  // scratch files, "" for none
  absl::Status status;
  replay::ReplaySummary summary;
  archive::ReplayChecksums checksums;
};

absl::Status ReplayPiece(Piece& p, const TraceSettings& settings,
                         const std::optional<archive::Manifest>& manifest) {
  replay::ReplayOptions options;
  absl::StatusOr<TraceOutput> formatted = OpenTraceOutput(settings, p.trace, /*scratch=*/true);
  if (!formatted.ok()) return formatted.status();
  options.sink = formatted->sink();
  std::unique_ptr<io::OutputFile> text;
  if (!p.trace.empty() && !options.sink) {
    absl::StatusOr<std::unique_ptr<io::OutputFile>> out = io::OutputFile::CreateScratch(p.trace);
    if (!out.ok()) return out.status();
    text = *std::move(out);
    options.trace = text.get();
  }
  std::unique_ptr<cat::CatWriter> regenerated;
  if (!p.cat.empty()) {
    absl::StatusOr<cat::CatHeader> header = systems::CatHeaderFor(p.segment.ims);
    if (!header.ok()) return header.status();
    absl::StatusOr<std::unique_ptr<io::OutputFile>> out = io::OutputFile::CreateScratch(p.cat);
    if (!out.ok()) return out.status();
    absl::StatusOr<std::unique_ptr<cat::CatWriter>> writer =
        cat::CatWriter::Create(*std::move(out), *header);
    if (!writer.ok()) return writer.status();
    regenerated = *std::move(writer);
    options.regenerated = regenerated.get();
  }
  if (manifest) p.checksums.Attach(options, p.segment.ims, manifest->version);
  absl::StatusOr<replay::ReplaySummary> summary =
      systems::Replay(p.segment.ims, p.segment.aes, options);
  if (!summary.ok()) return summary.status();
  p.summary = *summary;
  if (text) {
    if (absl::Status s = text->Commit(); !s.ok()) return s;
  }
  if (options.sink) {
    if (absl::Status s = options.sink->Finish(); !s.ok()) return s;
  }
  if (regenerated) return regenerated->Finish();
  return absl::OkStatus();
}

// Cuts the replay into segments (a replay with no output), replays them on `jobs` threads into
// pieces of each output, and joins the pieces in order. The pieces go next to the outputs.
absl::Status ReplayInSegments(const ims::InitialMachineState& ims, const aes::Schedule& aes,
                              const std::optional<archive::Manifest>& manifest,
                              const TraceSettings& settings, int jobs) {
  const auto start = std::chrono::steady_clock::now();
  const std::string trace_path = absl::GetFlag(FLAGS_o), cat_path = absl::GetFlag(FLAGS_cat);
  uint64_t instructions = manifest ? manifest->instructions : 0;
  if (!manifest) {
    absl::StatusOr<replay::ReplaySummary> counted = systems::Replay(ims, aes, {});
    if (!counted.ok()) return counted.status();
    instructions = counted->instructions;
  }
  // More segments than threads, so that one long segment does not hold the others up, and none
  // so long that the events and memory image it carries would grow with the capture.
  constexpr uint64_t kMaxSegmentInstructions = 200'000'000;
  const uint64_t wanted =
      std::max<uint64_t>({1, std::min<uint64_t>(uint64_t{4} * jobs, instructions / 100'000),
                          (instructions + kMaxSegmentInstructions - 1) / kMaxSegmentInstructions});
  replay::ReplayOptions cutting;
  for (uint64_t k = 1; k < wanted; ++k) {
    cutting.cut_at_instructions.push_back(ims.start().instructions() + instructions * k / wanted);
  }
  // The threads replay each segment as soon as the cutting replay hands it over.
  std::deque<Piece> pieces;  // grows at the back; what a thread works on stays where it is
  std::mutex mutex;
  std::condition_variable more;
  size_t ready = 0, next = 0;
  bool cut_done = false;
  const auto work = [&] {
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      more.wait(lock, [&] { return next < ready || cut_done; });
      if (next >= ready) return;
      Piece& p = pieces[next++];
      more.notify_all();  // the cutting replay may go on
      lock.unlock();
      p.status = ReplayPiece(p, settings, manifest);
      p.segment = {};  // its state and events are done with
      lock.lock();
    }
  };
  std::vector<std::thread> workers;
  for (int j = 0; j < jobs && static_cast<uint64_t>(j) < wanted; ++j) workers.emplace_back(work);
  cutting.on_segment = [&](replay::Segment s) {
    std::unique_lock<std::mutex> lock(mutex);
    // A segment waits for a thread: no more of them than threads, or a cutting replay that runs
    // ahead would hold every segment of the capture at once.
    more.wait(lock, [&] { return ready - next < static_cast<size_t>(jobs); });
    Piece& p = pieces.emplace_back();
    p.segment = std::move(s);
    const size_t k = pieces.size();
    if (!trace_path.empty()) {
      const std::string suffix = absl::EndsWith(trace_path, ".xz")    ? ".xz"
                                 : absl::EndsWith(trace_path, ".zst") ? ".zst"
                                                                      : "";
      p.trace = absl::StrCat(trace_path, ".piece-", getpid(), "-", k, suffix);
    }
    if (!cat_path.empty()) p.cat = absl::StrCat(cat_path, ".piece-", getpid(), "-", k);
    ++ready;
    more.notify_one();
    return absl::OkStatus();
  };
  absl::StatusOr<replay::ReplaySummary> cut = systems::Replay(ims, aes, cutting);
  {
    std::lock_guard<std::mutex> lock(mutex);
    cut_done = true;
  }
  more.notify_all();
  for (std::thread& t : workers) t.join();

  absl::Status status = cut.status();
  for (const Piece& p : pieces) {
    if (!status.ok()) break;
    if (!p.status.ok()) {
      status = p.status;
      break;
    }
  }
  replay::ReplaySummary total;
  archive::ReplayChecksums checksums;
  for (const Piece& p : pieces) {
    total.instructions += p.summary.instructions;
    total.steps += p.summary.steps;
    total.records += p.summary.records;
    total.interrupts += p.summary.interrupts;
    total.dma += p.summary.dma;
    total.device_accesses += p.summary.device_accesses;
    total.register_reads += p.summary.register_reads;
    total.end_branch_count = p.summary.end_branch_count;
    checksums.Append(p.checksums);
  }
  if (status.ok() && manifest) {
    archive::Manifest replayed;
    checksums.Fill(total, replayed);
    status = archive::CompareWithManifest(*manifest, replayed);
  }
  // The pieces in order into the outputs (citcat join's code); the CAT's header is the first
  // piece's.
  std::vector<std::string> traces, cats;
  for (const Piece& p : pieces) {
    traces.push_back(p.trace);
    cats.push_back(p.cat);
  }
  uint64_t joined = 0;
  if (status.ok() && !trace_path.empty()) {
    status = JoinTraces(traces, trace_path, /*check_compressed=*/false, joined);
  }
  if (status.ok() && !cat_path.empty()) status = JoinCats(cats, cat_path, {}, joined);
  for (const Piece& p : pieces) {
    if (!p.trace.empty()) std::remove(p.trace.c_str());
    if (!p.cat.empty()) std::remove(p.cat.c_str());
  }
  if (!status.ok()) return status;
  total.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!absl::GetFlag(FLAGS_quiet)) PrintReplaySummary("replay", total);
  return absl::OkStatus();
}

absl::Status RunReplay(const std::vector<std::string>& args) {
  const char* synopsis =
      "--ims IMS.pb --aes AES.pb | TRACE.citcat [-o TRACE [--format "
      "text|champsim|penn|din|idtrace|idtrace-exec] "
      "[--mode user|kernel] [--filter-idle | --idle-range START:END]] [--cat REGENERATED.cat]";
  const std::string ims_path = absl::GetFlag(FLAGS_ims), aes_path = absl::GetFlag(FLAGS_aes);
  // An archive (docs/archive-format.md) stands for --ims and --aes; its manifest is checked at
  // the end.
  const bool from_archive = args.size() == 1 && ims_path.empty() && aes_path.empty();
  if (!from_archive && (!args.empty() || ims_path.empty() || aes_path.empty())) {
    return UsageError("replay", synopsis);
  }
  std::vector<std::string> inputs = {ims_path, aes_path, absl::GetFlag(FLAGS_kernel)};
  if (from_archive) inputs.push_back(args[0]);
  if (absl::Status s = CheckOutputs(inputs, {absl::GetFlag(FLAGS_o), absl::GetFlag(FLAGS_cat)});
      !s.ok()) {
    return s;
  }
  // The schedule is read as replay goes (aes::Schedule), so memory does not grow with it.
  ims::InitialMachineState ims;
  absl::StatusOr<aes::Schedule> schedule;
  std::optional<archive::Manifest> manifest;
  if (from_archive) {
    absl::StatusOr<archive::Archive> packed = archive::ReadForReplay(args[0]);
    if (!packed.ok()) return packed.status();
    if (absl::Status s = archive::UnpackIms(*packed, ims); !s.ok()) return s;
    schedule = archive::ScheduleOf(*packed);
    manifest = packed->manifest;
  } else {
    if (absl::Status s = ReadMessage(ims_path, ims); !s.ok()) return s;
    schedule = aes::Schedule::Parse(aes::BytesInFile(aes_path));
  }
  if (!schedule.ok()) return schedule.status();
  const aes::Schedule& aes = *schedule;

  const int jobs = absl::GetFlag(FLAGS_jobs);
  if (jobs < 1 || jobs > 1024) return absl::InvalidArgumentError("--jobs must be 1 to 1024");
  absl::StatusOr<TraceSettings> settings = ParseTraceSettings(ims);
  if (!settings.ok()) return settings.status();
  if (jobs > 1) return ReplayInSegments(ims, aes, manifest, *settings, jobs);

  replay::ReplayOptions options;
  absl::StatusOr<TraceOutput> formatted = OpenTraceOutput(*settings, absl::GetFlag(FLAGS_o));
  if (!formatted.ok()) return formatted.status();
  options.sink = formatted->sink();
  std::unique_ptr<io::OutputFile> trace;
  if (const std::string path = absl::GetFlag(FLAGS_o); !path.empty() && !options.sink) {
    absl::StatusOr<std::unique_ptr<io::OutputFile>> out = io::OutputFile::Create(path);
    if (!out.ok()) return out.status();
    trace = *std::move(out);
    options.trace = trace.get();
  }
  std::unique_ptr<cat::CatWriter> regenerated;
  if (const std::string path = absl::GetFlag(FLAGS_cat); !path.empty()) {
    absl::StatusOr<cat::CatHeader> header = systems::CatHeaderFor(ims);
    if (!header.ok()) return header.status();
    absl::StatusOr<std::unique_ptr<cat::CatWriter>> writer = cat::CatWriter::Create(path, *header);
    if (!writer.ok()) return writer.status();
    regenerated = *std::move(writer);
    options.regenerated = regenerated.get();
  }
  Progress progress("replay", aes.end().cat_records(), "records");
  uint64_t records = 0;
  options.on_record = [&](const cat::BusRecord&) {
    progress.Update(++records);
    return absl::OkStatus();
  };
  archive::ReplayChecksums checksums;
  if (manifest) checksums.Attach(options, ims, manifest->version);
  absl::StatusOr<replay::ReplaySummary> summary = systems::Replay(ims, aes, options);
  progress.Finish();
  if (!summary.ok()) return summary.status();  // the outputs are dropped, never left half-written
  if (manifest) {
    archive::Manifest replayed;
    checksums.Fill(*summary, replayed);
    if (absl::Status s = archive::CompareWithManifest(*manifest, replayed); !s.ok()) return s;
  }
  if (trace) {
    if (absl::Status s = trace->Commit(); !s.ok()) return s;
  }
  if (options.sink) {
    if (absl::Status s = options.sink->Finish(); !s.ok()) return s;
  }
  if (regenerated) {
    if (absl::Status s = regenerated->Finish(); !s.ok()) return s;
  }
  if (!absl::GetFlag(FLAGS_quiet)) PrintReplaySummary("replay", *summary);
  return absl::OkStatus();
}

}  // namespace citcat::cli
