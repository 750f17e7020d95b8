/* Entry of a program on the tiny libc: the kernel starts it at ring 3 with ESP 16 bytes below
   the top of its stack and EAX = its task number. main's return value is the exit code. */
        .section .text.start, "ax"
        .globl  _start
_start:
        call    main
        pushl   %eax
        call    exit
1:      jmp     1b

        .section .note.GNU-stack, "", @progbits
