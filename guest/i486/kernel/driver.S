/* The CITCAT driver (docs/machines/i486-guest.md, "The driver"): the begin of the trace and the
   state dump. kernel_main calls it once, with interrupts off, when the first tasks are loaded
   and the timer runs:   void citcat_driver(void);
   It returns to its caller with every register as it was. The resume point, where replay
   begins, is `citcat_resume`: the MOV CR0, EAX after the state-done store, which turns paging
   and the cache back on. */
#include "layout.h"

#define RESERVED(x) (CITCAT_I486_RESERVED_BASE + (x))
#define ST(x) RESERVED(CITCAT_I486_CPU_STATE + (x))
#define GPR(n) ST(CITCAT_I486_SLOT_GPR + 4 * (n))
#define SEL(n) ST(CITCAT_I486_SLOT_SELECTOR + 4 * (n))
#define DESC(n) ST(CITCAT_I486_SLOT_DESCRIPTOR + 8 * (n))

/* The descriptor of the selector in ECX into descriptor slot n: two dword loads from the GDT
   (EBX = its base) or the LDT (EBP = its base) and two stores; zero for a null selector. */
        .macro  descriptor n
        testl   $0xFFFC, %ecx
        jz      8f
        movl    %ebx, %edx
        testl   $4, %ecx
        jz      7f
        movl    %ebp, %edx
7:      andl    $0xFFF8, %ecx
        movl    (%edx,%ecx), %eax
        movl    %eax, DESC(\n)
        movl    4(%edx,%ecx), %eax
        movl    %eax, DESC(\n) + 4
        jmp     9f
8:      movl    $0, DESC(\n)
        movl    $0, DESC(\n) + 4
9:
        .endm

/* The selector of segment register \sreg into ECX (upper half zero). */
        .macro  selector sreg
        xorl    %ecx, %ecx
        movw    %\sreg, %cx
        .endm

        .text
        .globl  citcat_driver, citcat_driver_begin, citcat_resume, citcat_driver_end
citcat_driver:
        /* a. no interrupt from here on (the kernel runs with interrupts off already) */
        cli
        pushal                          /* the kernel's registers, back after the resume point */

        /* b. every segment register again from the GDT: the hidden descriptor caches now hold
              exactly what the descriptors below say */
        ljmp    $KERNEL_CS, $1f
1:      movw    %ss, %ax
        movw    %ax, %ss
        movw    %ds, %ax
        movw    %ax, %ds
        movw    %es, %ax
        movw    %ax, %es
        movw    %fs, %ax
        movw    %ax, %fs
        movw    %gs, %ax
        movw    %ax, %gs
        sldt    %ax
        testw   %ax, %ax
        jz      2f
        lldt    %ax
2:
        /* c. paging off (this code, its stack and data, the GDT, the IDT and the reserved area
              are mapped linear = physical), the TLB flushed (it stays empty while PG = 0), the
              cache disabled and flushed (it stays empty while CD = 1) */
        movl    %cr0, %esi              /* ESI = the kernel's CR0: PG = 1, CD = 0, TS as it is */
        movl    %esi, %eax
        andl    $~CR0_PG, %eax
        movl    %eax, %cr0
        jmp     3f
3:      movl    %cr3, %eax
        movl    %eax, %cr3
        movl    %cr0, %eax
        orl     $CR0_CD, %eax
        andl    $~CR0_NW, %eax
        movl    %eax, %cr0
        wbinvd

        /* d. the begin marker */
citcat_driver_begin:
        movl    $CITCAT_I486_BEGIN_MARKER, RESERVED(CITCAT_I486_TRACE_BEGIN)

        /* e. the state dump, every slot at an absolute address */
        clts                            /* the FPU below; TS comes back with EAX */
        movl    %cr0, %eax              /* PG = 0, CD = 1, TS = 0: as at the resume point */
        movl    %eax, ST(CITCAT_I486_SLOT_CR0)
        movl    %cr2, %eax
        movl    %eax, ST(CITCAT_I486_SLOT_CR2)
        movl    %cr3, %eax
        movl    %eax, ST(CITCAT_I486_SLOT_CR3)
        movl    %dr0, %eax
        movl    %eax, ST(CITCAT_I486_SLOT_DR + 0)
        movl    %dr1, %eax
        movl    %eax, ST(CITCAT_I486_SLOT_DR + 4)
        movl    %dr2, %eax
        movl    %eax, ST(CITCAT_I486_SLOT_DR + 8)
        movl    %dr3, %eax
        movl    %eax, ST(CITCAT_I486_SLOT_DR + 12)
        movl    %dr6, %eax
        movl    %eax, ST(CITCAT_I486_SLOT_DR6)
        movl    %dr7, %eax
        movl    %eax, ST(CITCAT_I486_SLOT_DR7)
        sgdt    ST(CITCAT_I486_SLOT_GDTR)
        sidt    ST(CITCAT_I486_SLOT_IDTR)
        movw    %es, SEL(0)
        movw    %cs, SEL(1)
        movw    %ss, SEL(2)
        movw    %ds, SEL(3)
        movw    %fs, SEL(4)
        movw    %gs, SEL(5)
        sldt    SEL(6)
        str     SEL(7)

        /* the descriptors: EBX = the GDT's base (read back from the GDTR slot), EBP = the
           LDT's (from its descriptor in the GDT; 0 when LDTR is null) */
        movl    ST(CITCAT_I486_SLOT_GDTR + 2), %ebx
        xorl    %ebp, %ebp
        xorl    %ecx, %ecx
        sldt    %cx
        testl   $0xFFFC, %ecx
        jz      4f
        andl    $0xFFF8, %ecx
        movl    (%ebx,%ecx), %edx       /* low dword: base 15:0 in bits 31:16 */
        movl    4(%ebx,%ecx), %eax      /* high dword: base 23:16 in 7:0, 31:24 in 31:24 */
        shrl    $16, %edx
        movl    %eax, %ebp
        andl    $0xFF000000, %ebp
        orl     %edx, %ebp
        andl    $0xFF, %eax
        shll    $16, %eax
        orl     %eax, %ebp
4:      selector es
        descriptor 0
        selector cs
        descriptor 1
        selector ss
        descriptor 2
        selector ds
        descriptor 3
        selector fs
        descriptor 4
        selector gs
        descriptor 5
        xorl    %ecx, %ecx
        sldt    %cx
        descriptor 6
        xorl    %ecx, %ecx
        str     %cx
        descriptor 7

        /* the FPU, kept as it is */
        fnsave  ST(CITCAT_I486_SLOT_FPU)
        frstor  ST(CITCAT_I486_SLOT_FPU)

        /* the registers as they are at the resume point: nothing below changes one */
        movl    %esi, %eax              /* EAX = the kernel's CR0, for the resume point */
        pushfl
        popl    ST(CITCAT_I486_SLOT_EFLAGS)
        movl    %eax, GPR(0)
        movl    %ecx, GPR(1)
        movl    %edx, GPR(2)
        movl    %ebx, GPR(3)
        movl    %esp, GPR(4)
        movl    %ebp, GPR(5)
        movl    %esi, GPR(6)
        movl    %edi, GPR(7)
        movl    $citcat_resume, ST(CITCAT_I486_SLOT_EIP)
        /* f. state-done: the last store before the resume point */
        movl    $0, RESERVED(CITCAT_I486_STATE_DONE)
citcat_resume:
        movl    %eax, %cr0              /* paging and the cache back on; replay starts here */
        jmp     5f
5:      popal
citcat_driver_end:
        ret

        .section .note.GNU-stack, "", @progbits
