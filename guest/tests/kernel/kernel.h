/* Shared pieces of the bare-metal kernel test programs: CP0 register numbers, the reset and
   exception vectors, and the end of a program (QEMU's semihosting exit; on the core the harness
   stops at the last instruction QEMU executed). Registers QEMU does not log are compared by
   copying them into GPRs: COPY reads a CP0 register into $k1, compared at the next instruction. */
#define C0_INDEX $0
#define C0_RANDOM $1
#define C0_ENTRYLO0 $2
#define C0_ENTRYLO1 $3
#define C0_CONTEXT $4
#define C0_PAGEMASK $5
#define C0_WIRED $6
#define C0_BADVADDR $8
#define C0_COUNT $9
#define C0_ENTRYHI $10
#define C0_COMPARE $11
#define C0_STATUS $12
#define C0_CAUSE $13
#define C0_EPC $14
#define C0_PRID $15
#define C0_CONFIG $16
#define C0_LLADDR $17
#define C0_WATCHLO $18
#define C0_WATCHHI $19
#define C0_XCONTEXT $20
#define C0_ECC $26
#define C0_CACHEERR $27
#define C0_TAGLO $28
#define C0_TAGHI $29
#define C0_ERROREPC $30

#define ST_IE 0x1
#define ST_EXL 0x2
#define ST_ERL 0x4
#define ST_SUPER 0x8
#define ST_USER 0x10
#define ST_UX 0x20
#define ST_SX 0x40
#define ST_KX 0x80
#define ST_BEV 0x400000
#define ST_CU0 0x10000000
#define ST_CU1 0x20000000

        .set noreorder
        .set noat
        .set gp=64                      /* ld/sd are single instructions, not lw pairs */

/* dmfc0 into $k1: the value is compared at the next instruction. */
        .macro COPY reg
        dmfc0 $k1, \reg
        .endm

/* Reset vector and the BEV=1 vectors, branching to the program's handlers. */
        .macro VECTORS init, refill, xrefill, general
        .text
        .globl _start
_start:
        b \init
        nop
        .org 0x200
        b \refill
        nop
        .org 0x280
        b \xrefill
        nop
        .org 0x380
        b \general
        nop
        .org 0x400
        .endm

/* The BEV=0 vectors in RAM (0x80000000, 0x80000080, 0x80000180): jumps to the handlers,
   copied from a template in ROM through kseg1, so that no cache holds them. Uses $t8, $t9, $k0. */
        .macro RAM_VECTOR offset, handler
        la $t8, 8f
        li $t9, 0xA0000000 + \offset
        lw $k0, 0($t8)
        sw $k0, 0($t9)
        lw $k0, 4($t8)
        sw $k0, 4($t9)
        lw $k0, 8($t8)
        sw $k0, 8($t9)
        lw $k0, 12($t8)
        sw $k0, 12($t9)
        b 9f
        nop
8:      lui $k0, %hi(\handler)
        addiu $k0, $k0, %lo(\handler)
        jr $k0
        nop
9:
        .endm

/* QEMU's UHI exit(0). */
        .macro EXIT
        li $t9, 1
        move $a0, $zero
        .word 0x7000007F
        nop
        .endm
