
#include <cstdio>
#include <filesystem>

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
  Progress progress("extract", std::max<int64_t>(in.file_size(), 0), "B");
  absl::StatusOr<extract::Extraction> x =
      systems::Extract(in, [&] { progress.Update(in.bytes_read()); });
  progress.Finish();
  if (!x.ok()) return x.status();

  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return absl::UnavailableError(absl::StrCat(dir, ": cannot create: ", error.message()));
  if (absl::Status s = WriteMessage(x->ims, dir + "/ims.pb"); !s.ok()) return s;
  if (absl::Status s = WriteMessage(x->aes, dir + "/aes.pb"); !s.ok()) return s;
  if (!absl::GetFlag(FLAGS_quiet)) {
    const aes::EventSchedule& aes = x->aes;
    std::fprintf(stderr,
                 "citcat extract: %s/ims.pb (%zu bytes, %d memory extents), %s/aes.pb (%zu bytes: "
                 "%d interrupts, %d DMA, %d device accesses, %d register reads)\n",
                 dir.c_str(), x->ims.ByteSizeLong(), x->ims.memory_size(), dir.c_str(),
                 aes.ByteSizeLong(), aes.interrupts_size(), aes.dma_size(), aes.device_io_size(),
                 aes.register_reads_size());
  }
  return absl::OkStatus();
}

}  // namespace citcat::cli
