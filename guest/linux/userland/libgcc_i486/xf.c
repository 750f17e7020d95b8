/* The compiler helpers for long double (the x87's 80-bit format, "XF") that GCC calls and that
   guest/common/sdk/runtime/helpers.c, written for the bare-metal SDKs' double-only code, lacks:
   musl's complex long double functions multiply through __mulxc3, and a long double to
   unsigned 64-bit conversion goes through __fixunsxfdi. With helpers.c they make libgcc_i486.a,
   which the Linux userland links instead of Debian's i686 libgcc.a (CMOV, README.md). */
#include <stdint.h>

uint64_t __fixunsxfdi(long double a);
long double __powixf2(long double x, int n);
long double _Complex __mulxc3(long double a, long double b, long double c, long double d);

/* Truncates toward zero; out of range saturates (as libgcc does). */
uint64_t __fixunsxfdi(long double a) {
  if (!(a > 0.0L)) return 0; /* also NaN */
  if (a >= 18446744073709551616.0L) return UINT64_MAX;
  if (a < 9223372036854775808.0L) return (uint64_t)(int64_t)a;
  return (uint64_t)(int64_t)(a - 9223372036854775808.0L) + (UINT64_C(1) << 63);
}

long double __powixf2(long double x, int n) {
  unsigned m = n < 0 ? 0u - (unsigned)n : (unsigned)n;
  long double r = (m & 1) ? x : 1.0L;
  while (m >>= 1) {
    x *= x;
    if (m & 1) r *= x;
  }
  return n < 0 ? 1.0L / r : r;
}

static int is_nan(long double x) { return x != x; }
static int is_inf(long double x) { return !is_nan(x) && is_nan(x - x); }
static long double boxed(long double x) { return __builtin_copysignl(is_inf(x) ? 1.0L : 0.0L, x); }
static long double nan_to_zero(long double x) {
  return is_nan(x) ? __builtin_copysignl(0.0L, x) : x;
}

/* C11 Annex G multiplication, as helpers.c's __muldc3. */
long double _Complex __mulxc3(long double a, long double b, long double c, long double d) {
  long double ac = a * c, bd = b * d, ad = a * d, bc = b * c;
  long double x = ac - bd, y = ad + bc;
  if (is_nan(x) && is_nan(y)) {
    int recalc = 0;
    if (is_inf(a) || is_inf(b)) {
      a = boxed(a), b = boxed(b), c = nan_to_zero(c), d = nan_to_zero(d);
      recalc = 1;
    }
    if (is_inf(c) || is_inf(d)) {
      c = boxed(c), d = boxed(d), a = nan_to_zero(a), b = nan_to_zero(b);
      recalc = 1;
    }
    if (!recalc && (is_inf(ac) || is_inf(bd) || is_inf(ad) || is_inf(bc))) {
      a = nan_to_zero(a), b = nan_to_zero(b), c = nan_to_zero(c), d = nan_to_zero(d);
      recalc = 1;
    }
    if (recalc) {
      x = __builtin_infl() * (a * c - b * d);
      y = __builtin_infl() * (a * d + b * c);
    }
  }
  long double _Complex z;
  __real__ z = x;
  __imag__ z = y;
  return z;
}
