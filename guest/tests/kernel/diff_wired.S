/* QEMU stores Wired modulo 48; the R4400 keeps bits 5:0. */
#include "kernel.h"

        VECTORS init, handler, handler, handler

handler:
        EXIT

init:
        li $t0, 50
        mtc0 $t0, C0_WIRED
        mfc0 $t0, C0_WIRED
        EXIT
