/* A host for the random instruction streams of x86_random_stream.h, run from RESET on the core
   and on the full-system oracles (x86_random_rom_test.cc). Built in two forms: -DREAL runs the
   stream in real mode (16-bit code, CS base FFFF0000h as the reset leaves it), the other in flat
   32-bit protected mode at ring 0. The host sets up the stream's layout (the data at kData,
   the stack below kStackTop, the pass counter), loads the registers and flags from the block the
   test writes into the ROM image at BLOCK, and jumps to the stream, which the test puts at
   BLOCK + 200h followed by the end of the run. Every exception ends the run too: the vector
   table or the IDT sends all 32 to a handler that does. */
        .set    BLOCK, 0x8000           /* in the ROM: registers, EFLAGS, the data, the stream */
        .set    DATA, 0x20000           /* kData */
        .set    DATA_BYTES, 0x100
        .set    COUNTER, DATA + 0x200   /* kCounter */
        .set    LOOPS, 10               /* kLoops */
        .set    STACK_TOP, 0x30000      /* kStackTop */

#ifdef REAL
        .include "end.inc"
        .code16
        .text
        .globl  _start
_start:
        cli
        cld
        xorw    %ax, %ax
        movw    %ax, %ds
        /* The handler in RAM at 0000:0500h (below 1 MiB the ROM has no copy on every PC), and
           all 32 vectors to it. */
        movl    $0xDB87F4E6, 0x500      /* OUT F4h, AL; XCHG BX, BX; HLT: end_of_run */
        movb    $0xF4, 0x504
        xorw    %di, %di
        movw    $32, %cx
1:      movl    $0x500, (%di)
        addw    $4, %di
        loop    1b
        movw    $DATA >> 4, %ax
        movw    %ax, %es
        movw    $block - _start + 0x40, %si
        xorw    %di, %di
        movw    $DATA_BYTES, %cx
2:      movb    %cs:(%si), %al
        movb    %al, %es:(%di)
        incw    %si
        incw    %di
        loop    2b
        movl    $LOOPS, %es:COUNTER - DATA
        movw    %es, %ax
        movw    %ax, %ds
        movw    %ax, %fs
        movw    %ax, %gs
        movw    $(STACK_TOP >> 4) - 0x1000, %ax
        movw    %ax, %ss
        movl    $0xFFF0, %esp
        pushl   %cs:block - _start + 32
        popfl
        movl    %cs:block - _start + 0, %eax
        movl    %cs:block - _start + 4, %ecx
        movl    %cs:block - _start + 8, %edx
        movl    %cs:block - _start + 12, %ebx
        movl    %cs:block - _start + 20, %ebp
        movl    %cs:block - _start + 24, %esi
        xorl    %edi, %edi
        jmp     stream
#else
        .set    STACK, STACK_TOP
        .set    IDT, 0x1000
        .include "reset.inc"

pm32:
        movw    $0x10, %ax
        movw    %ax, %fs
        movw    %ax, %gs
        movl    $fault, %eax
        movl    $IDT, %edi
        movw    $0x8E00, %dx
1:      pushl   %eax
        call    set_gate
        popl    %eax
        addl    $8, %edi
        cmpl    $IDT + 32 * 8, %edi
        jb      1b
        lidt    idt_ptr
        movl    $block + 0x40, %esi
        movl    $DATA, %edi
        movl    $DATA_BYTES / 4, %ecx
        call    copy
        movl    $LOOPS, COUNTER
        movl    $block, %esi
        movl    0(%esi), %eax
        movl    4(%esi), %ecx
        movl    8(%esi), %edx
        movl    12(%esi), %ebx
        movl    20(%esi), %ebp
        pushl   32(%esi)
        popfl
        movl    24(%esi), %esi
        movl    $DATA, %edi
        movl    $STACK_TOP, %esp
        jmp     stream

fault:  end_of_run

        .include "lib.inc"

        .p2align 3
gdt:    .quad   0
        .quad   0x00CF9B000000FFFF      /* 08: ring 0 code */
        .quad   0x00CF93000000FFFF      /* 10: ring 0 data */
gdt_ptr:
        .word   3 * 8 - 1
        .long   gdt
idt_ptr:
        .word   32 * 8 - 1
        .long   IDT
#endif

        .org    BLOCK
block:  .fill   0x200, 1, 0
stream: .fill   0x4000, 1, 0xF4         /* the test's stream and the end of the run */

        .include "reset_vector.inc"
