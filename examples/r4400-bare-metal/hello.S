/* The smallest bare-metal R4400 program, linked to run from RAM (kseg0):
     citcat capture --machine r4400 --rom hello.elf -o hello.cat
   The ELF's segments go to RAM at their physical addresses, and the machine puts a jump to the
   entry point at the reset vector (lui/ori $k0, jr $k0): the program starts with every register
   at its reset value but $k0, which holds its entry point. It prints a line, stores $k0 uncached
   to RAM at physical 0x400 (so `citcat dump` shows it) and powers the machine off. */

        .set noreorder

        .text
        .globl _start
_start:
        la $a0, message
        li $t9, 0xBF000000              /* the console UART's transmit register */
1:      lbu $t8, 0($a0)                 /* the string is in RAM, cached */
        beqz $t8, 2f
        addiu $a0, $a0, 1
        b 1b
        sw $t8, 0($t9)
2:      li $t0, 0xA0000400
        sw $k0, 0($t0)
        li $t0, 0xBF200008              /* power off */
        sw $zero, 0($t0)
3:      b 3b
        nop

        .section .rodata
message:
        .asciz "hello from RAM\n"
