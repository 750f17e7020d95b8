#include "replay/replay.h"

#include <cstdio>
#include <optional>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "archive/archive.h"
#include "citcat/command.h"
#include "citcat/progress.h"
#include "machine/elf_loader.h"
#include "systems/system.h"
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

absl::StatusOr<TraceOutput> OpenTraceOutput(const ims::InitialMachineState& ims) {
  TraceOutput t;
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
  traces::Filter filter;
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
  absl::StatusOr<std::unique_ptr<traces::TraceSink>> writer = traces::OpenWriter(*f, path);
  if (!writer.ok()) return writer.status();
  t.writer = *std::move(writer);
  if (filter.mode || filter.idle_end != 0) {
    t.filter = std::make_unique<traces::FilterSink>(filter, *t.writer);
  }
  return t;
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
  ims::InitialMachineState ims;
  aes::EventSchedule aes;
  std::optional<archive::Manifest> manifest;
  if (from_archive) {
    absl::StatusOr<archive::Archive> packed = archive::Read(args[0]);
    if (!packed.ok()) return packed.status();
    if (absl::Status s = archive::Unpack(*packed, ims, aes); !s.ok()) return s;
    manifest = packed->manifest;
  } else {
    if (absl::Status s = ReadMessage(ims_path, ims); !s.ok()) return s;
    if (absl::Status s = ReadMessage(aes_path, aes); !s.ok()) return s;
  }

  replay::ReplayOptions options;
  absl::StatusOr<TraceOutput> formatted = OpenTraceOutput(ims);
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
