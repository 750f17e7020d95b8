#include "replay/replay.h"

#include <cstdio>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "citcat/command.h"
#include "citcat/progress.h"

ABSL_FLAG(std::string, ims, "", "the initial machine state (ims.pb from citcat extract)");
ABSL_FLAG(std::string, aes, "", "the asynchronous event schedule (aes.pb from citcat extract)");
ABSL_FLAG(std::string, cat, "", "also write the regenerated CAT here");

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

absl::Status RunReplay(const std::vector<std::string>& args) {
  const char* synopsis = "--ims IMS.pb --aes AES.pb [-o TRACE.txt] [--cat REGENERATED.cat]";
  const std::string ims_path = absl::GetFlag(FLAGS_ims), aes_path = absl::GetFlag(FLAGS_aes);
  if (!args.empty() || ims_path.empty() || aes_path.empty()) return UsageError("replay", synopsis);
  ims::InitialMachineState ims;
  if (absl::Status s = ReadMessage(ims_path, ims); !s.ok()) return s;
  aes::EventSchedule aes;
  if (absl::Status s = ReadMessage(aes_path, aes); !s.ok()) return s;

  replay::ReplayOptions options;
  std::unique_ptr<io::OutputFile> trace;
  if (const std::string path = absl::GetFlag(FLAGS_o); !path.empty()) {
    absl::StatusOr<std::unique_ptr<io::OutputFile>> out = io::OutputFile::Create(path);
    if (!out.ok()) return out.status();
    trace = *std::move(out);
    options.trace = trace.get();
  }
  std::unique_ptr<cat::CatWriter> regenerated;
  if (const std::string path = absl::GetFlag(FLAGS_cat); !path.empty()) {
    absl::StatusOr<std::unique_ptr<cat::CatWriter>> writer =
        cat::CatWriter::Create(path, replay::R4400Header(ims));
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
  absl::StatusOr<replay::ReplaySummary> summary = replay::Replay(ims, aes, options);
  progress.Finish();
  if (!summary.ok()) return summary.status();  // the outputs are dropped, never left half-written
  if (trace) {
    if (absl::Status s = trace->Commit(); !s.ok()) return s;
  }
  if (regenerated) {
    if (absl::Status s = regenerated->Finish(); !s.ok()) return s;
  }
  if (!absl::GetFlag(FLAGS_quiet)) PrintReplaySummary("replay", *summary);
  return absl::OkStatus();
}

}  // namespace citcat::cli
