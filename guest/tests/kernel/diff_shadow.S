/* QEMU keeps an entry that TLBWR replaced as a hidden shadow entry (until a TLBWI, or a TLBP
   that misses on it): the old mapping still translates. The R4400 takes a TLB refill. */
#include "kernel.h"

        VECTORS init, handler, handler, handler

handler:
        EXIT

init:
        li $t0, 47
        mtc0 $t0, C0_WIRED                          /* TLBWR writes entry 47 */
        mtc0 $t0, C0_INDEX
        mtc0 $zero, C0_PAGEMASK
        li $t0, 0x00010000                          /* page pair A */
        dmtc0 $t0, C0_ENTRYHI
        li $t1, (0x01000000 >> 6) | (3 << 3) | 6
        dmtc0 $t1, C0_ENTRYLO0
        dmtc0 $t1, C0_ENTRYLO1
        tlbwi
        li $t1, ST_BEV                              /* kuseg mapped */
        mtc0 $t1, C0_STATUS
        lw $t2, 0($t0)                              /* A translates */
        li $t3, 0x00020000                          /* page pair B replaces A in entry 47 */
        dmtc0 $t3, C0_ENTRYHI
        tlbwr
        lw $t2, 0($t0)                              /* A: a refill on the R4400 */
        EXIT
