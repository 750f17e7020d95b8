/* The CITCAT driver (docs/machines/r4400-system.md, "Begin of trace: the driver").
   Called once, in kernel mode with interrupts off, through its kseg1 alias so that it runs
   uncached:   void citcat_driver(void);
   It returns (JR k0) to its caller's return address, the resume point, with every GPR as it
   dumped it: t0..t3 hold the driver's last values, k0 = resume PC, k1 = 0xFFFFFFFFBFE00000.
   It uses only t0..t3, k0, k1 (caller-saved in o32) and no memory but the reserved area. */
#include "layout.h"

        .set    mips3
        .set    gp=64
        .set    noreorder
        .set    noat
        .set    hardfloat

#define ST(off) (CITCAT_R4400_CPU_STATE + (off)) /* cpu-state slot, from the reserved area base */
#define CP0(r) ST(CITCAT_R4400_SLOT_CP0 + 8 * (r))

        .macro  dump_cp0 r
        dmfc0   $8, $\r
        sd      $8, (ST(CITCAT_R4400_SLOT_CP0) + 8 * \r)($27)
        .endm
        .macro  dump_fgr i
        .set    push
        .set    fp=64
        dmfc1   $8, $f\i
        .set    pop
        sd      $8, (ST(CITCAT_R4400_SLOT_FGR) + 8 * \i)($27)
        .endm
        .macro  dump_gpr i
        sd      $\i, (ST(CITCAT_R4400_SLOT_GPR) + 8 * \i)($27)
        .endm

        .text
        .globl  citcat_driver
        .ent    citcat_driver
citcat_driver:
        move    $26, $31                /* k0 = the resume PC */

        /* 1. write back and invalidate every D-cache line, invalidate every I-cache line
              (16 KB each; a 16-byte stride covers 16- and 32-byte lines), then the secondary */
        lui     $8, 0x8000
        ori     $9, $8, 0x4000
1:      cache   0x01, 0($8)             /* Index_Writeback_Invalidate_D */
        cache   0x00, 0($8)             /* Index_Invalidate_I */
        addiu   $8, $8, 16
        bne     $8, $9, 1b
        nop
        /* then the secondary cache, if Config.SC says there is one: Index_Writeback_Invalidate_SD
           over 16 MB of indexes (the largest secondary cache) in steps of its line size */
        mfc0    $8, $16
        srl     $9, $8, 17
        andi    $9, $9, 1
        bnez    $9, 3f
        srl     $9, $8, 22
        andi    $9, $9, 3
        li      $10, 16
        sllv    $10, $10, $9
        lui     $8, 0x8000
        lui     $9, 0x8100
4:      cache   0x03, 0($8)             /* Index_Writeback_Invalidate_SD */
        addu    $8, $8, $10
        bne     $8, $9, 4b
        nop
3:

        /* 2. the begin marker 0x4349544341540001 */
        lui     $27, CITCAT_R4400_RESERVED_LUI
        lui     $8, CITCAT_R4400_BEGIN_MARKER_HI >> 16
        ori     $8, $8, CITCAT_R4400_BEGIN_MARKER_HI & 0xFFFF
        dsll32  $8, $8, 0
        lui     $9, CITCAT_R4400_BEGIN_MARKER_LO >> 16
        ori     $9, $9, CITCAT_R4400_BEGIN_MARKER_LO & 0xFFFF
        or      $8, $8, $9
        sd      $8, CITCAT_R4400_TRACE_BEGIN($27)

        /* 3a. CP0 as DMFC0 reads it (Random last, below; Count and Cause are read here once,
               for the dump only) */
        dump_cp0 0
        dump_cp0 2
        dump_cp0 3
        dump_cp0 4
        dump_cp0 5
        dump_cp0 6
        dump_cp0 7
        dump_cp0 8
        dump_cp0 9
        dump_cp0 10
        dump_cp0 11
        dump_cp0 12
        dump_cp0 13
        dump_cp0 14
        dump_cp0 15
        dump_cp0 16
        dump_cp0 17
        dump_cp0 18
        dump_cp0 19
        dump_cp0 20
        dump_cp0 21
        dump_cp0 22
        dump_cp0 23
        dump_cp0 24
        dump_cp0 25
        dump_cp0 26
        dump_cp0 27
        dump_cp0 28
        dump_cp0 29
        dump_cp0 30
        dump_cp0 31

        /* 3b. the TLB: entry i at tlb + 0x20 * i (PageMask, EntryHi, EntryLo0, EntryLo1) */
        move    $9, $0
        addiu   $10, $27, CITCAT_R4400_TLB
2:      mtc0    $9, $0                  /* Index */
        tlbr
        dmfc0   $8, $5
        sd      $8, CITCAT_R4400_TLB_PAGE_MASK($10)
        dmfc0   $8, $10
        sd      $8, CITCAT_R4400_TLB_ENTRY_HI($10)
        dmfc0   $8, $2
        sd      $8, CITCAT_R4400_TLB_ENTRY_LO0($10)
        dmfc0   $8, $3
        sd      $8, CITCAT_R4400_TLB_ENTRY_LO1($10)
        addiu   $9, $9, 1
        sltiu   $8, $9, CITCAT_R4400_TLB_ENTRIES
        bnez    $8, 2b
        addiu   $10, $10, CITCAT_R4400_TLB_ENTRY_BYTES
        /* restore Index, EntryHi, EntryLo0/1 and PageMask from the stored copies */
        ld      $8, CP0(0)($27)
        mtc0    $8, $0
        ld      $8, CP0(10)($27)
        dmtc0   $8, $10
        ld      $8, CP0(2)($27)
        dmtc0   $8, $2
        ld      $8, CP0(3)($27)
        dmtc0   $8, $3
        ld      $8, CP0(5)($27)
        mtc0    $8, $5

        /* 3c. the FPU: the 32 physical 64-bit FGRs (read with CU1 = 1 and FR = 1) and FCR31;
               then Status back to its stored value */
        mfc0    $11, $12
        lui     $8, 0x2400              /* CU1 | FR */
        or      $8, $11, $8
        mtc0    $8, $12
        dump_fgr 0
        dump_fgr 1
        dump_fgr 2
        dump_fgr 3
        dump_fgr 4
        dump_fgr 5
        dump_fgr 6
        dump_fgr 7
        dump_fgr 8
        dump_fgr 9
        dump_fgr 10
        dump_fgr 11
        dump_fgr 12
        dump_fgr 13
        dump_fgr 14
        dump_fgr 15
        dump_fgr 16
        dump_fgr 17
        dump_fgr 18
        dump_fgr 19
        dump_fgr 20
        dump_fgr 21
        dump_fgr 22
        dump_fgr 23
        dump_fgr 24
        dump_fgr 25
        dump_fgr 26
        dump_fgr 27
        dump_fgr 28
        dump_fgr 29
        dump_fgr 30
        dump_fgr 31
        cfc1    $8, $31
        sd      $8, ST(CITCAT_R4400_SLOT_FCR31)($27)
        mtc0    $11, $12                /* Status as stored */

        /* 3d. HI and LO */
        mfhi    $8
        sd      $8, ST(CITCAT_R4400_SLOT_HI)($27)
        mflo    $8
        sd      $8, ST(CITCAT_R4400_SLOT_LO)($27)

        /* 3e. Random, 37 instructions before the resume point: this DMFC0 is the 37th
               instruction retired before the first instruction at the resume PC. Then every
               GPR as it will be at the resume point, the resume PC, and state-done. */
        .globl  citcat_driver_random
citcat_driver_random:
        dmfc0   $8, $1                  /* 37 */
        sd      $8, CP0(1)($27)         /* 36 */
        dump_gpr 0                     /* 35 .. 4: GPR 0 .. 31 */
        dump_gpr 1
        dump_gpr 2
        dump_gpr 3
        dump_gpr 4
        dump_gpr 5
        dump_gpr 6
        dump_gpr 7
        dump_gpr 8
        dump_gpr 9
        dump_gpr 10
        dump_gpr 11
        dump_gpr 12
        dump_gpr 13
        dump_gpr 14
        dump_gpr 15
        dump_gpr 16
        dump_gpr 17
        dump_gpr 18
        dump_gpr 19
        dump_gpr 20
        dump_gpr 21
        dump_gpr 22
        dump_gpr 23
        dump_gpr 24
        dump_gpr 25
        dump_gpr 26
        dump_gpr 27
        dump_gpr 28
        dump_gpr 29
        dump_gpr 30
        dump_gpr 31
        sd      $26, ST(CITCAT_R4400_SLOT_RESUME_PC)($27) /* 3: the resume PC */
        .globl  citcat_driver_end
citcat_driver_end:
        jr      $26                     /* 2 */
        sd      $0, CITCAT_R4400_STATE_DONE($27) /* 1: state-done, in the delay slot */
        .end    citcat_driver
