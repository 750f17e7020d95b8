/* What the bare-metal workloads (guest/r4400/workloads/workload.h) take from the CITCAT SDK,
   for the same sources built as ordinary static Linux programs against musl: the C library,
   report_checksum (on Linux no kernel stores the checksum: the program prints it, as it does
   everywhere) and the x87 precision the known answers assume. Found before
   guest/common/sdk/citcat_sdk.h by the include path of the Linux workloads (CMakeLists.txt). */
#ifndef CITCAT_GUEST_LINUX_USERLAND_SHIM_CITCAT_SDK_H_
#define CITCAT_GUEST_LINUX_USERLAND_SHIM_CITCAT_SDK_H_

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void report_checksum(uint64_t value) { (void)value; }

/* Linux starts a process with the x87 at 64-bit precision (control word 037Fh); the workloads
   and their known answers are IEEE double, as the bare-metal kernel gives them (027Fh: 53 bits,
   all exceptions masked, round to nearest). Run before main. */
__attribute__((constructor)) static void citcat_x87_double_precision(void) {
  const uint16_t cw = 0x027F;
  __asm__ volatile("fldcw %0" : : "m"(cw));
}

#endif /* CITCAT_GUEST_LINUX_USERLAND_SHIM_CITCAT_SDK_H_ */
