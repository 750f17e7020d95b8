#include "replay/replay.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "archive/archive.h"
#include "archive/segment_starts.h"
#include "cat_parser/reader.h"
#include "cat_parser/writer.h"
#include "citcat/command.h"
#include "citcat/join.h"
#include "citcat/progress.h"
#include "ims/bounds.h"
#include "machine/elf_loader.h"
#include "systems/system.h"
#include "traces/joined_output.h"
#include "traces/output.h"
#include "traces/writers.h"

ABSL_FLAG(std::string, ims, "", "the initial machine state (ims.pb from citcat extract)");
ABSL_FLAG(std::string, aes, "", "the asynchronous event schedule (aes.pb from citcat extract)");
ABSL_FLAG(std::string, cat, "", "also write the regenerated CAT here");
ABSL_FLAG(std::string, format, "",
          "the instruction trace format for -o: text, text-values, champsim, penn, din, idtrace or "
          "idtrace-exec (text-values: text with the values of the registers written; .gz, .xz "
          "and .zst suffixes compress; without --format, the plain text trace)");
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

// What -o gets: the trace writer of --format with its filter, or else replay's own text trace.
struct TraceOutput {
  std::unique_ptr<traces::TraceSink> writer;
  std::unique_ptr<traces::FilterSink> filter;
  std::unique_ptr<traces::ByteOutput> text;  // no --format

  void AttachTo(replay::ReplayOptions& options) {
    options.sink = filter ? filter.get() : writer.get();
    options.trace = text.get();
  }
  // After the replay: the output complete.
  absl::Status Finish() {
    if (writer) return filter ? filter->Finish() : writer->Finish();
    if (text) return text->Close();
    return absl::OkStatus();
  }
};

// --format, --mode and the idle range, checked (and the kernel ELF read) once per command.
struct TraceSettings {
  std::optional<traces::Format> format;  // none: no --format
  traces::Filter filter;
  bool filtered = false;
};

// `machine` is asked for only where a setting depends on the machine (--filter-idle).
absl::StatusOr<TraceSettings> ParseTraceSettings(
    const std::function<absl::StatusOr<const systems::System*>()>& machine) {
  TraceSettings t;
  const std::string format = absl::GetFlag(FLAGS_format), path = absl::GetFlag(FLAGS_o);
  const std::string mode = absl::GetFlag(FLAGS_mode), idle = absl::GetFlag(FLAGS_idle_range);
  if (format.empty()) {
    if (!mode.empty() || !idle.empty() || absl::GetFlag(FLAGS_filter_idle)) {
      return BadUsage("--mode, --idle-range and --filter-idle need --format and -o");
    }
    return t;
  }
  if (path.empty()) return BadUsage("--format needs -o FILE");
  absl::StatusOr<traces::Format> f = traces::ParseFormat(format);
  if (!f.ok()) return f.status();
  t.format = *f;
  traces::Filter& filter = t.filter;
  if (mode == "user") {
    filter.mode = traces::Mode::kUser;
  } else if (mode == "kernel") {
    filter.mode = traces::Mode::kKernel;
  } else if (!mode.empty()) {
    return BadUsage(absl::StrCat("--mode ", mode, ": user or kernel"));
  }
  if (!idle.empty()) {
    std::vector<std::string> parts = absl::StrSplit(idle, ':');
    if (parts.size() != 2 || !absl::SimpleHexAtoi(parts[0], &filter.idle_begin) ||
        !absl::SimpleHexAtoi(parts[1], &filter.idle_end) || filter.idle_begin >= filter.idle_end) {
      return BadUsage(
          absl::StrCat("--idle-range ", idle, ": expected START:END in hex, START < END"));
    }
  }
  if (absl::GetFlag(FLAGS_linux) && !absl::GetFlag(FLAGS_filter_idle)) {
    return BadUsage("--linux tells --filter-idle where Linux idles, and there is no --filter-idle");
  }
  if (absl::GetFlag(FLAGS_filter_idle)) {
    if (!idle.empty()) return BadUsage("--filter-idle or --idle-range, not both");
    absl::StatusOr<const systems::System*> system = machine();
    if (!system.ok()) return system.status();
    std::string elf_path = absl::GetFlag(FLAGS_kernel);
    if (elf_path.empty()) {
      elf_path = absl::GetFlag(FLAGS_linux) ? (*system)->linux_kernel : (*system)->guest_kernel;
    }
    if (elf_path.empty()) {
      return BadUsage(absl::StrCat("--linux: the ", (*system)->name, " runs no Linux"));
    }
    absl::StatusOr<machine::ElfImage> elf = machine::LoadElfFile(elf_path);
    if (!elf.ok()) return elf.status();
    const machine::ElfSymbol* begin = elf->FindSymbol("citcat_idle_begin");
    const machine::ElfSymbol* end = elf->FindSymbol("citcat_idle_end");
    // Linux has none: its idle code (the functions it marks __cpuidle: default_idle,
    // native_safe_halt's STI; HLT, ...) lies between these (docs/machines/i486-linux.md).
    if (begin == nullptr || end == nullptr) {
      begin = elf->FindSymbol("__cpuidle_text_start");
      end = elf->FindSymbol("__cpuidle_text_end");
    }
    if (begin == nullptr || end == nullptr || begin->value >= end->value) {
      return absl::InvalidArgumentError(
          absl::StrCat(elf_path,
                       ": no citcat_idle_begin/citcat_idle_end symbols around the idle loop (nor "
                       "Linux's __cpuidle_text_start/__cpuidle_text_end)"));
    }
    filter.idle_begin = (*system)->kernel_address(begin->value, elf->is64);
    filter.idle_end = (*system)->kernel_address(end->value, elf->is64);
  }
  t.filtered = filter.mode || filter.idle_end != 0;
  return t;
}

// The trace of `settings` into `out` (none without -o).
TraceOutput MakeTraceOutput(const TraceSettings& settings,
                            std::unique_ptr<traces::ByteOutput> out) {
  TraceOutput t;
  if (!out) return t;
  if (!settings.format) {
    t.text = std::move(out);
    return t;
  }
  t.writer = traces::NewWriter(*settings.format, std::move(out));
  if (settings.filtered)
    t.filter = std::make_unique<traces::FilterSink>(settings.filter, *t.writer);
  return t;
}

// ---- --jobs N ----

// One segment: handed over by a replay cutting the whole, made from an archive's segment start,
// or an archive of citcat split's.
struct Piece {
  replay::Segment segment;
  std::string archive;  // the segment archive, or ""
  // Its place among the `count` archives of a split directory (from 1), which its manifest must
  // name; 0 for none.
  uint64_t index = 0, count = 0;
  std::unique_ptr<traces::ByteOutput> trace;  // its piece of -o, or null
  std::string cat;                            // a scratch file, "" for none
  absl::Status status;
  ims::StartPoint start;  // where it begins in the whole
  replay::ReplaySummary summary;
  archive::ReplayChecksums checksums;
};

// A split directory's archive `index` of `count` must say so: a segment missing (the last one
// too), extra or out of its place is refused.
absl::Status CheckPlace(const std::string& path, const archive::Manifest& m, uint64_t index,
                        uint64_t count) {
  if (m.segment == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a segment archive (its manifest names no segment)"));
  }
  if (absl::Status s = CheckSegmentCount(path, m); !s.ok()) return s;
  if (m.segment != index || m.segments != count) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": segment ", m.segment, " of ", m.segments, " by its manifest, but segment archive ",
        index, " of the ", count, " there: a segment missing, extra or out of its place"));
  }
  return absl::OkStatus();
}

// Replays one segment into its pieces of the outputs. A segment archive is checked against its
// own manifest; a segment of the whole sums for the whole's (`version`: its manifest's, or none).
absl::Status ReplayPiece(Piece& p, const TraceSettings& settings, std::optional<uint32_t> version,
                         std::atomic<uint64_t>& records_done) {
  std::optional<aes::Schedule> schedule;
  std::optional<archive::Manifest> manifest;
  if (!p.archive.empty()) {
    absl::StatusOr<archive::ReplayInput> packed = archive::OpenForReplay(p.archive);
    if (!packed.ok()) return packed.status();
    if (p.count != 0) {
      if (absl::Status s = CheckPlace(p.archive, packed->manifest, p.index, p.count); !s.ok()) {
        return s;
      }
    }
    p.segment.ims = std::move(packed->ims);
    schedule = std::move(packed->schedule);
    manifest = std::move(packed->manifest);
  } else {
    schedule = aes::Schedule(p.segment.aes);
  }
  p.start = p.segment.ims.start();
  replay::ReplayOptions options;
  TraceOutput trace = MakeTraceOutput(settings, std::move(p.trace));
  trace.AttachTo(options);
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
  if (manifest) {
    p.checksums.Attach(options, p.segment.ims, *manifest);
  } else if (version) {
    p.checksums.Attach(options, p.segment.ims, *version);
  }
  // Counted for the progress display in batches: one shared counter touched per record would
  // pass its cache line between the threads.
  uint64_t records = 0;
  options.on_record = [&](const cat::BusRecord&) {
    if (++records % 4096 == 0) records_done += 4096;
    return absl::OkStatus();
  };
  absl::StatusOr<replay::ReplaySummary> summary =
      systems::Replay(p.segment.ims, *schedule, options);
  records_done += records % 4096;
  if (!summary.ok()) return summary.status();
  p.summary = *summary;
  if (manifest) {
    if (absl::Status s = p.checksums.Check(p.summary, *manifest); !s.ok()) {
      return absl::DataLossError(absl::StrCat(p.archive, ": ", s.message()));
    }
  }
  if (absl::Status s = trace.Finish(); !s.ok()) return s;
  if (regenerated) return regenerated->Finish();
  return absl::OkStatus();
}

// Hands the segments over in order, each to `add` (which may wait for a thread to be free).
using SegmentFeed = std::function<absl::Status(const std::function<absl::Status(Piece)>& add)>;

// Replays the segments `feed` hands over on up to `jobs` threads, each as soon as it comes, into
// pieces of each output, and joins the pieces in order: -o as they are written
// (traces::JoinedOutput), the CAT at the end. `whole`: the manifest of the whole, checked
// against the segments' sums together (segment archives are checked alone). `progress` shows
// the records the segments have regenerated.
absl::Status ReplaySegments(const SegmentFeed& feed, const std::optional<archive::Manifest>& whole,
                            const TraceSettings& settings, int jobs, Progress& progress) {
  const auto start = std::chrono::steady_clock::now();
  const std::string trace_path = absl::GetFlag(FLAGS_o), cat_path = absl::GetFlag(FLAGS_cat);
  // A piece that waits for the ones before it holds its bytes in memory, up to 64 MiB a thread.
  std::unique_ptr<traces::JoinedOutput> joined;
  if (!trace_path.empty()) {
    absl::StatusOr<std::unique_ptr<traces::JoinedOutput>> out =
        traces::JoinedOutput::Create(trace_path, (uint64_t{64} << 20) * jobs);
    if (!out.ok()) return out.status();
    joined = *std::move(out);
  }
  std::optional<uint32_t> version;
  if (whole) version = whole->version;
  std::deque<Piece> pieces;  // grows at the back; what a thread works on stays where it is
  std::mutex mutex;
  std::condition_variable more;
  size_t next = 0, finished = 0;
  bool fed = false;
  std::atomic<uint64_t> records_done = 0;
  // Waits for `ready`, showing the progress meanwhile.
  const auto wait = [&](std::unique_lock<std::mutex>& lock, const auto& ready) {
    while (!more.wait_for(lock, std::chrono::milliseconds(100), ready)) {
      progress.Show(records_done);
    }
  };
  const auto work = [&] {
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      more.wait(lock, [&] { return next < pieces.size() || fed; });
      if (next >= pieces.size()) return;
      Piece& p = pieces[next++];
      more.notify_all();  // the feed may go on
      lock.unlock();
      p.status = ReplayPiece(p, settings, version, records_done);
      p.segment = {};  // its state and events are done with
      lock.lock();
      ++finished;
      more.notify_all();
    }
  };
  std::vector<std::thread> workers;
  const auto add = [&](Piece p) {
    std::unique_lock<std::mutex> lock(mutex);
    // A segment waits for a thread: no more of them than threads, or a cutting replay that runs
    // ahead would hold every segment of the capture at once.
    wait(lock, [&] { return pieces.size() - next < static_cast<size_t>(jobs); });
    if (joined) {
      // Compressed, each piece is a stream (xz) or frame (zstd) of its own, its compressor's
      // threads a share of the processors (the bytes do not depend on how many).
      absl::StatusOr<std::unique_ptr<traces::ByteOutput>> out = traces::EncodeInto(
          joined->AddPiece(), trace_path, std::max(1, traces::CompressionThreads() / jobs));
      if (!out.ok()) return out.status();
      p.trace = *std::move(out);
    }
    if (!cat_path.empty()) {
      p.cat = absl::StrCat(cat_path, ".piece-", getpid(), "-", pieces.size() + 1);
    }
    pieces.push_back(std::move(p));
    if (workers.size() < static_cast<size_t>(jobs)) workers.emplace_back(work);
    more.notify_one();
    return absl::OkStatus();
  };
  absl::Status status = feed(add);
  {
    std::unique_lock<std::mutex> lock(mutex);
    fed = true;
    more.notify_all();
    wait(lock, [&] { return finished == pieces.size(); });
  }
  for (std::thread& t : workers) t.join();
  progress.Finish();

  for (size_t k = 0; k < pieces.size() && status.ok(); ++k) {
    status = pieces[k].status;
    if (!status.ok() || k == 0) continue;
    // Each segment begins where the one before it ended: segment archives of one trace, in order.
    const Piece &before = pieces[k - 1], &p = pieces[k];
    if (p.start.instructions() != before.start.instructions() + before.summary.instructions ||
        p.start.branch_count() != before.summary.end_branch_count) {
      const auto name = [&](size_t i) {
        return pieces[i].archive.empty() ? absl::StrCat("segment ", i + 1) : pieces[i].archive;
      };
      status = absl::InvalidArgumentError(
          absl::StrCat(name(k), " does not begin where ", name(k - 1), " ends (instruction ",
                       before.start.instructions() + before.summary.instructions,
                       "): not the next segment of the same trace"));
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
  if (status.ok() && whole) status = checksums.Check(total, *whole);
  if (status.ok() && joined) status = joined->Commit();
  // The CAT's pieces in order (citcat join's code), under the first piece's header.
  std::vector<std::string> cats;
  for (const Piece& p : pieces) cats.push_back(p.cat);
  uint64_t records = 0;
  if (status.ok() && !cat_path.empty()) status = JoinCats(cats, cat_path, {}, records);
  for (const Piece& p : pieces) {
    if (!p.cat.empty()) std::remove(p.cat.c_str());
  }
  if (!status.ok()) {
    // A scratch file's name means nothing to the user: the error names the output it is a
    // piece of (the last pieces first, whose names the first ones' begin).
    std::string message(status.message());
    for (auto p = pieces.rbegin(); p != pieces.rend(); ++p) {
      if (!p->cat.empty()) message = absl::StrReplaceAll(message, {{p->cat, cat_path}});
    }
    return absl::Status(status.code(), message);
  }
  total.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!absl::GetFlag(FLAGS_quiet)) PrintReplaySummary("replay", total);
  return absl::OkStatus();
}

// --jobs N on one trace: a replay with no output cuts it into segments as it goes.
absl::Status ReplayCut(const ims::InitialMachineState& ims, const aes::Schedule& aes,
                       const std::optional<archive::Manifest>& manifest,
                       const TraceSettings& settings, int jobs) {
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
  const SegmentFeed cut = [&](const std::function<absl::Status(Piece)>& add) {
    replay::ReplayOptions cutting;
    cutting.max_instructions = instructions;
    for (uint64_t k = 1; k < wanted; ++k) {
      cutting.cut_at_instructions.push_back(ims.start().instructions() + instructions * k / wanted);
    }
    cutting.on_segment = [&](replay::Segment s) {
      Piece p;
      p.segment = std::move(s);
      return add(std::move(p));
    };
    return systems::Replay(ims, aes, cutting).status();
  };
  Progress progress("replay", aes.end().cat_records(), "records");
  return ReplaySegments(cut, manifest, settings, jobs, progress);
}

// --jobs N on an archive that records where its segments begin (docs/archive-format.md, "Segment
// starts"): each segment is made from the whole and its start, with no replay of the whole, and
// handed over as soon as a thread is free.
absl::Status ReplayStarts(const ims::InitialMachineState& ims, const aes::Schedule& aes,
                          const ims::SegmentStarts& starts, const archive::Manifest& manifest,
                          const TraceSettings& settings, int jobs) {
  const SegmentFeed each = [&](const std::function<absl::Status(Piece)>& add) {
    archive::SegmentMaker segments(ims, aes, starts);
    for (size_t k = 0; k < segments.count(); ++k) {
      Piece p;
      absl::StatusOr<replay::Segment> segment = segments.Next();
      if (!segment.ok()) return segment.status();
      p.segment = *std::move(segment);
      if (absl::Status s = add(std::move(p)); !s.ok()) return s;
    }
    return absl::OkStatus();
  };
  Progress progress("replay", aes.end().cat_records(), "records");
  return ReplaySegments(each, manifest, settings, jobs, progress);
}

// Hands over the segment archives in order; each is read by the thread that replays it.
SegmentFeed EachSegment(const std::vector<std::string>& paths) {
  return [&paths](const std::function<absl::Status(Piece)>& add) {
    for (size_t k = 0; k < paths.size(); ++k) {
      Piece p;
      p.archive = paths[k];
      p.index = k + 1;
      p.count = paths.size();
      if (absl::Status s = add(std::move(p)); !s.ok()) return s;
    }
    return absl::OkStatus();
  };
}

absl::Status RunReplay(const std::vector<std::string>& args) {
  const char* synopsis =
      "--ims IMS.pb --aes AES.pb | TRACE.citcat | SEGMENT_DIR [--jobs N] [-o TRACE [--format "
      "text|text-values|champsim|penn|din|idtrace|idtrace-exec] "
      "[--mode user|kernel] [--filter-idle | --idle-range START:END]] [--cat REGENERATED.cat]";
  const std::string ims_path = absl::GetFlag(FLAGS_ims), aes_path = absl::GetFlag(FLAGS_aes);
  // An archive (docs/archive-format.md) stands for --ims and --aes; its manifest is checked at
  // the end.
  const bool from_archive = args.size() == 1 && ims_path.empty() && aes_path.empty();
  if (!from_archive && (!args.empty() || ims_path.empty() || aes_path.empty())) {
    return UsageError("replay", synopsis);
  }
  const int jobs = absl::GetFlag(FLAGS_jobs);
  if (jobs < 1 || jobs > 1024) return BadUsage("--jobs must be 1 to 1024");
  std::error_code error;
  // A directory of citcat split's segment archives, each replayed and checked alone, on --jobs
  // threads, with no replay of the whole to cut it first.
  std::optional<std::vector<std::string>> segments;
  if (from_archive && std::filesystem::is_directory(args[0], error)) {
    absl::StatusOr<std::vector<std::string>> paths = SegmentArchives(args[0]);
    if (!paths.ok()) return paths.status();
    if (paths->empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          args[0], ": no segment archives (segment-0001.citcat, ... from citcat split)"));
    }
    segments = *std::move(paths);
  }
  std::vector<std::string> inputs = {ims_path, aes_path, absl::GetFlag(FLAGS_kernel)};
  if (segments) {
    inputs.insert(inputs.end(), segments->begin(), segments->end());
  } else if (from_archive) {
    inputs.push_back(args[0]);
  }
  if (absl::Status s = CheckOutputs(inputs, {absl::GetFlag(FLAGS_o), absl::GetFlag(FLAGS_cat)});
      !s.ok()) {
    return s;
  }
  // The schedule is read as replay goes (aes::Schedule), so memory does not grow with it.
  ims::InitialMachineState ims;
  absl::StatusOr<aes::Schedule> schedule;
  std::optional<archive::Manifest> manifest;
  ims::SegmentStarts starts;
  if (segments) {
    // The first segment's IMS stands for the whole where a setting needs the machine; each
    // segment is read by the thread that replays it.
    absl::StatusOr<TraceSettings> settings =
        ParseTraceSettings([&]() -> absl::StatusOr<const systems::System*> {
          absl::StatusOr<archive::Archive> first = archive::ReadForReplay(segments->front());
          if (!first.ok()) return first.status();
          if (absl::Status s = archive::UnpackIms(*first, ims); !s.ok()) return s;
          return systems::ForIms(ims);
        });
    if (!settings.ok()) return settings.status();
    Progress progress("replay", 0, "records");
    return ReplaySegments(EachSegment(*segments), std::nullopt, *settings, jobs, progress);
  }
  if (from_archive) {
    absl::StatusOr<archive::ReplayInput> packed = archive::OpenForReplay(args[0]);
    if (!packed.ok()) return packed.status();
    ims = std::move(packed->ims);
    schedule = std::move(packed->schedule);
    manifest = std::move(packed->manifest);
    starts = std::move(packed->segment_starts);
  } else {
    if (absl::Status s = ims::ReadFile(ims_path, ims); !s.ok()) return s;
    schedule = aes::Schedule::Parse(aes::BytesInFile(aes_path));
  }
  if (!schedule.ok()) return schedule.status();
  const aes::Schedule& aes = *schedule;

  absl::StatusOr<TraceSettings> settings = ParseTraceSettings([&] { return systems::ForIms(ims); });
  if (!settings.ok()) return settings.status();
  if (jobs > 1 && starts.starts_size() > 0) {
    return ReplayStarts(ims, aes, starts, *manifest, *settings, jobs);
  }
  // Without starts, a replay of the whole cuts the segments as it goes: with nothing to write,
  // that replay is all the work there is, and the segments would only repeat it.
  const bool writes = !absl::GetFlag(FLAGS_o).empty() || !absl::GetFlag(FLAGS_cat).empty();
  if (jobs > 1 && !absl::GetFlag(FLAGS_quiet) && (from_archive || !writes)) {
    // (from_archive: args[0] names the archive)
    const std::string no_starts =
        from_archive ? absl::StrCat(args[0], " records no segment starts") : "";
    const std::string what =
        writes ? absl::StrCat(no_starts,
                              ", so a replay of the whole cuts it into segments as it goes, which "
                              "bounds what --jobs gains")
               : absl::StrCat(from_archive ? no_starts + "; " : "",
                              "with no output, a replay of the whole is as fast as --jobs could "
                              "make it");
    std::fprintf(stderr, "citcat replay: %s (%s)\n", what.c_str(),
                 from_archive ? "citcat pack --segment-starts K records them"
                              : "an archive packed with --segment-starts K replays in parallel");
  }
  if (jobs > 1 && writes) return ReplayCut(ims, aes, manifest, *settings, jobs);

  replay::ReplayOptions options;
  TraceOutput trace;
  if (const std::string path = absl::GetFlag(FLAGS_o); !path.empty()) {
    absl::StatusOr<std::unique_ptr<traces::ByteOutput>> out = traces::OpenOutput(path);
    if (!out.ok()) return out.status();
    trace = MakeTraceOutput(*settings, *std::move(out));
  }
  trace.AttachTo(options);
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
  if (manifest) checksums.Attach(options, ims, *manifest);
  absl::StatusOr<replay::ReplaySummary> summary = systems::Replay(ims, aes, options);
  progress.Finish();
  if (!summary.ok()) return summary.status();  // the outputs are dropped, never left half-written
  if (manifest) {
    if (absl::Status s = checksums.Check(*summary, *manifest); !s.ok()) return s;
  }
  if (absl::Status s = trace.Finish(); !s.ok()) return s;
  if (regenerated) {
    if (absl::Status s = regenerated->Finish(); !s.ok()) return s;
  }
  if (!absl::GetFlag(FLAGS_quiet)) PrintReplaySummary("replay", *summary);
  return absl::OkStatus();
}

}  // namespace citcat::cli
