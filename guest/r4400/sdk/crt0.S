/* Entry of an SDK program: the kernel starts it in user mode with sp at the top of its stack
   (16 bytes of o32 argument slots included) and a0 = its task number. main's return value is
   the exit code. */
        .set    noreorder
        .section .text.start, "ax"
        .globl  _start
        .ent    _start
_start:
        addiu   $29, $29, -32
        jal     main
        nop
        jal     exit
        move    $4, $2
1:      b       1b
        nop
        .end    _start
