/* QEMU executes the MIPS32 MUL on an R4000; the R4400 raises Reserved Instruction. */
#include "kernel.h"

        VECTORS init, handler, handler, handler

handler:
        EXIT

init:
        li $t0, 6
        li $t1, 7
        .word 0x71095002                /* mul $t2, $t0, $t1 */
        EXIT
