/* QEMU translates BNE r,r (never taken) as a NOP: an exception in its delay slot gets EPC = the slot and no Cause.BD; the R4400 sets BD and EPC = the branch. */
#include "kernel.h"

        VECTORS init, handler, handler, handler

handler:
        EXIT

init:
        bne $t0, $t0, 1f
        syscall
1:      nop
        EXIT
