/* Compiled floating-point kernels as a compiler emits them (loads/stores of FPRs, moves,
   conversions in loops, compare-and-branch): matrix product, Horner polynomials, Newton
   iterations, an insertion sort of doubles, mixed float/double accumulation and integer
   conversions. Prints a checksum. */
#include "rt.h"

#define M 8
static double a[M][M], b[M][M], c[M][M];
static double keys[48];
static float poly[6] = {1.0f, -0.5f, 0.25f, -0.125f, 0.0625f, -0.03125f};

static inline u64 Bits(double d) {
  union { double d; u64 u; } v = {.d = d};
  return v.u;
}

static u64 seed = 12345;
static double Uniform(void) { /* in [0, 1) from 53 random bits */
  seed = seed * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(s64)(seed >> 11) * (1.0 / 9007199254740992.0);
}

static double NewtonSqrt(double x) {
  double g = x > 1.0 ? x * 0.5 : 1.0;
  for (int i = 0; i < 8; ++i) g = 0.5 * (g + x / g);
  return g;
}

static double NewtonReciprocal(double x) {
  double r = 0.1;
  for (int i = 0; i < 6; ++i) r = r * (2.0 - x * r);
  return r;
}

int main(void) {
  u64 sum = 0;
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < M; ++j) {
      a[i][j] = Uniform() * 4.0 - 2.0;
      b[i][j] = (double)(i * M + j) / 7.0;
    }
  }
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < M; ++j) {
      double s = 0;
      for (int k = 0; k < M; ++k) s += a[i][k] * b[k][j];
      c[i][j] = s;
      sum = sum * 3 + Bits(s);
    }
  }
  for (int i = 0; i < 24; ++i) {
    float x = (float)i / 8.0f - 1.5f, y = 0;
    for (int k = 5; k >= 0; --k) y = y * x + poly[k];
    sum = sum * 5 + Bits((double)y);
    sum += Bits(NewtonSqrt((double)i + 0.5));
    sum ^= Bits(NewtonReciprocal((double)(i % 7) + 3.0));
  }
  for (int i = 0; i < 48; ++i) keys[i] = Uniform() * 1000.0 - 500.0;
  for (int i = 1; i < 48; ++i) {
    double k = keys[i];
    int j = i - 1;
    while (j >= 0 && keys[j] > k) {
      keys[j + 1] = keys[j];
      --j;
    }
    keys[j + 1] = k;
  }
  int histogram[8] = {0};
  for (int i = 0; i < 48; ++i) {
    sum = sum * 7 + Bits(keys[i]);
    int bucket = (int)((keys[i] + 500.0) / 125.0);
    if (bucket >= 0 && bucket < 8) histogram[bucket]++;
  }
  for (int i = 0; i < 8; ++i) sum = sum * 11 + (u64)histogram[i];
  float facc = 0;
  double dacc = 0;
  for (int i = 1; i <= 64; ++i) {
    facc += 1.0f / (float)i;
    dacc += (double)facc * 0.5 - 1.0 / ((double)i * i);
  }
  sum ^= Bits(dacc) + Bits((double)facc);
#if _MIPS_SIM != _ABIO32
  for (int i = 0; i < 16; ++i) {
    s64 l = (s64)(keys[i * 3] * 1e12);
    sum += (u64)l;
    sum ^= Bits((double)(l / 3));
  }
#endif
  rt_puts("fp_kernels ");
  rt_put_hex(sum);
  return 0;
}
