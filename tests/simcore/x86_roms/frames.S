/* Interrupt frames that do not fit, and far transfers past a segment's limit, checked against
   Bochs (x86_bochs_lockstep_test.cc; QEMU checks no segment limit). The i486 checks that the
   stack has room for a whole frame before it writes any of it (#SS(0) on the current stack, #SS
   with the new SS's selector on the TSS's stack for a more privileged ring), sets EXT in the error
   code of a fault raised while an exception is delivered, and checks the target EIP of a far
   transfer or gate against the code segment's limit before it pushes anything (#GP(0)).

   Every fault ends in task B through a task gate (#SS, #GP): B records the error code it finds on
   its stack and the ESP that task A's TSS holds, puts task A back at ring 0 at the next step, and
   returns by IRET. The cells below each too-small stack hold a pattern that must survive. */
        .set    IDT, 0x1000
        .set    TSS_A, 0x2000
        .set    TSS_B, 0x2100
        .set    GDT, 0x3000
        .set    RESULTS, 0x3200         /* per fault: the error code, A's ESP */
        .set    COUNT, 0x3300
        .set    SMALL, 0x60000          /* base of the small stack segment 0x38 */
        .set    SMALL0, 0x9F000         /* base of 0x48, the TSS's ring 0 stack in steps 5, 6 */
        .set    STACK_B, 0x70000
        .set    STACK, 0x80000          /* A's ring 0 stack */
        .set    STACK3, 0x78000         /* A's ring 3 stack */
        .set    PATTERN, 0x5A5A5A5A

        .include "reset.inc"

pm32:
        movl    $gdt, %esi
        movl    $GDT, %edi
        movl    $(gdt_end - gdt) / 4, %ecx
        call    copy
        lgdt    gdt_ram_ptr

        /* Task A is the one running; task B starts at task_b on its own stack. */
        movw    $0x68, TSS_A + 0x66
        movl    $task_b, TSS_B + 0x20
        movl    $2, TSS_B + 0x24
        movl    $STACK_B, TSS_B + 0x38
        movl    $0x10, TSS_B + 0x48     /* ES */
        movl    $0x08, TSS_B + 0x4C     /* CS */
        movl    $0x10, TSS_B + 0x50     /* SS */
        movl    $0x10, TSS_B + 0x54     /* DS */
        movw    $0x68, TSS_B + 0x66
        movw    $0x28, %ax
        ltr     %ax

        /* #UD and INT 40h through interrupt gates to ring 0 (INT 40h from any ring), INT 41h to
           an offset past its 16-bit code segment's limit, #SS and #GP through task gates to B. */
        movl    $handler, %eax
        movl    $IDT + 6 * 8, %edi
        movw    $0x8E00, %dx
        call    set_gate
        movl    $IDT + 0x40 * 8, %edi
        movw    $0xEE00, %dx
        call    set_gate
        movl    $0x00010000, %eax
        movl    $IDT + 0x41 * 8, %edi
        movw    $0x8E00, %dx
        call    set_gate
        movw    $0x40, IDT + 0x41 * 8 + 2
        movl    $0x00300000, IDT + 12 * 8
        movl    $0x00008500, IDT + 12 * 8 + 4
        movl    $0x00300000, IDT + 13 * 8
        movl    $0x00008500, IDT + 13 * 8 + 4
        lidt    idt_ptr

        movl    $PATTERN, %eax
        movl    $SMALL, %edi
        movl    $4, %ecx
1:      movl    %eax, (%edi)
        addl    $4, %edi
        loop    1b
        movl    $SMALL0, %edi
        movl    $4, %ecx
1:      movl    %eax, (%edi)
        addl    $4, %edi
        loop    1b
        movl    $PATTERN, STACK - 4
        movl    $PATTERN, STACK - 8

        /* 1. INT 40h at ring 0 with 8 bytes of stack left: #SS(0), nothing written. */
        movw    $0x38, %ax
        movw    %ax, %ss
        movl    $8, %esp
        int     $0x40
step2:
        /* 2. #UD at ring 0 with 8 bytes of stack left: #SS(0 + EXT). */
        movw    $0x38, %ax
        movw    %ax, %ss
        movl    $8, %esp
        .byte   0x0F, 0x0B
step3:
        /* 3. A far CALL to offset 10000h of a 16-bit code segment: #GP(0), nothing pushed. */
        lcall   $0x40, $0x10000
step4:
        /* 4. INT 41h, whose gate points past its code segment's limit: #GP(0). */
        int     $0x41
step5:
        /* 5. and 6. At ring 3 with the TSS's ring 0 stack 0Ch bytes from the bottom of 0x48:
           INT 40h is #SS(48h), #UD is #SS(48h + EXT). */
        movl    $0x0C, TSS_A + 4
        movl    $0x48, TSS_A + 8
        pushl   $0x23
        pushl   $STACK3
        pushl   $0x002
        pushl   $0x1B
        pushl   $ring3
        iret
ring3:
        int     $0x40
step6:
        movl    $0x0C, TSS_A + 4
        movl    $0x48, TSS_A + 8
        pushl   $0x23
        pushl   $STACK3
        pushl   $0x002
        pushl   $0x1B
        pushl   $ring3_ud
        iret
ring3_ud:
        .byte   0x0F, 0x0B
done:
        movl    COUNT, %eax
        end_of_run

handler:                                /* not reached: every frame above fails */
        hlt

/* Task B, entered through the task gate: the error code on its stack, A's state in TSS_A. */
task_b:
        popl    %eax
        movl    COUNT, %ebx
        movl    %eax, RESULTS(, %ebx, 8)
        movl    TSS_A + 0x38, %eax
        movl    %eax, RESULTS + 4(, %ebx, 8)
        movl    resume(, %ebx, 4), %eax
        incl    COUNT
        /* A goes on at ring 0 with a flat stack. */
        movl    %eax, TSS_A + 0x20
        movl    $2, TSS_A + 0x24
        movl    $STACK, TSS_A + 0x38
        movl    $0x10, TSS_A + 0x48
        movl    $0x08, TSS_A + 0x4C
        movl    $0x10, TSS_A + 0x50
        movl    $0x10, TSS_A + 0x54
        movl    $STACK, TSS_A + 4
        movl    $0x10, TSS_A + 8
        iret
        jmp     task_b

        .include "lib.inc"

        .p2align 2
resume: .long   step2, step3, step4, step5, step6, done

        .p2align 3
gdt:    .quad   0
        .quad   0x00CF9B000000FFFF      /* 0x08: ring 0 code */
        .quad   0x00CF93000000FFFF      /* 0x10: ring 0 data */
        .quad   0x00CFFB000000FFFF      /* 0x18: ring 3 code */
        .quad   0x00CFF3000000FFFF      /* 0x20: ring 3 data */
        .quad   0x0000890020000067      /* 0x28: task A's TSS (busy once loaded) */
        .quad   0x0000890021000067      /* 0x30: task B's TSS */
        .quad   0x00409306000000FF      /* 0x38: 32-bit stack, base 60000h, limit FFh */
        .quad   0x00009B000000FFFF      /* 0x40: 16-bit code, limit FFFFh */
        .quad   0x00409309F00000FF      /* 0x48: 32-bit stack, base 9F000h, limit FFh */
gdt_end:
gdt_ptr:
        .word   3 * 8 - 1
        .long   gdt
gdt_ram_ptr:
        .word   gdt_end - gdt - 1
        .long   GDT
idt_ptr:
        .word   0x42 * 8 - 1
        .long   IDT

        .include "reset_vector.inc"
