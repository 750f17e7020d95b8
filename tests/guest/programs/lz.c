/* A small LZ77 compressor and decompressor round trip on generated text: hash chains in malloc'd
   tables, 64-bit checksums, and a byte-exact check that the data come back. */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 4096
#define MIN_MATCH 3
#define MAX_MATCH 18
#define HASH_BITS 12

static uint32_t seed = 12345;
static uint32_t next_random(void) {
  seed = seed * 1103515245u + 12345u;
  return (seed >> 16) & 0x7FFF;
}

static size_t compress(const uint8_t *in, size_t n, uint8_t *out) {
  int *head = malloc(sizeof(int) << HASH_BITS);
  int *prev = malloc(sizeof(int) * n);
  for (int i = 0; i < 1 << HASH_BITS; ++i) head[i] = -1;
  size_t o = 0, i = 0;
  while (i < n) {
    size_t flag_at = o++;
    uint8_t flags = 0;
    for (int bit = 0; bit < 8 && i < n; ++bit) {
      size_t best_len = 0, best_dist = 0;
      if (i + MIN_MATCH <= n) {
        unsigned h = ((in[i] << 8) ^ (in[i + 1] << 4) ^ in[i + 2]) & ((1 << HASH_BITS) - 1);
        for (int c = head[h], tries = 0; c >= 0 && i - (size_t)c < WINDOW && tries < 32;
             c = prev[c], ++tries) {
          size_t len = 0;
          while (len < MAX_MATCH && i + len < n && in[c + len] == in[i + len]) ++len;
          if (len > best_len) best_len = len, best_dist = i - (size_t)c;
        }
        prev[i] = head[h];
        head[h] = (int)i;
      }
      if (best_len >= MIN_MATCH) {
        flags |= (uint8_t)(1 << bit);
        out[o++] = (uint8_t)(best_dist & 0xFF);
        out[o++] = (uint8_t)(((best_dist >> 8) << 4) | (best_len - MIN_MATCH));
        for (size_t k = 1; k < best_len; ++k) {
          ++i;
          if (i + MIN_MATCH <= n) {
            unsigned h = ((in[i] << 8) ^ (in[i + 1] << 4) ^ in[i + 2]) & ((1 << HASH_BITS) - 1);
            prev[i] = head[h];
            head[h] = (int)i;
          }
        }
        ++i;
      } else {
        out[o++] = in[i++];
      }
    }
    out[flag_at] = flags;
  }
  free(head);
  free(prev);
  return o;
}

static size_t decompress(const uint8_t *in, size_t n, uint8_t *out) {
  size_t i = 0, o = 0;
  while (i < n) {
    uint8_t flags = in[i++];
    for (int bit = 0; bit < 8 && i < n; ++bit) {
      if (flags & (1 << bit)) {
        size_t dist = in[i] | ((size_t)(in[i + 1] >> 4) << 8);
        size_t len = (in[i + 1] & 15) + MIN_MATCH;
        i += 2;
        for (size_t k = 0; k < len; ++k, ++o) out[o] = out[o - dist];
      } else {
        out[o++] = in[i++];
      }
    }
  }
  return o;
}

static uint64_t fnv1a(const uint8_t *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

int main(void) {
  static const char *const vocabulary[] = {"the ", "cache ", "line ", "fill ", "bus ",
                                           "trace ", "replay ", "of ", "a ", "write-back "};
  const size_t n = 60000;
  uint8_t *data = malloc(n), *packed = malloc(n + n / 8 + 16), *unpacked = malloc(n);
  size_t len = 0;
  while (len < n) {
    const char *w = vocabulary[next_random() % 10];
    size_t wl = strlen(w);
    if (len + wl > n) wl = n - len;
    memcpy(data + len, w, wl);
    len += wl;
    if (next_random() % 17 == 0 && len < n) data[len++] = (uint8_t)('0' + next_random() % 10);
  }
  size_t packed_len = compress(data, n, packed);
  size_t unpacked_len = decompress(packed, packed_len, unpacked);
  assert(unpacked_len == n);
  assert(memcmp(data, unpacked, n) == 0);
  printf("in %zu bytes, out %zu bytes, ratio %.4f\n", n, packed_len, (double)packed_len / n);
  printf("fnv1a in %016llx packed %016llx\n", (unsigned long long)fnv1a(data, n),
         (unsigned long long)fnv1a(packed, packed_len));
  printf("round trip ok: %s\n", memcmp(data, unpacked, n) == 0 ? "yes" : "no");
  free(data);
  free(packed);
  free(unpacked);
  return 0;
}
