// citcat unpack: an archive's IMS, AES and manifest back as files, after every check of
// docs/archive-format.md.
#include <cstdio>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "archive/archive.h"
#include "citcat/command.h"

namespace citcat::cli {

absl::Status RunUnpack(const std::vector<std::string>& args) {
  if (args.size() != 1) return UsageError("unpack", "TRACE.citcat -o DIR");
  std::string dir;
  if (absl::Status s = RequireOutput("unpack", dir); !s.ok()) return s;
  if (absl::Status s =
          CheckOutputs({args[0]}, {dir + "/ims.pb", dir + "/aes.pb", dir + "/manifest.txt"});
      !s.ok()) {
    return s;
  }
  // The AES stays in the archive, checked there event by event: it is copied to aes.pb as it is
  // decoded, never held whole.
  absl::StatusOr<archive::Archive> a = archive::ReadForReplay(args[0]);
  if (!a.ok()) return a.status();
  ims::InitialMachineState ims;
  if (absl::Status s = archive::UnpackIms(*a, ims); !s.ok()) return s;
  absl::StatusOr<aes::Schedule> schedule = archive::ScheduleOf(*a);
  if (!schedule.ok()) return schedule.status();
  if (absl::Status s = archive::CheckSegmentPlace(a->manifest, ims.start(), schedule->end());
      !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(args[0], ": ", s.message()));
  }
  absl::StatusOr<std::unique_ptr<io::OutputDirectory>> out_dir = io::OutputDirectory::Create(dir);
  if (!out_dir.ok()) return out_dir.status();
  io::OutputDirectory& d = **out_dir;
  const std::string manifest = a->manifest.ToText();
  for (const auto& [name, bytes] : {std::pair<const char*, const std::string*>{"ims.pb", &a->ims},
                                    {"manifest.txt", &manifest}}) {
    absl::StatusOr<std::unique_ptr<io::OutputFile>> out = io::OutputFile::Create(d.Path(name));
    if (!out.ok()) return out.status();
    if (absl::Status s = (*out)->Write(*bytes); !s.ok()) return s;
    if (absl::Status s = (*out)->Commit(); !s.ok()) return s;
  }
  absl::StatusOr<std::unique_ptr<io::OutputFile>> aes = io::OutputFile::Create(d.Path("aes.pb"));
  if (!aes.ok()) return aes.status();
  absl::StatusOr<std::unique_ptr<google::protobuf::io::ZeroCopyInputStream>> in = a->aes->Open();
  if (!in.ok()) return in.status();
  const void* data;
  int size;
  while ((*in)->Next(&data, &size)) {
    if (absl::Status s =
            (*aes)->Write({static_cast<const uint8_t*>(data), static_cast<size_t>(size)});
        !s.ok()) {
      return s;
    }
  }
  // The section was checked to be this long: anything else is a read error meanwhile.
  const uint64_t aes_bytes = (*aes)->bytes_written();
  if (aes_bytes != a->manifest.aes_bytes) {
    return absl::DataLossError(absl::StrCat(a->aes->name(), ": ", aes_bytes,
                                            " bytes read, not the ", a->manifest.aes_bytes,
                                            " the manifest states"));
  }
  if (absl::Status s = (*aes)->Commit(); !s.ok()) return s;
  if (absl::Status s = d.Commit(); !s.ok()) return s;
  if (!absl::GetFlag(FLAGS_quiet)) {
    std::fprintf(stderr,
                 "citcat unpack: %s/ims.pb (%zu bytes), %s/aes.pb (%llu bytes), %s/manifest.txt\n",
                 dir.c_str(), a->ims.size(), dir.c_str(),
                 static_cast<unsigned long long>(aes_bytes), dir.c_str());
  }
  return absl::OkStatus();
}

}  // namespace citcat::cli
