/* io: reads the disk file `iodata` by DMA in chunks of varying size (the task sleeps in the
   kernel until each transfer's interrupt), prints progress on the console, sleeps a tick now
   and then, and checks the CRC of what it read. The expected value is the CRC of the generated
   file (workloads/iodata.h). */
#include "workload.h"
#include "iodata.h"

#ifdef CITCAT_HOST
uint32_t io_compute(void) {
  static uint8_t data[IODATA_SIZE];
  iodata_generate(data, IODATA_SIZE);
  return wl_mix(wl_crc32(0, data, IODATA_SIZE), IODATA_SIZE);
}
#else
static uint8_t buf[16 * DISK_BLOCK_BYTES];

int main(void) {
  struct file_info fi;
  if (file_info("iodata", &fi) != 0) {
    printf("io: no iodata file on the disk\n");
    return 2;
  }
  uint32_t start_us = clock_us(), start_count = count_read();
  uint32_t crc = 0, done = 0, reads = 0;
  uint32_t blocks = (fi.size + DISK_BLOCK_BYTES - 1) / DISK_BLOCK_BYTES;
  for (uint32_t b = 0; b < blocks;) {
    uint32_t n = 1 + (reads * 5) % 16;
    if (n > blocks - b) n = blocks - b;
    long got = read_blocks(fi.first_block + b, n, buf);
    if (got != (long)n) {
      printf("io: read of %u blocks at %u failed (%ld)\n", n, b, got);
      return 3;
    }
    uint32_t bytes = n * DISK_BLOCK_BYTES;
    if (bytes > fi.size - done) bytes = fi.size - done;
    crc = wl_crc32(crc, buf, bytes);
    done += bytes;
    b += n;
    ++reads;
    printf("io: read %u blocks, %u of %u bytes, crc 0x%08x\n", n, done, fi.size, crc);
    if (reads % 4 == 0) sleep_ticks(1);
  }
  uint32_t us = clock_us() - start_us, counts = count_read() - start_count;
  printf("io: %u reads in %u us (%u counts)\n", reads, us, counts);
  return wl_report("io", wl_mix(crc, done), EXPECT_IO);
}
#endif
