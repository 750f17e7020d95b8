// Writes seed archives for archive_reader_fuzzer: the IMS and AES of an extraction (from the
// examples' sample CAT) under a manifest with made-up replay figures (the reader does not replay),
// once zstd-compressed and once with its sections small enough to mutate well.
//   archive_fuzz_seed DIR/ims.pb DIR/aes.pb OUT_DIR
#include <cstdio>
#include <string>

#include "archive/archive.h"
#include "ims/ims_util.h"
#include "io/file.h"

int main(int argc, char** argv) {
  using namespace citcat;  // NOLINT
  if (argc != 4) {
    std::fprintf(stderr, "usage: archive_fuzz_seed IMS.pb AES.pb OUT_DIR\n");
    return 2;
  }
  archive::Archive a;
  auto ims = io::ReadWholeFile(argv[1], 1 << 30);
  auto aes = io::ReadWholeFile(argv[2], 1 << 30);
  if (!ims.ok() || !aes.ok()) {
    std::fprintf(stderr, "cannot read the IMS or AES\n");
    return 1;
  }
  // The manifest names the IMS's machine, or the reader stops before the IMS and AES.
  ims::InitialMachineState state;
  if (!state.ParseFromString(*ims)) {
    std::fprintf(stderr, "%s is not an IMS\n", argv[1]);
    return 1;
  }
  a.manifest.machine = ims::MachineName(state.description().machine());
  const std::string dir = argv[3];
  const std::pair<std::string, std::string> seeds[] = {{"sample", *ims}, {"small", "x"}};
  for (const auto& [name, ims_bytes] : seeds) {
    a.ims = ims_bytes;
    const std::string aes_bytes = name == "small" ? std::string() : *aes;
    a.aes = aes::BytesInMemory(aes_bytes, "aes.pb");
    a.manifest.instructions = 3;
    a.manifest.trace_entries = 3;
    a.manifest.records = 7;
    a.manifest.ims_bytes = a.ims.size();
    a.manifest.aes_bytes = aes_bytes.size();
    a.manifest.producer = "archive_fuzz_seed";
    auto out = io::OutputFile::Create(dir + "/" + name + ".citcat");
    if (!out.ok() || !archive::Write(a, **out, 3).ok() || !(*out)->Commit().ok()) {
      std::fprintf(stderr, "cannot write %s\n", name.c_str());
      return 1;
    }
  }
  return 0;
}
