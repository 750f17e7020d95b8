// citcat stats: event counts, the record sizes of Fig. 5, perturbation and the CAT/IT curve of
// Fig. 4 for a CAT (extracted in memory) or an archive (docs/archive-format.md, "Statistics").
#include "archive/stats.h"

#include <cstdio>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "archive/archive.h"
#include "citcat/command.h"
#include "citcat/progress.h"
#include "systems/system.h"

ABSL_FLAG(std::string, plot, "",
          "also draw the CAT/IT curve (bus bytes against instructions) "
          "as an SVG file here");

namespace citcat::cli {

absl::Status RunStats(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    return UsageError("stats", "CAPTURE.cat|TRACE.citcat [-o STATS.txt] [--plot CURVE.svg]");
  }
  const std::string& input = args[0];
  if (absl::Status s = CheckOutputs({input}, {absl::GetFlag(FLAGS_o), absl::GetFlag(FLAGS_plot)});
      !s.ok()) {
    return s;
  }
  ims::InitialMachineState ims;
  aes::EventSchedule aes;
  ims::SegmentStarts starts;
  if (archive::LooksLikeArchive(input)) {
    absl::StatusOr<archive::Archive> a = archive::Read(input);
    if (!a.ok()) return a.status();
    if (absl::Status s = archive::Unpack(*a, ims, aes); !s.ok()) return s;
    starts = std::move(a->segment_starts);
  } else {
    absl::StatusOr<std::unique_ptr<cat::CatReader>> reader = cat::CatReader::Open(input);
    if (!reader.ok()) return reader.status();
    cat::CatReader& in = **reader;
    Progress progress("stats", std::max<int64_t>(in.file_size(), 0), "B");
    absl::StatusOr<extract::Extraction> x =
        systems::Extract(in, [&] { progress.Update(in.bytes_read()); });
    progress.Finish();
    if (!x.ok()) return x.status();
    ims = std::move(x->ims);
    aes = std::move(x->aes);
  }
  // The curve needs the instruction count of every record, which only a replay knows.
  absl::StatusOr<archive::Stats> stats = archive::ComputeStats(ims, aes);
  if (!stats.ok()) return stats.status();
  if (starts.starts_size() > 0) {  // what the archive pays for them, beside IMS + AES
    const std::string bytes = starts.SerializeAsString();
    stats->sizes.push_back({"segment starts", static_cast<uint64_t>(starts.starts_size()),
                            bytes.size(), archive::ZstdSize(bytes)});
  }

  std::unique_ptr<io::OutputFile> svg;
  if (const std::string path = absl::GetFlag(FLAGS_plot); !path.empty()) {
    absl::StatusOr<std::unique_ptr<io::OutputFile>> out = io::OutputFile::Create(path);
    if (!out.ok()) return out.status();
    svg = *std::move(out);
    const std::string title = absl::StrCat("CAT/IT: bus bytes against instructions, ", input);
    if (absl::Status s = svg->Write(archive::CurveSvg(stats->curve, title)); !s.ok()) return s;
  }
  const std::string text = archive::FormatStats(*stats, input);
  const std::string text_path = absl::GetFlag(FLAGS_o);
  absl::StatusOr<std::unique_ptr<io::OutputFile>> out =
      io::OutputFile::Create(text_path.empty() ? "-" : text_path);
  if (!out.ok()) return out.status();
  if (absl::Status s = (*out)->Write(text); !s.ok()) return s;
  if (svg) {
    if (absl::Status s = svg->Commit(); !s.ok()) return s;
  }
  return (*out)->Commit();
}

}  // namespace citcat::cli
