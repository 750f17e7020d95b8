/* Random floating-point operands through every arithmetic operation, conversion and a few
   compares, cycling through the four rounding modes: a bit-exactness stress for the QEMU oracle.
   Exponents are kept mostly in the normal range (the R4400 leaves denormals to software), with a
   share of operands near the overflow threshold. Prints a checksum. */
#include "rt.h"

static inline u64 AsU64(double d) {
  union { double d; u64 u; } v = {.d = d};
  return v.u;
}
static inline u32 AsU32(float f) {
  union { float f; u32 u; } v = {.f = f};
  return v.u;
}
static inline double FromU64(u64 u) {
  union { u64 u; double d; } v = {.u = u};
  return v.d;
}
static inline float FromU32(u32 u) {
  union { u32 u; float f; } v = {.u = u};
  return v.f;
}

static u64 rng = 0x9E3779B97F4A7C15ull;
static u64 Next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static double RandomDouble(void) {
  const u64 r = Next();
  u64 exp = 1023 - 40 + (r >> 58);            /* 2^-40 .. 2^23 */
  if ((r & 0xF) == 0) exp = 2046 - (r >> 60); /* near overflow */
  return FromU64((r & 0x8000000000000000ull) | (exp << 52) | (Next() & 0xFFFFFFFFFFFFFull));
}

static float RandomFloat(void) {
  const u64 r = Next();
  u32 exp = 127 - 20 + (u32)(r >> 59); /* 2^-20 .. 2^11 */
  if ((r & 0xF) == 0) exp = 254 - (u32)(r >> 61);
  return FromU32((u32)(r & 0x80000000u) | (exp << 23) | (u32)(r >> 8 & 0x7FFFFF));
}

static u64 sum;
#define MIX(v) (sum = (sum << 5 | sum >> 59) ^ (u64)(v))

#define TO_W(op, fmt, x)                                                                  \
  __extension__({                                                                          \
    s32 r_;                                                                                \
    __asm__ volatile(op "." fmt " $f0, %1\n\tmfc1 %0, $f0" : "=r"(r_) : "f"(x) : "$f0");   \
    r_;                                                                                    \
  })

int main(void) {
  u32 fcsr;
  __asm__ volatile("cfc1 %0, $31" : "=r"(fcsr));
  for (int i = 0; i < 100; ++i) {
    const u32 mode = (fcsr & ~3u) | (u32)(i & 3);
    __asm__ volatile("ctc1 %0, $31" : : "r"(mode) : "memory");
    double a = RandomDouble(), b = RandomDouble();
    MIX(AsU64(a + b));
    MIX(AsU64(a - b));
    MIX(AsU64(a * b));
    MIX(AsU64(a / b));
    MIX(AsU64(__builtin_sqrt(__builtin_fabs(a))));
    MIX(AsU32((float)a));
    double small = FromU64((AsU64(a) & 0x800FFFFFFFFFFFFFull) | (u64)(1023 + (i & 31)) << 52);
    MIX(TO_W("cvt.w", "d", small));
    MIX(TO_W("round.w", "d", small));
    MIX((u64)(a < b) | (u64)(a == b) << 1 | (u64)(a <= b) << 2);
    float fa = RandomFloat(), fb = RandomFloat();
    MIX(AsU32(fa + fb));
    MIX(AsU32(fa - fb));
    MIX(AsU32(fa * fb));
    MIX(AsU32(fa / fb));
    MIX(AsU32(__builtin_sqrtf(__builtin_fabsf(fa))));
    MIX(AsU64((double)fa * b));
    MIX(AsU32((float)(s32)(Next() >> 33) * fb));
  }
  __asm__ volatile("cfc1 %0, $31" : "=r"(fcsr));
  MIX(fcsr);
  rt_puts("fp_random ");
  rt_put_hex(sum);
  return 0;
}
