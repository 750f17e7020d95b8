/* QEMU clears LLAddr on ERET (it stores 1, which reads back as 0); the R4400 leaves it. Both
   load it on LL with physical address bits 35:4. */
#include "kernel.h"

        VECTORS init, handler, handler, handler

handler:
        EXIT

init:
        li $t0, 0xa0000100
        ll $t1, 0($t0)
        mfc0 $t1, C0_LLADDR
        la $t2, 1f
        mtc0 $t2, C0_ERROREPC
        eret
1:      mfc0 $t1, C0_LLADDR
        EXIT
