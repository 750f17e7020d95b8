/* TLB refills the way a kernel does them: the 32-bit handler loads the PTE pair that Context
   points at, the XTLB handler one found through XContext, both write it with TLBWR. Page tables
   in kseg0 give 4 KB pages, some read-only (TLB Modified) and some invalid (TLBL/TLBS through the
   general vector). Each round uses its own ASID, Wired, BEV and 32- or 64-bit addressing (UX/SX/
   KX), touches 24 page pairs, and probes and reads entries back with TLBP and TLBR. */
#include "kernel.h"

#define PT32 0xffffffff80800000         /* Context.PTEBase: 16-byte PTE pairs by BadVPN2 */
#define PT64 0xffffffff80c00000         /* the XTLB handler's table, by BadVPN2 bits 17:0 */
#define PAIRS 24

        VECTORS init, refill, xrefill, general

refill:
        dmfc0 $k0, C0_CONTEXT
        ld $k1, 0($k0)
        dmtc0 $k1, C0_ENTRYLO0
        ld $k1, 8($k0)
        dmtc0 $k1, C0_ENTRYLO1
        tlbwr
        eret

xrefill:
        dmfc0 $k0, C0_XCONTEXT
        li $k1, 0x3ffff0
        and $k0, $k0, $k1
        lui $k1, 0x80c0
        or $k0, $k0, $k1
        ld $k1, 0($k0)
        dmtc0 $k1, C0_ENTRYLO0
        ld $k1, 8($k0)
        dmtc0 $k1, C0_ENTRYLO1
        tlbwr
        eret

/* Invalid pages and read-only ones: copy what the exception left, skip the access. */
general:
        COPY C0_BADVADDR
        COPY C0_CONTEXT
        COPY C0_XCONTEXT
        COPY C0_ENTRYHI
        mfc0 $k0, C0_CAUSE
        daddiu $s7, $s7, 1
        dmfc0 $k1, C0_EPC
        bgez $k0, 1f
        daddiu $k1, $k1, 4
        daddiu $k1, $k1, 4
1:      dmtc0 $k1, C0_EPC
        eret

/* The PTE pair for the page pair at $t0 (its PT address in $t1), physical pair $t2. */
        .macro PTE
        dsrl $t3, $t2, 6
        ori $t3, $t3, (3 << 3) | 6      /* cacheable, dirty, valid */
        andi $t4, $s0, 7
        bnez $t4, 1f
        andi $t4, $s0, 15
        xori $t3, $t3, 4                /* every 8th: read-only */
1:      bnez $t4, 2f
        nop
        xori $t3, $t3, 2                /* every 16th: invalid */
2:      sd $t3, 0($t1)
        daddiu $t3, $t3, 0x1000 >> 6
        sd $t3, 8($t1)
        .endm

init:
        RAM_VECTOR 0x000, refill
        RAM_VECTOR 0x080, xrefill
        RAM_VECTOR 0x180, general
        li $t0, PT32
        dmtc0 $t0, C0_CONTEXT
        dmtc0 $zero, C0_XCONTEXT
        mtc0 $zero, C0_PAGEMASK
        /* PTEs for the pairs at 0x00400000 (32-bit) and 0x4_0040_0000 (64-bit) */
        li $s0, 0
        li $t2, 0x01000000
fill:   sll $t0, $s0, 13
        lui $t5, 0x0040
        addu $t0, $t0, $t5
        dsrl $t1, $t0, 13
        dsll $t1, $t1, 4
        li $t5, PT32
        daddu $t1, $t1, $t5
        PTE
        andi $t1, $t1, 0xffff           /* BadVPN2 bits 17:0 for 0x4_0040_0000 + pair */
        li $t5, (0x00400000 >> 13) << 4
        subu $t1, $t1, $t5
        lui $t5, 0x80c0
        ori $t5, $t5, (0x00400000 >> 13) << 4
        or $t1, $t1, $t5
        PTE
        addiu $s0, $s0, 1
        sltiu $t5, $s0, PAIRS
        bnez $t5, fill
        daddiu $t2, $t2, 0x2000

        li $fp, 0                       /* round */
round:
        /* ASID, Wired, BEV and address size of the round. A new ASID each round: QEMU keeps
           entries TLBWR replaced as shadows that an ASID seen again would still hit
           (diff_shadow). */
        andi $t0, $fp, 0xff
        dmtc0 $t0, C0_ENTRYHI
        dmtc0 $zero, C0_ENTRYLO0
        dmtc0 $zero, C0_ENTRYLO1
        mtc0 $zero, C0_INDEX
        tlbwi
        andi $t0, $fp, 7
        ori $t0, $t0, 1
        mtc0 $t0, C0_WIRED
        li $t0, 0
        andi $t1, $fp, 4
        beqz $t1, 1f
        nop
        li $t0, ST_KX | ST_SX | ST_UX
1:      andi $t1, $fp, 8
        bnez $t1, 2f
        nop
        li $t1, ST_BEV
        or $t0, $t0, $t1
2:      mtc0 $t0, C0_STATUS
        COPY C0_WIRED
        /* the page pairs: 32-bit addresses, and beyond 32 bits in 64-bit rounds */
        li $s0, 0
        lui $s1, 0x0040
        andi $t1, $fp, 4
        beqz $t1, pairs
        nop
        andi $t1, $fp, 16
        beqz $t1, pairs
        li $t1, 4
        dsll32 $t1, $t1, 0
        daddu $s1, $s1, $t1
pairs:  lw $t0, 0($s1)
        addu $t0, $t0, $fp
        sw $t0, 4($s1)
        lw $t1, 0x1004($s1)
        sw $t1, 0x1008($s1)
        andi $t2, $s0, 3                /* every 4th pair: probe and read the entry back */
        bnez $t2, 3f
        nop
        dmfc0 $t2, C0_ENTRYHI
        andi $t2, $t2, 0xff
        or $t2, $t2, $s1
        dmtc0 $t2, C0_ENTRYHI
        tlbp
        mfc0 $t3, C0_INDEX
        bltz $t3, 3f
        nop
        tlbr
        COPY C0_ENTRYHI
        COPY C0_ENTRYLO0
        COPY C0_ENTRYLO1
        COPY C0_PAGEMASK
3:      addiu $s0, $s0, 1
        sltiu $t2, $s0, PAIRS
        bnez $t2, pairs
        daddiu $s1, $s1, 0x2000
        addiu $fp, $fp, 1
        sltiu $t0, $fp, 160
        bnez $t0, round
        nop
        EXIT
