
#include <cstdio>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "citcat/command.h"
#include "citcat/progress.h"
#include "systems/system.h"

namespace citcat::cli {
namespace {

absl::Status WriteMessage(const google::protobuf::Message& message, const std::string& path) {
  std::string bytes;
  if (!message.SerializeToString(&bytes)) {
    return absl::InternalError(absl::StrCat(path, ": cannot serialize"));
  }
  absl::StatusOr<std::unique_ptr<io::OutputFile>> out = io::OutputFile::Create(path);
  if (!out.ok()) return out.status();
  if (absl::Status s = (*out)->Write(bytes); !s.ok()) return s;
  return (*out)->Commit();
}

}  // namespace

absl::Status RunExtract(const std::vector<std::string>& args) {
  if (args.size() != 1) return UsageError("extract", "CAPTURE.cat -o DIR");
  std::string dir;
  if (absl::Status s = RequireOutput("extract", dir); !s.ok()) return s;
  if (absl::Status s = CheckOutputs({args[0]}, {dir + "/ims.pb", dir + "/aes.pb"}); !s.ok()) {
    return s;
  }
  absl::StatusOr<std::unique_ptr<cat::CatReader>> reader = cat::CatReader::Open(args[0]);
  if (!reader.ok()) return reader.status();
  cat::CatReader& in = **reader;
  // Written under a temporary name, DIR only once both files are complete.
  absl::StatusOr<std::unique_ptr<io::OutputDirectory>> out_dir = io::OutputDirectory::Create(dir);
  if (!out_dir.ok()) return out_dir.status();
  // The events go to aes.pb as they are found: a long trace's schedule is never held whole.
  const std::string aes_path = (*out_dir)->Path("aes.pb");
  absl::StatusOr<std::unique_ptr<aes::ScheduleWriter>> events =
      aes::ScheduleWriter::Create(aes_path);
  if (!events.ok()) return events.status();
  Progress progress("extract", std::max<int64_t>(in.file_size(), 0), "B");
  absl::StatusOr<extract::Extraction> x = systems::Extract(
      in, [&] { progress.Update(in.bytes_read()); }, events->get());
  progress.Finish();
  if (!x.ok()) return x.status();
  if (absl::Status s = WriteMessage(x->ims, (*out_dir)->Path("ims.pb")); !s.ok()) return s;
  if (absl::Status s = (*events)->Finish(x->aes); !s.ok()) return s;
  if (absl::Status s = (*out_dir)->Commit(); !s.ok()) return s;
  if (!absl::GetFlag(FLAGS_quiet)) {
    const std::array<uint64_t, 4>& n = (*events)->counts();
    std::fprintf(stderr,
                 "citcat extract: %s/ims.pb (%zu bytes, %d memory extents), %s (%llu bytes: "
                 "%llu interrupts, %llu DMA, %llu device accesses, %llu register reads)\n",
                 dir.c_str(), x->ims.ByteSizeLong(), x->ims.memory_size(),
                 (dir + "/aes.pb").c_str(), static_cast<unsigned long long>((*events)->bytes()),
                 static_cast<unsigned long long>(n[0]), static_cast<unsigned long long>(n[1]),
                 static_cast<unsigned long long>(n[2]), static_cast<unsigned long long>(n[3]));
  }
  return absl::OkStatus();
}

}  // namespace citcat::cli
