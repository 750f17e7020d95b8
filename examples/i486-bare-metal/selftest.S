/* A bare-metal i486 self-test ROM (examples/README.md), traced from reset by
   `citcat capture --machine i486 --rom selftest.bin`: 64 KiB at the top of the 4 GB space.

   The reset vector jumps to F000:0000, the ROM's copy below 1 MiB, as a PC BIOS does. There, in
   real mode, it takes INT 30h and a divide error through the real-mode vector table, switches to
   protected mode with a GDT in the ROM, copies its protected-mode part into RAM and runs it
   there (rom.ld), builds an IDT in RAM, takes a divide error and INT 30h
   through it, turns paging on (the first 4 MiB and the ROM's 4 MiB mapped onto themselves) and
   takes a page fault whose handler maps the missing page. Then it programs the PICs and the
   timer and lets ten timer interrupts come, during REP STOSL, a loop of register arithmetic and
   HLT. It prints each result on the console and writes it to port 80h (a PC's POST code port: no
   device, so only the CAT keeps it), then its verdict, 600DC0DEh when every result is what it
   must be, and powers the machine off. */
#define UART 0x3F8
#define POST 0x80
#define POWER_OFF 0x5C8
#define PIC_MASTER 0x20
#define PIC_SLAVE 0xA0
#define PIT 0x40

#define CODE_SEL 0x08
#define DATA_SEL 0x10

/* RAM */
#define RM_INT30 0x500 /* words: real-mode INT 30h and divide errors taken */
#define RM_DIVIDES 0x502
#define PM_DIVIDES 0x600 /* dwords: protected mode */
#define PM_INT30 0x604
#define PF_COUNT 0x608
#define PF_CR2 0x60C
#define PF_ERROR 0x610
#define TICKS 0x614
#define RESULTS 0x700
#define IDT 0x1000
#define PAGE_DIR 0x2000
#define PT_LOW 0x3000  /* linear 0 .. 4 MiB */
#define PT_HIGH 0x4000 /* linear FFC00000h .. 4 GB: the ROM */
#define PT_FAULT 0x5000 /* linear 4 MiB .. 8 MiB, installed by the page fault handler */
#define RM_STACK 0x7000
#define BUFFER 0x10000
#define PM_STACK 0x90000
#define FAULT_LINEAR 0x400000
#define FAULT_PHYSICAL 0x100000

#define NRESULTS 10

        .code16
        .text
        .globl  _start
_start:                                 /* FFFF0000h, F000:0000 */
        cli
        cld
        xorw    %ax, %ax
        movw    %ax, %ds
        movw    %ax, %es
        movw    %ax, %ss
        movw    $RM_STACK, %sp
        movw    $UART + 3, %dx          /* the console: 8 data bits (LCR 03h); the reset leaves 5 */
        movb    $0x03, %al
        outb    %al, %dx
        movl    $0, RM_INT30            /* both counters */
        /* the real-mode vector table: #DE and INT 30h to the ROM's copy at F000:xxxx */
        movw    $(rm_divide - _start), 0x00 * 4
        movw    $0xF000, 0x00 * 4 + 2
        movw    $(rm_int30 - _start), 0x30 * 4
        movw    $0xF000, 0x30 * 4 + 2
        int     $0x30                   /* returns to F000:xxxx: from here on the copy runs */
        movw    $7, %ax
        movb    $0, %bl
        divb    %bl                     /* #DE: the handler skips these 2 bytes */

        /* protected mode */
        lgdtl   %cs:(gdt_ptr - _start)
        movl    %cr0, %eax
        orl     $1, %eax
        movl    %eax, %cr0
        ljmpl   $CODE_SEL, $pm32

rm_int30:
        incw    RM_INT30
        iret

rm_divide:
        pushw   %bp
        movw    %sp, %bp
        addw    $2, 2(%bp)              /* the saved IP: past DIV */
        incw    RM_DIVIDES
        popw    %bp
        iret

        .code32
pm32:
        movl    $DATA_SEL, %eax
        movw    %ax, %ds
        movw    %ax, %es
        movw    %ax, %ss
        movw    %ax, %fs
        movw    %ax, %gs
        movl    $PM_STACK, %esp
        /* the rest runs in RAM, as a PC BIOS shadows its ROM: copied there, then cached */
        movl    $__text32_rom, %esi
        movl    $__text32_ram, %edi
        movl    $__text32_dwords, %ecx
        rep movsl
        jmp     pm_ram

        .p2align 3
gdt:    .quad   0
        .quad   0x00CF9B000000FFFF      /* 08h: code, base 0, 4 GB, 32-bit, accessed */
        .quad   0x00CF93000000FFFF      /* 10h: data, base 0, 4 GB, accessed */
gdt_end:
gdt_ptr:
        .word   gdt_end - gdt - 1
        .long   gdt

        .section .text32, "ax"
pm_ram:
        movl    $banner, %esi
        call    puts

        /* counters, the IDT, the page tables: cleared */
        movl    $PM_DIVIDES, %edi
        xorl    %eax, %eax
        movl    $8, %ecx
        rep stosl
        movl    $IDT, %edi
        movl    $2 * 256, %ecx
        rep stosl
        movl    $PAGE_DIR, %edi
        movl    $4 * 1024, %ecx
        rep stosl

        /* the IDT: #DE, #PF, the timer (IRQ 0 at vector 20h), INT 30h */
        movl    $0x00, %eax
        movl    $pm_divide, %edx
        call    set_gate
        movl    $0x0E, %eax
        movl    $pm_page_fault, %edx
        call    set_gate
        movl    $0x20, %eax
        movl    $pm_timer, %edx
        call    set_gate
        movl    $0x30, %eax
        movl    $pm_int30, %edx
        call    set_gate
        lidt    idt_ptr

        movl    $100, %eax
        xorl    %edx, %edx
        xorl    %ecx, %ecx
        divl    %ecx                    /* #DE: the handler skips these 2 bytes */
        int     $0x30
        movl    %eax, RESULTS + 9 * 4   /* what the handler returned */

        /* paging: 0 .. 4 MiB and FFC00000h .. 4 GB onto themselves, the cache on */
        movl    $PT_LOW, %edi
        movl    $0x003, %eax            /* present, writable */
        movl    $1024, %ecx
1:      stosl
        addl    $4096, %eax
        loop    1b
        movl    $PT_HIGH, %edi
        movl    $0xFFC00003, %eax
        movl    $1024, %ecx
2:      stosl
        addl    $4096, %eax
        loop    2b
        movl    $PT_LOW + 3, PAGE_DIR
        movl    $PT_HIGH + 3, PAGE_DIR + 1023 * 4
        movl    $PAGE_DIR, %eax
        movl    %eax, %cr3
        movl    %cr0, %eax
        andl    $0x9FFFFFFF, %eax       /* CD = NW = 0 */
        orl     $0x80000000, %eax       /* PG */
        movl    %eax, %cr0
        jmp     3f
3:
        movl    $0xC0DE, FAULT_LINEAR   /* #PF: not present; the handler maps it */
        movl    FAULT_PHYSICAL, %eax    /* the same byte through the identity map */
        movl    %eax, RESULTS + 7 * 4

        /* the PICs: master at 20h, slave at 28h, only IRQ 0; the timer: mode 2, count 2000 */
        movb    $0x11, %al
        outb    %al, $PIC_MASTER
        outb    %al, $PIC_SLAVE
        movb    $0x20, %al
        outb    %al, $PIC_MASTER + 1
        movb    $0x28, %al
        outb    %al, $PIC_SLAVE + 1
        movb    $0x04, %al
        outb    %al, $PIC_MASTER + 1
        movb    $0x02, %al
        outb    %al, $PIC_SLAVE + 1
        movb    $0x01, %al
        outb    %al, $PIC_MASTER + 1
        outb    %al, $PIC_SLAVE + 1
        movb    $0xFE, %al
        outb    %al, $PIC_MASTER + 1
        movb    $0xFF, %al
        outb    %al, $PIC_SLAVE + 1
        movb    $0x34, %al              /* counter 0, low then high byte, mode 2 */
        outb    %al, $PIT + 3
        movb    $0xD0, %al              /* 2000 */
        outb    %al, $PIT
        movb    $0x07, %al
        outb    %al, $PIT
        sti
        /* work while the timer interrupts: string stores and register arithmetic */
work:   movl    $BUFFER, %edi
        movl    TICKS, %eax
        movl    $4096, %ecx
        rep stosl
        movl    $3000, %ecx
        xorl    %esi, %esi
4:      addl    %ecx, %esi
        xorl    $0x55, %esi
        loop    4b
        cmpl    $8, TICKS
        jb      work
5:      hlt                             /* and while halted */
        cmpl    $10, TICKS
        jb      5b
        cli
        movb    $0xFF, %al
        outb    %al, $PIC_MASTER + 1

        /* the results */
        movzwl  RM_INT30, %eax
        movl    %eax, RESULTS + 0 * 4
        movzwl  RM_DIVIDES, %eax
        movl    %eax, RESULTS + 1 * 4
        movl    PM_DIVIDES, %eax
        movl    %eax, RESULTS + 2 * 4
        movl    PM_INT30, %eax
        movl    %eax, RESULTS + 3 * 4
        movl    PF_COUNT, %eax
        movl    %eax, RESULTS + 4 * 4
        movl    PF_CR2, %eax
        movl    %eax, RESULTS + 5 * 4
        movl    PF_ERROR, %eax
        movl    %eax, RESULTS + 6 * 4
        movl    TICKS, %eax
        movl    %eax, RESULTS + 8 * 4

        xorl    %ebx, %ebx              /* result number */
        xorl    %edi, %edi              /* results that are wrong */
report: movl    names(, %ebx, 4), %esi
        call    puts
        movl    RESULTS(, %ebx, 4), %eax
        cmpl    expected(, %ebx, 4), %eax
        je      6f
        incl    %edi
6:      call    puthex
        outl    %eax, $POST
        movl    $newline, %esi
        call    puts
        incl    %ebx
        cmpl    $NRESULTS, %ebx
        jb      report
        movl    $pass, %esi
        movl    $0x600DC0DE, %eax
        testl   %edi, %edi
        jz      7f
        movl    $fail, %esi
        movl    $0xBAD0BAD0, %eax
7:      outl    %eax, $POST
        call    puts
        pushl   %eax
        movw    $UART + 5, %dx          /* until the last character has left (LSR bit 6) */
9:      inb     %dx, %al
        testb   $0x40, %al
        jz      9b
        popl    %eax
        movw    $POWER_OFF, %dx
        outl    %eax, %dx
        xchgw   %bx, %bx                /* no power-off port on Bochs: its magic breakpoint */
8:      hlt
        jmp     8b

/* EAX = vector, EDX = handler: a 32-bit ring-0 interrupt gate in the IDT. */
set_gate:
        leal    IDT(, %eax, 8), %edi
        movl    %edx, %ecx
        andl    $0xFFFF, %ecx
        orl     $(CODE_SEL << 16), %ecx
        movl    %ecx, (%edi)
        movl    %edx, %ecx
        andl    $0xFFFF0000, %ecx
        orl     $0x8E00, %ecx           /* present, DPL 0, 32-bit interrupt gate */
        movl    %ecx, 4(%edi)
        ret

pm_divide:
        addl    $2, (%esp)              /* the saved EIP: past DIV */
        incl    PM_DIVIDES
        iret

pm_int30:
        incl    PM_INT30
        movl    $0x30303030, %eax
        iret

pm_page_fault:
        pushl   %eax
        movl    %cr2, %eax
        movl    %eax, PF_CR2
        movl    4(%esp), %eax           /* the error code */
        movl    %eax, PF_ERROR
        incl    PF_COUNT
        movl    $FAULT_PHYSICAL + 3, PT_FAULT
        movl    $PT_FAULT + 3, PAGE_DIR + 4
        popl    %eax
        addl    $4, %esp                /* the error code */
        iret

pm_timer:
        pushl   %eax
        incl    TICKS
        movb    $0x20, %al              /* EOI */
        outb    %al, $PIC_MASTER
        popl    %eax
        iret

/* AL to the console, once the UART's transmit holding register is empty (LSR bit 5): a 16550
   loses a character written while it still holds one. */
putc:
        pushl   %eax
        movw    $UART + 5, %dx
1:      inb     %dx, %al
        testb   $0x20, %al
        jz      1b
        popl    %eax
        movw    $UART, %dx
        outb    %al, %dx
        ret

/* ESI: a string to the console. */
puts:
        pushl   %eax
        pushl   %edx
1:      lodsb
        testb   %al, %al
        jz      2f
        call    putc
        jmp     1b
2:      popl    %edx
        popl    %eax
        ret

/* EAX: eight hex digits to the console. */
puthex:
        pushl   %eax
        pushl   %ebx
        pushl   %ecx
        pushl   %edx
        movl    %eax, %ebx
        movl    $8, %ecx
1:      roll    $4, %ebx
        movl    %ebx, %eax
        andl    $0xF, %eax
        movb    hex(%eax), %al
        call    putc
        loop    1b
        popl    %edx
        popl    %ecx
        popl    %ebx
        popl    %eax
        ret

idt_ptr:
        .word   256 * 8 - 1
        .long   IDT

        .p2align 2
expected:
        .long   1, 1, 1, 1, 1, FAULT_LINEAR, 2, 0xC0DE, 10, 0x30303030
names:
        .long   n0, n1, n2, n3, n4, n5, n6, n7, n8, n9
n0:     .asciz  "real-mode int30 "
n1:     .asciz  "real-mode #DE   "
n2:     .asciz  "#DE             "
n3:     .asciz  "int30           "
n4:     .asciz  "#PF             "
n5:     .asciz  "#PF CR2         "
n6:     .asciz  "#PF error code  "
n7:     .asciz  "mapped page     "
n8:     .asciz  "timer ticks     "
n9:     .asciz  "int30 result    "
banner: .asciz  "citcat bare-metal i486 self-test\n"
newline:
        .asciz  "\n"
pass:   .asciz  "PASS\n"
fail:   .asciz  "FAIL\n"
hex:    .ascii  "0123456789abcdef"

        .section .reset, "ax"
        .code16
        .globl  reset
reset:                                  /* FFFFFFF0h: F000:FFF0 with CS base FFFF0000h */
        ljmp    $0xF000, $0             /* _start in the copy below 1 MiB */
        .fill   11, 1, 0xFF
