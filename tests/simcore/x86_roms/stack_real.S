/* Stack corners in real mode, checked against Bochs (x86_bochs_lockstep_test.cc; QEMU checks no
   segment limit on a data access). The i486 checks the stack segment's 64 KiB limit in real mode
   too: a push or pop whose operand would cross offset FFFFh raises #SS, with SP as it was before
   the instruction, while a push at SP = 0 wraps to the top of the segment. The #SS handler (in RAM,
   the vector table pointing at it) counts the fault, records the SP it returns to and skips the
   faulting instruction (SKIP bytes). Last, PUSH DS with a 32-bit operand size: the i486 writes
   the selector by a 16-bit move and leaves the slot's upper half as it was; ENTER with a 32-bit
   operand size takes the whole ESP as its frame pointer, on this 16-bit stack too. */
        .include "end.inc"
        .set    STACK_SEG, 0x2000
        .set    HANDLER, 0x600          /* 0000:0600h */
        .set    SS_COUNT, 0x500
        .set    SKIP, 0x502
        .set    RESULTS, 0x510          /* the handler's SP at each #SS */

        .code16
        .text
        .globl  _start
_start:
        cli
        cld
        xorw    %ax, %ax
        movw    %ax, %ds
        movw    %ax, %es
        /* The handler to 0000:0600h, and vector 12 to it. */
        movw    $handler - _start, %si
        movw    $HANDLER, %di
        movw    $handler_end - handler, %cx
1:      movb    %cs:(%si), %al
        movb    %al, (%di)
        incw    %si
        incw    %di
        loop    1b
        movw    $HANDLER, 12 * 4
        movw    $0, 12 * 4 + 2
        movw    $0, SS_COUNT
        movw    $STACK_SEG, %ax
        movw    %ax, %ss
        movl    $0x12345678, %eax

        movw    $2, %sp                 /* a dword pushed at SP = 2 would end at 10001h: #SS */
        movw    $2, SKIP
        pushl   %eax
        movw    $0xFFFF, %sp            /* a word popped at FFFFh crosses the limit: #SS */
        movw    $1, SKIP
        popw    %bx
        movw    $0xFFFE, %sp            /* so does a dword popped at FFFEh */
        movw    $2, SKIP
        popl    %ebx
        movw    $0, %sp                 /* a push at SP = 0 wraps: the word at FFFEh */
        pushw   %ax
        movw    $0, %sp                 /* and a dword at FFFCh */
        pushl   %eax
        movw    $2, %sp                 /* ENTER at SP = 2: BP at 0, then 4 bytes below */
        enterw  $4, $0
        leavew
        movw    $0x100, %sp             /* PUSH DS with a 32-bit operand size: a word into the */
        pushl   %eax                    /* slot, whose upper half keeps 1234h */
        popl    %ebx
        pushl   %ds
        popl    %ecx
        movl    $0x00030040, %esp       /* ENTER 8,2, o32: EBP := 0003003Ch, not 0000003Ch */
        movl    $0x00050020, %ebp
        enterl  $8, $2
        movl    $0xFFF0, %esp
        end_of_run

/* #SS: count, record SP, return past the faulting instruction. Copied to RAM; uses DS = 0. */
handler:
        incw    SS_COUNT
        movw    SS_COUNT, %bx
        shlw    $1, %bx
        movw    %sp, RESULTS(%bx)
        pushw   %bp
        movw    %sp, %bp
        movw    SKIP, %bx
        addw    %bx, 2(%bp)             /* the return IP */
        popw    %bp
        iret
handler_end:

        .include "reset_vector.inc"
