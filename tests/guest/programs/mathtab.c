/* A table of <math.h> functions, 64-bit integer arithmetic and conversions, as a numerics test
   prints it: %f, %e, %g and long long, with values chosen away from rounding ties. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  printf("%-6s %12s %12s %12s %12s\n", "x", "sqrt", "exp", "log1p", "tanh");
  for (int i = 1; i <= 12; ++i) {
    double x = i * 0.37;
    printf("%-6.2f %12.6f %12.6e %12.6f %12.6f\n", x, sqrt(x), exp(x), log1p(x), tanh(x));
  }
  printf("sin/cos: %.6f %.6f %.6f\n", sin(1.0), cos(2.0), atan(0.5));
  printf("pow: %.6g %.6g fmod %.6f floor %.1f ceil %.1f\n", pow(2.0, 0.5), pow(10.0, -3.0),
         fmod(10.5, 3.0), floor(-2.5), ceil(-2.5));
  printf("hypot %.6f cbrt %.6f ldexp %g frexp ", hypot(3.0, 4.0), cbrt(27.0), ldexp(0.75, 10));
  int e;
  double m = frexp(48.0, &e);
  printf("%.3f*2^%d\n", m, e);
  int64_t a = 9007199254740993LL, b = -123456789012LL;
  printf("i64: %lld %lld %lld %lld\n", (long long)(a / b), (long long)(a % b), (long long)(a * 3),
         (long long)(b >> 3));
  printf("conv: %.1f %lld %llu %.1f\n", (double)a, (long long)-1.5e15, (unsigned long long)1.8e19,
         (double)(uint64_t)UINT64_MAX);
  printf("float: %.6f %.6e %g\n", (float)M_PI, (float)1e-7f, (double)FLT_EPSILON);
  printf("div: %d %d %ld %lld\n", div(-17, 5).quot, div(-17, 5).rem, labs(-2147483647L),
         llabs(LLONG_MIN + 1));
  printf("strtod: %.6f %.3e\n", strtod("  -12.5e-3xyz", NULL), strtod("6.02214076e23", NULL));
  return 0;
}
