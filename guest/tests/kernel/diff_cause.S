/* QEMU lets software write Cause.IV and Cause.WP (MIPS32 bits); the R4400 only IP1:IP0. */
#include "kernel.h"

        VECTORS init, handler, handler, handler

handler:
        EXIT

init:
        li $t0, 0x00c00000
        mtc0 $t0, C0_CAUSE
        mfc0 $t0, C0_CAUSE
        EXIT
