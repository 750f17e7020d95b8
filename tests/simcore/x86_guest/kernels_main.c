/* The integer kernels of the i486 core benchmark (bench/x86_programs/kernels.c) for the lock
   step against Unicorn, with their generator's seed moved by x86_salt (set by the test). */
#include <stdint.h>

volatile uint32_t x86_salt;

#define main kernels_main
#include "kernels.c"
#undef main

uint32_t main(void) {
  seed += x86_salt;
  return kernels_main();
}
