/* Where QEMU 7.2 is not an i486: IRET returns to V86 mode only at CPL 0; at CPL 3 the VM bit of
   the EFLAGS image is ignored and the return stays in protected mode. At ring 3 an IRET pops an
   image with VM set: the core goes on at `back` in ring 3, QEMU enters V86 mode with CS 1Bh as
   an 8086 segment (base 1B0h) and IP the low 16 bits of `back`, where a HLT makes it leave V86
   mode by #GP. tests/simcore/x86_qemu_lockstep_test.cc checks that this is the first
   difference. */
        .set    IDT, 0x1000
        .set    TSS, 0x2000
        .set    GDT, 0x3000
        .set    STACK, 0x90000
        .set    STACK3, 0x70000
        .include "reset.inc"

pm32:
        movl    $gdt, %esi
        movl    $GDT, %edi
        movl    $(gdt_end - gdt) / 4, %ecx
        call    copy
        lgdt    gdt_ram_ptr
        movl    $STACK, TSS + 4
        movl    $0x10, TSS + 8
        movw    $0x68, TSS + 0x66
        movw    $0x28, %ax
        ltr     %ax
        movl    $gp_handler, %eax
        movl    $IDT + 13 * 8, %edi
        movw    $0x8E00, %dx
        call    set_gate
        lidt    idt_ptr
        movb    $0xF4, 0x1B0 + back_in_v86     /* HLT where QEMU's V86 mode starts */
        cmpl    %eax, %eax              /* every flag defined */
        pushl   $0x23                   /* down to ring 3 */
        pushl   $STACK3
        pushl   $0x002
        pushl   $0x1B
        pushl   $user
        iret

user:   pushl   $0                      /* GS, FS, DS, ES, SS, ESP */
        pushl   $0
        pushl   $0x23
        pushl   $0x23
        pushl   $0x23
        pushl   $STACK3
        pushl   $0x00020002             /* EFLAGS: VM */
        pushl   $0x1B
        pushl   $back
        iret
back:   xchgw   %bx, %bx                /* the end, on Bochs (end_of_run in reset.inc) */
        jmp     back
        .set    back_in_v86, back - _start      /* QEMU's IP there */

gp_handler:
        end_of_run

        .include "lib.inc"

        .p2align 3
gdt:    .quad   0
        .quad   0x00CF9B000000FFFF      /* 08: ring 0 code */
        .quad   0x00CF93000000FFFF      /* 10: ring 0 data */
        .quad   0x00CFFB000000FFFF      /* 18: ring 3 code */
        .quad   0x00CFF3000000FFFF      /* 20: ring 3 data */
        .quad   0x0000890020000067      /* 28: TSS */
gdt_end:
gdt_ptr:
        .word   3 * 8 - 1
        .long   gdt
gdt_ram_ptr:
        .word   gdt_end - gdt - 1
        .long   GDT
idt_ptr:
        .word   14 * 8 - 1
        .long   IDT

        .include "reset_vector.inc"
