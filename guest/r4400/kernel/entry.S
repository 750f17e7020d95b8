/* Kernel entry, exception vectors, the save/restore path, the idle loop and FPU context.
   The exact instruction sequences of the general vector are part of the CITCAT contract
   (docs/machines/r4400-system.md, "Interrupts"; docs/machines/r4400-guest.md). */
#include "layout.h"

        .set    mips3
        .set    gp=64
        .set    noreorder
        .set    noat
        .set    hardfloat

/* ---------------------------------------------------------------- boot */
        .section .text.start, "ax"
        .globl  _start
        .ent    _start
_start:
        li      $8, KERNEL_STATUS
        mtc0    $8, $12                 /* kernel mode, BEV = 0, interrupts off */
        la      $29, kstack_top
        jal     kernel_main
        nop
1:      b       1b
        nop
        .end    _start

        .text
/* ------------------------------------------------------ exception vectors
   Copied by the kernel to 0x80000000 (TLB refill), 0x80000080 (XTLB refill) and 0x80000180
   (general). Position-independent except for J, which stays in the kseg0 region. */

/* TLB refill, 32-bit addressing (kernel touching kuseg; not expected). Context.PTEBase = 0, so
   Context = BadVPN2 << 4 and Context >> 1 = VPN2 * 8, the byte offset of the EntryLo pair in the
   current task's page table. */
        .globl  vec_refill_begin, vec_refill_end
vec_refill_begin:
        mfc0    $26, $4                 /* Context */
        srl     $26, $26, 1
        sltiu   $27, $26, PT_BYTES
        beqz    $27, 1f                 /* beyond the table: a general TLB exception */
        lui     $27, %hi(cur_pgtab)
        lw      $27, %lo(cur_pgtab)($27)
        addu    $27, $27, $26
        lw      $26, 0($27)
        lw      $27, 4($27)
        mtc0    $26, $2                 /* EntryLo0 */
        mtc0    $27, $3                 /* EntryLo1 */
        tlbwr
        eret
1:      lui     $26, 0x8000
        ori     $26, $26, 0x180
        jr      $26                     /* the general vector reports TLBL/TLBS: task killed */
        nop
vec_refill_end:

/* XTLB refill: user tasks run with UX = 1. XContext.PTEBase = 0, so XContext = R << 31 |
   BadVPN2 << 4 and XContext >> 1 = VPN2 * 8 (R != 0 falls outside the table). */
        .globl  vec_xrefill_begin, vec_xrefill_end
vec_xrefill_begin:
        dmfc0   $26, $20                /* XContext */
        dsrl    $26, $26, 1
        sltiu   $27, $26, PT_BYTES
        beqz    $27, 1f
        lui     $27, %hi(cur_pgtab)
        lw      $27, %lo(cur_pgtab)($27)
        addu    $27, $27, $26
        lw      $26, 0($27)
        lw      $27, 4($27)
        mtc0    $26, $2
        mtc0    $27, $3
        tlbwr
        eret
1:      lui     $26, 0x8000
        ori     $26, $26, 0x180
        jr      $26
        nop
vec_xrefill_end:

/* General exception vector. Cause is read exactly once and echoed to `cause`; ErrorEPC (unused:
   ERL is never set) keeps the value for the handler. For an interrupt (ExcCode 0) EPC and Status
   go to `exception` with exactly one branch (the BNEZ) between the exception entry and the EPC
   store. Instructions marked [citcat] exist only for the trace: 9 per interrupt, 6 per other
   exception. */
        .globl  vec_general_begin, vec_general_end
vec_general_begin:
        mfc0    $26, $13                /* Cause: the only MFC0 of Cause in the kernel */
        lui     $27, CITCAT_R4400_RESERVED_LUI /* [citcat] reserved area, kseg1 */
        sw      $26, CITCAT_R4400_CAUSE($27) /* [citcat] echo Cause */
        mtc0    $26, $30                /* [citcat] keep Cause in ErrorEPC */
        andi    $26, $26, 0x7C          /* [citcat] ExcCode << 2 */
        bnez    $26, 1f                 /* [citcat] the one branch: not an interrupt */
        dmfc0   $26, $14                /* [citcat] EPC (delay slot, harmless on both paths) */
        sd      $26, (CITCAT_R4400_EXCEPTION + CITCAT_R4400_EXCEPTION_EPC)($27) /* [citcat] interrupt report: EPC */
        mfc0    $26, $12                /* [citcat] */
        sw      $26, (CITCAT_R4400_EXCEPTION + CITCAT_R4400_EXCEPTION_STATUS)($27) /* [citcat] Status */
1:      j       save_all
        nop
vec_general_end:

/* ------------------------------------------------------ save, dispatch, restore */
        .globl  save_all
        .ent    save_all
save_all:
        lui     $27, %hi(cur_task)
        lw      $27, %lo(cur_task)($27)
        sd      $1, T_GPR+8*1($27)
        sd      $2, T_GPR+8*2($27)
        sd      $3, T_GPR+8*3($27)
        sd      $4, T_GPR+8*4($27)
        sd      $5, T_GPR+8*5($27)
        sd      $6, T_GPR+8*6($27)
        sd      $7, T_GPR+8*7($27)
        sd      $8, T_GPR+8*8($27)
        sd      $9, T_GPR+8*9($27)
        sd      $10, T_GPR+8*10($27)
        sd      $11, T_GPR+8*11($27)
        sd      $12, T_GPR+8*12($27)
        sd      $13, T_GPR+8*13($27)
        sd      $14, T_GPR+8*14($27)
        sd      $15, T_GPR+8*15($27)
        sd      $16, T_GPR+8*16($27)
        sd      $17, T_GPR+8*17($27)
        sd      $18, T_GPR+8*18($27)
        sd      $19, T_GPR+8*19($27)
        sd      $20, T_GPR+8*20($27)
        sd      $21, T_GPR+8*21($27)
        sd      $22, T_GPR+8*22($27)
        sd      $23, T_GPR+8*23($27)
        sd      $24, T_GPR+8*24($27)
        sd      $25, T_GPR+8*25($27)
        sd      $28, T_GPR+8*28($27)
        sd      $29, T_GPR+8*29($27)
        sd      $30, T_GPR+8*30($27)
        sd      $31, T_GPR+8*31($27)
        mfhi    $26
        sd      $26, T_HI($27)
        mflo    $26
        sd      $26, T_LO($27)
        dmfc0   $26, $14
        sd      $26, T_EPC($27)
        mfc0    $26, $12
        sw      $26, T_STATUS($27)
        la      $29, kstack_top
        mfc0    $4, $30                 /* the Cause the vector read */
        jal     kernel_trap             /* returns the task to run */
        nop
        move    $27, $2
restore_k1:
        lw      $26, T_STATUS($27)
        mtc0    $26, $12                /* EXL stays set until ERET */
        ld      $26, T_EPC($27)
        dmtc0   $26, $14
        ld      $26, T_HI($27)
        mthi    $26
        ld      $26, T_LO($27)
        mtlo    $26
        ld      $1, T_GPR+8*1($27)
        ld      $2, T_GPR+8*2($27)
        ld      $3, T_GPR+8*3($27)
        ld      $4, T_GPR+8*4($27)
        ld      $5, T_GPR+8*5($27)
        ld      $6, T_GPR+8*6($27)
        ld      $7, T_GPR+8*7($27)
        ld      $8, T_GPR+8*8($27)
        ld      $9, T_GPR+8*9($27)
        ld      $10, T_GPR+8*10($27)
        ld      $11, T_GPR+8*11($27)
        ld      $12, T_GPR+8*12($27)
        ld      $13, T_GPR+8*13($27)
        ld      $14, T_GPR+8*14($27)
        ld      $15, T_GPR+8*15($27)
        ld      $16, T_GPR+8*16($27)
        ld      $17, T_GPR+8*17($27)
        ld      $18, T_GPR+8*18($27)
        ld      $19, T_GPR+8*19($27)
        ld      $20, T_GPR+8*20($27)
        ld      $21, T_GPR+8*21($27)
        ld      $22, T_GPR+8*22($27)
        ld      $23, T_GPR+8*23($27)
        ld      $24, T_GPR+8*24($27)
        ld      $25, T_GPR+8*25($27)
        ld      $28, T_GPR+8*28($27)
        ld      $29, T_GPR+8*29($27)
        ld      $30, T_GPR+8*30($27)
        ld      $31, T_GPR+8*31($27)
        eret
        .end    save_all

/* void restore_task(struct task *t): leaves the kernel into t (never returns). */
        .globl  restore_task
        .ent    restore_task
restore_task:
        b       restore_k1
        move    $27, $4
        .end    restore_task

/* ------------------------------------------------------ the idle loop
   Runs in kernel mode with interrupts enabled when no task is runnable. The trace can drop
   instructions between citcat_idle_begin and citcat_idle_end. */
        .globl  citcat_idle_begin, citcat_idle_end, idle_loop
citcat_idle_begin:
idle_loop:
        b       idle_loop
        nop
citcat_idle_end:

/* ------------------------------------------------------ FPU context (FR = 0, CU1 = 1) */
        .globl  fpu_save
        .ent    fpu_save
fpu_save:
        cfc1    $8, $31
        sw      $8, T_FCSR($4)
        sdc1    $f0, T_FPR+8*0($4)
        sdc1    $f2, T_FPR+8*1($4)
        sdc1    $f4, T_FPR+8*2($4)
        sdc1    $f6, T_FPR+8*3($4)
        sdc1    $f8, T_FPR+8*4($4)
        sdc1    $f10, T_FPR+8*5($4)
        sdc1    $f12, T_FPR+8*6($4)
        sdc1    $f14, T_FPR+8*7($4)
        sdc1    $f16, T_FPR+8*8($4)
        sdc1    $f18, T_FPR+8*9($4)
        sdc1    $f20, T_FPR+8*10($4)
        sdc1    $f22, T_FPR+8*11($4)
        sdc1    $f24, T_FPR+8*12($4)
        sdc1    $f26, T_FPR+8*13($4)
        sdc1    $f28, T_FPR+8*14($4)
        jr      $31
        sdc1    $f30, T_FPR+8*15($4)
        .end    fpu_save

        .globl  fpu_restore
        .ent    fpu_restore
fpu_restore:
        ldc1    $f0, T_FPR+8*0($4)
        ldc1    $f2, T_FPR+8*1($4)
        ldc1    $f4, T_FPR+8*2($4)
        ldc1    $f6, T_FPR+8*3($4)
        ldc1    $f8, T_FPR+8*4($4)
        ldc1    $f10, T_FPR+8*5($4)
        ldc1    $f12, T_FPR+8*6($4)
        ldc1    $f14, T_FPR+8*7($4)
        ldc1    $f16, T_FPR+8*8($4)
        ldc1    $f18, T_FPR+8*9($4)
        ldc1    $f20, T_FPR+8*10($4)
        ldc1    $f22, T_FPR+8*11($4)
        ldc1    $f24, T_FPR+8*12($4)
        ldc1    $f26, T_FPR+8*13($4)
        ldc1    $f28, T_FPR+8*14($4)
        ldc1    $f30, T_FPR+8*15($4)
        lw      $8, T_FCSR($4)
        jr      $31
        ctc1    $8, $31
        .end    fpu_restore
