/* Where QEMU 7.2 is not an i486: a task switch to a task whose SS is not present raises #SS (the
   i486's rule for SS) with the selector; QEMU raises #NP. INT 40h goes through a task gate to task
   B, whose SS (18h) is not present; #SS goes through a task gate to task S, #NP to task N: the
   core runs task_s, QEMU task_n. tests/simcore/x86_qemu_lockstep_test.cc checks that this is the
   first difference. */
        .set    IDT, 0x1000
        .set    TSS_A, 0x2000
        .set    TSS_B, 0x2100
        .set    TSS_S, 0x2200
        .set    TSS_N, 0x2300
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
        movl    $3 * 0x100 / 4, %ecx
        call    copy
        movl    $0x00400000, IDT + 11 * 8       /* task gate: TSS N */
        movl    $0x00008500, IDT + 11 * 8 + 4
        movl    $0x00380000, IDT + 12 * 8       /* task gate: TSS S */
        movl    $0x00008500, IDT + 12 * 8 + 4
        movl    $0x00300000, IDT + 0x40 * 8     /* task gate: TSS B */
        movl    $0x00008500, IDT + 0x40 * 8 + 4
        lidt    idt_ptr
        movw    $0x28, %ax
        ltr     %ax
        cmpl    %eax, %eax              /* every flag defined */
        int     $0x40

task_b: hlt

task_s: end_of_run

task_n: end_of_run

        .include "lib.inc"

/* B, S and N, 100h apart: EIP, EFLAGS, ESP, ES CS SS DS FS GS. */
        .p2align 8
tss_images:
        .long   0, 0, 0, 0, 0, 0, 0, 0
        .long   task_b, 2, 0, 0, 0, 0, 0x80000, 0, 0, 0
        .long   0x10, 0x08, 0x18, 0x10, 0, 0, 0, 0x00680000
        .p2align 8
        .long   0, 0, 0, 0, 0, 0, 0, 0
        .long   task_s, 2, 0, 0, 0, 0, 0x84000, 0, 0, 0
        .long   0x10, 0x08, 0x10, 0x10, 0, 0, 0, 0x00680000
        .p2align 8
        .long   0, 0, 0, 0, 0, 0, 0, 0
        .long   task_n, 2, 0, 0, 0, 0, 0x88000, 0, 0, 0
        .long   0x10, 0x08, 0x10, 0x10, 0, 0, 0, 0x00680000
        .p2align 8

        .p2align 3
gdt:    .quad   0
        .quad   0x00CF9B000000FFFF      /* 08: ring 0 code */
        .quad   0x00CF93000000FFFF      /* 10: ring 0 data */
        .quad   0x00CF13000000FFFF      /* 18: data, not present */
        .quad   0
        .quad   0x0000890020000067      /* 28: TSS A */
        .quad   0x0000890021000067      /* 30: TSS B */
        .quad   0x0000890022000067      /* 38: TSS S */
        .quad   0x0000890023000067      /* 40: TSS N */
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
