/* The CITCAT driver (docs/machines/i486-guest.md, "The driver"): the begin of the trace and the
   state dump. kernel_main calls it once, with interrupts off, when the first tasks are loaded
   and the timer runs:   void citcat_driver(void);
   It returns to its caller with every register as it was. The resume point, where replay
   begins, is `citcat_resume`: the MOV CR0, EAX after the state-done store, which turns paging
   and the cache back on. */
#include "layout.h"

#include "machine/i486/state_dump.inc"

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

        /* d. the begin marker, e. the dump, f. state-done (machine/i486/state_dump.inc) */
citcat_driver_begin:
        citcat_state_dump citcat_resume, 0, 0
citcat_resume:
        movl    %eax, %cr0              /* paging and the cache back on; replay starts here */
        jmp     5f
5:      popal
citcat_driver_end:
        ret

        .section .note.GNU-stack, "", @progbits
