/* After TLBR, QEMU clears the PFN bits inside a large page; the core returns them as written. */
#include "kernel.h"

        VECTORS init, handler, handler, handler

handler:
        EXIT

init:
        mtc0 $zero, C0_INDEX
        li $t0, 0x7fe000
        mtc0 $t0, C0_PAGEMASK
        dmtc0 $zero, C0_ENTRYHI
        li $t0, (0x01004000 >> 6) | 0x1e
        dmtc0 $t0, C0_ENTRYLO0
        dmtc0 $zero, C0_ENTRYLO1
        tlbwi
        tlbr
        dmfc0 $t0, C0_ENTRYLO0
        EXIT
