/* A boot ROM for the traced PC that drives its devices from the reset vector (64 KB, linked at
   0xFFFF0000):
   - real mode: programs the PIC pair (master at vector 08h) and the timer (channel 0, mode 2,
     about 1 kHz), takes three timer interrupts through the interrupt vector table, the handler
     running from the ROM's copy below 1 MiB (F000:xxxx), waiting in HLT; prints "real";
   - protected mode (flat, caches on): programs the PICs again (vectors 20h and 28h) and the timer
     (mode 3, about 500 Hz), takes five timer interrupts through the IDT in a busy wait; latches the timer's
     count, reads the RTC's seconds and 32 bits of entropy; reads disk blocks 1 and 2 by DMA
     through a two-entry PRD table (its first line cached before: DMA snoops it) and takes IRQ 14
     on the slave PIC; prints "pm" and the first eight bytes read from the disk; powers off.
   tests/machine/i486_machine_test.cc checks what it leaves in memory and on the bus. */
        .set    TICKS_RM, 0x500         /* word: real-mode timer interrupts */
        .set    TICKS_PM, 0x504         /* dword: protected-mode timer interrupts */
        .set    DISK_DONE, 0x508        /* byte: the disk interrupt ran */
        .set    BM_STATUS, 0x509        /* byte: bus-master status in the disk interrupt */
        .set    PIT_LATCH, 0x50C        /* word: channel 0's latched count */
        .set    RTC_SECONDS, 0x510      /* byte */
        .set    ENTROPY, 0x514          /* dword */
        .set    SPINS, 0x518            /* dword: turns of the protected-mode wait */
        .set    IDT, 0x1000
        .set    PRD, 0x2000
        .set    BUFFER, 0x3000          /* 2 x 512 bytes, in two PRD regions */
        .set    STACK, 0x7000

        .code16
        .text
        .globl  _start
_start:
        cli
        xorw    %ax, %ax
        movw    %ax, %ds
        movw    %ax, %ss
        movw    $STACK, %sp
        movw    $0, TICKS_RM

        /* The console: 115200 baud, 8N1. */
        movw    $0x3FB, %dx
        movb    $0x80, %al
        outb    %al, %dx
        movw    $0x3F8, %dx
        movb    $1, %al
        outb    %al, %dx
        movw    $0x3F9, %dx
        xorb    %al, %al
        outb    %al, %dx
        movw    $0x3FB, %dx
        movb    $0x03, %al
        outb    %al, %dx

        /* PICs as a PC BIOS leaves them: master at 08h, slave at 70h; only IRQ 0 open. */
        movb    $0x11, %al
        outb    %al, $0x20
        outb    %al, $0xA0
        movb    $0x08, %al
        outb    %al, $0x21
        movb    $0x70, %al
        outb    %al, $0xA1
        movb    $0x04, %al
        outb    %al, $0x21
        movb    $0x02, %al
        outb    %al, $0xA1
        movb    $0x01, %al
        outb    %al, $0x21
        outb    %al, $0xA1
        movb    $0xFE, %al
        outb    %al, $0x21
        movb    $0xFF, %al
        outb    %al, $0xA1

        /* Vector 08h: the handler in the ROM's copy at F000:xxxx. */
        movw    $(rm_timer - _start), 0x08 * 4
        movw    $0xF000, 0x08 * 4 + 2

        /* Timer channel 0: mode 2, count 1193 (1 kHz). */
        movb    $0x34, %al
        outb    %al, $0x43
        movw    $1193, %ax
        outb    %al, $0x40
        movb    %ah, %al
        outb    %al, $0x40

        sti
1:      hlt
        cmpw    $3, TICKS_RM
        jb      1b
        cli

        movb    $'r', %bl
        call    putc16
        movb    $'e', %bl
        call    putc16
        movb    $'a', %bl
        call    putc16
        movb    $'l', %bl
        call    putc16
        movb    $'\n', %bl
        call    putc16

        lgdtl   %cs:(gdt_ptr - _start)
        movl    %cr0, %eax
        orl     $1, %eax
        movl    %eax, %cr0
        .byte   0x66, 0xEA              /* ljmpl $0x08, $pm32 */
        .long   pm32
        .word   0x08

rm_timer:
        pushw   %ax
        incw    TICKS_RM
        movb    $0x20, %al
        outb    %al, $0x20
        popw    %ax
        iret

/* BL to the console, waiting for THR empty (LSR bit 5). */
putc16:
        movw    $0x3FD, %dx
1:      inb     %dx, %al
        testb   $0x20, %al
        jz      1b
        movw    $0x3F8, %dx
        movb    %bl, %al
        outb    %al, %dx
        ret

        .code32
pm32:
        movw    $0x10, %ax
        movw    %ax, %ds
        movw    %ax, %es
        movw    %ax, %ss
        movl    $STACK, %esp
        movl    %cr0, %eax
        andl    $0x9FFFFFFF, %eax       /* CD = NW = 0: the cache on */
        movl    %eax, %cr0
        movl    $0, TICKS_PM
        movl    $0, SPINS
        movb    $0, DISK_DONE

        /* PICs at 20h and 28h; IRQ 0, the cascade and IRQ 14 open. */
        movb    $0x11, %al
        outb    %al, $0x20
        outb    %al, $0xA0
        movb    $0x20, %al
        outb    %al, $0x21
        movb    $0x28, %al
        outb    %al, $0xA1
        movb    $0x04, %al
        outb    %al, $0x21
        movb    $0x02, %al
        outb    %al, $0xA1
        movb    $0x01, %al
        outb    %al, $0x21
        outb    %al, $0xA1
        movb    $0xFA, %al
        outb    %al, $0x21
        movb    $0xBF, %al
        outb    %al, $0xA1

        movl    $pm_timer, %eax
        movl    $IDT + 0x20 * 8, %edi
        call    set_gate
        movl    $pm_disk, %eax
        movl    $IDT + 0x2E * 8, %edi
        call    set_gate
        lidt    idt_ptr

        /* Timer channel 0: mode 3, count 2386 (500 Hz). */
        movb    $0x36, %al
        outb    %al, $0x43
        movw    $2386, %ax
        outb    %al, $0x40
        movb    %ah, %al
        outb    %al, $0x40

        sti
2:      incl    SPINS                   /* a busy wait: interrupts land where the world says */
        cmpl    $5, TICKS_PM
        jb      2b

        /* Latch channel 0's count and read it, low byte first. */
        cli
        movb    $0x00, %al
        outb    %al, $0x43
        inb     $0x40, %al
        movb    %al, %cl
        inb     $0x40, %al
        movb    %al, %ch
        movw    %cx, PIT_LATCH
        /* The RTC's seconds, then 32 random bits. */
        xorb    %al, %al
        outb    %al, $0x70
        inb     $0x71, %al
        movb    %al, RTC_SECONDS
        movw    $0x5C0, %dx
        inl     %dx, %eax
        movl    %eax, ENTROPY
        sti

        /* Blocks 1 and 2 by DMA: 768 bytes at BUFFER, then 256 at BUFFER + 0x300. The buffer's
           first line is read into the cache first: the DMA must snoop it out. */
        movl    BUFFER, %eax
        movl    $BUFFER, PRD
        movl    $768, PRD + 4
        movl    $BUFFER + 0x300, PRD + 8
        movl    $0x80000100, PRD + 12
        movw    $0xC004, %dx
        movl    $PRD, %eax
        outl    %eax, %dx
        movw    $0xC002, %dx
        movb    $0x06, %al
        outb    %al, %dx
        movw    $0x1F2, %dx
        movb    $2, %al
        outb    %al, %dx
        movw    $0x1F3, %dx
        movb    $1, %al
        outb    %al, %dx
        movw    $0x1F4, %dx
        xorb    %al, %al
        outb    %al, %dx
        movw    $0x1F5, %dx
        outb    %al, %dx
        movw    $0x1F6, %dx
        movb    $0xE0, %al
        outb    %al, %dx
        movw    $0x1F7, %dx
        movb    $0xC8, %al
        outb    %al, %dx
        movw    $0xC000, %dx
        movb    $0x09, %al
        outb    %al, %dx
3:      hlt
        cmpb    $0, DISK_DONE
        je      3b
        movw    $0xC000, %dx
        xorb    %al, %al
        outb    %al, %dx

        movb    $'p', %bl
        call    putc32
        movb    $'m', %bl
        call    putc32
        movb    $'\n', %bl
        call    putc32
        movl    $BUFFER, %esi
        movl    $8, %ecx
4:      movb    (%esi), %bl
        call    putc32
        incl    %esi
        loop    4b

        movw    $0x5C8, %dx             /* power off */
        outb    %al, %dx
        hlt

pm_timer:
        pushl   %eax
        incl    TICKS_PM
        movb    $0x20, %al
        outb    %al, $0x20
        popl    %eax
        iret

pm_disk:
        pushl   %eax
        pushl   %edx
        movw    $0x1F7, %dx             /* the status acknowledges INTRQ */
        inb     %dx, %al
        movw    $0xC002, %dx
        inb     %dx, %al
        movb    %al, BM_STATUS
        movb    $0x04, %al              /* clear the bus master's interrupt bit */
        outb    %al, %dx
        movb    $1, DISK_DONE
        movb    $0x20, %al
        outb    %al, $0xA0
        outb    %al, $0x20
        popl    %edx
        popl    %eax
        iret

putc32:
        movw    $0x3FD, %dx
1:      inb     %dx, %al
        testb   $0x20, %al
        jz      1b
        movw    $0x3F8, %dx
        movb    %bl, %al
        outb    %al, %dx
        ret

/* EAX = handler, EDI = the gate: selector 8, a present 32-bit interrupt gate, DPL 0. */
set_gate:
        movw    %ax, (%edi)
        movw    $8, 2(%edi)
        movw    $0x8E00, 4(%edi)
        shrl    $16, %eax
        movw    %ax, 6(%edi)
        ret

        .p2align 3
gdt:    .quad   0
        .quad   0x00CF9A000000FFFF      /* 8: code, base 0, 4 GB, 32-bit */
        .quad   0x00CF92000000FFFF      /* 16: data, base 0, 4 GB */
gdt_ptr:
        .word   3 * 8 - 1
        .long   gdt
idt_ptr:
        .word   0x30 * 8 - 1
        .long   IDT

        .code16
        .org    0xFFF0
reset:  jmp     _start
        .org    0x10000
