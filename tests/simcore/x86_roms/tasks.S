/* A bare-metal i486 ROM for hardware task switches, with paging on. The main task A (32-bit TSS)
   switches to task B by a far JMP to its TSS (no nesting; B has its own page directory and an
   LDT), B jumps back; A calls B through a task gate (nested: back link, NT) and B returns by
   IRET; INT 50h goes through a task gate of the IDT to the 16-bit task C, which returns by IRET,
   and A calls C's TSS directly; a #GP in A goes through a task gate to task D, which receives the
   error code on its stack and returns by IRET past the faulting instruction; a JMP to A's own
   (busy) TSS is a #GP in A, a JMP to a TSS whose limit is too small a #TS in A; INT 51h switches
   to task E, whose DS is not present: the #NP comes in task E, before its first instruction.
   What the ROM records at RESULTS is checked by tests/simcore/x86_cpu_test.cc. */
        .set    IDT, 0x1000
        .set    TSS_A, 0x2000
        .set    TSS_B, 0x2100
        .set    TSS_C, 0x2200           /* 16-bit */
        .set    TSS_D, 0x2300
        .set    TSS_E, 0x2400
        .set    TSS_F, 0x2500           /* limit 50h: too small */
        .set    GDT, 0x3000
        .set    LDT, 0x3400
        .set    PD_A, 0x4000
        .set    PD_B, 0x5000
        .set    PT0, 0x6000             /* the first 2 MB, identity */
        .set    PT0_B, 0x7000           /* the same, but 100000h maps to 101000h */
        .set    PT_ROM, 0x8000          /* the ROM, the last 16 pages */
        .set    RESULTS, 0xA000
        .set    GP_LENGTH, RESULTS + 0x5C   /* what task D skips in A */
        .set    GP_COUNT, RESULTS + 0x60

        .set    STACK, 0x90000
        .include "reset.inc"

pm32:
        /* The GDT goes to RAM: task switches write busy bits into it. */
        movl    $gdt, %esi
        movl    $GDT, %edi
        movl    $(gdt_end - gdt) / 4, %ecx
        call    copy
        lgdt    gdt_ram_ptr
        movl    $ldt, %esi
        movl    $LDT, %edi
        movl    $2, %ecx
        call    copy

        /* The TSS images. */
        movl    $tss_images, %esi
        movl    $TSS_A, %edi
        movl    $0x68 / 4, %ecx
        call    copy
        movl    $TSS_B, %edi
        movl    $0x68 / 4, %ecx
        call    copy
        movl    $TSS_C, %edi
        movl    $0x2C / 4, %ecx
        call    copy
        movl    $TSS_D, %edi
        movl    $0x68 / 4, %ecx
        call    copy
        movl    $TSS_E, %edi
        movl    $0x68 / 4, %ecx
        call    copy

        /* What B and A read at the same linear addresses through their own page tables, and
           what B reads through its LDT's data segment (base 120000h). */
        movl    $0xAAAA0001, 0x100000
        movl    $0xBBBB0001, 0x101000
        movl    $0x1DA7A001, 0x120000

        /* Page tables: PT0 maps the first 2 MB onto themselves, PT0_B is a copy but for the page
           at 100000h; both directories map the ROM through PT_ROM. */
        movl    $PT0, %edi
        movl    $3, %eax
        movl    $512, %ecx
1:      movl    %eax, (%edi)
        addl    $4096, %eax
        addl    $4, %edi
        loop    1b
        movl    $PT0, %esi
        movl    $PT0_B, %edi
        movl    $512, %ecx
        call    copy
        movl    $0x101003, PT0_B + 0x100 * 4
        movl    $PT_ROM + 1008 * 4, %edi
        movl    $0xFFFF0001, %eax
        movl    $16, %ecx
2:      movl    %eax, (%edi)
        addl    $4096, %eax
        addl    $4, %edi
        loop    2b
        movl    $PT0 + 3, PD_A
        movl    $PT_ROM + 3, PD_A + 1023 * 4
        movl    $PT0_B + 3, PD_B
        movl    $PT_ROM + 3, PD_B + 1023 * 4
        movl    $PD_A, %eax
        movl    %eax, %cr3
        movl    %cr0, %eax
        orl     $0x80000000, %eax
        movl    %eax, %cr0

        /* The IDT: #TS and #NP through interrupt gates, #GP through a task gate to D, INT 50h and
           51h through task gates to C and E. */
        movl    $ts_handler, %eax
        movl    $IDT + 10 * 8, %edi
        movw    $0x8E00, %dx
        call    set_gate
        movl    $np_handler, %eax
        movl    $IDT + 11 * 8, %edi
        call    set_gate
        movl    $0x00500000, IDT + 13 * 8       /* task gate: TSS D */
        movl    $0x00008500, IDT + 13 * 8 + 4
        movl    $0x00380000, IDT + 0x50 * 8     /* task gate: TSS C */
        movl    $0x00008500, IDT + 0x50 * 8 + 4
        movl    $0x00680000, IDT + 0x51 * 8     /* task gate: TSS E */
        movl    $0x00008500, IDT + 0x51 * 8 + 4
        lidt    idt_ptr

        movw    $0x28, %ax
        ltr     %ax
        cmpl    %eax, %eax              /* every flag defined before A's are saved */
        movl    $0xA1, %eax
        movl    $0xA2, %ecx
        movl    $0xA3, %edx
        movl    $0xA4, %ebx
        movl    $0xA5, %ebp
        movl    $0xA6, %esi
        movl    $0xA7, %edi

        ljmp    $0x30, $0               /* to TSS B, no nesting */
        movl    %eax, RESULTS + 0x20    /* A's registers came back from its TSS */
        movl    %edi, RESULTS + 0x24
        lcall   $0x40, $0               /* to B through a task gate, nested */
        int     $0x50                   /* to the 16-bit task C through the IDT */
        lcall   $0x38, $0               /* to C's TSS directly */
        movl    $2, GP_LENGTH
        movw    $0x1230, %ax            /* beyond the GDT */
        movw    %ax, %es                /* #GP(1230h): task D */
        movl    $7, GP_LENGTH
        ljmp    $0x28, $0               /* A's own TSS is busy: #GP(28h), task D */
        ljmp    $0x78, $0               /* TSS F's limit is too small: #TS(78h), here */
        int     $0x51                   /* to task E, whose DS is not present */
        movl    %cr0, %eax
        movl    %eax, RESULTS + 0x28
        str     %eax
        movl    %eax, RESULTS + 0x2C
        end_of_run

/* Task B: DS is its LDT's data segment, ES the flat one. */
task_b:
        str     %eax
        movl    %eax, %es:RESULTS + 0x00
        movl    %cr0, %eax
        movl    %eax, %es:RESULTS + 0x04        /* TS set by the switch */
        clts
        movl    (0), %eax
        movl    %eax, %es:RESULTS + 0x08        /* through the LDT */
        movl    %es:0x100000, %eax
        movl    %eax, %es:RESULTS + 0x0C        /* through B's page tables */
        movl    %ebx, %es:RESULTS + 0x10        /* from B's TSS */
        ljmp    $0x28, $0                       /* back to A, no nesting */
        pushfl                                  /* called through the gate: NT set */
        popl    %eax
        movl    %eax, %es:RESULTS + 0x14
        movl    %es:TSS_B, %eax
        movl    %eax, %es:RESULTS + 0x18        /* the back link */
        iret                                    /* back to A */
        hlt

/* Task D: a #GP's handler in a task of its own. It skips GP_LENGTH bytes of A. */
task_d:
        popl    %eax                            /* the error code */
        movl    GP_COUNT, %ecx
        movl    %eax, RESULTS + 0x64(,%ecx,4)
        incl    GP_COUNT
        movl    GP_LENGTH, %eax
        addl    %eax, TSS_A + 0x20
        iret
        jmp     task_d

/* Task E: entered once its DS was made usable by the #NP handler, in this task. */
task_e:
        movl    %ds, %eax
        movl    %eax, RESULTS + 0x80
        iret

/* #TS in A: past the 7-byte far JMP. */
ts_handler:
        popl    %eax
        movl    %eax, RESULTS + 0x90
        addl    $7, (%esp)
        iret

/* #NP: in task E, before its first instruction; DS is not usable, SS is. */
np_handler:
        popl    %eax
        movl    %eax, %ss:RESULTS + 0x84
        movl    (%esp), %eax
        movl    %eax, %ss:RESULTS + 0x88        /* E's first instruction */
        movw    $0x10, %ax
        movw    %ax, %ds
        iret

        .include "lib.inc"

/* Task C: 16-bit code (CS base FFFF0000h), a 16-bit TSS; DS and SS base 0. */
        .code16
task_c:
        incw    RESULTS + 0x40
        movw    %sp, RESULTS + 0x42
        pushfw
        popw    RESULTS + 0x44                  /* NT set: nested */
        movw    %fs, RESULTS + 0x46             /* null: a 16-bit TSS has no FS */
        iret
        jmp     task_c
        .code32

        .p2align 2
tss_images:
/* A: only CR3 and the LDT are read from it before it is first saved. */
        .long   0, 0, 0, 0, 0, 0, 0, PD_A
        .long   0, 0, 0, 0, 0, 0, 0, 0, 0, 0
        .long   0, 0, 0, 0, 0, 0, 0, 0x00680000
/* B: CR3 PD_B, EIP, EFLAGS, EAX-EDI, ES CS SS DS FS GS, LDT. */
        .long   0, 0, 0, 0, 0, 0, 0, PD_B
        .long   task_b, 2, 0xB1, 0xB2, 0xB3, 0xB4, 0x88000, 0xB5, 0xB6, 0xB7
        .long   0x10, 0x08, 0x10, 0x04, 0, 0, 0x48, 0x00680000
/* C (16-bit): link, SP0-SS2, IP, FLAGS, AX-DI, ES CS SS DS, LDT. */
        .word   0, 0, 0, 0, 0, 0, 0
        .word   task_c - _start, 2, 0xC1, 0xC2, 0xC3, 0xC4, 0xE000, 0xC5, 0xC6, 0xC7
        .word   0x60, 0x58, 0x60, 0x60, 0
/* D: the #GP task. */
        .long   0, 0, 0, 0, 0, 0, 0, PD_A
        .long   task_d, 2, 0, 0, 0, 0, 0x84000, 0, 0, 0
        .long   0x10, 0x08, 0x10, 0x10, 0, 0, 0, 0x00680000
/* E: DS 70h, not present. */
        .long   0, 0, 0, 0, 0, 0, 0, PD_A
        .long   task_e, 2, 0, 0, 0, 0, 0x82000, 0, 0, 0
        .long   0x10, 0x08, 0x10, 0x70, 0, 0, 0, 0x00680000

        .p2align 3
gdt:    .quad   0
        .quad   0x00CF9B000000FFFF      /* 08: ring 0 code */
        .quad   0x00CF93000000FFFF      /* 10: ring 0 data */
        .quad   0x00CFFB000000FFFF      /* 18: ring 3 code */
        .quad   0x00CFF3000000FFFF      /* 20: ring 3 data */
        .quad   0x0000890020000067      /* 28: TSS A */
        .quad   0x0000890021000067      /* 30: TSS B */
        .quad   0x000081002200002B      /* 38: TSS C, 16-bit */
        .quad   0x0000850000300000      /* 40: task gate to B */
        .quad   0x000082003400000F      /* 48: B's LDT */
        .quad   0x0000890023000067      /* 50: TSS D */
        .quad   0xFF009BFF0000FFFF      /* 58: 16-bit code, base FFFF0000h */
        .quad   0x000093000000FFFF      /* 60: 16-bit data, base 0 */
        .quad   0x0000890024000067      /* 68: TSS E */
        .quad   0x00CF13000000FFFF      /* 70: data, not present */
        .quad   0x0000890025000050      /* 78: TSS F, limit 50h */
gdt_end:
ldt:    .quad   0x000093120000FFFF      /* 04: data, base 120000h */
gdt_ptr:
        .word   3 * 8 - 1
        .long   gdt
gdt_ram_ptr:
        .word   gdt_end - gdt - 1
        .long   GDT
idt_ptr:
        .word   0x52 * 8 - 1
        .long   IDT

        .include "reset_vector.inc"
