/* Where QEMU 7.2 is not an i486: an IRET to V86 mode with an EIP beyond 64 KB is #GP(0) before it
   changes anything; QEMU keeps the low 16 bits of EIP and enters V86 mode. The core goes to
   gp_handler in ring 0; QEMU runs 0800:0005, where a HLT makes it leave V86 mode by #GP.
   tests/simcore/x86_qemu_lockstep_test.cc checks that this is the first difference. */
        .set    IDT, 0x1000
        .set    TSS, 0x2000
        .set    GDT, 0x3000
        .set    STACK, 0x90000
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
        movb    $0xF4, 0x8005           /* HLT at 0800:0005 */
        cmpl    %eax, %eax              /* every flag defined */
        pushl   $0                      /* GS, FS, DS, ES, SS, ESP */
        pushl   $0
        pushl   $0x0900
        pushl   $0x0900
        pushl   $0x0700
        pushl   $0x1000
        pushl   $0x00020002             /* EFLAGS: VM */
        pushl   $0x0800
        pushl   $0x10005                /* beyond the 64 KB of a V86 code segment */
        iret

gp_handler:
        end_of_run

        .include "lib.inc"

        .p2align 3
gdt:    .quad   0
        .quad   0x00CF9B000000FFFF      /* 08: ring 0 code */
        .quad   0x00CF93000000FFFF      /* 10: ring 0 data */
        .quad   0
        .quad   0
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
