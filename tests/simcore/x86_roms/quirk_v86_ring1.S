/* Where QEMU 7.2 is not an i486: an interrupt from V86 mode may only go to a non-conforming ring 0
   handler, else #GP with the code segment's selector; QEMU also enters a ring 1 handler. INT 21h
   from V86 mode (IOPL 3) goes through a gate to ring 1 code (18h): the core takes #GP(18h) to
   gp_handler, QEMU runs ring1_handler. tests/simcore/x86_qemu_lockstep_test.cc checks that this is
   the first difference. */
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
        movl    $STACK, TSS + 4         /* SS0:ESP0 */
        movl    $0x10, TSS + 8
        movl    $0x80000, TSS + 0x0C    /* SS1:ESP1, for QEMU's ring 1 entry */
        movl    $0x21, TSS + 0x10
        movw    $0x68, TSS + 0x66
        movw    $0x28, %ax
        ltr     %ax
        movl    $gp_handler, %eax
        movl    $IDT + 13 * 8, %edi
        movw    $0x8E00, %dx
        call    set_gate
        movl    $ring1_handler, %eax    /* a DPL 3 interrupt gate to ring 1 code */
        movw    %ax, IDT + 0x21 * 8
        movw    $0x18, IDT + 0x21 * 8 + 2
        movw    $0xEE00, IDT + 0x21 * 8 + 4
        shrl    $16, %eax
        movw    %ax, IDT + 0x21 * 8 + 6
        lidt    idt_ptr
        movl    $0x21CD, 0x8000         /* the 8086 program at 0800:0000: INT 21h */
        cmpl    %eax, %eax              /* every flag defined */
        pushl   $0                      /* GS, FS, DS, ES, SS, ESP */
        pushl   $0
        pushl   $0x0900
        pushl   $0x0900
        pushl   $0x0700
        pushl   $0x1000
        pushl   $0x00023002             /* EFLAGS: VM, IOPL 3 */
        pushl   $0x0800
        pushl   $0
        iret

gp_handler:
        end_of_run

ring1_handler:
        end_of_run

        .include "lib.inc"

        .p2align 3
gdt:    .quad   0
        .quad   0x00CF9B000000FFFF      /* 08: ring 0 code */
        .quad   0x00CF93000000FFFF      /* 10: ring 0 data */
        .quad   0x00CFBB000000FFFF      /* 18: ring 1 code */
        .quad   0x00CFB3000000FFFF      /* 20: ring 1 data */
        .quad   0x0000890020000067      /* 28: TSS */
gdt_end:
gdt_ptr:
        .word   3 * 8 - 1
        .long   gdt
gdt_ram_ptr:
        .word   gdt_end - gdt - 1
        .long   GDT
idt_ptr:
        .word   0x22 * 8 - 1
        .long   IDT

        .include "reset_vector.inc"
