// citcat split: one archive into segment archives that each replay alone
// (docs/archive-format.md, "Segments").

#include <cstdio>
#include <filesystem>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "archive/archive.h"
#include "citcat/command.h"
#include "citcat/join.h"
#include "citcat/progress.h"
#include "io/cleanup.h"
#include "io/file.h"
#include "replay/replay.h"
#include "systems/system.h"

ABSL_FLAG(uint64_t, segments, 0, "split into this many segments of about equal length");
ABSL_FLAG(uint64_t, every, 0, "split every this many instructions");

namespace citcat::cli {
namespace {

// Writes the segment archive at `path` again, naming `segments` as the number of segments.
absl::Status Renumber(const std::string& path, uint64_t segments) {
  absl::StatusOr<archive::Archive> a = archive::Read(path);
  if (!a.ok()) return a.status();
  a->manifest.segments = segments;
  absl::StatusOr<std::unique_ptr<io::OutputFile>> out = io::OutputFile::CreateScratch(path);
  if (!out.ok()) return out.status();
  if (absl::Status s = archive::Write(*a, **out); !s.ok()) return s;
  return (*out)->Commit();
}

}  // namespace

absl::Status RunSplit(const std::vector<std::string>& args) {
  const char* synopsis = "TRACE.citcat --segments K | --every N -o DIR";
  if (args.size() != 1) return UsageError("split", synopsis);
  std::string dir;
  if (absl::Status s = RequireOutput("split", dir); !s.ok()) return s;
  const uint64_t segments = absl::GetFlag(FLAGS_segments), every = absl::GetFlag(FLAGS_every);
  if ((segments == 0) == (every == 0)) {
    return BadUsage("give --segments K or --every N (one of them)");
  }
  if (absl::Status s = CheckOutputs(args, {dir}); !s.ok()) return s;
  if (std::filesystem::exists(dir)) {
    return absl::AlreadyExistsError(absl::StrCat(dir, ": exists; split writes a new directory"));
  }
  // The schedule is read from the archive as the cutting replay uses it.
  absl::StatusOr<archive::ReplayInput> whole = archive::OpenForReplay(args[0]);
  if (!whole.ok()) return whole.status();
  const ims::InitialMachineState& ims = whole->ims;
  const uint64_t instructions = whole->manifest.instructions;
  if (segments > instructions || (segments > 0 && instructions / segments == 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--segments ", segments, ": the trace has ", instructions, " instructions"));
  }

  replay::ReplayOptions options;
  const uint64_t first = ims.start().instructions();
  if (segments > 0) {
    for (uint64_t k = 1; k < segments; ++k) {
      options.cut_at_instructions.push_back(first + instructions * k / segments);
    }
  } else {
    for (uint64_t at = every; at < instructions; at += every) {
      options.cut_at_instructions.push_back(first + at);
    }
  }
  // Written into a directory of its own (DIR.partial-PID), renamed to DIR once every segment is
  // there; an error or a signal removes it with what is in it.
  absl::StatusOr<std::unique_ptr<io::OutputDirectory>> out_dir = io::OutputDirectory::Create(dir);
  if (!out_dir.ok()) return out_dir.status();
  const std::string partial = (*out_dir)->working_path();
  // Each segment names its place of how many (docs/archive-format.md, "Segments"). Two cuts
  // closer than a flow break make one segment, so the count is known for sure only at the end:
  // the segments written with the planned one are written again in that rare case.
  const uint64_t planned = options.cut_at_instructions.size() + 1;
  uint64_t written = 0, segment_instructions = 0;
  Progress progress("split", instructions, "instructions");
  options.on_segment = [&](replay::Segment s) -> absl::Status {
    // Packing replays the segment alone: each is checked as it is written.
    absl::StatusOr<archive::Archive> a = archive::Pack(s.ims, s.aes);
    if (!a.ok()) {
      return absl::InternalError(
          absl::StrCat("segment ", written + 1, " does not replay alone: ", a.status().message()));
    }
    a->manifest.segment = ++written;
    a->manifest.segments = planned;
    segment_instructions += a->manifest.instructions;
    progress.Update(segment_instructions);
    const std::string path = SegmentArchivePath(partial, written);
    absl::StatusOr<std::unique_ptr<io::OutputFile>> out = io::OutputFile::Create(path);
    if (!out.ok()) return out.status();
    if (absl::Status st = archive::Write(*a, **out); !st.ok()) return st;
    return (*out)->Commit();
  };
  // The whole replay that cuts is checked against the archive's manifest too.
  archive::ReplayChecksums checksums;
  checksums.Attach(options, ims, whole->manifest);
  absl::StatusOr<replay::ReplaySummary> summary = systems::Replay(ims, whole->schedule, options);
  progress.Finish();
  absl::Status status = summary.status();
  if (status.ok()) status = checksums.Check(*summary, whole->manifest);
  if (status.ok() && segment_instructions != instructions) {
    status = absl::InternalError(absl::StrCat("the segments hold ", segment_instructions,
                                              " instructions, the trace ", instructions));
  }
  for (uint64_t k = 1; status.ok() && written != planned && k <= written; ++k) {
    status = Renumber(SegmentArchivePath(partial, k), written);
  }
  if (status.ok()) status = (*out_dir)->Commit();
  if (!status.ok()) return status;
  if (!absl::GetFlag(FLAGS_quiet)) {
    std::fprintf(stderr, "citcat split: %llu segments of %s in %s\n",
                 static_cast<unsigned long long>(written), args[0].c_str(), dir.c_str());
  }
  return absl::OkStatus();
}

}  // namespace citcat::cli
