/* QEMU keeps PageMask bits 28:25 (MIPS32 page sizes); the R4400 has bits 24:13 only. */
#include "kernel.h"

        VECTORS init, handler, handler, handler

handler:
        EXIT

init:
        li $t0, -1
        mtc0 $t0, C0_PAGEMASK
        mfc0 $t0, C0_PAGEMASK
        EXIT
