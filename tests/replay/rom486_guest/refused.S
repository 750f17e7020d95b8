/* i486 ROMs that take an interrupt where a trace from reset cannot key it from the CAT alone, so
   that `citcat capture --rom` must stop with a one-line error (i486_rom_test.cc). Built once per
   -DREFUSE_...: REFUSE_TASK_GATE takes the timer through a task gate (a task switch: the stores
   after the acknowledge save the old task in its TSS, no frame's pushes); REFUSE_REP_LODS runs REP
   LODSD over
   a cached buffer while the timer interrupts (iterations without a bus transaction between
   them). Linked like examples/i486-bare-metal/selftest.S (rom.ld). */
#include "pc_timer.inc"
#define IDT 0x1000
#define TSS 0x6000
#define TSS2 0x6100
#define BUFFER 0x20000

        .code16
        .text
        .globl  _start
_start:
        cli
        cld
        lgdtl   %cs:(gdt_ptr - _start)
        movl    %cr0, %eax
        orl     $1, %eax
        movl    %eax, %cr0
        ljmpl   $0x08, $pm32

        .code32
pm32:
        movl    $0x10, %eax
        movw    %ax, %ds
        movw    %ax, %es
        movw    %ax, %ss
        movl    $0x90000, %esp
        /* the IDT: the timer at vector 20h */
        movl    $IDT, %edi
        xorl    %eax, %eax
        movl    $2 * 256, %ecx
        rep stosl
        movl    $timer, %edx
        movl    %edx, %ecx
        andl    $0xFFFF, %ecx
        orl     $0x00080000, %ecx
        movl    %ecx, IDT + 0x20 * 8
        andl    $0xFFFF0000, %edx
        orl     $0x8E00, %edx
        movl    %edx, IDT + 0x20 * 8 + 4
        lidt    idt_ptr
        /* the PICs (master at 20h, only IRQ 0) and the timer (mode 2, count 2000) */
        pc_timer 2000
#if defined(REFUSE_TASK_GATE)
        movw    $0x28, %ax
        ltr     %ax
        movl    $0x00300000, IDT + 0x20 * 8     /* a task gate to the TSS at 30h */
        movl    $0x00008500, IDT + 0x20 * 8 + 4
        movl    $task, TSS2 + 0x20      /* EIP */
        movl    $2, TSS2 + 0x24         /* EFLAGS */
        movl    $0x88000, TSS2 + 0x38   /* ESP */
        movl    $0x10, TSS2 + 0x48      /* ES */
        movl    $0x08, TSS2 + 0x4C      /* CS */
        movl    $0x10, TSS2 + 0x50      /* SS */
        movl    $0x10, TSS2 + 0x54      /* DS */
        sti
1:      jmp     1b
task:   movb    $0x20, %al
        outb    %al, $PIC_MASTER
        iret
        jmp     task
#elif defined(REFUSE_REP_LODS)
        movl    %cr0, %eax
        andl    $0x9FFFFFFF, %eax       /* the cache on */
        movl    %eax, %cr0
        sti
1:      movl    $BUFFER, %esi
        movl    $1024, %ecx
        rep lodsl
        jmp     1b
#else
#error "define REFUSE_TASK_GATE or REFUSE_REP_LODS"
#endif

timer:
        pushl   %eax
        movb    $0x20, %al
        outb    %al, $PIC_MASTER
        popl    %eax
        iret

        .p2align 3
gdt:    .quad   0
        .quad   0x00CF9B000000FFFF      /* 08h: ring 0 code */
        .quad   0x00CF93000000FFFF      /* 10h: ring 0 data */
        .quad   0x00CFFB000000FFFF      /* 18h: ring 3 code */
        .quad   0x00CFF3000000FFFF      /* 20h: ring 3 data */
        .quad   0x0000890060000067      /* 28h: the TSS at 6000h */
        .quad   0x0000890061000067      /* 30h: the task gate's TSS at 6100h */
gdt_end:
gdt_ptr:
        .word   gdt_end - gdt - 1
        .long   gdt
idt_ptr:
        .word   256 * 8 - 1
        .long   IDT

        .section .reset, "ax"
        .code16
        .globl  reset
reset:
        ljmp    $0xF000, $0             /* _start, F000:0000 */
        .fill   11, 1, 0xFF
