#include "cat_parser/crc.h"

#include <zlib.h>

namespace citcat::cat {

uint32_t Crc32(std::span<const uint8_t> bytes, uint32_t crc) {
  // zlib treats a null buffer as "return the initial value", which an empty span may well have.
  if (bytes.empty()) return crc;
  // zlib takes the length as uInt; the format's spans are at most a few MiB, but stay exact.
  while (bytes.size() > (1u << 30)) {
    crc = static_cast<uint32_t>(crc32(crc, bytes.data(), 1u << 30));
    bytes = bytes.subspan(1u << 30);
  }
  return static_cast<uint32_t>(crc32(crc, bytes.data(), static_cast<uInt>(bytes.size())));
}

}  // namespace citcat::cat
