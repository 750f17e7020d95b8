/* Entry of the bare-metal i486 benchmark programs: flat 32-bit code at CPL 0, the stack below
   the load address; main's result in EAX, then HLT. */
        .text
        .globl  _start
_start:
        movl    $0x100000, %esp
        call    main
        hlt
