/* A fetch from a misaligned PC raises Address Error on both. QEMU loads BadVAddr with the PC
   only when it translates the faulting address: the second time (from its translation cache)
   BadVAddr keeps what the last exception left. The R4400 loads it with the PC every time. */
#include "kernel.h"

        VECTORS init, handler, handler, handler

handler:
        dmfc0 $k0, C0_EPC
        bne $k0, $s1, 1f
        nop
        addiu $s0, $s0, 1               /* the misaligned fetch: twice */
        sltiu $k1, $s0, 2
        beqz $k1, 2f
        nop
        la $k0, again
        dmtc0 $k0, C0_EPC
        eret
1:      daddiu $k0, $k0, 4              /* the misaligned load: go on */
        dmtc0 $k0, C0_EPC
        eret
2:      EXIT

init:
        li $t1, ST_BEV
        mtc0 $t1, C0_STATUS
        li $s0, 0
        la $s1, target + 2
again:
        lw $t3, 1($zero)                /* BadVAddr = 1 */
        dmtc0 $s1, C0_EPC
        mfc0 $t1, C0_STATUS
        ori $t1, $t1, ST_EXL
        mtc0 $t1, C0_STATUS
        eret
target: nop
        nop
