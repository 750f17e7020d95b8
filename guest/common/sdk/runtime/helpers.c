/* The compiler helpers GCC calls for 32-bit code, in plain C: for o32 code on an R4000 (Debian's
   libgcc for mips-linux-gnu is MIPS32r2: CLZ, three-operand MUL, MTHC1, which ld will not mix
   with R4000 objects and the R4400 does not run) and for i386 code on an i486 (Debian's libgcc
   for i686-linux-gnu may use CMOV and other i686 instructions). Built with -fno-builtin so that
   no helper is compiled into a call to itself; tests/guest/r4400_isa_test.cc checks what ends
   up linked on the R4400. */
#include <stdint.h>

#include "citcat_sdk.h"

#include "../div64.inc"


/* ---- bits ---- */
int __clzsi2(uint32_t x);
int __clzdi2(uint64_t x);
int __ctzsi2(uint32_t x);
int __ctzdi2(uint64_t x);
int __ffssi2(uint32_t x);
int __ffsdi2(uint64_t x);
int __popcountsi2(uint32_t x);
int __popcountdi2(uint64_t x);
int __paritysi2(uint32_t x);
int __paritydi2(uint64_t x);
uint32_t __bswapsi2(uint32_t x);
uint64_t __bswapdi2(uint64_t x);

int __clzsi2(uint32_t x) {
  int n = 0;
  if (!(x & 0xFFFF0000u)) n += 16, x <<= 16;
  if (!(x & 0xFF000000u)) n += 8, x <<= 8;
  if (!(x & 0xF0000000u)) n += 4, x <<= 4;
  if (!(x & 0xC0000000u)) n += 2, x <<= 2;
  if (!(x & 0x80000000u)) n += 1, x <<= 1;
  return x ? n : 32;
}
int __clzdi2(uint64_t x) {
  uint32_t hi = (uint32_t)(x >> 32);
  return hi ? __clzsi2(hi) : 32 + __clzsi2((uint32_t)x);
}
int __ctzsi2(uint32_t x) {
  if (!x) return 32;
  return 31 - __clzsi2(x & (0u - x));
}
int __ctzdi2(uint64_t x) {
  uint32_t lo = (uint32_t)x;
  return lo ? __ctzsi2(lo) : 32 + __ctzsi2((uint32_t)(x >> 32));
}
int __ffssi2(uint32_t x) { return x ? __ctzsi2(x) + 1 : 0; }
int __ffsdi2(uint64_t x) { return x ? __ctzdi2(x) + 1 : 0; }
int __popcountsi2(uint32_t x) {
  x = x - ((x >> 1) & 0x55555555u);
  x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
  x = (x + (x >> 4)) & 0x0F0F0F0Fu;
  x += x >> 8;
  x += x >> 16;
  return (int)(x & 63);
}
int __popcountdi2(uint64_t x) {
  return __popcountsi2((uint32_t)x) + __popcountsi2((uint32_t)(x >> 32));
}
int __paritysi2(uint32_t x) { return __popcountsi2(x) & 1; }
int __paritydi2(uint64_t x) { return __popcountdi2(x) & 1; }
uint32_t __bswapsi2(uint32_t x) {
  return (x >> 24) | ((x >> 8) & 0xFF00u) | ((x << 8) & 0xFF0000u) | (x << 24);
}
uint64_t __bswapdi2(uint64_t x) {
  return (uint64_t)__bswapsi2((uint32_t)x) << 32 | __bswapsi2((uint32_t)(x >> 32));
}

/* ---- 64-bit integers and floating point (the FPU converts only 32-bit integers in o32) ---- */
uint64_t __fixunsdfdi(double a);
int64_t __fixdfdi(double a);
uint64_t __fixunssfdi(float a);
int64_t __fixsfdi(float a);
double __floatundidf(uint64_t a);
double __floatdidf(int64_t a);
float __floatundisf(uint64_t a);
float __floatdisf(int64_t a);

static const double kTwo32 = 4294967296.0;

/* Truncates toward zero; out of range saturates (as libgcc's soft helpers do). */
uint64_t __fixunsdfdi(double a) {
  if (!(a > 0.0)) return 0; /* also NaN */
  if (a >= kTwo32 * kTwo32) return UINT64_MAX;
  uint32_t hi = (uint32_t)(a / kTwo32);      /* exact: division by a power of two */
  uint32_t lo = (uint32_t)(a - hi * kTwo32); /* exact: the remainder is below 2^32 */
  return (uint64_t)hi << 32 | lo;
}
int64_t __fixdfdi(double a) {
  if (a != a) return 0;
  if (a >= 9223372036854775808.0) return INT64_MAX;
  if (a <= -9223372036854775808.0) return INT64_MIN;
  return a < 0 ? -(int64_t)__fixunsdfdi(-a) : (int64_t)__fixunsdfdi(a);
}
uint64_t __fixunssfdi(float a) { return __fixunsdfdi(a); }
int64_t __fixsfdi(float a) { return __fixdfdi(a); }

/* Both halves are exact doubles, so the one addition rounds once, as the conversion must. */
double __floatundidf(uint64_t a) { return (double)(uint32_t)(a >> 32) * kTwo32 + (uint32_t)a; }
double __floatdidf(int64_t a) {
  return a < 0 ? -__floatundidf(0 - (uint64_t)a) : __floatundidf((uint64_t)a);
}
/* Through double without rounding twice: above 2^53 the bits a double would drop are folded
   into one sticky bit that lies below float's rounding bit. */
float __floatundisf(uint64_t a) {
  if (a >> 53) a = (a & ~(uint64_t)0x7FF) | ((a & 0x7FF) ? 0x800 : 0);
  return (float)__floatundidf(a);
}
float __floatdisf(int64_t a) {
  return a < 0 ? -__floatundisf(0 - (uint64_t)a) : __floatundisf((uint64_t)a);
}

/* ---- powers and complex arithmetic (C11 Annex G for infinities and NaNs) ---- */
double __powidf2(double x, int n);
float __powisf2(float x, int n);
double _Complex __muldc3(double a, double b, double c, double d);
float _Complex __mulsc3(float a, float b, float c, float d);
double _Complex __divdc3(double a, double b, double c, double d);
float _Complex __divsc3(float a, float b, float c, float d);

double __powidf2(double x, int n) {
  unsigned m = n < 0 ? 0u - (unsigned)n : (unsigned)n;
  double r = (m & 1) ? x : 1.0;
  while (m >>= 1) {
    x *= x;
    if (m & 1) r *= x;
  }
  return n < 0 ? 1.0 / r : r;
}
float __powisf2(float x, int n) {
  unsigned m = n < 0 ? 0u - (unsigned)n : (unsigned)n;
  float r = (m & 1) ? x : 1.0f;
  while (m >>= 1) {
    x *= x;
    if (m & 1) r *= x;
  }
  return n < 0 ? 1.0f / r : r;
}

static int is_nan(double x) { return x != x; }
static int is_inf(double x) { return !is_nan(x) && is_nan(x - x); }
static double copy_sign(double magnitude, double sign) {
  return __builtin_copysign(magnitude, sign);
}
static double boxed(double x) { return copy_sign(is_inf(x) ? 1.0 : 0.0, x); }

static double _Complex make_complex(double re, double im) {
  double _Complex z;
  __real__ z = re;
  __imag__ z = im;
  return z;
}

double _Complex __muldc3(double a, double b, double c, double d) {
  double ac = a * c, bd = b * d, ad = a * d, bc = b * c;
  double x = ac - bd, y = ad + bc;
  if (is_nan(x) && is_nan(y)) {
    int recalc = 0;
    if (is_inf(a) || is_inf(b)) {
      a = boxed(a), b = boxed(b);
      if (is_nan(c)) c = copy_sign(0.0, c);
      if (is_nan(d)) d = copy_sign(0.0, d);
      recalc = 1;
    }
    if (is_inf(c) || is_inf(d)) {
      c = boxed(c), d = boxed(d);
      if (is_nan(a)) a = copy_sign(0.0, a);
      if (is_nan(b)) b = copy_sign(0.0, b);
      recalc = 1;
    }
    if (!recalc && (is_inf(ac) || is_inf(bd) || is_inf(ad) || is_inf(bc))) {
      if (is_nan(a)) a = copy_sign(0.0, a);
      if (is_nan(b)) b = copy_sign(0.0, b);
      if (is_nan(c)) c = copy_sign(0.0, c);
      if (is_nan(d)) d = copy_sign(0.0, d);
      recalc = 1;
    }
    if (recalc) {
      x = __builtin_inf() * (a * c - b * d);
      y = __builtin_inf() * (a * d + b * c);
    }
  }
  return make_complex(x, y);
}

double _Complex __divdc3(double a, double b, double c, double d) {
  /* Smith's algorithm, then Annex G's recovery of infinities and zeros */
  double x, y;
  if (__builtin_fabs(c) < __builtin_fabs(d)) {
    double ratio = c / d, denom = c * ratio + d;
    x = (a * ratio + b) / denom;
    y = (b * ratio - a) / denom;
  } else {
    double ratio = d / c, denom = d * ratio + c;
    x = (b * ratio + a) / denom;
    y = (b - a * ratio) / denom;
  }
  if (is_nan(x) && is_nan(y)) {
    double inf = __builtin_inf();
    if (c == 0.0 && d == 0.0 && (!is_nan(a) || !is_nan(b))) {
      x = copy_sign(inf, c) * a;
      y = copy_sign(inf, c) * b;
    } else if ((is_inf(a) || is_inf(b)) && !is_inf(c) && !is_nan(c) && !is_inf(d) &&
               !is_nan(d)) {
      a = boxed(a), b = boxed(b);
      x = inf * (a * c + b * d);
      y = inf * (b * c - a * d);
    } else if ((is_inf(c) || is_inf(d)) && !is_inf(a) && !is_nan(a) && !is_inf(b) &&
               !is_nan(b)) {
      c = boxed(c), d = boxed(d);
      x = 0.0 * (a * c + b * d);
      y = 0.0 * (b * c - a * d);
    }
  }
  return make_complex(x, y);
}

float _Complex __mulsc3(float a, float b, float c, float d) {
  double _Complex z = __muldc3(a, b, c, d);
  float _Complex r;
  __real__ r = (float)__real__ z;
  __imag__ r = (float)__imag__ z;
  return r;
}
float _Complex __divsc3(float a, float b, float c, float d) {
  double _Complex z = __divdc3(a, b, c, d);
  float _Complex r;
  __real__ r = (float)__real__ z;
  __imag__ r = (float)__imag__ z;
  return r;
}
