/* Enabled FP exceptions: with the enable bit set, the operation must trap (SIGFPE under Linux)
   without writing its destination. argv[1] selects the case: invalid, divzero, overflow,
   inexact, ctc1 (a CTC1 that sets a cause bit together with its enable), none (no trap). */
#include "rt.h"

static int Equal(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

static u32 Enable(u32 bits) {
  u32 v = bits << 7;
  __asm__ volatile("ctc1 %0, $31" : : "r"(v) : "memory");
  return v;
}

int main(unsigned long* sp) {
  const unsigned long argc = sp[0];
  const char* what = argc > 1 ? ((const char**)(sp + 1))[1] : "none";
  double zero = 0.0, one = 1.0, big = 1e308, r = 0;
  float third;
  RT_OPAQUE(zero);
  RT_OPAQUE(one);
  RT_OPAQUE(big);
  if (Equal(what, "invalid")) {
    Enable(0x10);
    r = zero / zero;
  } else if (Equal(what, "divzero")) {
    Enable(0x08);
    r = one / zero;
  } else if (Equal(what, "overflow")) {
    Enable(0x04);
    r = big * big;
  } else if (Equal(what, "inexact")) {
    Enable(0x01);
    third = (float)one / 3.0f;
    r = third;
  } else if (Equal(what, "ctc1")) {
    u32 v = (0x10u << 7) | (0x10u << 12); /* V enabled and V cause */
    __asm__ volatile("ctc1 %0, $31" : : "r"(v) : "memory");
  } else {
    Enable(0x1F);
    r = one + one;
  }
  rt_puts("no trap ");
  rt_put_hex((u64)(r != 0));
  return 0;
}
