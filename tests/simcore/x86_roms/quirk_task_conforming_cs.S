/* Where QEMU 7.2 is not an i486: a task's CS may be conforming code whose DPL is below the
   selector's RPL (the new CPL), as for a far JMP to it; QEMU wants DPL = RPL and raises #TS. INT
   40h goes through a task gate to task B, whose CS is 1Bh (conforming ring 0 code, RPL 3): the
   core runs task_b at CPL 3, QEMU goes through the #TS task gate to task_t.
   tests/simcore/x86_qemu_lockstep_test.cc checks that this is the first difference. */
        .set    IDT, 0x1000
        .set    TSS_A, 0x2000
        .set    TSS_B, 0x2100
        .set    TSS_T, 0x2200
        .set    GDT, 0x3000
        .set    STACK, 0x90000
        .include "reset.inc"

pm32:
        movl    $gdt, %esi
        movl    $GDT, %edi
        movl    $(gdt_end - gdt) / 4, %ecx
        call    copy
        lgdt    gdt_ram_ptr
        movl    $tss_images, %esi
        movl    $TSS_B, %edi
        movl    $2 * 0x100 / 4, %ecx
        call    copy
        movl    $0x00380000, IDT + 10 * 8       /* task gate: TSS T */
        movl    $0x00008500, IDT + 10 * 8 + 4
        movl    $0x00300000, IDT + 0x40 * 8     /* task gate: TSS B */
        movl    $0x00008500, IDT + 0x40 * 8 + 4
        lidt    idt_ptr
        movw    $0x28, %ax
        ltr     %ax
        cmpl    %eax, %eax              /* every flag defined */
        int     $0x40

task_b: xchgw   %bx, %bx                /* the end, on Bochs (end_of_run in reset.inc) */
        jmp     task_b

task_t: end_of_run

        .include "lib.inc"

/* B and T, 100h apart: EIP, EFLAGS, ESP, ES CS SS DS FS GS. */
        .p2align 8
tss_images:
        .long   0, 0, 0, 0, 0, 0, 0, 0
        .long   task_b, 2, 0, 0, 0, 0, 0x70000, 0, 0, 0
        .long   0x23, 0x1B, 0x23, 0x23, 0, 0, 0, 0x00680000
        .p2align 8
        .long   0, 0, 0, 0, 0, 0, 0, 0
        .long   task_t, 2, 0, 0, 0, 0, 0x84000, 0, 0, 0
        .long   0x10, 0x08, 0x10, 0x10, 0, 0, 0, 0x00680000
        .p2align 8

        .p2align 3
gdt:    .quad   0
        .quad   0x00CF9B000000FFFF      /* 08: ring 0 code */
        .quad   0x00CF93000000FFFF      /* 10: ring 0 data */
        .quad   0x00CF9F000000FFFF      /* 18: conforming ring 0 code */
        .quad   0x00CFF3000000FFFF      /* 20: ring 3 data */
        .quad   0x0000890020000067      /* 28: TSS A */
        .quad   0x0000890021000067      /* 30: TSS B */
        .quad   0x0000890022000067      /* 38: TSS T */
gdt_end:
gdt_ptr:
        .word   3 * 8 - 1
        .long   gdt
gdt_ram_ptr:
        .word   gdt_end - gdt - 1
        .long   GDT
idt_ptr:
        .word   0x41 * 8 - 1
        .long   IDT

        .include "reset_vector.inc"
