/* Bit tricks and conversions a codec or a hash table uses: leading/trailing zeros, population
   counts, byte swaps, 64-bit integers to and from floating point (large values, rounding), and
   complex arithmetic. On the guest these are the SDK's compiler helpers; on the host, libgcc's. */
#include <complex.h>
#include <stdint.h>
#include <stdio.h>

static uint64_t state = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

int main(void) {
  uint64_t sum = 0;
  for (int i = 0; i < 2000; ++i) {
    uint64_t v = next() >> (i % 64);
    uint32_t w = (uint32_t)v | 1u;
    sum = sum * 31 + (uint64_t)__builtin_clz(w) + (uint64_t)__builtin_ctz(w) * 3 +
          (uint64_t)__builtin_popcount(w) * 5 + (uint64_t)__builtin_parity(w) * 7 +
          (uint64_t)__builtin_ffs((int)w) * 11;
    if (v) sum += (uint64_t)__builtin_clzll(v) + (uint64_t)__builtin_ctzll(v) * 13;
    sum += (uint64_t)__builtin_popcountll(v) * 17 + (uint64_t)__builtin_ffsll((long long)v);
    sum ^= __builtin_bswap64(v) ^ __builtin_bswap32(w);
  }
  printf("bits: %016llx\n", (unsigned long long)sum);

  double dsum = 0;
  float fsum = 0;
  int64_t back = 0;
  for (int i = 0; i < 2000; ++i) {
    uint64_t u = next() >> (i % 40);
    int64_t s = (int64_t)u * (i & 1 ? -1 : 1);
    double d = (double)u, e = (double)s;
    float f = (float)u, g = (float)s;
    dsum += d / 1e9 + e / 1e9;
    fsum += f / 1e9f + g / 1e9f;
    back ^= (int64_t)(e * 0.75) ^ (int64_t)(uint64_t)(d * 0.5) ^ (int64_t)(g * 0.25f);
  }
  printf("conversions: %.6e %.6e %016llx\n", dsum, (double)fsum, (unsigned long long)back);
  printf("edges: %.1f %.1f %.1f %lld %llu\n", (double)UINT64_MAX, (double)INT64_MIN,
         (double)(float)(UINT64_C(1) << 63 | 0x80000001), (long long)-9.007199254740993e15,
         (unsigned long long)1.8446744073709550e19);

  double complex z = 1.5 + 2.25 * I, acc = 1.0;
  for (int i = 0; i < 20; ++i) acc = acc * z / (1.0 + 0.5 * I);
  float complex fz = 0.75f - 1.25f * I;
  fz = fz * fz / (2.0f + 1.0f * I);
  printf("complex: %.9g %.9g %.6g %.6g\n", creal(acc), cimag(acc), crealf(fz), cimagf(fz));
  /* exact results, which repeated multiplication and pow() agree on; not folded at compile time */
  volatile int ten = 10, minus_three = -3, seven = 7;
  printf("powi: %.17g %.17g %.9g\n", __builtin_powi(1.5, ten), __builtin_powi(2.0, minus_three),
         (double)__builtin_powif(1.25f, seven));
  return 0;
}
