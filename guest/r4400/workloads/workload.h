/* Shared by the workloads. Each workload computes its checksum in `<name>_compute()`, plain C
   that also builds for the host (-DCITCAT_HOST): tools/known_answers.c runs the same code there
   and writes the expected values into expected.h, so the guest can say "ok" or "BAD". */
#ifndef CITCAT_GUEST_R4400_WORKLOADS_WORKLOAD_H_
#define CITCAT_GUEST_R4400_WORKLOADS_WORKLOAD_H_

#ifdef CITCAT_HOST
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#else
#include "citcat_sdk.h"
#include "expected.h"
#endif

/* A small deterministic generator (same stream on host and guest). */
static inline uint32_t wl_next(uint32_t *s) {
  uint32_t x = *s;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  *s = x;
  return x;
}

/* Folds a 32-bit value into a running checksum (value-based: byte order does not matter). */
static inline uint32_t wl_mix(uint32_t h, uint32_t v) {
  h ^= v;
  h *= 0x01000193u;
  h ^= h >> 15;
  return h;
}

/* CRC-32 (IEEE, reflected), table-driven; the table is built on first use. */
static uint32_t wl_crc_table[256];
static inline uint32_t wl_crc32(uint32_t crc, const uint8_t *p, uint32_t n) {
  if (!wl_crc_table[1]) {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
      wl_crc_table[i] = c;
    }
  }
  crc = ~crc;
  while (n--) crc = wl_crc_table[(crc ^ *p++) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

#ifndef CITCAT_HOST
/* Prints "<name>: checksum 0x........ ok" (or BAD with the expected value), stores the checksum
   to the reserved console area, and returns the exit code. */
static inline int wl_report(const char *name, uint32_t got, uint32_t expected) {
  if (got == expected) {
    printf("%s: checksum 0x%08x ok\n", name, got);
  } else {
    printf("%s: checksum 0x%08x BAD, expected 0x%08x\n", name, got, expected);
  }
  report_checksum(got);
  return got == expected ? 0 : 1;
}
#endif

#endif /* CITCAT_GUEST_R4400_WORKLOADS_WORKLOAD_H_ */
