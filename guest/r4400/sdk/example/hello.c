/* A program brought by a user, built against the SDK only (see ../README.md). */
#include "citcat_sdk.h"

static uint32_t fib(uint32_t n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

int main(void) {
  printf("hello: fib(20) = %u\n", fib(20));
  uint32_t t0 = clock_us();
  sleep_ticks(2);
  printf("hello: slept %s\n", clock_us() > t0 ? "a while" : "not at all");
  return 0;
}
