/* One R4400 workload (guest/r4400/workloads/, -DWORKLOAD=name) as a bare-metal flat 32-bit i486
   program for the lock step against Unicorn: bench/x86_programs/start.S calls main and halts
   with main's result in EAX (0: the checksum is the workload's known answer). The test sets
   x86_salt before the run: every value the workload's generator returns is XORed with it, so
   each salt is another input (salt 0: the workload's own). The console output and the reported
   checksum land in x86_console and x86_checksum. */
#include "workload.h"

volatile uint32_t x86_salt;
uint32_t x86_checksum;
char x86_console[256];

#define wl_next(s) ((wl_next)(s) ^ x86_salt)

#define CITCAT_STR2(x) #x
#define CITCAT_STR(x) CITCAT_STR2(x)
#include CITCAT_STR(WORKLOAD.c)

int printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(x86_console, sizeof x86_console, fmt, ap);
  va_end(ap);
  return n;
}

void report_checksum(uint64_t value) { x86_checksum = (uint32_t)value; }
