/* After TLBR, QEMU returns the VPN2 bits inside a large page as written; the core clears them. */
#include "kernel.h"

        VECTORS init, handler, handler, handler

handler:
        EXIT

init:
        mtc0 $zero, C0_INDEX
        li $t0, 0x7fe000
        mtc0 $t0, C0_PAGEMASK
        li $t0, 0x00412000
        dmtc0 $t0, C0_ENTRYHI
        dmtc0 $zero, C0_ENTRYLO0
        dmtc0 $zero, C0_ENTRYLO1
        tlbwi
        tlbr
        dmfc0 $t0, C0_ENTRYHI
        EXIT
