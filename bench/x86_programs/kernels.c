/* Integer kernels for the i486 core benchmark: an insertion-then-merge sort of pseudo-random
   values, CRC-32 over a buffer, and a byte-string search, each run a few times. Freestanding: no
   library, no x87. */
#include <stdint.h>

#define N 4096

static uint32_t values[N], scratch[N];
static uint8_t text[16384];

static uint32_t seed = 12345;
static uint32_t Next(void) {
  seed = seed * 1103515245u + 12345u;
  return seed >> 8;
}

static void Merge(uint32_t* a, uint32_t* tmp, int lo, int mid, int hi) {
  int i = lo, j = mid, k = lo;
  while (i < mid && j < hi) tmp[k++] = a[i] <= a[j] ? a[i++] : a[j++];
  while (i < mid) tmp[k++] = a[i++];
  while (j < hi) tmp[k++] = a[j++];
  for (k = lo; k < hi; ++k) a[k] = tmp[k];
}

static void Sort(uint32_t* a, int n) {
  for (int lo = 0; lo < n; lo += 16) {  /* insertion sort of runs of 16 */
    int hi = lo + 16 < n ? lo + 16 : n;
    for (int i = lo + 1; i < hi; ++i) {
      uint32_t v = a[i];
      int j = i - 1;
      while (j >= lo && a[j] > v) { a[j + 1] = a[j]; --j; }
      a[j + 1] = v;
    }
  }
  for (int width = 16; width < n; width *= 2) {
    for (int lo = 0; lo < n - width; lo += 2 * width) {
      int hi = lo + 2 * width < n ? lo + 2 * width : n;
      Merge(a, scratch, lo, lo + width, hi);
    }
  }
}

static uint32_t Crc32(const uint8_t* p, int n) {
  uint32_t crc = 0xFFFFFFFFu;
  for (int i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int b = 0; b < 8; ++b) crc = (crc >> 1) ^ (0xEDB88320u & -(crc & 1));
  }
  return ~crc;
}

static int Count(const uint8_t* hay, int n, const uint8_t* needle, int m) {
  int found = 0;
  for (int i = 0; i + m <= n; ++i) {
    int j = 0;
    while (j < m && hay[i + j] == needle[j]) ++j;
    found += j == m;
  }
  return found;
}

uint32_t main(void) {
  uint32_t sum = 0;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < N; ++i) values[i] = Next();
    Sort(values, N);
    for (int i = 1; i < N; ++i) sum += values[i] >= values[i - 1];
    for (int i = 0; i < (int)sizeof text; ++i) text[i] = (uint8_t)("abcab"[Next() % 5]);
    sum ^= Crc32(text, sizeof text);
    sum += (uint32_t)Count(text, sizeof text, (const uint8_t*)"abca", 4);
  }
  return sum;
}
