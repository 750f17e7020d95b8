/* Privilege modes and exception vectoring. The same code (ucode) runs in user and supervisor
   mode, 32- and 64-bit (UX/SX), with CU0 and RE on and off, with BEV=1 and BEV=0, mapped through
   wired TLB entries onto the ROM: every probe in it either works or faults (address errors for
   segments the mode may not use, Reserved Instruction for 64-bit operations in 32-bit mode,
   Coprocessor Unusable, TLB Modified, refills through the 32-bit and the XTLB vector, traps and
   BREAK in delay slots), and the handler resumes after it. Then, in kernel mode: an exception
   with EXL set (EPC kept, refill through the general vector), ERL with kuseg unmapped and ERET
   to ErrorEPC. The whole runs many times with different data. */
#include "kernel.h"

#define ROM_PFN (0x1fc00000 >> 6)
#define DATA_PFN (0x01000000 >> 6)
#define UCODE (ucode - _start)          /* ucode's offset in the ROM = its user address */

        VECTORS init, refill, refill, general

/* Maps the faulting page pair onto RAM at 24 MB (4 KB pages) with TLBWI at an index chosen by
   the address (TLBWR is left to the random programs: QEMU keeps what it replaces, diff_shadow). */
refill:
        COPY C0_CONTEXT
        COPY C0_XCONTEXT
        COPY C0_ENTRYHI
        dmfc0 $k0, C0_BADVADDR
        mtc0 $zero, C0_PAGEMASK
        dsrl $k1, $k0, 13
        andi $k1, $k1, 0xff
        dsll $k1, $k1, 1                /* two 4 KB pages per pair */
        ori $k1, $k1, 0x01800000 >> 12
        dsll $k1, $k1, 6
        ori $k1, $k1, 0x1e              /* cached, dirty, valid */
        dmtc0 $k1, C0_ENTRYLO0
        daddiu $k1, $k1, 0x40
        dmtc0 $k1, C0_ENTRYLO1
        dsrl $k0, $k0, 13
        andi $k0, $k0, 0x1f
        addiu $k0, $k0, 4               /* above the wired entries */
        mtc0 $k0, C0_INDEX
        tlbwi
        daddiu $s7, $s7, 1
        eret

/* SYSCALL and instruction fetch errors return to the kernel at $s6; anything else resumes
   after the faulting instruction (after its branch when Cause.BD is set). */
general:
        COPY C0_BADVADDR
        mfc0 $k0, C0_CAUSE
        daddiu $s7, $s7, 1
        dmfc0 $k1, C0_EPC
        dmfc0 $at, C0_BADVADDR
        beq $k1, $at, 3f                /* the fetch failed */
        andi $k1, $k0, 0x7c
        xori $k1, $k1, 0x20
        bnez $k1, 2f
        nop
3:      mfc0 $k1, C0_STATUS
        li $k0, ~0x18
        and $k1, $k1, $k0
        mtc0 $k1, C0_STATUS
        dmtc0 $s6, C0_EPC
        eret
2:      dmfc0 $k1, C0_EPC
        bgez $k0, 1f
        daddiu $k1, $k1, 4
        daddiu $k1, $k1, 4
1:      dmtc0 $k1, C0_EPC
        eret

/* Runs in any mode at any address: only relative branches. */
ucode:
        lw $t0, 0($s0)                  /* user data: fine in every mode */
        sw $s7, 4($s0)
        lw $t0, 0($s1)                  /* kseg0: kernel only */
        lw $t0, 0($s2)                  /* sseg: supervisor and kernel */
        sw $t0, 0x10($zero)             /* the code page is read-only: TLB Modified */
        bnez $a1, 1f                    /* QEMU runs them in 32-bit supervisor mode */
        nop
        ld $t0, 0($s0)                  /* 64-bit operations: RI unless UX/SX/kernel */
        dsll $t0, $t0, 3
        daddu $t1, $t0, $s7
        sd $t1, 8($s0)
1:
        lw $t0, 0($s3)                  /* beyond 32 bits: 64-bit modes only */
        lb $t1, 1($s0)                  /* bytes, halves and partial words */
        lhu $t2, 2($s0)
        lwl $t3, 1($s0)
        lwr $t3, 6($s0)
        sb $s7, 9($s0)
        lw $t0, 8($s0)
        mfc0 $t0, C0_STATUS             /* CP0: Coprocessor Unusable unless CU0 or kernel */
        tlbp
        mtc1 $t0, $f0                   /* CP1: unusable (CU1=0) */
        beq $zero, $zero, 1f
        break 7                         /* in a delay slot: Cause.BD, EPC = the branch */
1:      bltzal $s7, 2f
        teq $zero, $zero                /* a trap in the slot of a branch-and-link */
2:      lw $t0, 2($s0)                  /* misaligned */
        lw $t0, 0($s4)                  /* unmapped: TLB refill, 32-bit or XTLB vector */
        sw $t0, 0x40($s4)
        lw $t0, 0($s5)                  /* unmapped beyond 32 bits */
        addiu $s7, $s7, 3
        syscall                         /* back to the kernel */

/* What ucode runs under: Status (with EXL, so that ERET starts it), entry address, and whether
   to leave out the 64-bit operations (diff_super64). 64-bit supervisor runs have UX set as well:
   QEMU gates xsuseg with UX, the R4400 with SX (diff_kernel_xsseg). */
        .align 3
modes:
        .dword ST_USER | ST_EXL | ST_BEV, UCODE, 0
        .dword ST_USER | ST_UX | ST_EXL | ST_BEV, UCODE, 0
        .dword ST_USER | ST_CU0 | ST_EXL | ST_BEV, UCODE, 0
        .dword ST_USER | ST_UX | ST_EXL, UCODE, 0
        .dword ST_USER | ST_UX | ST_CU0 | ST_EXL, UCODE, 0
        .dword ST_SUPER | ST_EXL | ST_BEV, 0xffffffffc0000000 + UCODE, 1
        .dword ST_SUPER | ST_SX | ST_UX | ST_EXL | ST_BEV, 0x4000000000000000 + UCODE, 0
        .dword ST_SUPER | ST_SX | ST_UX | ST_EXL, 0xffffffffc0000000 + UCODE, 0
        .dword ST_SUPER | ST_SX | ST_UX | ST_EXL | ST_BEV, UCODE, 0
        .dword ST_EXL | ST_BEV, UCODE, 0                                         /* kernel, mapped */
        .dword ST_KX | ST_SX | ST_UX | ST_EXL, UCODE, 0
modes_end:

/* Entry i: EntryHi in $t0, both pages in $t1 / $t2 (EntryLo), 4 MB pages. */
        .macro MAP i
        li $t3, \i
        mtc0 $t3, C0_INDEX
        dmtc0 $t0, C0_ENTRYHI
        dmtc0 $t1, C0_ENTRYLO0
        dmtc0 $t2, C0_ENTRYLO1
        tlbwi
        .endm

init:
        RAM_VECTOR 0x000, refill
        RAM_VECTOR 0x080, refill
        RAM_VECTOR 0x180, general
        li $t0, 0x7fe000
        mtc0 $t0, C0_PAGEMASK
        li $t1, ROM_PFN | (2 << 3) | 2 | 1          /* uncached, valid, global, read-only */
        li $t2, DATA_PFN | (3 << 3) | 7             /* cached, dirty, valid, global */
        li $t0, 0
        MAP 0                                       /* user: the ROM at 0, data at 4 MB */
        li $t0, 0xc0000000
        MAP 1                                       /* supervisor (sseg) */
        li $t0, 0x4000
        dsll32 $t0, $t0, 16
        MAP 2                                       /* xsseg */
        li $t0, 1
        dsll32 $t0, $t0, 0
        move $t1, $t2
        MAP 3                                       /* xuseg beyond 4 GB: data */
        li $t0, 4
        mtc0 $t0, C0_WIRED
        li $t0, ST_BEV                              /* leave ERL: the TLB maps kuseg now */
        mtc0 $t0, C0_STATUS

        li $s0, 0x00400000                          /* user data */
        li $s1, 0x80001000
        li $s2, 0xc0400100
        li $s3, 1
        dsll32 $s3, $s3, 0
        ori $s3, $s3, 0x10
        li $s5, 0x20
        dsll32 $s5, $s5, 0
        li $s7, 0
        li $fp, 30                                  /* rounds */
round:
        andi $s4, $s7, 0x7f                         /* a different unmapped page each round */
        sll $s4, $s4, 13
        lui $t0, 0x1000
        or $s4, $s4, $t0
        daddu $s5, $s5, $s4
        la $gp, modes
next_mode:
        ld $t0, 0($gp)
        ld $t1, 8($gp)
        ld $a1, 16($gp)
        la $s6, back
        mtc0 $t0, C0_STATUS
        dmtc0 $t1, C0_EPC
        eret
back:
        daddiu $gp, $gp, 24
        la $t0, modes_end
        bne $gp, $t0, next_mode
        nop

        /* EXL already set: EPC and Cause.BD stay, a refill goes to the general vector. */
        la $t0, 1f - 4
        dmtc0 $t0, C0_EPC
        mfc0 $t1, C0_STATUS
        ori $t1, $t1, ST_EXL
        mtc0 $t1, C0_STATUS
        lui $t2, 0x7000
        lw $t2, 0($t2)                              /* TLB miss with EXL=1 */
1:      la $t0, 2f - 4
        dmtc0 $t0, C0_EPC
        b 2f
        break 3                                     /* BD stays clear: EXL was set */
2:      mfc0 $t1, C0_STATUS
        xori $t1, $t1, ST_EXL | ST_ERL              /* ERL: kuseg unmapped and uncached */
        mtc0 $t1, C0_STATUS
        li $t2, 0x00100000
        sw $s7, 0($t2)
        lw $t3, 0($t2)
        la $t0, 3f
        dmtc0 $t0, C0_ERROREPC
        COPY C0_ERROREPC
        eret                                        /* to ErrorEPC, clears ERL only */
3:      mfc0 $t1, C0_STATUS
        /* ERET to a PC beyond xkuseg's 2^40 bytes (outside every segment, 32- or 64-bit): the
           fetch raises the address error (a misaligned PC: diff_fetch_badvaddr) */
        la $s6, 5f
        li $t0, 0x100
        dsll32 $t0, $t0, 0
        daddu $t0, $t0, $s7
        dsll $t0, $t0, 2
        dmtc0 $t0, C0_EPC
        mfc0 $t1, C0_STATUS
        ori $t1, $t1, ST_EXL
        mtc0 $t1, C0_STATUS
        eret
5:      addiu $fp, $fp, -1
        bnez $fp, round
        daddiu $s7, $s7, 5
        EXIT
