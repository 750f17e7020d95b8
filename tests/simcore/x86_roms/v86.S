/* A bare-metal i486 ROM for virtual-8086 mode. Ring 0 enters V86 mode by IRET (the 8086 program
   is copied to 0800:0000) with IOPL 0: 8086 segment loads, a far CALL and RETF, then CLI, STI,
   PUSHF, POPF, INT n and IRET each raise #GP(0), which the ring 0 monitor skips, as it skips a
   port the TSS's I/O bitmap denies, HLT and MOV from CR0; INT3 is not IOPL-sensitive and goes to
   its ring 0 handler; LAR, ARPL and SLDT are #UD. INT 7Fh asks the monitor for IOPL 3: then the
   IOPL-sensitive instructions run, INT 21h goes to ring 0 with the V86 segments on its stack and
   comes back, the bitmap still applies, gates to ring 3 code and to conforming code are #GP, an
   8086 IRET runs in V86 mode, and INT 22h leaves through a 16-bit interrupt gate. Then a far JMP
   to a TSS whose EFLAGS has VM set starts a V86 task, which comes back by INT 25h through a task
   gate; IRET (NT) returns to it once. Checked by tests/simcore/x86_cpu_test.cc. */
        .set    IDT, 0x1000
        .set    TSS, 0x2000             /* the ring 0 task, with an I/O bitmap at 68h */
        .set    TSS_V86, 0x2100         /* the V86 task */
        .set    GDT, 0x3000
        .set    RESULTS, 0x6000
        .set    GP_COUNT, RESULTS + 0x80
        .set    GP_CODES, RESULTS + 0x84
        .set    V86_CODE, 0x8000        /* 0800:0000 */

        .set    STACK, 0x90000          /* ring 0, also TSS.ESP0 */
        .include "reset.inc"

pm32:
        movl    $gdt, %esi
        movl    $GDT, %edi
        movl    $(gdt_end - gdt) / 4, %ecx
        call    copy
        lgdt    gdt_ram_ptr
        movl    $v86_code, %esi
        movl    $V86_CODE, %edi
        movl    $(v86_end - v86_code + 3) / 4, %ecx
        call    copy

        /* The ring 0 TSS: SS0:ESP0, the I/O bitmap at 68h: every port of 0-FFh denied but 80h
           and 81h, and the byte after it. */
        movl    $STACK, TSS + 4
        movl    $0x10, TSS + 8
        movw    $0x68, TSS + 0x66
        movl    $TSS + 0x68, %edi
        movl    $0xFFFFFFFF, %eax
        movl    $9, %ecx
1:      movl    %eax, (%edi)
        addl    $4, %edi
        loop    1b
        movb    $0xFC, TSS + 0x68 + 0x10
        /* The V86 task: EIP, EFLAGS (VM, IOPL 3), SP, ES CS SS DS FS GS; no bitmap. */
        movl    $v86_task - v86_code, TSS_V86 + 0x20
        movl    $0x00023002, TSS_V86 + 0x24
        movl    $0x1000, TSS_V86 + 0x38
        movl    $0x0900, TSS_V86 + 0x48
        movl    $0x0800, TSS_V86 + 0x4C
        movl    $0x0500, TSS_V86 + 0x50
        movl    $0x0900, TSS_V86 + 0x54
        movw    $0x68, TSS_V86 + 0x66
        movw    $0x28, %ax
        ltr     %ax

        movl    $bp_handler, %eax
        movl    $IDT + 3 * 8, %edi
        movw    $0xEF00, %dx            /* 32-bit trap gate, DPL 3 */
        call    set_gate
        movl    $ud_handler, %eax
        movl    $IDT + 6 * 8, %edi
        movw    $0x8E00, %dx            /* 32-bit interrupt gate, DPL 0 */
        call    set_gate
        movl    $gp_handler, %eax
        movl    $IDT + 13 * 8, %edi
        call    set_gate
        movl    $int21_handler, %eax
        movl    $IDT + 0x21 * 8, %edi
        movw    $0xEF00, %dx
        call    set_gate
        /* INT 22h: a 16-bit interrupt gate, DPL 3, to code at FFFF0000h (selector 40h). */
        movw    $int22_handler - _start, IDT + 0x22 * 8
        movw    $0x40, IDT + 0x22 * 8 + 2
        movw    $0xE600, IDT + 0x22 * 8 + 4
        /* INT 23h and 24h: to ring 3 code (18h) and to conforming ring 0 code (38h). */
        movl    $0x00180000, IDT + 0x23 * 8
        movl    $0x0000EE00, IDT + 0x23 * 8 + 4
        movl    $0x00380000, IDT + 0x24 * 8
        movl    $0x0000EE00, IDT + 0x24 * 8 + 4
        /* INT 25h: a task gate, DPL 3, to the ring 0 task. */
        movl    $0x00280000, IDT + 0x25 * 8
        movl    $0x0000E500, IDT + 0x25 * 8 + 4
        lidt    idt_ptr

        /* To V86 mode: IRET with GS, FS, DS, ES, SS, ESP, EFLAGS (VM, IOPL 0), CS, EIP. */
        pushl   $0
        pushl   $0
        pushl   $0x0900
        pushl   $0x0900
        pushl   $0x0700
        pushl   $0x1000
        pushl   $0x00020002
        pushl   $0x0800
        pushl   $0
        iret

/* The V86 monitor: #GP(0) from V86 mode skips the instruction (CD 7F also sets IOPL 3 in the
   EFLAGS image). The error codes go to GP_CODES. */
gp_handler:
        pushl   %eax
        pushl   %ebx
        pushl   %ecx
        movw    $0x10, %ax
        movw    %ax, %ds
        movl    12(%esp), %eax          /* the error code */
        movl    GP_COUNT, %ecx
        movl    %eax, GP_CODES(,%ecx,4)
        incl    GP_COUNT
        movzwl  20(%esp), %ebx          /* CS * 16 + IP: the instruction */
        shll    $4, %ebx
        addl    16(%esp), %ebx
        movl    $1, %ecx
        movb    (%ebx), %al
        cmpb    $0x0F, %al
        jne     1f
        movl    $3, %ecx
1:      cmpb    $0xE4, %al
        jb      2f
        cmpb    $0xE7, %al
        ja      2f
        movl    $2, %ecx
2:      cmpb    $0xCD, %al
        jne     3f
        movl    $2, %ecx
        cmpb    $0x7F, 1(%ebx)
        jne     3f
        orl     $0x3000, 24(%esp)       /* IOPL 3 */
3:      addl    %ecx, 16(%esp)
        popl    %ecx
        popl    %ebx
        popl    %eax
        addl    $4, %esp
        iret

/* #UD from V86 mode: past LAR/SLDT (0F xx xx) or ARPL (63 xx). */
ud_handler:
        pushl   %eax
        pushl   %ebx
        movw    $0x10, %ax
        movw    %ax, %ds
        incl    RESULTS + 0x30
        movzwl  12(%esp), %ebx
        shll    $4, %ebx
        addl    8(%esp), %ebx
        movl    $2, %eax
        cmpb    $0x0F, (%ebx)
        jne     1f
        movl    $3, %eax
1:      addl    %eax, 8(%esp)
        popl    %ebx
        popl    %eax
        iret

/* INT3 from V86 mode (IOPL 0 does not matter): the IP after it. */
bp_handler:
        pushl   %eax
        movw    $0x10, %ax
        movw    %ax, %ds
        movl    4(%esp), %eax
        movl    %eax, RESULTS + 0x20
        popl    %eax
        iret

/* INT 21h from V86 mode with IOPL 3: what the entry pushed and left. */
int21_handler:
        pushl   %eax
        movw    $0x10, %ax
        movw    %ax, %ds
        movl    4 + 24(%esp), %eax
        movl    %eax, RESULTS + 0x10    /* the V86 DS */
        movl    4 + 8(%esp), %eax
        movl    %eax, RESULTS + 0x14    /* EFLAGS: VM set */
        movl    %es, %eax
        movl    %eax, RESULTS + 0x18    /* ES: null */
        movl    %esp, RESULTS + 0x1C    /* the ring 0 stack: 9 doublewords and EAX */
        popl    %eax
        iret

/* Part 2: a V86 task. */
part2:
        movw    $0x10, %ax
        movw    %ax, %ds
        movw    %ax, %es
        ljmp    $0x30, $0               /* to the V86 task */
        pushfl                          /* back by INT 25h in the V86 task: nested */
        popl    RESULTS + 0x60
        movl    TSS_V86 + 0x24, %eax    /* the V86 task's saved EFLAGS: VM */
        movl    %eax, RESULTS + 0x64
        movl    TSS_V86 + 0x4C, %eax    /* its CS */
        movl    %eax, RESULTS + 0x68
        movl    TSS, %eax               /* our back link */
        movl    %eax, RESULTS + 0x6C
        iret                            /* back to the V86 task, which comes back once more */
        end_of_run

        .include "lib.inc"

/* INT 22h through a 16-bit interrupt gate (code at FFFF0000h, 32-bit): the frame is words: IP,
   CS, FLAGS, SP, SS, ES, DS, FS, GS. V86 mode ends here. */
int22_handler:
        movw    $0x10, %ax
        movw    %ax, %ds
        movl    $0, %ecx
1:      movw    (%esp,%ecx,2), %ax
        movw    %ax, RESULTS + 0x40(,%ecx,2)
        incl    %ecx
        cmpl    $9, %ecx
        jne     1b
        movl    %esp, RESULTS + 0x54
        addl    $18, %esp
        ljmp    $0x08, $part2

/* The 8086 program, run at 0800:0000, its data at 0900:0000, its stack at 0700:1000. */
        .code16
v86_code:
        movw    $0x0900, %ax
        movw    %ax, %ds
        movw    $0x1234, 0
        movw    0, %bx
        pushw   %ds
        popw    %es
        lcall   $0x0800, $v86_far - v86_code
        cli                             /* IOPL 0: #GP(0) each, skipped by the monitor */
        sti
        pushfw
        popfw
        int     $0x21
        iret
        int3                            /* to its ring 0 handler and back */
after_int3:
        outb    %al, $0x80              /* allowed by the bitmap */
        outb    %al, $0xE9              /* denied: #GP(0) */
        movw    $0x80, %dx
        outb    %al, %dx
        movw    $0xE9, %dx
        outb    %al, %dx                /* denied */
        hlt                             /* #GP(0) */
        movl    %cr0, %eax              /* #GP(0) */
        lar     %ax, %bx                /* #UD */
        arpl    %ax, %bx                /* #UD */
        sldt    %ax                     /* #UD */
        int     $0x7F                   /* the monitor sets IOPL 3 */
        cli
        sti
        pushfw
        popw    2
        pushw   $0x0002                 /* IOPL 0, IF clear: only IF changes */
        popfw
        pushfw
        popw    4
        sti
        pushfl                          /* VM and RF read as 0 */
        popl    6
        int     $0x21                   /* to ring 0 and back */
        outb    %al, $0xE9              /* the bitmap still applies: #GP(0) */
        int     $0x23                   /* ring 3 code: #GP(18h) */
        int     $0x24                   /* conforming code: #GP(38h) */
        pushfw
        pushw   %cs
        pushw   $1f - v86_code
        iret                            /* an 8086 IRET */
1:      movw    %ss, 10
        int     $0x22                   /* through the 16-bit gate, for good */
v86_far:
        movw    $0x5678, 14
        lret
/* The V86 task: entered by a task switch, back to ring 0's task by INT 25h (twice). */
v86_task:
        incw    12
        int     $0x25
        incw    12
        int     $0x25
        hlt
v86_end:
        .code32

        .p2align 3
gdt:    .quad   0
        .quad   0x00CF9B000000FFFF      /* 08: ring 0 code */
        .quad   0x00CF93000000FFFF      /* 10: ring 0 data */
        .quad   0x00CFFB000000FFFF      /* 18: ring 3 code */
        .quad   0x00CFF3000000FFFF      /* 20: ring 3 data */
        .quad   0x0000890020000088      /* 28: TSS, with the I/O bitmap */
        .quad   0x0000890021000067      /* 30: the V86 task's TSS */
        .quad   0x00CF9F000000FFFF      /* 38: conforming ring 0 code */
        .quad   0xFF409BFF0000FFFF      /* 40: 32-bit ring 0 code, base FFFF0000h */
gdt_end:
gdt_ptr:
        .word   3 * 8 - 1
        .long   gdt
gdt_ram_ptr:
        .word   gdt_end - gdt - 1
        .long   GDT
idt_ptr:
        .word   0x26 * 8 - 1
        .long   IDT

        .include "reset_vector.inc"
