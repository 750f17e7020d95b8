/* Where QEMU 7.2 is not an i486: a fault while a far JMP loads the new task's segments comes in
   the new task, before its first instruction, and reports that instruction's EIP; QEMU reports
   the EIP of the JMP (in the old task) instead. Task B's DS is not present: the #NP handler
   reads the EIP it was given into EBX, task_b on the core, jmp_to_b under QEMU.
   tests/simcore/x86_qemu_lockstep_test.cc checks that this is the first difference. */
        .set    IDT, 0x1000
        .set    TSS_A, 0x2000
        .set    TSS_B, 0x2100
        .set    GDT, 0x3000
        .set    STACK, 0x90000
        .include "reset.inc"

pm32:
        movl    $gdt, %esi
        movl    $GDT, %edi
        movl    $(gdt_end - gdt) / 4, %ecx
        call    copy
        lgdt    gdt_ram_ptr
        movl    $tss_b, %esi
        movl    $TSS_B, %edi
        movl    $0x68 / 4, %ecx
        call    copy
        movl    $np_handler, %eax
        movl    $IDT + 11 * 8, %edi
        movw    $0x8E00, %dx
        call    set_gate
        lidt    idt_ptr
        movw    $0x28, %ax
        ltr     %ax
        movl    $1, %ecx
        addl    $0, %ecx                /* every flag clear, as in B's EFLAGS */
jmp_to_b:
        ljmp    $0x30, $0

task_b:
        end_of_run

np_handler:
        popl    %eax                    /* the error code */
        movl    (%esp), %ebx            /* the EIP of the fault */
        end_of_run

        .include "lib.inc"

        .p2align 2
/* B: EIP, EFLAGS, ESP, ES CS SS DS FS GS; DS (18h) is not present. */
tss_b:  .long   0, 0, 0, 0, 0, 0, 0, 0
        .long   task_b, 2, 0, 0, 0, 0, 0x80000, 0, 0, 0
        .long   0x10, 0x08, 0x10, 0x18, 0, 0, 0, 0x00680000

        .p2align 3
gdt:    .quad   0
        .quad   0x00CF9B000000FFFF      /* 08: ring 0 code */
        .quad   0x00CF93000000FFFF      /* 10: ring 0 data */
        .quad   0x00CF13000000FFFF      /* 18: data, not present */
        .quad   0
        .quad   0x0000890020000067      /* 28: TSS A */
        .quad   0x0000890021000067      /* 30: TSS B */
gdt_end:
gdt_ptr:
        .word   3 * 8 - 1
        .long   gdt
gdt_ram_ptr:
        .word   gdt_end - gdt - 1
        .long   GDT
idt_ptr:
        .word   12 * 8 - 1
        .long   IDT

        .include "reset_vector.inc"
