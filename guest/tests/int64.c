/* 64-bit integer workout for the QEMU oracle: doubleword add/sub/shift/multiply/divide, loads and
   stores of doublewords, unaligned doubleword access (LDL/LDR, SDL/SDR), compares and sign
   extension between 32- and 64-bit values. Prints a checksum. */
#include "rt.h"

struct __attribute__((packed)) Unaligned {
  char pad;
  u64 v;
};

static u64 table[64];
static struct Unaligned unaligned[8];

static u64 Mix(u64 x) {
  x ^= x >> 31;
  x *= 0x7fb5d329728ea185ull; /* dmultu */
  x ^= x >> 27;
  x *= 0x81dadef4bc2dd44dull;
  return x ^ (x >> 33);
}

int main(void) {
  u64 sum = 0, lcg = 0x0123456789abcdefull;
  for (int i = 0; i < 64; ++i) {
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull; /* dmultu, daddu */
    table[i] = lcg;                                             /* sd */
  }
  for (int i = 0; i < 64; ++i) {
    u64 v = table[i];   /* ld */
    s64 s = (s64)v;
    sum += v << 40;     /* dsll32 */
    sum ^= v >> 36;     /* dsrl32 */
    sum += (u64)(s >> 45); /* dsra32 */
    sum += v << (i & 63);  /* dsllv */
    sum -= (u64)(s >> (i & 63)); /* dsrav */
    u64 d = (v >> 7) | 1;
    sum += v / d + v % d;      /* ddivu */
    s64 sd = s >> 20;
    if (sd == 0) sd = 3;
    sum += (u64)(s / sd) ^ (u64)(s % sd); /* ddiv */
    sum += (u64)((s64)(s32)v);            /* sll 0 sign extension */
    sum += (s < (s64)sum) ? 1 : 0;        /* slt on 64-bit values */
    sum += Mix(v);
  }
  for (int i = 0; i < 8; ++i) {
    unaligned[i].v = Mix(sum + (u64)i); /* sdl/sdr */
  }
  for (int i = 0; i < 8; ++i) {
    u64 x = unaligned[i].v; /* ldl/ldr */
    RT_OPAQUE(x);
    sum = sum * 31 + x;
  }
  /* High product parts: dmult/dmultu with mfhi. */
  s64 a = (s64)table[3], b = (s64)table[9];
  RT_OPAQUE(a);
  RT_OPAQUE(b);
  unsigned __int128 up = (unsigned __int128)(u64)a * (u64)b;
  __int128 sp = (__int128)a * b;
  sum += (u64)(up >> 64) + (u64)(sp >> 64);
  rt_puts("int64 ");
  rt_put_hex(sum);
  return 0;
}
