/* compress: an LZ77 compressor (hash chains of length one, 4 KB window) and its decompressor
   over generated text; the round trip must reproduce the input. */
#include "workload.h"

#define TEXT_BYTES (24 * 1024)
#define WINDOW 4096
#define MIN_MATCH 3
#define MAX_MATCH 130

static uint8_t text[TEXT_BYTES], packed[TEXT_BYTES + TEXT_BYTES / 8 + 16], unpacked[TEXT_BYTES];
static int32_t head[4096];

static const char *const words[] = {
    "the ",     "cache ",  "trace ",    "processor ", "instruction ", "of ",   "and ",
    "branch ",  "memory ", "interrupt ", "count ",    "replay ",      "bus ",  "a ",
    "register ", "to ",    "simulator ", "event ",    "in ",          "is "};

static void make_text(void) {
  uint32_t s = 0xC0FFEE11u, n = 0;
  while (n < TEXT_BYTES) {
    uint32_t r = wl_next(&s);
    const char *w = words[r % (sizeof words / sizeof words[0])];
    if ((r >> 8) % 17 == 0) w = "\n";
    while (*w && n < TEXT_BYTES) text[n++] = (uint8_t)*w++;
  }
}

/* Token stream: a flag byte per 8 tokens; a literal is one byte; a match is two bytes
   (12-bit distance - 1, 4-bit length code) plus one extra length byte when the code is 15. */
static uint32_t lz_compress(const uint8_t *in, uint32_t n, uint8_t *out) {
  for (int i = 0; i < 4096; ++i) head[i] = -1;
  uint32_t o = 0, i = 0, flag_pos = 0;
  int bit = 8;
  while (i < n) {
    if (bit == 8) {
      flag_pos = o++;
      out[flag_pos] = 0;
      bit = 0;
    }
    uint32_t best_len = 0, best_dist = 0;
    if (i + MIN_MATCH <= n) {
      uint32_t h = ((uint32_t)in[i] << 8 ^ (uint32_t)in[i + 1] << 4 ^ in[i + 2]) & 4095;
      int32_t cand = head[h];
      head[h] = (int32_t)i;
      if (cand >= 0 && i - (uint32_t)cand <= WINDOW) {
        uint32_t len = 0;
        while (len < MAX_MATCH && i + len < n && in[cand + len] == in[i + len]) ++len;
        if (len >= MIN_MATCH) {
          best_len = len;
          best_dist = i - (uint32_t)cand;
        }
      }
    }
    if (best_len) {
      out[flag_pos] |= (uint8_t)(1u << bit);
      uint32_t code = best_len - MIN_MATCH < 15 ? best_len - MIN_MATCH : 15;
      out[o++] = (uint8_t)((best_dist - 1) >> 4);
      out[o++] = (uint8_t)(((best_dist - 1) & 15) << 4 | code);
      if (code == 15) out[o++] = (uint8_t)(best_len - MIN_MATCH - 15);
      i += best_len;
    } else {
      out[o++] = in[i++];
    }
    ++bit;
  }
  return o;
}

static uint32_t lz_decompress(const uint8_t *in, uint32_t n, uint8_t *out, uint32_t cap) {
  uint32_t i = 0, o = 0;
  while (i < n) {
    uint8_t flags = in[i++];
    for (int bit = 0; bit < 8 && i < n; ++bit) {
      if (flags & (1u << bit)) {
        uint32_t dist = ((uint32_t)in[i] << 4 | in[i + 1] >> 4) + 1;
        uint32_t len = (in[i + 1] & 15u) + MIN_MATCH;
        i += 2;
        if (len == 15 + MIN_MATCH) len += in[i++];
        if (dist > o || o + len > cap) return 0;
        for (uint32_t k = 0; k < len; ++k, ++o) out[o] = out[o - dist];
      } else {
        if (o == cap) return 0;
        out[o++] = in[i++];
      }
    }
  }
  return o;
}

uint32_t compress_compute(void) {
  make_text();
  uint32_t packed_len = lz_compress(text, TEXT_BYTES, packed);
  uint32_t n = lz_decompress(packed, packed_len, unpacked, TEXT_BYTES);
  if (n != TEXT_BYTES || memcmp(text, unpacked, TEXT_BYTES) != 0) return 0xBADC0DE0u;
  return wl_mix(wl_crc32(0, packed, packed_len), packed_len);
}

#ifndef CITCAT_HOST
int main(void) { return wl_report("compress", compress_compute(), EXPECT_COMPRESS); }
#endif
