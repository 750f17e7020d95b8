/* QEMU keeps Status.DE, CE, CH, RP, CU2 and CU3 at zero, which the R4400 lets software set. */
#include "kernel.h"

        VECTORS init, handler, handler, handler

handler:
        EXIT

init:
        li $t0, 0x88070000 | ST_ERL | ST_BEV
        mtc0 $t0, C0_STATUS
        mfc0 $t0, C0_STATUS
        EXIT
