#include "cat_parser/crc.h"

#include <lzma.h>

namespace citcat::cat {

uint32_t Crc32(std::span<const uint8_t> bytes, uint32_t crc) {
  return lzma_crc32(bytes.data(), bytes.size(), crc);
}

}  // namespace citcat::cat
