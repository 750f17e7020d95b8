/* x87: what the x87 does beyond IEEE double arithmetic. Divisions, square roots, FRNDINT and
   FIST under every precision control (24, 53, 64 bits) and rounding control (nearest, down, up,
   toward zero) set with FLDCW; FSAVE/FRSTOR and FNSTENV/FLDENV round trips; and the
   transcendentals FSIN, FCOS, FPTAN, FPATAN, F2XM1 and FYL2X. Every operation is one inline
   assembly block from memory to memory, so the compiler's own code never rounds anything, and
   the same source runs on an x86 host's x87 for the known answer (tools/known_answers.c).

   The exact part (everything but the transcendentals) is IEEE-defined or defined by the x87
   itself and goes into the checksum bit for bit. The transcendentals are not: a real x87 may be
   off by an ulp or so where the core rounds correctly, and x87s of different makers differ. The
   host writes its results into expected_i486.h (X87_TRANSCENDENTALS); the guest counts how many
   of its own are within X87_ULPS units in the last place (of the 64-bit significand) of the
   host's and how many are identical, and the checksum takes the first count (all of them when
   the answer is right). */
#include "workload.h"

#ifndef CITCAT_HOST
#include "expected_i486.h"
#endif

#define X87_ULPS 2
#define X87_INPUTS 160
#define X87_TRANSCENDENTAL_OPS 6

/* Exceptions masked; precision control in bits 8-9, rounding control in bits 10-11. */
static uint16_t control(int pc, int rc) {
  static const uint16_t kPc[3] = {0x000, 0x200, 0x300}; /* 24, 53, 64 bits */
  return (uint16_t)(0x007F | kPc[pc] | rc << 10);
}

/* An extended value as stored by FSTP m80: significand and sign/exponent. */
struct ext {
  uint64_t m;
  uint16_t se;
};

static uint32_t fold(uint32_t h, const struct ext* e) {
  return wl_mix(wl_mix(wl_mix(h, (uint32_t)e->m), (uint32_t)(e->m >> 32)), e->se);
}

/* Each block saves the caller's control word, loads `cw`, works, stores, puts it back. */
#define X87_BEGIN "fnstcw %[old]\n\tfldcw %[cw]\n\t"
#define X87_END "\n\tfldcw %[old]"

/* n / d, both integers, rounded as `cw` says. */
static void divide(uint16_t cw, int32_t n, int32_t d, struct ext* out) {
  uint16_t old;
  __asm__ volatile(X87_BEGIN "fildl %[n]\n\tfidivl %[d]\n\tfstpt %[out]" X87_END
                   : [out] "=m"(*out), [old] "=m"(old)
                   : [cw] "m"(cw), [n] "m"(n), [d] "m"(d));
}

#define UNARY(name, insn)                                                      \
  static void name(uint16_t cw, const struct ext* x, struct ext* out) {        \
    uint16_t old;                                                              \
    __asm__ volatile(X87_BEGIN "fldt %[x]\n\t" insn "\n\tfstpt %[out]" X87_END \
                     : [out] "=m"(*out), [old] "=m"(old)                       \
                     : [cw] "m"(cw), [x] "m"(*x));                             \
  }
#define BINARY(name, insn)                                                                   \
  static void name(uint16_t cw, const struct ext* y, const struct ext* x, struct ext* out) { \
    uint16_t old;                                                                            \
    __asm__ volatile(X87_BEGIN "fldt %[y]\n\tfldt %[x]\n\t" insn "\n\tfstpt %[out]" X87_END  \
                     : [out] "=m"(*out), [old] "=m"(old)                                     \
                     : [cw] "m"(cw), [y] "m"(*y), [x] "m"(*x));                              \
  }

UNARY(f_sqrt, "fsqrt")
UNARY(f_rndint, "frndint")
UNARY(f_sin, "fsin")
UNARY(f_cos, "fcos")
UNARY(f_tan, "fptan\n\tfstp %%st(0)") /* FPTAN pushes 1.0 over the tangent */
UNARY(f_2xm1, "f2xm1")
BINARY(f_patan, "fpatan") /* atan(y / x) */
BINARY(f_yl2x, "fyl2x")   /* y * log2(x) */
BINARY(f_mul, "fmulp")
BINARY(f_sub, "fsubrp") /* y - x */

/* FIST m32 as `cw` rounds. */
static int32_t fist(uint16_t cw, const struct ext* x) {
  uint16_t old;
  int32_t v;
  __asm__ volatile(X87_BEGIN "fldt %[x]\n\tfistpl %[v]" X87_END
                   : [v] "=m"(v), [old] "=m"(old)
                   : [cw] "m"(cw), [x] "m"(*x));
  return v;
}

/* The bytes of an FSAVE/FNSTENV image (32-bit protected-mode layout) that say what the x87
   holds: the control, status and tag words (low halves) and, for FSAVE, the eight registers.
   The instruction and operand pointers (bytes 12-27) are where the code and data happen to be,
   and the upper halves of the first three dwords are reserved. */
static uint32_t fold_image(uint32_t h, const uint8_t* image, uint32_t size) {
  for (uint32_t i = 0; i < 12; i += 4) h = wl_mix(h, (uint32_t)(image[i] | image[i + 1] << 8));
  for (uint32_t i = 28; i + 2 <= size; i += 2)
    h = wl_mix(h, (uint32_t)(image[i] | image[i + 1] << 8));
  return h;
}

/* Four values on the stack under `cw`; FNSAVE (which also reinitializes); other work on the
   empty stack; FRSTOR; the four popped and stored. The image goes into the checksum too. */
static uint32_t save_restore(uint32_t h, uint16_t cw, const struct ext v[4]) {
  uint8_t image[108];
  struct ext out[4], junk;
  uint16_t old, after;
  __asm__ volatile(X87_BEGIN
                   "fldt %[v0]\n\tfldt %[v1]\n\tfldt %[v2]\n\tfldt %[v3]\n\t"
                   "fdiv %%st(1), %%st\n\t" /* an inexact result: C1 and PE in the status */
                   "fnsave %[image]\n\t"
                   "fldpi\n\tfld1\n\tfaddp\n\tfstpt %[junk]\n\t"
                   "frstor %[image]\n\t"
                   "fnstcw %[after]\n\t"
                   "fstpt %[o0]\n\tfstpt %[o1]\n\tfstpt %[o2]\n\tfstpt %[o3]\n\t"
                   "fnclex" X87_END
                   : [image] "=m"(image), [junk] "=m"(junk), [o0] "=m"(out[0]), [o1] "=m"(out[1]),
                     [o2] "=m"(out[2]), [o3] "=m"(out[3]), [old] "=m"(old), [after] "=m"(after)
                   : [cw] "m"(cw), [v0] "m"(v[0]), [v1] "m"(v[1]), [v2] "m"(v[2]), [v3] "m"(v[3]));
  h = fold_image(h, image, sizeof image);
  h = wl_mix(h, after);
  h = fold(h, &junk);
  for (int i = 0; i < 4; ++i) h = fold(h, &out[i]);
  return h;
}

/* FNSTENV under one control word, FLDCW of another, FLDENV: the first is back. */
static uint32_t env_round_trip(uint32_t h, uint16_t cw, uint16_t other, const struct ext* x) {
  uint8_t env[28];
  uint16_t old, back;
  struct ext out;
  __asm__ volatile(X87_BEGIN
                   "fldt %[x]\n\tfsqrt\n\t"
                   "fnstenv %[env]\n\t"
                   "fldcw %[other]\n\t"
                   "fldenv %[env]\n\t"
                   "fnstcw %[back]\n\t"
                   "fld1\n\tfdivr %%st(1), %%st\n\t" /* rounds as `cw` says, not `other` */
                   "fstpt %[out]\n\tfstp %%st(0)\n\tfnclex" X87_END
                   : [env] "=m"(env), [back] "=m"(back), [out] "=m"(out), [old] "=m"(old)
                   : [cw] "m"(cw), [other] "m"(other), [x] "m"(*x));
  h = fold_image(h, env, sizeof env);
  return fold(wl_mix(h, back), &out);
}

/* The inputs: quotients of pseudo-random integers, rounded to 64 bits. */
static struct ext in_a[X87_INPUTS], in_b[X87_INPUTS];

static void make_inputs(void) {
  uint32_t s = 0x87870001u;
  const uint16_t cw = control(2, 0);
  for (int i = 0; i < X87_INPUTS; ++i) {
    divide(cw, (int32_t)(wl_next(&s) % 2000001u) - 1000000, (int32_t)(wl_next(&s) % 999983u) + 17,
           &in_a[i]);
    divide(cw, (int32_t)(wl_next(&s) % 1000000u) + 1, (int32_t)(wl_next(&s) % 1000u) + 1, &in_b[i]);
  }
}

static uint32_t exact_part(uint32_t h) {
  uint32_t s = 0x87870002u;
  for (int pc = 0; pc < 3; ++pc) {
    for (int rc = 0; rc < 4; ++rc) {
      const uint16_t cw = control(pc, rc);
      for (int i = 0; i < X87_INPUTS; ++i) {
        struct ext q, r;
        divide(cw, (int32_t)wl_next(&s), (int32_t)(wl_next(&s) | 1), &q);
        h = fold(h, &q);
        f_sqrt(cw, &in_b[i], &r);
        h = fold(h, &r);
        f_mul(cw, &in_a[i], &in_b[i], &r);
        h = fold(h, &r);
        f_sub(cw, &r, &in_a[(i + 1) % X87_INPUTS], &r);
        h = fold(h, &r);
        f_rndint(cw, &in_a[i], &r);
        h = fold(h, &r);
        h = wl_mix(h, (uint32_t)fist(cw, &in_b[i]));
      }
      h = save_restore(h, cw, &in_a[4 * (pc * 4 + rc)]);
      h = env_round_trip(h, cw, control(2 - pc, 3 - rc), &in_b[pc * 4 + rc]);
    }
  }
  return h;
}

/* The transcendentals (64-bit precision, round to nearest), X87_TRANSCENDENTAL_OPS per input:
   arguments where the x87 needs no argument reduction (|x| < pi/4 for the trigonometric
   ones, |x| < 1 for F2XM1). */
static void transcendentals(struct ext out[][X87_TRANSCENDENTAL_OPS]) {
  const uint16_t cw = control(2, 0);
  for (int i = 0; i < X87_INPUTS; ++i) {
    struct ext x, y;
    divide(cw, (int32_t)(i * 97 % 1561) - 780, 1000, &x); /* -0.780 .. 0.780 */
    f_sin(cw, &x, &out[i][0]);
    f_cos(cw, &x, &out[i][1]);
    f_tan(cw, &x, &out[i][2]);
    f_2xm1(cw, &x, &out[i][3]);
    f_patan(cw, &in_a[i], &in_b[i], &out[i][4]);
    divide(cw, (int32_t)(i * 37 % 201) - 100, 10, &y);
    f_yl2x(cw, &y, &in_b[i], &out[i][5]);
  }
}

static struct ext results[X87_INPUTS][X87_TRANSCENDENTAL_OPS];

#ifdef CITCAT_HOST
uint32_t x87_compute(void) {
  make_inputs();
  return wl_mix(exact_part(0x811C9DC5u), X87_INPUTS * X87_TRANSCENDENTAL_OPS);
}

/* The host's transcendental results, for the guest to compare with. */
void x87_table(FILE* f) {
  make_inputs();
  transcendentals(results);
  fprintf(f, "#define X87_TRANSCENDENTALS \\\n");
  for (int i = 0; i < X87_INPUTS; ++i) {
    for (int k = 0; k < X87_TRANSCENDENTAL_OPS; ++k) {
      fprintf(f, "  {0x%016llxull, 0x%04x},%s\n", (unsigned long long)results[i][k].m,
              results[i][k].se, i + 1 < X87_INPUTS || k + 1 < X87_TRANSCENDENTAL_OPS ? " \\" : "");
    }
  }
}
#else
static const struct ext host[X87_INPUTS * X87_TRANSCENDENTAL_OPS] = {X87_TRANSCENDENTALS};

/* |a - b| in units of b's last place, when both have the same sign and exponents at most one
   apart; a big number otherwise. */
static uint64_t ulps(const struct ext* a, const struct ext* b) {
  if (a->se == b->se) return a->m > b->m ? a->m - b->m : b->m - a->m;
  if (a->se == b->se + 1) return (a->m << 1) - b->m; /* a's significand at b's scale */
  if (b->se == a->se + 1) return (b->m << 1) - a->m;
  return ~0ull;
}

int main(void) {
  make_inputs();
  uint32_t h = exact_part(0x811C9DC5u);
  transcendentals(results);
  uint32_t close = 0, same = 0;
  for (int i = 0; i < X87_INPUTS * X87_TRANSCENDENTAL_OPS; ++i) {
    const struct ext* got = &results[i / X87_TRANSCENDENTAL_OPS][i % X87_TRANSCENDENTAL_OPS];
    close += ulps(got, &host[i]) <= X87_ULPS;
    same += got->m == host[i].m && got->se == host[i].se;
  }
  printf("x87: %u of %u transcendental results within %d ulps of the host's, %u identical\n", close,
         X87_INPUTS * X87_TRANSCENDENTAL_OPS, X87_ULPS, same);
  return wl_report("x87", wl_mix(h, close), EXPECT_X87);
}
#endif
