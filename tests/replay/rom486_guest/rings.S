/* An i486 ROM that takes timer interrupts in ring 0 and then, for many more, in an outer ring, so
   that a trace from reset must place interrupts whose frames are not the same-level one
   (i486_rom_test.cc). Built once per -DFROM_...: FROM_RING3 runs a loop in ring 3 (a TSS with
   SS0:ESP0, IRET to ring 3 with IF and IOPL 3: frames of five dwords); FROM_V86 runs it in
   virtual-8086 mode (IRET with VM, in the ROM's copy below 1 MiB: frames of nine dwords). The loop
   stores to memory and to its stack, so that the handler's frame is followed by stores of every
   kind. The handler counts the interrupts by the frame it finds (CS's RPL, EFLAGS.VM); when the
   count reaches TOTAL the loop makes INT 30h, whose handler writes the three counts to port 80h
   (all, from ring 3, from V86 mode) and powers off. Linked like
   examples/i486-bare-metal/selftest.S (rom.ld). */
#include "pc_timer.inc"
#define IDT 0x1000
#define TSS 0x6000
#define COUNT 0x7000            /* every interrupt */
#define COUNT_RING3 0x7004      /* pushed CS with RPL 3 */
#define COUNT_V86 0x7008        /* pushed EFLAGS with VM */
#define WORK 0x7100             /* the outer loop's stores */
#define RING0_FIRST 5           /* interrupts taken in ring 0 before the switch */
#define TOTAL 120

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
        movl    $0, COUNT
        movl    $0, COUNT_RING3
        movl    $0, COUNT_V86
        /* the IDT: the timer at 20h (an interrupt gate), INT 30h (a gate ring 3 may use) */
        movl    $IDT, %edi
        xorl    %eax, %eax
        movl    $2 * 256, %ecx
        rep stosl
        movl    $timer, %edx
        movl    $0x8E00, %ebx
        movl    $0x20, %esi
        call    gate
        movl    $done, %edx
        movl    $0xEE00, %ebx
        movl    $0x30, %esi
        call    gate
        lidt    idt_ptr
        /* the PICs (master at 20h, only IRQ 0) and the timer (mode 2, count 200) */
        pc_timer 200
        /* some interrupts at the handler's privilege level first */
        sti
1:      hlt
        cmpl    $RING0_FIRST, COUNT
        jb      1b
        cli
        movl    $0x90000, TSS + 4       /* ESP0 */
        movl    $0x10, TSS + 8          /* SS0 */
        movw    $0x28, %ax
        ltr     %ax
#if defined(FROM_RING3)
        pushl   $0x23                   /* SS */
        pushl   $0x80000                /* ESP */
        pushl   $0x3202                 /* EFLAGS: IF, IOPL 3 */
        pushl   $0x1B                   /* CS */
        pushl   $ring3
        iret
ring3:
        movw    $0x23, %ax
        movw    %ax, %ds
        movw    %ax, %es
        xorl    %ecx, %ecx
1:      incl    %ecx
        movl    %ecx, WORK
        pushl   %ecx
        pushl   $0x202                  /* stores that look like EFLAGS */
        addl    $4, %esp
        popl    %ecx
        cmpl    $TOTAL, COUNT
        jb      1b
        int     $0x30
#elif defined(FROM_V86)
        pushl   $0                      /* GS */
        pushl   $0                      /* FS */
        pushl   $0                      /* DS */
        pushl   $0                      /* ES */
        pushl   $0x7000                 /* SS */
        pushl   $0xFFF0                 /* ESP */
        pushl   $0x23202                /* EFLAGS: VM, IOPL 3, IF */
        pushl   $0xF000                 /* CS: the ROM's copy below 1 MiB */
        pushl   $v86 - _start
        iret
        .code16
v86:
        xorl    %ecx, %ecx
1:      incl    %ecx
        movl    %ecx, WORK
        pushl   %ecx
        pushl   $0x23202
        addw    $4, %sp
        popl    %ecx
        cmpl    $TOTAL, COUNT
        jb      1b
        int     $0x30
        .code32
#else
#error "define FROM_RING3 or FROM_V86"
#endif

/* The IDT entry ESI: an interrupt gate to CS 08h, offset EDX, type and DPL in EBX. */
gate:
        movl    %edx, %ecx
        andl    $0xFFFF, %ecx
        orl     $0x00080000, %ecx
        movl    %ecx, IDT(,%esi,8)
        andl    $0xFFFF0000, %edx
        orl     %ebx, %edx
        movl    %edx, IDT + 4(,%esi,8)
        ret

/* From V86 mode DS is null here: the counters are reached through SS. */
timer:
        pushl   %eax
        incl    %ss:COUNT
        testb   $3, %ss:8(%esp)         /* the pushed CS */
        jz      1f
        incl    %ss:COUNT_RING3
1:      testl   $0x20000, %ss:12(%esp)  /* the pushed EFLAGS */
        jz      2f
        incl    %ss:COUNT_V86
2:      movb    $0x20, %al
        outb    %al, $PIC_MASTER
        popl    %eax
        iret

done:
        cli
        movl    %ss:COUNT, %eax
        outl    %eax, $0x80
        movl    %ss:COUNT_RING3, %eax
        outl    %eax, $0x80
        movl    %ss:COUNT_V86, %eax
        outl    %eax, $0x80
        movw    $0x5C8, %dx
        outb    %al, %dx
        xchgw   %bx, %bx                /* no power-off port on Bochs: its magic breakpoint */
1:      hlt
        jmp     1b

        .p2align 3
gdt:    .quad   0
        .quad   0x00CF9B000000FFFF      /* 08h: ring 0 code */
        .quad   0x00CF93000000FFFF      /* 10h: ring 0 data */
        .quad   0x00CFFB000000FFFF      /* 18h: ring 3 code */
        .quad   0x00CFF3000000FFFF      /* 20h: ring 3 data */
        .quad   0x0000890060000067      /* 28h: the TSS at 6000h */
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
