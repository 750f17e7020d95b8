# Entry of the bare-metal lock-step test programs: a stack in kseg0, call main, and stop at a
# fixed address (_start + 12) that the harness uses as its end point.
        .set noreorder
        .section .text.start, "ax"
        .globl _start
_start:
        lui     $sp, 0x8040
        jal     main
        nop
_end:
        b       _end
        nop
