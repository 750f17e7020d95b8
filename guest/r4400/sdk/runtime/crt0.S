/* Entry of a program built against newlib: the kernel starts it in user mode with sp at the top
   of its stack (16 bytes of o32 argument slots included). __citcat_start (syscalls.c) gives
   main an argc and argv and exits with its value through newlib's exit (atexit, stdio flush). */
        .set    noreorder
        .section .text.start, "ax"
        .globl  _start
        .ent    _start
_start:
        addiu   $29, $29, -32
        jal     __citcat_start
        nop
1:      b       1b
        nop
        .end    _start
