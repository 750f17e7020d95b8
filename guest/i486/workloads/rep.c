/* rep: the i486's string instructions (REP MOVS, REP STOS, REPE/REPNE CMPS and SCAS, forwards
   and backwards, byte, word and dword) over lengths from 0 to 64 KB and every alignment, and
   many short ones in a row so that timer interrupts often find a REP instruction next. The
   same inline assembly runs on an x86 host for the known answer (tools/known_answers.c). */
#include "workload.h"

#ifdef CITCAT_HOST
#include <stddef.h>
#else
#include "expected_i486.h"
#endif

#define BIG 65536
#define PAD 64

static uint8_t a[BIG + PAD], b[BIG + PAD];

/* Each helper leaves DF clear, as the ABI wants it. Counts are size_t: ECX on the i486, RCX on
   an x86-64 host. */
static void movsb(void* d, const void* s, size_t n) {
  __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}
static void movsw(void* d, const void* s, size_t n) {
  __asm__ volatile("rep movsw" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}
static void movsd(void* d, const void* s, size_t n) {
  __asm__ volatile("rep movsl" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}
/* Backwards: d and s point at the last element. */
static void movsb_down(void* d, const void* s, size_t n) {
  __asm__ volatile("std\n\trep movsb\n\tcld" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}
static void movsd_down(void* d, const void* s, size_t n) {
  __asm__ volatile("std\n\trep movsl\n\tcld" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}
static void stosb(void* d, uint32_t v, size_t n) {
  __asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(v) : "memory");
}
static void stosw(void* d, uint32_t v, size_t n) {
  __asm__ volatile("rep stosw" : "+D"(d), "+c"(n) : "a"(v) : "memory");
}
static void stosd(void* d, uint32_t v, size_t n) {
  __asm__ volatile("rep stosl" : "+D"(d), "+c"(n) : "a"(v) : "memory");
}

/* REPE CMPSB / CMPSD: what is left of the count, where ESI stopped and ZF. */
static uint32_t cmpsb(const void* x, const void* y, size_t n) {
  const uint8_t* x0 = x;
  uint8_t zf;
  __asm__ volatile("cmp %%eax, %%eax\n\trepe cmpsb"
                   : "+S"(x), "+D"(y), "+c"(n), "=@ccz"(zf)
                   :
                   : "eax", "memory");
  return (uint32_t)n << 20 ^ (uint32_t)((const uint8_t*)x - x0) << 1 ^ zf;
}
static uint32_t cmpsd(const void* x, const void* y, size_t n) {
  const uint8_t* x0 = x;
  uint8_t zf, cf;
  __asm__ volatile("cmp %%eax, %%eax\n\trepe cmpsl"
                   : "+S"(x), "+D"(y), "+c"(n), "=@ccz"(zf), "=@ccc"(cf)
                   :
                   : "eax", "memory");
  return (uint32_t)n << 20 ^ (uint32_t)((const uint8_t*)x - x0) << 2 ^ zf << 1 ^ cf;
}
/* REPNE CMPSW: runs until two words are equal. */
static uint32_t cmpsw_ne(const void* x, const void* y, size_t n) {
  const uint8_t* x0 = x;
  uint8_t zf;
  __asm__ volatile("test %%esp, %%esp\n\trepne cmpsw"
                   : "+S"(x), "+D"(y), "+c"(n), "=@ccz"(zf)
                   :
                   : "memory");
  return (uint32_t)n << 20 ^ (uint32_t)((const uint8_t*)x - x0) << 1 ^ zf;
}
/* REPNE SCASB (find a byte) and REPE SCASW / SCASD (skip a run of a value). */
static uint32_t scasb_ne(const void* p, uint32_t v, size_t n) {
  const uint8_t* p0 = p;
  uint8_t zf;
  __asm__ volatile("test %%esp, %%esp\n\trepne scasb"
                   : "+D"(p), "+c"(n), "=@ccz"(zf)
                   : "a"(v)
                   : "memory");
  return (uint32_t)n << 20 ^ (uint32_t)((const uint8_t*)p - p0) << 1 ^ zf;
}
static uint32_t scasw_e(const void* p, uint32_t v, size_t n) {
  const uint8_t* p0 = p;
  uint8_t zf;
  __asm__ volatile("cmp %%eax, %%eax\n\trepe scasw"
                   : "+D"(p), "+c"(n), "=@ccz"(zf)
                   : "a"(v)
                   : "memory");
  return (uint32_t)n << 20 ^ (uint32_t)((const uint8_t*)p - p0) << 1 ^ zf;
}
static uint32_t scasd_e(const void* p, uint32_t v, size_t n) {
  const uint8_t* p0 = p;
  uint8_t zf;
  __asm__ volatile("cmp %%eax, %%eax\n\trepe scasl"
                   : "+D"(p), "+c"(n), "=@ccz"(zf)
                   : "a"(v)
                   : "memory");
  return (uint32_t)n << 20 ^ (uint32_t)((const uint8_t*)p - p0) << 1 ^ zf;
}

/* A cheap digest of a buffer: every dword at a stride, and the ends. */
static uint32_t digest(uint32_t h, const uint8_t* p, uint32_t n) {
  uint32_t w;
  for (uint32_t i = 0; i + 4 <= n; i += 4 * 13) {
    memcpy(&w, p + i, 4);
    h = wl_mix(h, w);
  }
  for (uint32_t i = n > 8 ? n - 8 : 0; i < n; ++i) h = wl_mix(h, p[i]);
  return h;
}

/* Long strings: 64 KB copies, fills and scans (one instruction each, 16 K to 64 K
   iterations). */
static uint32_t long_strings(uint32_t h) {
  movsb(b + 1, a + 3, BIG - 8);
  h = digest(h, b, BIG);
  movsw(b + 2, a + 1, BIG / 2 - 4);
  h = digest(h, b, BIG);
  movsd(b + 1, a, BIG / 4 - 4);
  h = digest(h, b, BIG);
  movsd_down(b + BIG - 4, b + BIG - 12, BIG / 4 - 8); /* overlapping, upwards by 8 */
  h = digest(h, b, BIG);
  movsb_down(b + BIG - 1, a + BIG - 2, BIG - 16);
  h = digest(h, b, BIG);
  stosd(b + 3, 0x5A5A5A5Au, BIG / 4 - 2);
  h = wl_mix(h, scasd_e(b + 3, 0x5A5A5A5Au, BIG / 4)); /* runs off the end of the fill */
  stosw(b, 0x1234u, BIG / 2);
  b[BIG - 1000] = 0x99;
  h = wl_mix(h, scasw_e(b, 0x1234u, BIG / 2));
  stosb(b, 0x77, BIG);
  b[BIG - 3] = 0x42;
  h = wl_mix(h, scasb_ne(b, 0x42, BIG));
  movsb(b, a, BIG);
  b[BIG - 5] ^= 1;
  h = wl_mix(h, cmpsb(a, b, BIG));
  h = wl_mix(h, cmpsd(a, b, BIG / 4));
  return h;
}

/* Short strings, many in a row: sizes 0..~300 at every alignment. */
static uint32_t short_strings(uint32_t h, uint32_t* s) {
  for (uint32_t n = 0; n < 300; n += 1 + n / 24) {
    for (uint32_t sa = 0; sa < 4; ++sa) {
      for (uint32_t da = 0; da < 4; ++da) {
        uint8_t *d = b + 4096 * da + da, *src = a + 256 * sa + sa;
        movsb(d, src, n);
        movsw(d + n + 8, src, n / 2);
        movsd(d + 2 * n + 16, src + 1, n / 4);
        stosb(d + 3 * n + 24, sa * 16 + da, n & 15);
        h = wl_mix(h, cmpsb(d, src, n));
        uint32_t k = n ? wl_next(s) % n : 0;
        d[k] ^= 0x40;
        h = wl_mix(h, cmpsb(d, src, n));
        h = wl_mix(h, cmpsd(d + 2 * n + 16, src + 1, n / 4));
        h = wl_mix(h, cmpsw_ne(d, src + 1, n / 2));
        h = wl_mix(h, scasb_ne(src, src[k], n));
        h = wl_mix(h, scasw_e(d + 3 * n + 24, (sa * 16 + da) * 0x101u, (n & 15) / 2 + 1));
        h = digest(h, d, 3 * n + 48);
      }
    }
  }
  return h;
}

/* Timer interrupts come between instructions (a REP one counts once, however many iterations
   it runs): a loop that is mostly REP instructions meets many of them. */
static uint32_t rep_dense(uint32_t h) {
  uint32_t sum = 0;
  for (uint32_t i = 0; i < 40000; ++i) {
    uint32_t n = i & 31;
    movsb(b + (i & 1023), a + (i & 511), n);
    stosd(b + 2048 + (i & 255) * 4, i, n);
    sum += b[(i * 7) & 2047];
  }
  return wl_mix(h, sum);
}

uint32_t rep_compute(void) {
  uint32_t s = 0x2E9A0001u, h = 0x811C9DC5u;
  for (uint32_t i = 0; i < BIG + PAD; i += 4) {
    uint32_t v = wl_next(&s);
    memcpy(a + i, &v, 4);
  }
  h = long_strings(h);
  h = short_strings(h, &s);
  h = rep_dense(h);
  return h;
}

#ifndef CITCAT_HOST
int main(void) { return wl_report("rep", rep_compute(), EXPECT_REP); }
#endif
