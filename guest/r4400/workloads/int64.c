/* int64: 64-bit integer arithmetic. On the R4400 in 64-bit registers (DADDU, DMULT/DMULTU,
   DDIV, DSLL32, DSRA32, LD/SD): the task runs with UX = 1; the guest path is o32 C around
   assembly blocks that keep 64-bit values in registers for a whole pass over the arrays, so
   timer preemption inside them checks that the kernel saves and restores full 64-bit registers.
   On a 32-bit guest without 64-bit registers (the i486) the pass is plain C: the high halves of
   the 64 x 64-bit products from 32-bit pieces, the divisions by the 64-bit helpers. The host
   computes the same function in C with 128-bit products (tools/known_answers.c). */
#include "workload.h"

#define INT64_N 256
#define INT64_ROUNDS 96

static uint64_t va[INT64_N], vb[INT64_N];
static uint64_t acc[4];

#ifdef CITCAT_HOST
static void int64_pass(const uint64_t *a, const uint64_t *b, uint32_t n, uint64_t *acc4) {
  uint64_t acc0 = acc4[0], acc1 = acc4[1], acc2 = acc4[2], acc3 = acc4[3];
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t x = a[i], y = b[i];
    acc0 ^= x + y;
    unsigned __int128 pu = (unsigned __int128)x * y;
    acc1 += (uint64_t)pu;
    acc1 ^= (uint64_t)(pu >> 64);
    __int128 ps = (__int128)(int64_t)x * (__int128)(int64_t)y;
    acc0 += (uint64_t)(ps >> 64);
    int64_t d = (int64_t)((y >> 1) | 1);
    acc2 = acc2 - (uint64_t)((int64_t)x / d) + (uint64_t)((int64_t)x % d);
    uint64_t t = ((x << 39) ^ (y >> 35)) + (uint64_t)((int64_t)x >> 33);
    acc3 = ((acc3 << 13) | (acc3 >> 51)) + t;
  }
  acc4[0] = acc0;
  acc4[1] = acc1;
  acc4[2] = acc2;
  acc4[3] = acc3;
}
#elif !defined(__mips)
/* The high 64 bits of x * y, unsigned and signed, from four 32 x 32-bit products. */
static uint64_t mul_high_u(uint64_t x, uint64_t y) {
  uint64_t xl = (uint32_t)x, xh = x >> 32, yl = (uint32_t)y, yh = y >> 32;
  uint64_t ll = xl * yl, lh = xl * yh, hl = xh * yl, hh = xh * yh;
  uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
  return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}
static uint64_t mul_high_s(uint64_t x, uint64_t y) {
  uint64_t h = mul_high_u(x, y);
  if ((int64_t)x < 0) h -= y;
  if ((int64_t)y < 0) h -= x;
  return h;
}

static void int64_pass(const uint64_t *a, const uint64_t *b, uint32_t n, uint64_t *acc4) {
  uint64_t acc0 = acc4[0], acc1 = acc4[1], acc2 = acc4[2], acc3 = acc4[3];
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t x = a[i], y = b[i];
    acc0 ^= x + y;
    acc1 += x * y;
    acc1 ^= mul_high_u(x, y);
    acc0 += mul_high_s(x, y);
    int64_t d = (int64_t)((y >> 1) | 1);
    acc2 = acc2 - (uint64_t)((int64_t)x / d) + (uint64_t)((int64_t)x % d);
    uint64_t t = ((x << 39) ^ (y >> 35)) + (uint64_t)((int64_t)x >> 33);
    acc3 = ((acc3 << 13) | (acc3 >> 51)) + t;
  }
  acc4[0] = acc0;
  acc4[1] = acc1;
  acc4[2] = acc2;
  acc4[3] = acc3;
}
#else
static void int64_pass(const uint64_t *a, const uint64_t *b, uint32_t n, uint64_t *acc4) {
  __asm__ volatile(
      ".set push\n"
      ".set noreorder\n"
      ".set mips3\n"
      ".set gp=64\n"
      "ld     $12, 0(%3)\n"
      "ld     $13, 8(%3)\n"
      "ld     $14, 16(%3)\n"
      "ld     $15, 24(%3)\n"
      "1:\n"
      "ld     $8, 0(%0)\n"
      "ld     $9, 0(%1)\n"
      "daddu  $10, $8, $9\n"
      "xor    $12, $12, $10\n"
      "dmultu $8, $9\n"
      "mflo   $10\n"
      "mfhi   $11\n"
      "daddu  $13, $13, $10\n"
      "xor    $13, $13, $11\n"
      "dmult  $8, $9\n"
      "mfhi   $11\n"
      "daddu  $12, $12, $11\n"
      "dsrl   $24, $9, 1\n"
      "ori    $24, $24, 1\n"
      "ddiv   $0, $8, $24\n"
      "mflo   $10\n"
      "mfhi   $11\n"
      "dsubu  $14, $14, $10\n"
      "daddu  $14, $14, $11\n"
      "dsll32 $10, $8, 7\n"
      "dsrl32 $11, $9, 3\n"
      "dsra32 $25, $8, 1\n"
      "xor    $10, $10, $11\n"
      "daddu  $10, $10, $25\n"
      "dsll   $11, $15, 13\n"
      "dsrl32 $25, $15, 19\n"
      "or     $15, $11, $25\n"
      "daddu  $15, $15, $10\n"
      "addiu  %0, %0, 8\n"
      "addiu  %2, %2, -1\n"
      "bnez   %2, 1b\n"
      "addiu  %1, %1, 8\n"
      "sd     $12, 0(%3)\n"
      "sd     $13, 8(%3)\n"
      "sd     $14, 16(%3)\n"
      "sd     $15, 24(%3)\n"
      ".set pop\n"
      : "+r"(a), "+r"(b), "+r"(n)
      : "r"(acc4)
      : "$8", "$9", "$10", "$11", "$12", "$13", "$14", "$15", "$24", "$25", "hi", "lo", "memory");
}
#endif

uint32_t int64_compute(void) {
  uint64_t x = 0x0123456789ABCDEFull;
  for (int i = 0; i < INT64_N; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    va[i] = x;
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    vb[i] = x ^ (x >> 29);
  }
  acc[0] = acc[1] = acc[2] = acc[3] = 0;
  for (int r = 0; r < INT64_ROUNDS; ++r) {
    int64_pass(va, vb, INT64_N, acc);
    va[r % INT64_N] ^= acc[r & 3];
    vb[(r * 7) % INT64_N] += acc[(r + 1) & 3] | 1;
  }
  uint32_t h = 0x811C9DC5u;
  for (int k = 0; k < 4; ++k) h = wl_mix(wl_mix(h, (uint32_t)acc[k]), (uint32_t)(acc[k] >> 32));
  return h;
}

#ifndef CITCAT_HOST
int main(void) { return wl_report("int64", int64_compute(), EXPECT_INT64); }
#endif
