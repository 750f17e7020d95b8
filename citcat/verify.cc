#include "replay/verify.h"

#include <cstdio>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "citcat/command.h"
#include "citcat/progress.h"
#include "replay/replay.h"
#include "systems/system.h"

namespace citcat::cli {

void PrintReplaySummary(const char* command, const replay::ReplaySummary& s);

namespace {

absl::Status Verdict(const replay::VerifyResult& v) {
  if (!v.identical) return absl::FailedPreconditionError(absl::StrCat("not identical: ", v.report));
  return absl::OkStatus();
}

// Extract, replay and compare in one go, the regenerated records checked as they come.
absl::Status VerifyCapture(const std::string& path) {
  absl::StatusOr<std::unique_ptr<cat::CatReader>> reader = cat::CatReader::Open(path);
  if (!reader.ok()) return reader.status();
  cat::CatReader& in = **reader;
  // The schedule goes to scratch files as it is extracted and is read back as replay uses it:
  // memory does not grow with the capture.
  absl::StatusOr<std::unique_ptr<aes::ScheduleWriter>> events =
      aes::ScheduleWriter::Create(path + " (its extracted AES)");
  if (!events.ok()) return events.status();
  absl::StatusOr<extract::Extraction> x;
  {
    Progress progress("verify: extract", std::max<int64_t>(in.file_size(), 0), "B");
    x = systems::Extract(
        in, [&] { progress.Update(in.bytes_read()); }, events->get());
  }
  if (!x.ok()) return x.status();
  absl::StatusOr<std::shared_ptr<const aes::ScheduleBytes>> bytes =
      (*events)->FinishInScratch(x->aes);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<aes::Schedule> schedule = aes::Schedule::Parse(*bytes);
  if (!schedule.ok()) return schedule.status();
  Progress progress("verify: replay", schedule->end().cat_records(), "records");
  uint64_t records = 0;
  replay::ReplayOptions options;
  options.on_record = [&](const cat::BusRecord&) {
    progress.Update(++records);
    return absl::OkStatus();
  };
  replay::ReplaySummary summary;
  absl::StatusOr<replay::VerifyResult> v =
      systems::ReplayAgainst(path, x->ims, *schedule, options, &summary);
  progress.Finish();
  if (!v.ok()) return v.status();
  if (absl::Status s = Verdict(*v); !s.ok()) return s;
  if (!absl::GetFlag(FLAGS_quiet)) {
    PrintReplaySummary("verify", summary);
    std::fprintf(stderr, "citcat verify: identical: %llu records compared from record %llu on\n",
                 static_cast<unsigned long long>(v->compared),
                 static_cast<unsigned long long>(v->start));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunVerify(const std::vector<std::string>& args) {
  if (args.size() == 1) return VerifyCapture(args[0]);
  if (args.size() != 2) return UsageError("verify", "CAPTURE.cat [REGENERATED.cat]");
  if (SameFile(args[0], args[1])) {
    return BadUsage(
        absl::StrCat(args[0], " and ", args[1],
                     " are the same file: comparing a file with itself proves nothing"));
  }
  absl::StatusOr<replay::VerifyResult> v = systems::CompareCats(args[0], args[1]);
  if (!v.ok()) return v.status();
  if (absl::Status s = Verdict(*v); !s.ok()) return s;
  if (!absl::GetFlag(FLAGS_quiet)) {
    std::fprintf(stderr, "citcat verify: identical: %llu records compared from record %llu on\n",
                 static_cast<unsigned long long>(v->compared),
                 static_cast<unsigned long long>(v->start));
  }
  return absl::OkStatus();
}

}  // namespace citcat::cli
