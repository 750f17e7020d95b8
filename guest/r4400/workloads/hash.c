/* hash: table-driven CRC-32, FNV-1a and a 32-bit multiplicative hash over generated data. */
#include "workload.h"

#define HASH_BYTES (48 * 1024)

static uint8_t buf[HASH_BYTES];
static uint32_t crc_table[256];

uint32_t hash_compute(void) {
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
    crc_table[i] = c;
  }
  uint32_t s = 0x4A5B6C7Du;
  for (uint32_t i = 0; i < HASH_BYTES; ++i) buf[i] = (uint8_t)(wl_next(&s) >> 24);
  uint32_t crc = 0xFFFFFFFFu, fnv = 0x811C9DC5u, mul = 0;
  for (uint32_t round = 0; round < 3; ++round) {
    for (uint32_t i = 0; i < HASH_BYTES; ++i) {
      uint8_t b = buf[i] ^ (uint8_t)round;
      crc = crc_table[(crc ^ b) & 0xFF] ^ (crc >> 8);
      fnv = (fnv ^ b) * 0x01000193u;
      mul = (mul + b) * 2654435761u;
    }
  }
  /* cross-check the table-driven CRC against a bitwise one on a slice */
  uint32_t t = 0xFFFFFFFFu;
  for (uint32_t i = 0; i < 1024; ++i) {
    t ^= buf[i];
    for (int k = 0; k < 8; ++k) t = (t >> 1) ^ (0xEDB88320u & (0u - (t & 1)));
  }
  if (~t != wl_crc32(0, buf, 1024)) return 0xBADC4C00u;
  return wl_mix(wl_mix(~crc, fnv), mul);
}

#ifndef CITCAT_HOST
int main(void) { return wl_report("hash", hash_compute(), EXPECT_HASH); }
#endif
