// Writes a seed input for replay_fuzzer: the IMS and the AES of an extraction, framed as the
// fuzzer reads them (the IMS's length as 4 bytes little-endian, the IMS, the AES).
//   replay_fuzz_seed DIR/ims.pb DIR/aes.pb OUT
#include <cstdio>
#include <string>

#include "io/file.h"

int main(int argc, char** argv) {
  using namespace citcat;  // NOLINT
  if (argc != 4) {
    std::fprintf(stderr, "usage: replay_fuzz_seed IMS.pb AES.pb OUT\n");
    return 2;
  }
  auto ims = io::ReadWholeFile(argv[1], 1 << 30);
  auto aes = io::ReadWholeFile(argv[2], 1 << 30);
  if (!ims.ok() || !aes.ok()) {
    std::fprintf(stderr, "cannot read the IMS or AES\n");
    return 1;
  }
  std::string framed;
  for (int i = 0; i < 4; ++i) framed += static_cast<char>(ims->size() >> (8 * i));
  framed += *ims + *aes;
  auto out = io::OutputFile::Create(argv[3]);
  if (!out.ok() || !(*out)->Write(framed).ok() || !(*out)->Commit().ok()) {
    std::fprintf(stderr, "cannot write %s\n", argv[3]);
    return 1;
  }
  return 0;
}
