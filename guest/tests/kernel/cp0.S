/* CP0 write masks: every writable CP0 register (but Count and Compare, which belong to the
   timer) written with all ones, zero and a walking pattern, and read back; the TLB registers
   through TLBWI and TLBR as well. Runs the sequence for many patterns. */
#include "kernel.h"

        VECTORS init, fail, fail, fail

fail:   EXIT

        .macro WRITE_READ reg
        dmtc0 $s0, \reg
        COPY \reg
        dmtc0 $zero, \reg
        COPY \reg
        dmtc0 $s1, \reg
        COPY \reg
        .endm

init:
        li $s2, 200                     /* patterns */
        li $s0, -1
        li $s1, 0x12345678
        dsll $s1, $s1, 32
        ori $s1, $s1, 0x9abc
loop:
        andi $t0, $s1, 0x2f             /* QEMU ignores an Index beyond its 48 entries */
        mtc0 $t0, C0_INDEX
        COPY C0_INDEX
        WRITE_READ C0_ENTRYLO0
        WRITE_READ C0_ENTRYLO1
        WRITE_READ C0_CONTEXT
        /* A valid page size (4 KB .. 16 MB): QEMU drops other masks and keeps bits 28:25. */
        andi $t1, $s2, 7
        sll $t1, $t1, 1
        li $t0, 1
        sllv $t0, $t0, $t1
        addiu $t0, $t0, -1
        sll $t0, $t0, 13
        li $t1, 0x1ffe000
        and $t0, $t0, $t1
        mtc0 $t0, C0_PAGEMASK
        COPY C0_PAGEMASK
        mtc0 $zero, C0_PAGEMASK
        COPY C0_PAGEMASK
        andi $t0, $s1, 0x1f             /* QEMU takes Wired modulo 48 */
        mtc0 $t0, C0_WIRED
        COPY C0_WIRED
        mtc0 $zero, C0_WIRED
        COPY C0_WIRED
        WRITE_READ C0_ENTRYHI
        WRITE_READ C0_EPC
        WRITE_READ C0_XCONTEXT
        WRITE_READ C0_ERROREPC
        /* The TLB keeps what its entries can hold. */
        andi $t0, $s2, 0x2f
        mtc0 $t0, C0_INDEX
        /* 4 KB pages: after TLBR, the R4400 leaves the VPN2 and PFN bits inside a larger page
           undefined (tests "differences"). */
        dmtc0 $s1, C0_ENTRYHI
        dmtc0 $s0, C0_ENTRYLO0
        dmtc0 $s1, C0_ENTRYLO1
        mtc0 $zero, C0_PAGEMASK
        tlbwi
        mtc0 $zero, C0_PAGEMASK
        dmtc0 $zero, C0_ENTRYHI
        tlbr
        COPY C0_ENTRYHI
        COPY C0_ENTRYLO0
        COPY C0_ENTRYLO1
        COPY C0_PAGEMASK
        /* Cause: IP0/IP1 (QEMU also lets IV and WP be written) */
        andi $t0, $s1, 0x3ff
        mtc0 $t0, C0_CAUSE
        mfc0 $t0, C0_CAUSE
        mtc0 $zero, C0_CAUSE
        mfc0 $t0, C0_CAUSE
        /* Status: the bits the R4400 and QEMU agree on (ERL stays set: no TLB use here). */
        li $t1, 0x3640ff00 | ST_ERL | ST_BEV
        and $t1, $t1, $s1
        ori $t1, $t1, ST_ERL
        mtc0 $t1, C0_STATUS
        mfc0 $t0, C0_STATUS
        /* next pattern: rotate and mix */
        dsll $t0, $s1, 7
        dsrl32 $t1, $s1, 25
        or $s1, $t0, $t1
        daddu $s1, $s1, $s2
        dsrl $s0, $s0, 1
        bnez $s0, 1f
        nop
        li $s0, -1
1:      addiu $s2, $s2, -1
        bnez $s2, loop
        nop
        EXIT
