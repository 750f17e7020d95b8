/* memcpy: memcpy, memmove (both directions, overlapping), memset, memcmp, strlen, strcmp,
   strcpy, strcat and strchr over many sizes and alignments. */
#include "workload.h"

#define BUF 4096

static uint8_t src[BUF], dst[BUF];
static char s1[300], s2[300], s3[600];

uint32_t memcpy_compute(void) {
  uint32_t s = 0x3E3C0001u, h = 0x811C9DC5u;
  for (int i = 0; i < BUF; ++i) src[i] = (uint8_t)wl_next(&s);
  for (int round = 0; round < 2; ++round) {
    for (uint32_t size = 0; size < 260; size += 1 + size / 16) {
      for (uint32_t sa = 0; sa < 8; sa += 3) {
        for (uint32_t da = 0; da < 8; da += 3) {
          memset(dst, 0x5A ^ round, 512);
          memcpy(dst + da, src + sa + 64 * (uint32_t)round, size);
          h = wl_mix(h, wl_crc32(0, dst, size + 16));
        }
      }
      /* overlapping moves, both directions */
      memcpy(dst, src, 1024);
      memmove(dst + 3, dst, size);
      memmove(dst + 700, dst + 703 - (size & 3), size);
      h = wl_mix(h, wl_crc32(0, dst, 1000));
      int mc = memcmp(dst, src, size + 1);
      h = wl_mix(h, mc < 0 ? 1u : mc > 0 ? 2u : 3u);
      memset(dst + (size & 7), (int)size, size);
      h = wl_mix(h, wl_crc32(0, dst, size + 8));
    }
  }
  for (int i = 0; i < 150; ++i) {
    uint32_t n1 = wl_next(&s) % 290, n2 = wl_next(&s) % 290;
    for (uint32_t k = 0; k < n1; ++k) s1[k] = (char)('a' + wl_next(&s) % 3);
    s1[n1] = 0;
    strcpy(s2, s1);
    if (n2 < n1) s2[n2] = (char)('a' + wl_next(&s) % 3);
    strcpy(s3, s1);
    strcat(s3, s2);
    const char *c = strchr(s3, 'c');
    int cmp = strcmp(s1, s2);
    h = wl_mix(h, (uint32_t)strlen(s3));
    h = wl_mix(h, (uint32_t)(cmp < 0 ? 1 : cmp > 0 ? 2 : 3));
    h = wl_mix(h, c ? (uint32_t)(c - s3) : 0xFFFFu);
    h = wl_mix(h, (uint32_t)(strncmp(s1, s2, n2) == 0));
  }
  return h;
}

#ifndef CITCAT_HOST
int main(void) { return wl_report("memcpy", memcpy_compute(), EXPECT_MEMCPY); }
#endif
