/* System call numbers of the CITCAT R4400 guest kernel (shared by the kernel and the SDK).
   ABI: `syscall` with v0 = number, a0..a3 = arguments; the result comes back in v0 (negative
   = error); every other register is preserved. See docs/machines/r4400-guest.md. */
#ifndef CITCAT_GUEST_R4400_SDK_SYSCALL_H_
#define CITCAT_GUEST_R4400_SDK_SYSCALL_H_

#define SYS_EXIT 1     /* exit(code): never returns */
#define SYS_WRITE 2    /* write(buf, len) -> len: console output */
#define SYS_READ 3     /* read_blocks(first_block, count 1..128, buf) -> count: disk DMA, sleeps */
#define SYS_YIELD 4    /* yield() -> 0 */
#define SYS_SLEEP 5    /* sleep(ticks) -> 0: at least `ticks` timer ticks */
#define SYS_CLOCK 6    /* clock() -> wall clock in microseconds (device register) */
#define SYS_COUNT 7    /* count() -> CP0 Count (echoed to the trace) */
#define SYS_RANDOM 8   /* random() -> 32 bits from the entropy register */
#define SYS_FILE 9     /* file(name, struct file_info *out) -> 0 or -1: the disk directory */
#define SYS_REPORT 10  /* report(low32, high32) -> 0: the known-answer checksum, stored to
                          the reserved `console` area */
#define SYS_TICKS 11   /* ticks() -> timer ticks since boot */

#define ERR_NOSYS (-1)
#define ERR_FAULT (-2)
#define ERR_INVAL (-3)
#define ERR_NOENT (-4)
#define ERR_IO (-5)

#define DISK_BLOCK_BYTES 512
#define DISK_MAX_BLOCKS 128

#endif /* CITCAT_GUEST_R4400_SDK_SYSCALL_H_ */
