/* Kernel entry, the trap and interrupt entries (with the CITCAT interrupt report), the return
   to a task, and the idle loop. The interrupt entries' first instructions are part of the CITCAT
   contract (docs/machines/i486-guest.md, "The interrupt report"). */
#include "layout.h"

#define INTERRUPT_SLOT(x) (CITCAT_I486_RESERVED_BASE + CITCAT_I486_INTERRUPT + (x))

/* ---------------------------------------------------------------- boot
   The ROM jumps here with paging on (its tables map the first 4 MiB onto themselves) and
   interrupts off. */
        .section .text.start, "ax"
        .globl  _start
_start:
        cli
        cld
        lgdt    gdt_ptr
        ljmp    $KERNEL_CS, $1f
1:      movl    $KERNEL_DS, %eax
        movw    %ax, %ds
        movw    %ax, %es
        movw    %ax, %ss
        movw    %ax, %fs
        movw    %ax, %gs
        /* bss, the kernel stack included, starts zeroed */
        movl    $__bss_start, %edi
        movl    $__bss_end, %ecx
        subl    %edi, %ecx
        shrl    $2, %ecx
        xorl    %eax, %eax
        rep stosl
        movl    $kstack_top, %esp
        call    kernel_main
2:      hlt
        jmp     2b

        .text
/* ---------------------------------------------------------------- entries
   Every vector goes through an interrupt gate (IF cleared on entry): the kernel runs with
   interrupts off from entry to IRET. Each entry pushes an error code (the processor's, or 0)
   and its vector, then goes to trap_common. */
        .macro  trap_noerr vec
trap_\vec:
        pushl   $0
        pushl   $\vec
        jmp     trap_common
        .endm

        .macro  trap_err vec
trap_\vec:
        pushl   $\vec
        jmp     trap_common
        .endm

/* An external interrupt: the interrupt report first. Before any store but the processor's own
   frame: ECX, then the interrupted EIP, CS and EFLAGS from the frame, then ECX back from its
   slot (the one load of the reserved area). Every instruction here up to the ECX load exists
   only for the trace: 8 per interrupt, 4 uncached stores and 1 uncached load. */
        .macro  irq n
irq_\n:
        movl    %ecx, INTERRUPT_SLOT(CITCAT_I486_INTERRUPT_ECX)    /* [citcat] */
        movl    (%esp), %ecx                                       /* [citcat] EIP */
        movl    %ecx, INTERRUPT_SLOT(CITCAT_I486_INTERRUPT_EIP)    /* [citcat] */
        movl    4(%esp), %ecx                                      /* [citcat] CS */
        movl    %ecx, INTERRUPT_SLOT(CITCAT_I486_INTERRUPT_CS)     /* [citcat] */
        movl    8(%esp), %ecx                                      /* [citcat] EFLAGS */
        movl    %ecx, INTERRUPT_SLOT(CITCAT_I486_INTERRUPT_EFLAGS) /* [citcat] */
        movl    INTERRUPT_SLOT(CITCAT_I486_INTERRUPT_ECX), %ecx    /* [citcat] ECX back */
        pushl   $0
        pushl   $(VEC_IRQ0 + \n)
        jmp     trap_common
        .endm

        trap_noerr 0
        trap_noerr 1
        trap_noerr 2
        trap_noerr 3
        trap_noerr 4
        trap_noerr 5
        trap_noerr 6
        trap_noerr 7
        trap_err 8
        trap_noerr 9
        trap_err 10
        trap_err 11
        trap_err 12
        trap_err 13
        trap_err 14
        trap_noerr 15
        trap_noerr 16
        trap_err 17
        trap_noerr 18
        trap_noerr 19
        trap_noerr 20
        trap_noerr 21
        trap_noerr 22
        trap_noerr 23
        trap_noerr 24
        trap_noerr 25
        trap_noerr 26
        trap_noerr 27
        trap_noerr 28
        trap_noerr 29
        trap_noerr 30
        trap_noerr 31
        irq 0
        irq 1
        irq 2
        irq 3
        irq 4
        irq 5
        irq 6
        irq 7
        irq 8
        irq 9
        irq 10
        irq 11
        irq 12
        irq 13
        irq 14
        irq 15
        trap_noerr 128                  /* INT 0x80: system calls */

/* The entries of vectors 0-47 and of INT 0x80, for the IDT (kernel.c). */
        .section .rodata
        .globl  trap_entries, syscall_entry
        .p2align 2
trap_entries:
        .long   trap_0, trap_1, trap_2, trap_3, trap_4, trap_5, trap_6, trap_7
        .long   trap_8, trap_9, trap_10, trap_11, trap_12, trap_13, trap_14, trap_15
        .long   trap_16, trap_17, trap_18, trap_19, trap_20, trap_21, trap_22, trap_23
        .long   trap_24, trap_25, trap_26, trap_27, trap_28, trap_29, trap_30, trap_31
        .long   irq_0, irq_1, irq_2, irq_3, irq_4, irq_5, irq_6, irq_7
        .long   irq_8, irq_9, irq_10, irq_11, irq_12, irq_13, irq_14, irq_15
syscall_entry:
        .long   trap_128
        .text

/* The rest of the frame (layout.h, struct frame), then kernel_trap(frame) on the kernel stack;
   it returns the frame to resume. From ring 3 the processor pushed its frame into the current
   task's save area (TSS.ESP0 points just past it); from the idle loop into the idle frame. A
   trap in the kernel itself (a bug: kernel_trap panics) stays on the kernel stack. */
trap_common:
        pushal
        pushl   %ds
        pushl   %es
        pushl   %fs
        pushl   %gs
        movl    $KERNEL_DS, %eax
        movw    %ax, %ds
        movw    %ax, %es
        movl    %esp, %ebx
        movl    %esp, %eax
        subl    $kstack, %eax
        cmpl    $KSTACK_SIZE, %eax
        jb      1f
        movl    $kstack_top, %esp
1:      pushl   %ebx
        call    kernel_trap
        movl    %eax, %esp
trap_return:
        popl    %gs
        popl    %fs
        popl    %es
        popl    %ds
        popal
        addl    $8, %esp                /* vector and error code */
        iret

/* void resume(struct frame *f): leaves the kernel into the task (or idle loop) of `f`. */
        .globl  resume
resume:
        movl    4(%esp), %esp
        jmp     trap_return

/* ---------------------------------------------------------------- the idle loop
   Runs at ring 0 with interrupts on when no task is ready. The trace can drop the instructions
   in [citcat_idle_begin, citcat_idle_end). */
        .globl  citcat_idle_begin, citcat_idle_end, idle_loop
citcat_idle_begin:
idle_loop:
        hlt
        jmp     idle_loop
citcat_idle_end:

        .section .note.GNU-stack, "", @progbits
