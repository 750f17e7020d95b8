/* The content of the disk file `iodata` that the io workload reads: generated, not stored.
   Used by the disk packer and by the known-answer tool. */
#ifndef CITCAT_GUEST_R4400_WORKLOADS_IODATA_H_
#define CITCAT_GUEST_R4400_WORKLOADS_IODATA_H_

#include <stdint.h>

#define IODATA_SIZE (96 * 1024 + 300) /* not a whole number of blocks, on purpose */

static inline void iodata_generate(uint8_t *out, uint32_t n) {
  uint32_t s = 0x10ADDA7Au;
  for (uint32_t i = 0; i < n; ++i) {
    s = s * 1103515245u + 12345u;
    out[i] = (uint8_t)(s >> 16);
  }
}

#endif /* CITCAT_GUEST_R4400_WORKLOADS_IODATA_H_ */
