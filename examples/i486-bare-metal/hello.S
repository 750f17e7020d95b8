/* The smallest bare-metal i486 program: in RAM at 0x8000, entered in real mode by the far jump
   the machine puts at the reset vector (citcat capture --rom hello.elf). It prints one line on
   the console, reports CS:IP of its entry on port 80h and powers the machine off. */
#define UART 0x3F8
#define POST 0x80
#define POWER_OFF 0x5C8

        .code16
        .text
        .globl  _start
_start:
        cli
        cld
        call    1f                      /* where am I: IP of 1: */
1:      popw    %bx
        movw    %cs, %ax
        shll    $16, %eax
        movw    %bx, %ax
        outl    %eax, $POST             /* 00008005h: CS = 0, IP of 1: */
        xorw    %ax, %ax
        movw    %ax, %ds
        movw    $UART + 3, %dx          /* 8 data bits (LCR 03h): the reset leaves 5 */
        movb    $0x03, %al
        outb    %al, %dx
        movw    $message, %si
2:      lodsb
        testb   %al, %al
        jz      3f
        movb    %al, %ah
        movw    $UART + 5, %dx          /* until THR is empty (LSR bit 5) */
5:      inb     %dx, %al
        testb   $0x20, %al
        jz      5b
        movb    %ah, %al
        movw    $UART, %dx
        outb    %al, %dx
        jmp     2b
3:      movw    $UART + 5, %dx          /* until the last character has left (LSR bit 6) */
6:      inb     %dx, %al
        testb   $0x40, %al
        jz      6b
        movw    $POWER_OFF, %dx
        outb    %al, %dx
4:      hlt
        jmp     4b

message:
        .asciz  "hello from RAM\n"
