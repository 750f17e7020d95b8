/* A bare-metal i486 ROM for privilege levels: flat protected mode with ring 0 and ring 3
   segments and a 32-bit TSS, a port write at ring 0, IRET down to ring 3, INT 0x80 up to ring 0
   on the TSS's stack and IRET back, then a port write at ring 3 with IOPL 0 that raises #GP, whose
   handler (ring 0) records what it was given and halts. Checked by tests/simcore/x86_cpu_test.cc. */
        .set    IDT, 0x1000
        .set    TSS, 0x2000
        .set    STACK0, 0x80000         /* ring 0 stack, also TSS.ESP0 */
        .set    STACK3, 0x70000         /* ring 3 stack */
        .set    GDT, 0x3000             /* the GDT in RAM */
        .set    RESULT, 0x3200          /* what the call gate's handler returned */

        .set    STACK, STACK0
        .include "reset.inc"

pm32:
        /* The GDT goes to RAM (LTR marks the TSS busy in it), with a call gate added at 0x30:
           DPL 3, to ring 0 code at gate_handler, two parameters, 32-bit. */
        movl    $gdt, %esi
        movl    $GDT, %edi
        movl    $6 * 2, %ecx
4:      movl    (%esi), %eax
        movl    %eax, (%edi)
        addl    $4, %esi
        addl    $4, %edi
        loop    4b
        movl    $gate_handler, %eax
        movw    %ax, GDT + 0x30
        movw    $0x08, GDT + 0x30 + 2
        movw    $0xEC02, GDT + 0x30 + 4  /* present, DPL 3, 32-bit call gate, 2 parameters */
        shrl    $16, %eax
        movw    %ax, GDT + 0x30 + 6
        lgdt    gdt_ram_ptr

        /* The TSS: ESP0 and SS0; no I/O bitmap (its base past the limit). */
        movl    $STACK0, TSS + 4
        movl    $0x10, TSS + 8
        movw    $0x68, TSS + 0x66
        movw    $0x28, %ax
        ltr     %ax

        movl    $sys_handler, %eax
        movl    $IDT + 0x80 * 8, %edi
        movw    $0xEE00, %dx            /* present, DPL 3, 32-bit interrupt gate */
        call    set_gate
        movl    $gp_handler, %eax
        movl    $IDT + 13 * 8, %edi
        movw    $0x8E00, %dx            /* present, DPL 0 */
        call    set_gate
        lidt    idt_ptr

        movb    $0x41, %al
        outb    %al, $0xE9              /* ring 0 may use any port */

        /* Down to ring 3: IRET with SS, ESP, EFLAGS (IOPL 0), CS and EIP of ring 3. */
        pushl   $0x23                   /* user data, RPL 3 */
        pushl   $STACK3
        pushl   $0x002                  /* EFLAGS: IF clear, IOPL 0 */
        pushl   $0x1B                   /* user code, RPL 3 */
        pushl   $user
        iret

user:
        /* What ring 3 may learn of descriptors: LAR, LSL, VERR, VERW, and ARPL. */
        movl    $0x08, %eax
        larl    %eax, %edx              /* ring 0 code: not visible, ZF = 0 */
        movl    $0x23, %eax
        larl    %eax, %edx              /* ring 3 data: EDX = its access rights */
        lsll    %eax, %edi              /* EDI = FFFFFFFF */
        verr    %ax
        verw    %ax
        movl    $0x1B, %eax
        verw    %ax                     /* code: not writable, ZF = 0 */
        movw    $0x18, %bx
        arpl    %ax, %bx                /* BX = 0x1B, ZF = 1 */
        movw    %cs, %cx                /* CX = 0x1B: ring 3 */
        int     $0x80                   /* up to ring 0 and back */
        movw    $0x23, %ax              /* DS: the IRET to ring 3 made it null */
        movw    %ax, %ds
        /* Up to ring 0 through the call gate with two parameters, back by RETF 8. */
        pushl   $0x1111
        pushl   $0x2222
        lcall   $0x33, $0
        movl    %eax, RESULT
        movl    STACK3 - 6, %eax        /* misaligned, but AC is clear: no fault */
        outb    %al, $0xE9              /* IOPL 0, no bitmap: #GP(0) */
        jmp     .

sys_handler:
        movw    %cs, %bx                /* BX = 8: ring 0 */
        movl    %esp, %ebp              /* EBP: the ring 0 stack after the entry */
        iret

gate_handler:                           /* ring 0: the parameters lie above CS:EIP */
        movl    8(%esp), %eax
        addl    12(%esp), %eax
        lret    $8

gp_handler:
        popl    %edx                    /* the error code */
        movl    4(%esp), %esi           /* the CS of the interrupted code */
        end_of_run

        .include "lib.inc"

        .p2align 3
gdt:    .quad   0
        /* 0x08 and 0x20 are marked accessed already: QEMU 7.2 does not set the accessed bit of
           a descriptor that a far JMP loads into CS or an IRET into SS, where the i486 does
           (LAR shows 0x20's; Bochs agrees with the core: 0x18's, once IRET has loaded it, is
           compared at the end). */
        .quad   0x00CF9B000000FFFF      /* 0x08: ring 0 code */
        .quad   0x00CF92000000FFFF      /* 0x10: ring 0 data */
        .quad   0x00CFFA000000FFFF      /* 0x18: ring 3 code */
        .quad   0x00CFF3000000FFFF      /* 0x20: ring 3 data */
        .quad   0x0000890020000067      /* 0x28: 32-bit TSS at 0x2000, limit 0x67 */
gdt_ptr:
        .word   6 * 8 - 1
        .long   gdt
gdt_ram_ptr:
        .word   7 * 8 - 1
        .long   GDT
idt_ptr:
        .word   0x81 * 8 - 1
        .long   IDT

        .include "reset_vector.inc"
