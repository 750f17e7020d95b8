/* Entry of the static i386 Linux programs built from bare-metal guest C (the R4400 fp workload):
   main's result becomes the exit code, through the exit system call. */
        .text
        .globl  _start
_start:
        call    main
        movl    %eax, %ebx
        movl    $1, %eax
        int     $0x80
        .section .note.GNU-stack,"",@progbits
