/* 64-bit integer operations on edge values for the QEMU oracle: every pair from a table of
   boundary values through doubleword add/subtract, multiply (HI and LO), divide, shifts by
   register and by constant, compares and logic; loads and stores of every width and signedness
   at every alignment (LDL/LDR/SDL/SDR, LWL/LWR/SWL/SWR, LWU), and LL/SC and LLD/SCD. Operations
   the architecture leaves UNPREDICTABLE (32-bit operations on values that are not sign-extended
   words, division by zero, INT64_MIN / -1) are avoided. Prints a checksum. */
#include "rt.h"

static const u64 kValues[] = {
    0,
    1,
    0xFFFFFFFFFFFFFFFFull,
    0x8000000000000000ull,
    0x7FFFFFFFFFFFFFFFull,
    0x000000007FFFFFFFull,
    0xFFFFFFFF80000000ull,
    0x00000000FFFFFFFFull,
    0x0000000100000000ull,
    0x0123456789ABCDEFull,
    0xFEDCBA9876543210ull,
    0x00000000DEADBEEFull,
};
#define N (sizeof kValues / sizeof kValues[0])

static u64 sum;
#define MIX(v) (sum = (sum << 7 | sum >> 57) + (u64)(v))

#define DMULT(op, a, b)                                                                  \
  __extension__({                                                                         \
    u64 hi_, lo_;                                                                         \
    __asm__ volatile(op " %2, %3\n\tmfhi %0\n\tmflo %1" : "=r"(hi_), "=r"(lo_) : "r"(a), "r"(b) \
                     : "hi", "lo");                                                       \
    MIX(hi_);                                                                             \
    MIX(lo_);                                                                             \
  })

static union {
  u64 d[4];
  unsigned char b[32];
} buf;

static void Arithmetic(void) {
  for (unsigned i = 0; i < N; ++i) {
    for (unsigned j = 0; j < N; ++j) {
      u64 a = kValues[i], b = kValues[j];
      RT_OPAQUE(a);
      RT_OPAQUE(b);
      s64 sa = (s64)a, sb = (s64)b;
      MIX(a + b);
      MIX(a - b);
      MIX(a & b);
      MIX(a | b);
      MIX(a ^ b);
      MIX(~(a | b));
      MIX(sa < sb);
      MIX(a < b);
      MIX(a << (b & 63));
      MIX(a >> (b & 63));
      MIX((u64)(sa >> (b & 63)));
      DMULT("dmult", a, b);
      DMULT("dmultu", a, b);
      if (b != 0) {
        DMULT("ddivu", a, b);
        if (!(a == 0x8000000000000000ull && b == 0xFFFFFFFFFFFFFFFFull)) DMULT("ddiv", a, b);
      }
      /* 32-bit operations on sign-extended words. */
      s32 wa = (s32)a, wb = (s32)b;
      MIX((s64)(s32)((u32)wa + (u32)wb));
      MIX((s64)(s32)((u32)wa << (wb & 31)));
      MIX((s64)(s32)((u32)wa >> (wb & 31)));
      MIX((s64)(wa >> (wb & 31)));
      DMULT("mult", (s64)wa, (s64)wb);
      DMULT("multu", (s64)wa, (s64)wb);
      if (wb != 0 && !(wa == (s32)0x80000000 && wb == -1)) DMULT("div", (s64)wa, (s64)wb);
    }
    u64 a = kValues[i];
    RT_OPAQUE(a);
    MIX(a << 40);
    MIX(a >> 44);
    MIX((u64)((s64)a >> 36));
    MIX(a << 3);
    MIX(a >> 5);
    MIX((u64)((s64)a >> 7));
    MIX(a + 0x7FFF);
    MIX(a - 0x8000);
    MIX(a < 0x1234 ? 1 : 0);
  }
}

static void Memory(void) {
  for (unsigned k = 0; k < 4; ++k) buf.d[k] = kValues[k + 8];
  for (unsigned off = 0; off < 16; ++off) {
    u64 q;
    __asm__ volatile("ldl %0, 0(%1)\n\tldr %0, 7(%1)" : "=&r"(q) : "r"(buf.b + off) : "memory");
    MIX(q);
    u64 w;
    __asm__ volatile("lwl %0, 0(%1)\n\tlwr %0, 3(%1)" : "=&r"(w) : "r"(buf.b + off) : "memory");
    MIX(w);
    MIX(*(volatile signed char*)(buf.b + off));
    MIX(*(volatile unsigned char*)(buf.b + off));
    if ((off & 1) == 0) {
      MIX(*(volatile short*)(buf.b + off));
      MIX(*(volatile unsigned short*)(buf.b + off));
    }
    if ((off & 3) == 0) {
      u64 lwu;
      __asm__ volatile("lwu %0, 0(%1)" : "=r"(lwu) : "r"(buf.b + off) : "memory");
      MIX(lwu);
      MIX(*(volatile int*)(buf.b + off));
    }
  }
  for (unsigned off = 0; off < 8; ++off) {
    u64 v = kValues[off + 2];
    RT_OPAQUE(v);
    __asm__ volatile("sdl %0, 0(%1)\n\tsdr %0, 7(%1)" : : "r"(v), "r"(buf.b + off) : "memory");
    MIX(buf.d[0] ^ buf.d[1]);
    __asm__ volatile("swl %0, 0(%1)\n\tswr %0, 3(%1)" : : "r"(v), "r"(buf.b + 16 + off) : "memory");
    MIX(buf.d[2] ^ buf.d[3]);
  }
  /* LL/SC and LLD/SCD with no intervening store: both succeed. */
  u64 old, ok;
  __asm__ volatile("lld %0, 0(%2)\n\tdaddiu %1, %0, 5\n\tscd %1, 0(%2)"
                   : "=&r"(old), "=&r"(ok) : "r"(&buf.d[1]) : "memory");
  MIX(old);
  MIX(ok);
  MIX(buf.d[1]);
  __asm__ volatile("ll %0, 0(%2)\n\taddiu %1, %0, 9\n\tsc %1, 0(%2)"
                   : "=&r"(old), "=&r"(ok) : "r"(&buf.d[2]) : "memory");
  MIX(old);
  MIX(ok);
  MIX(buf.d[2]);
}

int main(void) {
  Arithmetic();
  Memory();
  rt_puts("int64_ops ");
  rt_put_hex(sum);
  return 0;
}
