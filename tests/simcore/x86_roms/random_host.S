/* A host for the random instruction streams of x86_random_stream.h, run from RESET on the core
   and on the full-system oracles (x86_random_rom_test.cc), in the mode its build names: -DREAL
   (real mode: 16-bit code, CS base FFFF0000h as the reset leaves it), -DPM16 (16-bit protected
   mode: a 16-bit code segment and a 16-bit stack), -DRING3 (flat 32-bit code at ring 3, IOPL 3),
   -DV86 (virtual-8086 mode, IOPL 3), or none of them (flat 32-bit code at ring 0). The host sets
   up the stream's layout (the data at kData, the stack below kStackTop, the pass counter), loads
   the registers and flags from the block the test writes into the ROM image at BLOCK, and goes
   to the stream, which the test puts at BLOCK + 200h followed by the end of the run. Every
   exception ends the run too: the vector table or the IDT sends all 32 to a handler that does
   (from an outer ring or V86 mode through the TSS's ring 0 stack). */
        .set    BLOCK, 0x8000           /* in the ROM: registers, EFLAGS, the data, the stream */
        .set    DATA, 0x20000           /* kData */
        .set    DATA_BYTES, 0x100
        .set    COUNTER, DATA + 0x200   /* kCounter */
        .set    LOOPS, 10               /* kLoops */
        .set    STACK_TOP, 0x30000      /* kStackTop */
        .set    STREAM_BYTES, 0x4000
        .set    STREAM_V86, 0x40000     /* the stream's copy for V86 mode, */
        .set    STREAM_V86_BYTES, 0x1000 /* as much of it as a test writes */
        .set    HANDLER_STACK, 0x90000  /* ring 0's, from an outer ring */
        .set    TSS, 0x2000

#ifdef REAL
        .include "end.inc"
        .code16
        .text
        .globl  _start
_start:
        cli
        cld
        xorw    %ax, %ax
        movw    %ax, %ds
        /* The handler in RAM at 0000:0500h (below 1 MiB the ROM has no copy on every PC), and
           all 32 vectors to it. */
        movl    $0xDB87F4E6, 0x500      /* OUT F4h, AL; XCHG BX, BX; HLT: end_of_run */
        movb    $0xF4, 0x504
        xorw    %di, %di
        movw    $32, %cx
1:      movl    $0x500, (%di)
        addw    $4, %di
        loop    1b
        movw    $DATA >> 4, %ax
        movw    %ax, %es
        movw    $block - _start + 0x40, %si
        xorw    %di, %di
        movw    $DATA_BYTES, %cx
2:      movb    %cs:(%si), %al
        movb    %al, %es:(%di)
        incw    %si
        incw    %di
        loop    2b
        movl    $LOOPS, %es:COUNTER - DATA
        movw    %es, %ax
        movw    %ax, %ds
        movw    %ax, %fs
        movw    %ax, %gs
        movw    $(STACK_TOP >> 4) - 0x1000, %ax
        movw    %ax, %ss
        movl    $0xFFF0, %esp
        pushl   %cs:block - _start + 32
        popfl
        movl    %cs:block - _start + 0, %eax
        movl    %cs:block - _start + 4, %ecx
        movl    %cs:block - _start + 8, %edx
        movl    %cs:block - _start + 12, %ebx
        movl    %cs:block - _start + 20, %ebp
        movl    %cs:block - _start + 24, %esi
        xorl    %edi, %edi
        jmp     stream
#else
        .set    STACK, STACK_TOP
        .set    IDT, 0x1000
        .include "reset.inc"

pm32:
        movw    $0x10, %ax
        movw    %ax, %fs
        movw    %ax, %gs
        movl    $fault, %eax
        movl    $IDT, %edi
        movw    $0x8E00, %dx
1:      pushl   %eax
        call    set_gate
        popl    %eax
        addl    $8, %edi
        cmpl    $IDT + 32 * 8, %edi
        jb      1b
        lidt    idt_ptr
        movl    $block + 0x40, %esi
        movl    $DATA, %edi
        movl    $DATA_BYTES / 4, %ecx
        call    copy
        movl    $LOOPS, COUNTER
#if defined(RING3) || defined(V86)
        /* A TSS for the way back to ring 0 (a fault's handler): SS0:ESP0. */
        movl    $HANDLER_STACK, TSS + 4
        movl    $0x10, TSS + 8
        movw    $0x68, TSS + 0x66       /* no I/O bitmap */
        movw    $0x28, %ax
        ltr     %ax
#endif
#if defined(RING3)
        /* IRET to ring 3: flat 32-bit code and data, IOPL 3. */
        movw    $0x23, %ax
        movw    %ax, %ds
        movw    %ax, %es
        movw    %ax, %fs
        movw    %ax, %gs
        pushl   $0x23
        pushl   $STACK_TOP
        pushl   block + 32
        orl     $0x3000, (%esp)
        pushl   $0x1B
        pushl   $stream
        movl    $DATA, %edi
#elif defined(V86)
        /* IRET to virtual-8086 mode, IOPL 3, the real-mode layout: the stream runs from its copy
           at STREAM_V86 (V86 mode reaches the first MiB only). */
        movl    $stream, %esi
        movl    $STREAM_V86, %edi
        movl    $STREAM_V86_BYTES / 4, %ecx
        call    copy
        movl    $DATA >> 4, %eax
        pushl   %eax                    /* GS FS DS ES */
        pushl   %eax
        pushl   %eax
        pushl   %eax
        pushl   $(STACK_TOP >> 4) - 0x1000
        pushl   $0xFFF0
        pushl   block + 32
        orl     $0x23000, (%esp)        /* VM, IOPL 3 */
        pushl   $STREAM_V86 >> 4
        pushl   $0
        xorl    %edi, %edi
#elif defined(PM16)
        /* 16-bit code and a 16-bit stack: the data segment's base is the data, DI = 0. */
        movw    $0x30, %ax
        movw    %ax, %ds
        movw    %ax, %es
        movw    %ax, %fs
        movw    %ax, %gs
        movw    %ax, %ss
        movl    $0xFFF0, %esp
        pushl   %cs:block + 32          /* the block through CS: DS no longer reaches it */
        popfl
        xorl    %edi, %edi
#else
        pushl   block + 32
        popfl
        movl    $DATA, %edi
        movl    $STACK_TOP, %esp
#endif
        movl    %cs:block + 0, %eax
        movl    %cs:block + 4, %ecx
        movl    %cs:block + 8, %edx
        movl    %cs:block + 12, %ebx
        movl    %cs:block + 20, %ebp
        movl    %cs:block + 24, %esi
#if defined(RING3) || defined(V86)
        iret
#elif defined(PM16)
        ljmpl   $0x38, $stream - _start
#else
        jmp     stream
#endif

fault:  end_of_run

        .include "lib.inc"

        .p2align 3
gdt:    .quad   0
        .quad   0x00CF9B000000FFFF      /* 08: ring 0 code */
        .quad   0x00CF93000000FFFF      /* 10: ring 0 data */
        .quad   0x00CFFB000000FFFF      /* 18: ring 3 code */
        .quad   0x00CFF3000000FFFF      /* 20: ring 3 data */
        .quad   0x0000890020000067      /* 28: the TSS at 2000h */
        .quad   0x000093020000FFFF      /* 30: 16-bit data and stack at the data (20000h) */
        .quad   0xFF009BFF0000FFFF      /* 38: 16-bit code at FFFF0000h */
gdt_ptr:
        .word   8 * 8 - 1
        .long   gdt
idt_ptr:
        .word   32 * 8 - 1
        .long   IDT
#endif

        .org    BLOCK
block:  .fill   0x200, 1, 0
stream: .fill   STREAM_BYTES, 1, 0xF4   /* the test's stream and the end of the run */

        .include "reset_vector.inc"
