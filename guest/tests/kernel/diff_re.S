/* QEMU ignores Status.RE; the R4400 reverses the byte order of user-mode data accesses. A user
   program stores a byte and loads the word holding it. */
#include "kernel.h"

        VECTORS init, handler, handler, handler

handler:
        EXIT

user:
        li $t0, 0x44
        sb $t0, 1($s0)
        lw $t1, 0($s0)
        syscall

init:
        li $t0, 0x7fe000                 /* 4 MB pages: the ROM is 4 MB aligned */
        mtc0 $t0, C0_PAGEMASK
        mtc0 $zero, C0_INDEX
        dmtc0 $zero, C0_ENTRYHI
        li $t0, (0x1fc00000 >> 6) | (2 << 3) | 3    /* the ROM, uncached, at 0 */
        dmtc0 $t0, C0_ENTRYLO0
        li $t0, (0x01000000 >> 6) | (3 << 3) | 7    /* data at 16 MB */
        dmtc0 $t0, C0_ENTRYLO1
        tlbwi
        li $s0, 0x00400000
        li $t0, ST_USER | ST_EXL | ST_BEV | 0x02000000
        mtc0 $t0, C0_STATUS
        li $t0, user - _start
        dmtc0 $t0, C0_EPC
        eret
