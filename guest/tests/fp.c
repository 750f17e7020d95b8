/* Floating-point workout for the QEMU oracle: single and double arithmetic in all four rounding
   modes (set with CTC1), square root, ABS/NEG/MOV, conversions between S, D, W and L (CVT, ROUND,
   TRUNC, CEIL, FLOOR), the 16 compare conditions read back through FCR31 and through BC1T/BC1F
   and their likely forms, and the IEEE flags (overflow, division by zero, invalid).
   A few operands are denormal or NaN on purpose: there the R4400 hands the operation to software
   (Unimplemented Operation) while QEMU computes it, a difference the oracle test classifies.
   Prints a checksum of all results and the final FCR31. */
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
#define AS_U64(d) AsU64((double)(d))
#define AS_U32(f) AsU32((float)(f))
#define FROM_U64(u) FromU64(u)

static inline u32 get_fcsr(void) {
  u32 v;
  __asm__ volatile("cfc1 %0, $31" : "=r"(v));
  return v;
}
static inline void set_fcsr(u32 v) { __asm__ volatile("ctc1 %0, $31" : : "r"(v) : "memory"); }

/* Float-to-word conversions by explicit instruction, result through MFC1. */
#define TO_W(op, fmt, x)                                                             \
  __extension__({                                                                     \
    s32 r_;                                                                           \
    __asm__ volatile(op "." fmt " $f0, %1\n\tmfc1 %0, $f0" : "=r"(r_) : "f"(x) : "$f0"); \
    r_;                                                                               \
  })
#if _MIPS_SIM != _ABIO32
#define TO_L(op, fmt, x)                                                              \
  __extension__({                                                                      \
    s64 r_;                                                                            \
    __asm__ volatile(op "." fmt " $f0, %1\n\tdmfc1 %0, $f0" : "=r"(r_) : "f"(x) : "$f0"); \
    r_;                                                                                \
  })
#endif

/* A unary FP instruction on a register operand. */
#define UNARY(op, T, x)                                          \
  __extension__({                                                \
    T r_;                                                        \
    __asm__ volatile(op " %0, %1" : "=f"(r_) : "f"(x));          \
    r_;                                                          \
  })

/* One compare, the condition bit read back from FCR31. */
#define CMP(cond, fmt, a, b)                                                          \
  __extension__({                                                                      \
    u32 c_;                                                                            \
    __asm__ volatile("c." cond "." fmt " %1, %2\n\tcfc1 %0, $31" : "=r"(c_) : "f"(a), "f"(b)); \
    (c_ >> 23) & 1;                                                                    \
  })

static u64 sum;
static void Mix(u64 v) { sum = (sum ^ v) * 0x100000001b3ull + (sum >> 29); }

static const double kDoubles[] = {
    0.1, 1.0 / 3.0, -2.5, 2.5, 3.5, -0.5, 1e10, -1e-5, 123456.789, -7.0, 0.0, -0.0,
    1e300, -3e-300, 2147483647.4, -2147483648.6, 4503599627370497.0, 9.5,
};
#define NDOUBLES (sizeof kDoubles / sizeof kDoubles[0])

static const float kFloats[] = {0.1f, -1.75f, 3.0f, 16777217.0f, 1e30f, -2e-30f, 0.5f, -0.0f};
#define NFLOATS (sizeof kFloats / sizeof kFloats[0])

static void DoubleArithmetic(void) {
  for (unsigned i = 0; i < NDOUBLES; ++i) {
    for (unsigned j = 0; j < NDOUBLES; j += 3) {
      double a = kDoubles[i], b = kDoubles[j];
      RT_OPAQUE(a);
      Mix(AS_U64(a + b));
      Mix(AS_U64(a - b));
      Mix(AS_U64(a * b));
      if (b != 0) Mix(AS_U64(a / b));
    }
    double a = kDoubles[i];
    RT_OPAQUE(a);
    Mix(AS_U64(__builtin_sqrt(__builtin_fabs(a))));
    Mix(AS_U64(UNARY("neg.d", double, a)));
    Mix(AS_U64(UNARY("abs.d", double, a)));
    Mix(AS_U64(UNARY("mov.d", double, a)));
    Mix(AS_U64((float)a));
    if (a > -2e9 && a < 2e9) {
      Mix((u64)TO_W("cvt.w", "d", a));
      Mix((u64)TO_W("round.w", "d", a));
      Mix((u64)TO_W("trunc.w", "d", a));
      Mix((u64)TO_W("ceil.w", "d", a));
      Mix((u64)TO_W("floor.w", "d", a));
      Mix(AS_U64((double)(s32)a));
    }
#if _MIPS_SIM != _ABIO32
    if (a > -1e18 && a < 1e18) {
      Mix((u64)TO_L("cvt.l", "d", a));
      Mix((u64)TO_L("round.l", "d", a));
      Mix((u64)TO_L("trunc.l", "d", a));
      Mix((u64)TO_L("ceil.l", "d", a));
      Mix((u64)TO_L("floor.l", "d", a));
      s64 l = (s64)a;
      Mix(AS_U64((double)(l * 1000003 + 1)));
      Mix(AS_U32((float)(l * 77 + 1)));
    }
#endif
  }
}

static void SingleArithmetic(void) {
  for (unsigned i = 0; i < NFLOATS; ++i) {
    for (unsigned j = 0; j < NFLOATS; ++j) {
      float a = kFloats[i], b = kFloats[j];
      RT_OPAQUE(a);
      Mix(AS_U32(a + b));
      Mix(AS_U32(a - b));
      Mix(AS_U32(a * b));
      if (b != 0) Mix(AS_U32(a / b));
    }
    float a = kFloats[i];
    RT_OPAQUE(a);
    Mix(AS_U32(__builtin_sqrtf(__builtin_fabsf(a))));
    Mix(AS_U64((double)a));
    Mix(AS_U32(UNARY("neg.s", float, a)));
    Mix(AS_U32(UNARY("abs.s", float, a)));
    if (a > -2e9f && a < 2e9f) {
      Mix((u64)TO_W("cvt.w", "s", a));
      Mix((u64)TO_W("round.w", "s", a));
      Mix((u64)TO_W("trunc.w", "s", a));
      Mix((u64)TO_W("ceil.w", "s", a));
      Mix((u64)TO_W("floor.w", "s", a));
      s32 w = (s32)a * 3 + 1;
      Mix(AS_U32((float)w));
    }
  }
}

static void Compares(void) {
  static const double pairs[][2] = {{1.0, 2.0}, {2.0, 1.0}, {-0.0, 0.0}, {5.0, 5.0}};
  for (unsigned i = 0; i < 4; ++i) {
    double a = pairs[i][0], b = pairs[i][1];
    float fa = (float)a, fb = (float)b;
    u32 bits = CMP("f", "d", a, b) | CMP("un", "d", a, b) << 1 | CMP("eq", "d", a, b) << 2 |
               CMP("ueq", "d", a, b) << 3 | CMP("olt", "d", a, b) << 4 |
               CMP("ult", "d", a, b) << 5 | CMP("ole", "d", a, b) << 6 |
               CMP("ule", "d", a, b) << 7 | CMP("sf", "d", a, b) << 8 |
               CMP("ngle", "d", a, b) << 9 | CMP("seq", "d", a, b) << 10 |
               CMP("ngl", "d", a, b) << 11 | CMP("lt", "d", a, b) << 12 |
               CMP("nge", "d", a, b) << 13 | CMP("le", "d", a, b) << 14 |
               CMP("ngt", "d", a, b) << 15;
    bits |= (CMP("f", "s", fa, fb) | CMP("un", "s", fa, fb) << 1 | CMP("eq", "s", fa, fb) << 2 |
             CMP("ueq", "s", fa, fb) << 3 | CMP("olt", "s", fa, fb) << 4 |
             CMP("ult", "s", fa, fb) << 5 | CMP("ole", "s", fa, fb) << 6 |
             CMP("ule", "s", fa, fb) << 7 | CMP("sf", "s", fa, fb) << 8 |
             CMP("ngle", "s", fa, fb) << 9 | CMP("seq", "s", fa, fb) << 10 |
             CMP("ngl", "s", fa, fb) << 11 | CMP("lt", "s", fa, fb) << 12 |
             CMP("nge", "s", fa, fb) << 13 | CMP("le", "s", fa, fb) << 14 |
             CMP("ngt", "s", fa, fb) << 15)
            << 16;
    Mix(bits);
  }
  /* Branches on the condition bit, ordinary and likely. */
  for (unsigned i = 0; i < 4; ++i) {
    double a = pairs[i][0], b = pairs[i][1];
    u32 r = 0;
    __asm__ volatile(
        ".set push\n\t.set noreorder\n\t"
        "c.lt.d %1, %2\n\t"
        "bc1t 1f\n\t"
        "addiu %0, %0, 1\n\t"     /* delay slot, always executed */
        "addiu %0, %0, 16\n"
        "1:\tbc1fl 2f\n\t"
        "addiu %0, %0, 256\n\t"   /* nullified unless taken */
        "addiu %0, %0, 4096\n"
        "2:\tc.eq.d %1, %2\n\t"
        "bc1tl 3f\n\t"
        "addiu %0, %0, 8192\n\t"
        "nop\n"
        "3:\tbc1f 4f\n\t"
        "nop\n\t"
        "addiu %0, %0, 2\n"
        "4:\n\t.set pop"
        : "+r"(r)
        : "f"(a), "f"(b));
    Mix(r);
  }
}

static void RoundingModes(void) {
  const u32 saved = get_fcsr();
  for (u32 rm = 0; rm < 4; ++rm) {
    set_fcsr((saved & ~3u) | rm);
    for (unsigned i = 0; i < NDOUBLES; i += 2) {
      double a = kDoubles[i], b = kDoubles[(i * 7 + 3) % NDOUBLES];
      RT_OPAQUE(a);
      Mix(AS_U64(a + b));
      Mix(AS_U64(a * b));
      if (b != 0) Mix(AS_U64(a / b));
      Mix(AS_U64(__builtin_sqrt(__builtin_fabs(a))));
      Mix(AS_U32((float)a));
      if (a > -2e9 && a < 2e9) Mix((u64)TO_W("cvt.w", "d", a));
    }
    for (unsigned i = 0; i < NFLOATS; ++i) {
      float a = kFloats[i], b = kFloats[(i + 3) % NFLOATS];
      RT_OPAQUE(a);
      Mix(AS_U32(a + b));
      Mix(AS_U32(a * b));
      if (b != 0) Mix(AS_U32(a / b));
    }
    Mix(get_fcsr());
  }
  set_fcsr(saved);
}

static void Exceptional(void) {
  double big = 1e308, zero = 0.0, inf, snan = FROM_U64(0x7ff8000000000000ull);
  RT_OPAQUE(big);
  RT_OPAQUE(zero);
  set_fcsr(0);
  Mix(AS_U64(big * 10.0)); /* overflow */
  Mix(get_fcsr());
  Mix(AS_U64(1.0 / zero)); /* division by zero */
  Mix(get_fcsr());
  inf = big * big;
  Mix(AS_U64(inf - inf)); /* invalid: default NaN */
  Mix(get_fcsr());
  Mix(AS_U64(snan + 1.0)); /* signalling NaN operand */
  Mix(CMP("eq", "d", snan, big));
  Mix(CMP("lt", "d", inf - inf, big)); /* signalling predicate on unordered */
  Mix(get_fcsr());
  /* Denormal and quiet-NaN operands, and an underflowing product: R4400 unimplemented cases. */
  double tiny = 1e-310, qnan = FROM_U64(0x7ff7ffffffffffffull);
  RT_OPAQUE(tiny);
  Mix(AS_U64(tiny * 3.0));
  Mix(AS_U64(qnan + 1.0));
  Mix(AS_U64(1e-200 * 1e-200));
  Mix(AS_U64(UNARY("abs.d", double, qnan)));
  Mix(AS_U64(UNARY("neg.d", double, snan)));
  Mix(get_fcsr());
  set_fcsr(0);
}

int main(void) {
  DoubleArithmetic();
  SingleArithmetic();
  Compares();
  RoundingModes();
  Exceptional();
  rt_puts("fp ");
  rt_put_hex(sum);
  return 0;
}
