/* Entry of a program built against newlib: the kernel starts it at ring 3 with ESP 16 bytes
   below the top of its stack. __citcat_start (guest/common/sdk/runtime/syscalls.c) gives main
   an argc and argv and exits with its value through newlib's exit (atexit, stdio flush). */
        .section .text.start, "ax"
        .globl  _start
_start:
        call    __citcat_start
1:      jmp     1b

        .section .note.GNU-stack, "", @progbits
