/* The boot ROM of the traced i486 PC (docs/machines/i486-guest.md, "Boot"): 64 KiB at the top of
   the 4 GB space. From the reset vector (real mode, CS base FFFF0000h, EIP FFF0h) to flat
   32-bit protected mode, paging on (the first 4 MiB and the top 4 MiB mapped onto themselves),
   the cache on, and a jump to the kernel the loader put into RAM: its entry point is in the boot
   block (boot_info.h). Without a boot block the ROM says so on the console and powers off. */
#include "boot_info.h"

#define CODE_SEL 0x08
#define DATA_SEL 0x10
#define UART 0x3F8
#define POWER_OFF 0x5C8

        .code16
        .text
        .globl  _start
_start:                                 /* FFFF0000h */
        cli
        cld
        lgdtl   %cs:(rom_gdt_ptr - _start)
        movl    %cr0, %eax
        orl     $1, %eax                /* PE */
        movl    %eax, %cr0
        ljmpl   $CODE_SEL, $pm32

        .code32
pm32:
        movl    $DATA_SEL, %eax
        movw    %ax, %ds
        movw    %ax, %es
        movw    %ax, %ss
        movw    %ax, %fs
        movw    %ax, %gs
        movl    $I486_ROM_STACK, %esp

        /* the boot block: the magic, and an entry point inside the kernel's range */
        cmpl    $I486_LINUX_MAGIC, I486_BOOT_BLOCK + I486_BOOT_MAGIC_OFFSET
        je      boot_linux
        movl    $msg_no_kernel, %esi
        cmpl    $I486_BOOT_MAGIC, I486_BOOT_BLOCK + I486_BOOT_MAGIC_OFFSET
        jne     fail
        movl    $msg_bad_entry, %esi
        movl    I486_BOOT_BLOCK + I486_BOOT_ENTRY_OFFSET, %ebx
        cmpl    $I486_KERNEL_MIN, %ebx
        jb      fail
        cmpl    $I486_KERNEL_MAX, %ebx
        jae     fail

        /* page tables: linear 0 .. 4 MiB and FFC00000h .. 4 GB onto themselves */
        movl    $I486_ROM_PAGE_DIR, %edi
        xorl    %eax, %eax
        movl    $1024, %ecx
        rep stosl
        movl    $I486_ROM_PT_LOW, %edi
        movl    $0x003, %eax            /* present, writable */
        movl    $1024, %ecx
1:      stosl
        addl    $4096, %eax
        loop    1b
        movl    $I486_ROM_PT_HIGH, %edi
        movl    $0xFFC00003, %eax
        movl    $1024, %ecx
2:      stosl
        addl    $4096, %eax
        loop    2b
        movl    $I486_ROM_PT_LOW + 3, I486_ROM_PAGE_DIR
        movl    $I486_ROM_PT_HIGH + 3, I486_ROM_PAGE_DIR + 1023 * 4
        movl    $I486_ROM_PAGE_DIR, %eax
        movl    %eax, %cr3

        /* paging on, the cache on (CD = NW = 0) */
        movl    %cr0, %eax
        andl    $0x9FFFFFFF, %eax
        orl     $0x80000001, %eax
        movl    %eax, %cr0
        jmp     3f
3:      jmp     *%ebx

/* Linux's 32-bit boot protocol: CS and DS flat 4 GB (ours: 08h and 10h; startup_32 loads its
   own GDT at once), paging off, interrupts off, ESI = boot_params; the cache on. */
boot_linux:
        movl    I486_BOOT_BLOCK + I486_BOOT_ENTRY_OFFSET, %ebx
        movl    I486_BOOT_BLOCK + I486_LINUX_BOOT_PARAMS_OFFSET, %esi
        movl    %cr0, %eax
        andl    $0x9FFFFFFF, %eax       /* CD = NW = 0 */
        movl    %eax, %cr0
        jmp     *%ebx

/* ESI = a message: out on the console (8 data bits: the reset leaves 5), then power off. */
fail:
        movw    $UART + 3, %dx
        movb    $0x03, %al
        outb    %al, %dx
4:      lodsb
        testb   %al, %al
        jz      5f
        movb    %al, %ah
        movw    $UART + 5, %dx          /* until THR is empty (LSR bit 5) */
7:      inb     %dx, %al
        testb   $0x20, %al
        jz      7b
        movb    %ah, %al
        movw    $UART, %dx
        outb    %al, %dx
        jmp     4b
5:      movw    $POWER_OFF, %dx
        outb    %al, %dx
6:      hlt
        jmp     6b

msg_no_kernel:
        .asciz  "boot: no kernel in RAM (no boot block)\n"
msg_bad_entry:
        .asciz  "boot: the kernel's entry point is outside 1 MiB .. 4 MiB\n"

        .p2align 3
rom_gdt:
        .quad   0
        .quad   0x00CF9B000000FFFF      /* 08h: code, base 0, 4 GB, 32-bit, accessed */
        .quad   0x00CF93000000FFFF      /* 10h: data, base 0, 4 GB, accessed */
rom_gdt_ptr:
        .word   3 * 8 - 1
        .long   rom_gdt

/* The reset vector: a near jump, which keeps CS base FFFF0000h. */
        .code16
        .org    0xFFF0
reset:  jmp     _start
        .org    0x10000

        .section .note.GNU-stack, "", @progbits
