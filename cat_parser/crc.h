// CRC-32 (ISO-HDLC, as in zlib and PNG) over the CAT framing, computed by zlib.
#ifndef CITCAT_CAT_PARSER_CRC_H_
#define CITCAT_CAT_PARSER_CRC_H_

#include <cstdint>
#include <span>

namespace citcat::cat {

// Extends `crc` (0 to start) over `bytes`.
uint32_t Crc32(std::span<const uint8_t> bytes, uint32_t crc = 0);

}  // namespace citcat::cat

#endif  // CITCAT_CAT_PARSER_CRC_H_
