/* QEMU does not implement the R4000 watchpoint: a load from the WatchLo address takes no Watch exception. */
#include "kernel.h"

        VECTORS init, handler, handler, handler

handler:
        EXIT

init:
        li $t0, 0x100 | 2                /* physical 0x100, loads */
        mtc0 $t0, C0_WATCHLO
        mtc0 $zero, C0_WATCHHI
        li $t0, ST_BEV
        mtc0 $t0, C0_STATUS
        li $t0, 0x80000100
        lw $t1, 0($t0)
        EXIT
