/* 64-bit integer arithmetic on the i486, for the lock step against Unicorn: what C's long long
   compiles to (ADD/ADC, SUB/SBB, MUL and IMUL pairs, SHLD/SHRD, and libgcc's division routines)
   over pseudo-random operands. x86_salt (set by the test) selects the operands; main returns a
   checksum. Runs from bench/x86_programs/start.S. */
#include <stdint.h>

volatile uint32_t x86_salt;

static uint64_t values[512];

static uint64_t Next(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s ^ (*s >> 29);
}

static uint64_t Rotate(uint64_t v, unsigned k) { return (v << (k & 63)) | (v >> (-k & 63)); }

uint32_t main(void) {
  uint64_t s = 0x0123456789ABCDEFull ^ x86_salt;
  for (int i = 0; i < 512; ++i) values[i] = Next(&s);
  uint64_t acc = 0, mix = 1;
  int64_t signed_acc = 0;
  for (int round = 0; round < 24; ++round) {
    for (int i = 0; i < 511; ++i) {
      const uint64_t x = values[i], y = values[i + 1];
      acc += x * y;
      acc ^= x + (y >> 7);
      mix = Rotate(mix ^ x, (unsigned)(y & 63)) - y;
      const uint64_t d = (y >> (round & 31)) | 1;
      acc += x / d + x % d;
      const int64_t sx = (int64_t)x >> (i & 15), sd = (int64_t)(y >> 20) - (int64_t)(x >> 44);
      if (sd != 0) signed_acc += sx / sd - sx % sd;
      signed_acc ^= (int64_t)x < (int64_t)y ? sx : -sx;
      values[i] = x ^ (acc >> 3);
    }
  }
  const uint64_t h = acc ^ mix ^ (uint64_t)signed_acc;
  return (uint32_t)h ^ (uint32_t)(h >> 32);
}
