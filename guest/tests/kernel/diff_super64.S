/* QEMU executes 64-bit operations in 32-bit supervisor mode (SX=0); the R4400 raises Reserved
   Instruction there, as in 32-bit user mode. */
#include "kernel.h"

        VECTORS init, handler, handler, handler

handler:
        EXIT

super:
        dsll $t0, $t0, 1
        syscall

init:
        li $t0, 0x7fe000                 /* 4 MB pages: the ROM is 4 MB aligned */
        mtc0 $t0, C0_PAGEMASK
        mtc0 $zero, C0_INDEX
        li $t0, 0xc0000000
        dmtc0 $t0, C0_ENTRYHI
        li $t0, (0x1fc00000 >> 6) | (2 << 3) | 3    /* the ROM, uncached, at sseg */
        dmtc0 $t0, C0_ENTRYLO0
        dmtc0 $t0, C0_ENTRYLO1
        tlbwi
        li $t0, ST_SUPER | ST_EXL | ST_BEV
        mtc0 $t0, C0_STATUS
        li $t0, 0xc0000000
        addiu $t0, $t0, super - _start
        dmtc0 $t0, C0_EPC
        eret
