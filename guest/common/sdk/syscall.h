/* System call numbers of the CITCAT guest kernels (shared by the R4400 and i486 kernels and the
   SDK). Four arguments in, one result out (negative = error); every other register is
   preserved. R4400: `syscall` with v0 = number, a0..a3 = arguments, result in v0
   (docs/machines/r4400-guest.md). i486: INT 0x80 with EAX = number, EBX, ECX, EDX, ESI =
   arguments, result in EAX (docs/machines/i486-guest.md). */
#ifndef CITCAT_GUEST_COMMON_SDK_SYSCALL_H_
#define CITCAT_GUEST_COMMON_SDK_SYSCALL_H_

#define SYS_EXIT 1     /* exit(code): never returns */
#define SYS_WRITE 2    /* write(buf, len) -> len: console output */
#define SYS_READ 3     /* read_blocks(first_block, count 1..128, buf) -> count: disk DMA, sleeps */
#define SYS_YIELD 4    /* yield() -> 0 */
#define SYS_SLEEP 5    /* sleep(ticks) -> 0: at least `ticks` timer ticks */
#define SYS_CLOCK 6    /* clock() -> wall clock in microseconds (device register) */
#define SYS_COUNT 7    /* count() -> the processor's counter: R4400 CP0 Count (echoed to the
                          trace); i486 the interval timer's input clocks since it was started */
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

#endif /* CITCAT_GUEST_COMMON_SDK_SYSCALL_H_ */
