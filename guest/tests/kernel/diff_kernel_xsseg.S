/* In kernel mode the R4400 allows every 64-bit segment when KX is set; QEMU gates xksseg with SX (and xkuseg with UX), so with KX=1, SX=0 an xksseg access is an address error on QEMU only. */
#include "kernel.h"

        VECTORS init, handler, handler, handler

handler:
        EXIT

init:
        li $t0, ST_KX | ST_BEV
        mtc0 $t0, C0_STATUS
        li $t0, 0x40000000
        dsll32 $t0, $t0, 0
        mtc0 $zero, C0_INDEX
        dmtc0 $t0, C0_ENTRYHI
        li $t1, (0x01000000 >> 6) | 0x1e
        dmtc0 $t1, C0_ENTRYLO0
        dmtc0 $t1, C0_ENTRYLO1
        mtc0 $zero, C0_PAGEMASK
        tlbwi
        ld $t1, 0($t0)
        EXIT
