/* The hand-over between whoever loads the i486 guest kernel (the capture, the tests), the boot
   ROM and the kernel (docs/machines/i486-guest.md, "Boot"). #defines of plain numbers only, so
   that the ROM's and the kernel's assembler, the kernel's C and the host tools include it.

   The loader copies the kernel's PT_LOAD segments into RAM at their physical addresses, then
   writes the boot block: the magic, the kernel's entry point and the boot string. The ROM finds
   the entry there; the kernel finds the boot string there. */
#ifndef CITCAT_GUEST_I486_BOOT_BOOT_INFO_H_
#define CITCAT_GUEST_I486_BOOT_BOOT_INFO_H_

#define I486_BOOT_BLOCK 0x00001000  /* physical address of the boot block */
#define I486_BOOT_MAGIC_OFFSET 0x0  /* dword: I486_BOOT_MAGIC */
#define I486_BOOT_ENTRY_OFFSET 0x4  /* dword: the kernel's entry point (linear = physical) */
#define I486_BOOT_ARGS_OFFSET 0x100 /* the boot string, NUL-terminated */
#define I486_BOOT_ARGS_SIZE 0x100   /* at most 255 characters and the NUL */
#define I486_BOOT_MAGIC 0x4B544943  /* the bytes "CITK" in memory order */

/* A Linux kernel (docs/machines/i486-linux.md, "Booting"): the block holds this magic instead,
   the entry point (startup_32) and where the loader put boot_params. The ROM starts the kernel
   as the 32-bit boot protocol says: flat protected mode, paging off, interrupts off, the cache
   on, ESI = boot_params. */
#define I486_LINUX_MAGIC 0x4C544943        /* the bytes "CITL" in memory order */
#define I486_LINUX_BOOT_PARAMS_OFFSET 0x8 /* dword: boot_params' physical address */

/* The kernel image must lie in [I486_KERNEL_MIN, I486_KERNEL_MAX): the ROM maps the first 4 MiB
   only, and keeps its own tables and stack below the kernel. */
#define I486_KERNEL_MIN 0x00100000
#define I486_KERNEL_MAX 0x00400000

/* What the ROM uses of RAM, below the kernel: its page directory, two page tables and stack. */
#define I486_ROM_PAGE_DIR 0x00002000
#define I486_ROM_PT_LOW 0x00003000  /* linear 0 .. 4 MiB onto itself */
#define I486_ROM_PT_HIGH 0x00004000 /* the top 4 MiB (the ROM) onto itself */
#define I486_ROM_STACK 0x00008000

#endif /* CITCAT_GUEST_I486_BOOT_BOOT_INFO_H_ */
