// libFuzzer target for the CAT reader and the text form. Each input is read twice: as it is, and
// with its checksums repaired, so that the structural checks behind the checksums are reached too.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cat_parser/crc.h"
#include "cat_parser/format.h"
#include "cat_parser/reader.h"
#include "cat_parser/text.h"

namespace {

using namespace citcat::cat;  // NOLINT

void ReadAll(const std::vector<uint8_t>& bytes) {
  auto reader = CatReader::Open(citcat::io::InputFile::FromMemory("fuzz.cat", bytes));
  if (!reader.ok()) return;
  BusRecord r;
  static volatile uint8_t sink;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->Next(r);
    if (!more.ok() || !*more) return;
    for (uint8_t b : r.data) sink = sink ^ b;  // touch every byte the reader hands out
  }
}

// Recomputes the header checksum and the checksum of every chunk whose length fits.
void RepairChecksums(std::vector<uint8_t>& b) {
  using namespace format;  // NOLINT
  if (b.size() < kFileHeaderPrefix) return;
  size_t body = Load32(&b[12]);
  if (kFileHeaderPrefix + body + 4 > b.size()) return;
  size_t at = kFileHeaderPrefix + body;
  Store32(&b[at], Crc32({&b[8], at - 8}));
  at += 4;
  while (b.size() - at >= kChunkHeaderBytes) {
    size_t length = Load32(&b[at + 4]);
    if (length > b.size() - at - kChunkHeaderBytes) return;
    uint32_t crc = Crc32({&b[at], 20});
    Store32(&b[at + 20], Crc32({&b[at + kChunkHeaderBytes], length}, crc));
    at += kChunkHeaderBytes + length;
  }
}

// Assembled output goes to a private scratch directory, never next to anything real.
const std::string& ScratchCat() {
  static char dir[] = "/tmp/citcat-fuzz-XXXXXX";
  static const std::string path = [] {
    std::string made = std::string(mkdtemp(dir)) + "/out.cat";
    std::atexit([] { std::filesystem::remove_all(dir); });
    return made;
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  ReadAll(bytes);
  RepairChecksums(bytes);
  ReadAll(bytes);

  auto text = citcat::io::InputFile::FromMemory("fuzz.txt", {data, size});
  (void)AssembleText(*text, ScratchCat());
  return 0;
}
