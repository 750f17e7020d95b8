/* Where QEMU 7.2 is not an i486: it ignores DR7.GD. After a MOV to DR7 sets GD, the next MOV
   from a debug register is a #DB fault on an i486 (the core goes to db_handler); QEMU runs it
   (qemu_ran_it). tests/simcore/x86_qemu_lockstep_test.cc checks that this is the first
   difference. */
        .set    IDT, 0x1000
        .set    STACK, 0x90000
        .include "reset.inc"

pm32:
        movl    $db_handler, %eax
        movl    $IDT + 1 * 8, %edi
        movw    $0x8E00, %dx
        call    set_gate
        lidt    idt_ptr
        cmpl    %eax, %eax              /* every flag defined before #DB pushes them */
        movl    $0x2000, %eax           /* GD */
        movl    %eax, %dr7
        movl    %dr7, %ebx
qemu_ran_it:
        end_of_run

db_handler:
        movl    %dr6, %eax
        end_of_run

        .include "lib.inc"

        .p2align 3
gdt:    .quad   0
        .quad   0x00CF9B000000FFFF      /* 08: ring 0 code */
        .quad   0x00CF93000000FFFF      /* 10: ring 0 data */
gdt_ptr:
        .word   3 * 8 - 1
        .long   gdt
idt_ptr:
        .word   2 * 8 - 1
        .long   IDT

        .include "reset_vector.inc"
