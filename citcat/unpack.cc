// citcat unpack: an archive's IMS, AES and manifest back as files, after every check of
// docs/archive-format.md.
#include <cstdio>
#include <filesystem>

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
  absl::StatusOr<archive::Archive> a = archive::Read(args[0]);
  if (!a.ok()) return a.status();
  ims::InitialMachineState ims;
  aes::EventSchedule aes;
  if (absl::Status s = archive::Unpack(*a, ims, aes); !s.ok()) return s;  // every check
  absl::StatusOr<std::string> aes_bytes = aes::ReadAll(*a->aes, a->manifest.aes_bytes);
  if (!aes_bytes.ok()) return aes_bytes.status();
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return absl::UnavailableError(absl::StrCat(dir, ": cannot create: ", error.message()));
  const std::pair<const char*, const std::string*> files[] = {
      {"/ims.pb", &a->ims}, {"/aes.pb", &*aes_bytes}, {"/manifest.txt", nullptr}};
  const std::string manifest = a->manifest.ToText();
  for (const auto& [name, bytes] : files) {
    absl::StatusOr<std::unique_ptr<io::OutputFile>> out = io::OutputFile::Create(dir + name);
    if (!out.ok()) return out.status();
    if (absl::Status s = (*out)->Write(bytes ? *bytes : manifest); !s.ok()) return s;
    if (absl::Status s = (*out)->Commit(); !s.ok()) return s;
  }
  if (!absl::GetFlag(FLAGS_quiet)) {
    std::fprintf(stderr,
                 "citcat unpack: %s/ims.pb (%zu bytes), %s/aes.pb (%zu bytes), %s/manifest.txt\n",
                 dir.c_str(), a->ims.size(), dir.c_str(), aes_bytes->size(), dir.c_str());
  }
  return absl::OkStatus();
}

}  // namespace citcat::cli
