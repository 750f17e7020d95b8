// citcat pack: the IMS and AES of an extraction as one checked, compressed archive
// (docs/archive-format.md).
#include <cstdio>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "archive/archive.h"
#include "archive/segment_starts.h"
#include "citcat/command.h"
#include "ims/bounds.h"

ABSL_FLAG(int, level, 19, "zstd compression level of the archive's sections (1-22)");
ABSL_FLAG(uint64_t, segment_starts, 0,
          "record where this many segments begin, so that replay --jobs starts them at once (fewer "
          "on a short capture; each costs about the memory the program has changed and reads on)");

namespace citcat::cli {

absl::Status RunPack(const std::vector<std::string>& args) {
  if (args.size() != 1) return UsageError("pack", "DIR -o TRACE.citcat");
  std::string path;
  if (absl::Status s = RequireOutput("pack", path); !s.ok()) return s;
  if (absl::Status s = CheckOutputs({args[0] + "/ims.pb", args[0] + "/aes.pb"}, {path}); !s.ok()) {
    return s;
  }
  const int level = absl::GetFlag(FLAGS_level);
  if (level < 1 || level > 22) return BadUsage("--level must be 1 to 22");
  ims::InitialMachineState ims;
  // Its sizes checked before it is read (ims/bounds.h).
  if (absl::Status s = ims::ReadFile(args[0] + "/ims.pb", ims); !s.ok()) return s;
  // One replay fills the manifest: what a replay of the archive must reproduce. The AES is
  // streamed from its file, for the replay and into the archive.
  const uint64_t segments = absl::GetFlag(FLAGS_segment_starts);
  if (segments > archive::kMaxSegmentStarts + 1) {
    return BadUsage(
        absl::StrCat("--segment-starts must be at most ", archive::kMaxSegmentStarts + 1));
  }
  absl::StatusOr<archive::Archive> a =
      archive::Pack(ims, aes::BytesInFile(args[0] + "/aes.pb"), segments);
  if (!a.ok()) return a.status();
  absl::StatusOr<std::unique_ptr<io::OutputFile>> out = io::OutputFile::Create(path);
  if (!out.ok()) return out.status();
  if (absl::Status s = archive::Write(*a, **out, level); !s.ok()) return s;
  const uint64_t bytes = (*out)->bytes_written();
  if (absl::Status s = (*out)->Commit(); !s.ok()) return s;
  if (!absl::GetFlag(FLAGS_quiet)) {
    const archive::Manifest& m = a->manifest;
    std::fprintf(
        stderr,
        "citcat pack: %s: %llu bytes for %llu instructions (%.1f:1 against 10 bytes per "
        "instruction), %llu records; instruction-crc64 %016llx, cat-crc64 %016llx%s\n",
        path.c_str(), static_cast<unsigned long long>(bytes),
        static_cast<unsigned long long>(m.instructions),
        bytes ? 10.0 * m.instructions / bytes : 0.0, static_cast<unsigned long long>(m.records),
        static_cast<unsigned long long>(m.instruction_crc64),
        static_cast<unsigned long long>(m.cat_crc64),
        segments > 1
            ? absl::StrCat("; the starts of ", a->segment_starts.starts_size() + 1, " segments")
                  .c_str()
            : "");
  }
  return absl::OkStatus();
}

}  // namespace citcat::cli
