/* A bare-metal i486 ROM: from the reset vector in real mode to flat protected mode with paging,
   a page fault its handler repairs (INVLPG, IRET, the store runs again), and INT 0x80 through an
   interrupt gate; then HLT. Linked at 0xFFFF0000 (64 KB, the top of the 4 GB space). What the
   registers hold at the HLT is checked by tests/simcore/x86_cpu_test.cc. */
        .set    IDT, 0x1000
        .set    PD, 0x2000
        .set    PT0, 0x3000
        .set    PT1, 0x4000
        .set    HOLE, 0x300000          /* the page the handler maps */

        .set    STACK, 0x90000
        .include "reset.inc"

pm32:
        /* PT0 maps the first 4 MB onto themselves, but for the page at HOLE. */
        movl    $PT0, %edi
        movl    $3, %eax
        movl    $1024, %ecx
1:      movl    %eax, (%edi)
        addl    $4096, %eax
        addl    $4, %edi
        loop    1b
        movl    $0, PT0 + (HOLE >> 12) * 4
        /* PT1 maps the ROM, the last 16 pages. */
        movl    $PT1 + 1008 * 4, %edi
        movl    $0xFFFF0001, %eax
        movl    $16, %ecx
2:      movl    %eax, (%edi)
        addl    $4096, %eax
        addl    $4, %edi
        loop    2b
        movl    $PT0 + 3, PD
        movl    $PT1 + 3, PD + 1023 * 4
        movl    $PD, %eax
        movl    %eax, %cr3

        /* Interrupt gates for #PF and INT 0x80. */
        movl    $pf_handler, %eax
        movl    $IDT + 14 * 8, %edi
        call    set_gate
        movl    $sys_handler, %eax
        movl    $IDT + 0x80 * 8, %edi
        call    set_gate
        lidt    idt_ptr

        movl    %cr0, %eax
        orl     $0x80000000, %eax
        movl    %eax, %cr0
        jmp     3f
3:
        movl    $0x12345678, HOLE + 0x10   /* faults once: the handler maps the page */
        int     $0x80
        movl    HOLE + 0x10, %ecx
        end_of_run

/* EAX = handler, EDI = the gate: selector 8, a present 32-bit interrupt gate, DPL 0. */
set_gate:
        movw    %ax, (%edi)
        movw    $8, 2(%edi)
        movw    $0x8E00, 4(%edi)
        shrl    $16, %eax
        movw    %ax, 6(%edi)
        ret

pf_handler:
        popl    %edx                    /* the error code */
        movl    %cr2, %esi
        movl    $HOLE + 3, PT0 + (HOLE >> 12) * 4
        invlpg  (%esi)
        iret

sys_handler:
        movl    $0xC0DE, %ebx
        iret

        .p2align 3
gdt:    .quad   0
        .quad   0x00CF9A000000FFFF      /* 8: code, base 0, 4 GB, 32-bit */
        .quad   0x00CF92000000FFFF      /* 16: data, base 0, 4 GB */
gdt_ptr:
        .word   3 * 8 - 1
        .long   gdt
idt_ptr:
        .word   0x81 * 8 - 1
        .long   IDT

        .include "reset_vector.inc"
