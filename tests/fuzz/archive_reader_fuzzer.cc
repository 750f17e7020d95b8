// libFuzzer target for the archive reader (docs/archive-format.md). Each input is read twice: as
// it is, and with its framing checksums repaired, so that the checks behind the checksums (zstd
// frames, content CRC-64, the manifest) are reached too.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "archive/archive.h"
#include "cat_parser/crc.h"

namespace {

using citcat::cat::Crc32;

// Decoded sections stay small here: the fuzzer's memory limit is not the format's.
constexpr uint64_t kMaxContent = 64 << 20;

void ReadAll(const std::vector<uint8_t>& bytes) {
  absl::StatusOr<citcat::archive::Archive> a =
      citcat::archive::Parse(bytes, "fuzz.citcat", kMaxContent);
  if (!a.ok()) return;
  citcat::ims::InitialMachineState ims;
  citcat::aes::EventSchedule aes;
  (void)citcat::archive::Unpack(*a, ims, aes);
  (void)a->manifest.ToText();
}

void Put32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

// Recomputes the file-header CRC and every section's CRC-32 that fits in the input.
void RepairChecksums(std::vector<uint8_t>& b) {
  if (b.size() < 20) return;
  Put32(b, 16, Crc32(std::span(b).subspan(8, 8)));
  for (size_t at = 20; b.size() - at >= 36;) {
    uint64_t stored = 0;
    for (int i = 7; i >= 0; --i) stored = stored << 8 | b[at + 8 + i];
    if (stored > b.size() - at - 36) return;
    Put32(b, at + 32,
          Crc32(std::span(b).subspan(at + 36, stored), Crc32(std::span(b).subspan(at, 32))));
    at += 36 + stored;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  ReadAll(bytes);
  RepairChecksums(bytes);
  ReadAll(bytes);
  return 0;
}
