/* A bare-metal R4400 self-test, run from the reset vector with no kernel and no SDK:
     citcat capture --machine r4400 --rom selftest.bin -o selftest.cat
   (or --rom selftest.elf). It initialises the TLB, takes a TLB refill at the BEV=1 vector,
   moves the vectors to RAM (BEV=0), takes a software interrupt, SYSCALL, BREAK (one in a delay
   slot) and an address error in kernel mode, then runs code in user mode through a wired TLB
   entry onto the ROM (cached), where it takes TLB refills, address errors, a TLB Modified,
   BREAK and SYSCALL, and comes back to kernel mode by a SYSCALL. The exception handlers count
   every exception by its code. At the end the kernel prints the counts on the console UART,
   stores them uncached to RAM at physical RESULTS (so `citcat dump` shows them as
   uncached-write records), stores its verdict after them and powers the machine off.

   Physical map (docs/machines/r4400-system.md): RAM from 0, the console UART at 0x1F000000,
   power off at 0x1F200008, this ROM at 0x1FC00000 (kseg1 0xBFC00000). */

        .set noreorder
        .set noat

/* CP0 registers. */
#define C0_INDEX $0
#define C0_ENTRYLO0 $2
#define C0_ENTRYLO1 $3
#define C0_PAGEMASK $5
#define C0_WIRED $6
#define C0_BADVADDR $8
#define C0_ENTRYHI $10
#define C0_STATUS $12
#define C0_CAUSE $13
#define C0_EPC $14

/* Status bits. */
#define ST_IE 0x1
#define ST_EXL 0x2
#define ST_USER 0x10
#define ST_IM0 0x100
#define ST_BEV 0x400000

#define UART 0xBF000000      /* transmit register, kseg1 */
#define POWER_OFF 0xBF200008 /* a store here stops the machine */
#define COUNTS 0x80001000    /* exception counts by ExcCode, one word each (kseg0, cached) */
#define REFILLS 0x80001080   /* TLB refills */
#define RESULTS 0xA0000400   /* the report, uncached: physical 0x400 */
#define USER_PFN 0x100       /* user data pages: physical 0x100000 + the pair's offset */
#define USER_CODE_VA 0x00400000
#define USER_DATA_VA 0x10000000
#define EXPECTED 8           /* entries of `expected` (gas does not fold a forward difference) */
#define PASS 0x600DC0DE
#define FAIL 0x0BADC0DE

/* Waits out the CP0 hazard before an instruction that depends on an MTC0 or TLB write. */
        .macro HAZARD
        nop
        nop
        .endm

        .text
        .globl _start
_start:                                 /* 0xBFC00000: the reset vector */
        b init
        nop

        .org 0x200                      /* BEV=1: TLB refill */
        b refill
        nop
        .org 0x380                      /* BEV=1: everything else */
        b general
        nop

/* ---- the exception handlers (reached from the BEV=1 vectors and, later, from RAM) ---- */

/* Maps the faulting 8 KB page pair of user data to RAM, cached, dirty and valid. */
refill:
        lui $k1, %hi(REFILLS)
        lw $k0, %lo(REFILLS)($k1)
        addiu $k0, $k0, 1
        sw $k0, %lo(REFILLS)($k1)
        mfc0 $k0, C0_BADVADDR           /* EntryHi already holds its VPN2 */
        srl $k0, $k0, 13
        andi $k0, $k0, 0x7F             /* the pair, in a 1 MiB window */
        sll $k0, $k0, 1
        addiu $k0, $k0, USER_PFN
        sll $k0, $k0, 6
        ori $k0, $k0, (3 << 3) | 4 | 2  /* cacheable, dirty, valid */
        mtc0 $k0, C0_ENTRYLO0
        addiu $k0, $k0, 0x40            /* the odd page: the next frame */
        mtc0 $k0, C0_ENTRYLO1
        mtc0 $zero, C0_PAGEMASK
        HAZARD
        tlbwr
        HAZARD
        eret

/* Counts the exception by its code, then: an interrupt is the software one, cleared and
   returned from; SYSCALL with $v0 = 1 returns to the kernel at user_done; anything else resumes
   after the faulting instruction (after its branch when it was a delay slot). */
general:
        mfc0 $k0, C0_CAUSE
        nop
        andi $k0, $k0, 0x7C             /* ExcCode * 4 */
        lui $k1, %hi(COUNTS)
        addu $k1, $k1, $k0
        lw $at, %lo(COUNTS)($k1)
        addiu $at, $at, 1
        sw $at, %lo(COUNTS)($k1)
        beqz $k0, interrupt
        xori $k1, $k0, 8 << 2
        beqz $k1, syscall_
        nop
skip:
        mfc0 $k0, C0_CAUSE
        mfc0 $k1, C0_EPC
        bgez $k0, 1f                    /* Cause.BD clear */
        addiu $k1, $k1, 4
        addiu $k1, $k1, 4
1:      mtc0 $k1, C0_EPC
        HAZARD
        eret
syscall_:
        addiu $k1, $zero, 1
        bne $v0, $k1, skip
        nop
        mfc0 $k0, C0_STATUS             /* back to kernel mode, at user_done */
        li $k1, ~ST_USER
        and $k0, $k0, $k1
        mtc0 $k0, C0_STATUS
        la $k0, user_done
        mtc0 $k0, C0_EPC
        HAZARD
        eret
interrupt:
        mtc0 $zero, C0_CAUSE            /* lower the software interrupt */
        HAZARD
        eret

/* The BEV=0 vectors: a jump to the handler, copied into RAM through kseg1. */
        .macro RAM_VECTOR address, handler
        la $t0, 8f
        li $t1, \address
        li $t2, 4
7:      lw $t3, 0($t0)
        sw $t3, 0($t1)
        addiu $t0, $t0, 4
        addiu $t2, $t2, -1
        bnez $t2, 7b
        addiu $t1, $t1, 4
        b 9f
        nop
8:      lui $k0, %hi(\handler)
        addiu $k0, $k0, %lo(\handler)
        jr $k0
        nop
9:
        .endm

/* ---- the kernel ---- */

init:
        li $t0, ST_BEV                  /* leave the reset state's ERL: kuseg goes through the TLB */
        mtc0 $t0, C0_STATUS
        la $a0, banner
        bal puts
        nop

        /* Every TLB entry at a distinct kseg0 VPN2, where no address is ever translated. */
        mtc0 $zero, C0_PAGEMASK
        mtc0 $zero, C0_ENTRYLO0
        mtc0 $zero, C0_ENTRYLO1
        li $t0, 0
        lui $t1, 0x8000
1:      mtc0 $t0, C0_INDEX
        mtc0 $t1, C0_ENTRYHI
        HAZARD
        tlbwi
        addiu $t0, $t0, 1
        addiu $t1, $t1, 0x2000
        slti $t2, $t0, 48
        bnez $t2, 1b
        nop

        /* Entry 0, wired: the user code, VA USER_CODE_VA onto this ROM's second page,
           cacheable, read-only, global; the odd page invalid. */
        li $t0, USER_CODE_VA
        mtc0 $t0, C0_ENTRYHI
        li $t0, ((0x1FC01000 >> 12) << 6) | (3 << 3) | 2 | 1
        mtc0 $t0, C0_ENTRYLO0
        li $t0, 1
        mtc0 $t0, C0_ENTRYLO1
        mtc0 $zero, C0_INDEX
        HAZARD
        tlbwi
        li $t0, 1
        mtc0 $t0, C0_WIRED
        mtc0 $zero, C0_ENTRYHI          /* ASID 0 */

        /* A TLB refill through the BEV=1 vector: a kernel load from kuseg. */
        li $t0, USER_DATA_VA + 0x4000
        lw $t1, 0($t0)
        sw $t0, 4($t0)

        /* The vectors move to RAM: BEV=0. */
        RAM_VECTOR 0xA0000000, refill
        RAM_VECTOR 0xA0000180, general
        mtc0 $zero, C0_STATUS
        HAZARD

        /* A software interrupt, taken at once. */
        li $t0, ST_IM0 | ST_IE
        mtc0 $t0, C0_STATUS
        li $t0, 0x100                   /* Cause.IP0 */
        mtc0 $t0, C0_CAUSE
        HAZARD
        mtc0 $zero, C0_STATUS

        /* Exceptions in kernel mode: each handler resumes after the instruction. */
        move $v0, $zero
        syscall
        break 1
        beq $zero, $zero, 1f
        break 2                         /* in a delay slot: EPC is the branch, Cause.BD set */
1:      li $t0, 0x80002002
        lw $t1, 0($t0)                  /* misaligned: address error on load */

        /* User mode: ERET to the user code with KSU = user. */
        li $t0, ST_USER | ST_EXL
        mtc0 $t0, C0_STATUS
        li $t0, USER_CODE_VA            /* user_start */
        mtc0 $t0, C0_EPC
        HAZARD
        eret

/* Back from user mode: check, report, power off. */
user_done:
        la $a0, report
        bal puts
        nop
        li $s2, RESULTS
        la $s3, expected
        li $s4, PASS
        la $s5, names
        li $s6, 0                       /* index into expected */
2:      lw $t0, 0($s3)                  /* ExcCode, or -1 for the refills, -2 for the checksum */
        bltz $t0, 3f
        sll $t0, $t0, 2
        lui $t1, %hi(COUNTS)
        addu $t1, $t1, $t0
        b 5f
        lw $s7, %lo(COUNTS)($t1)
3:      addiu $t0, $t0, 4 * 1
        bnez $t0, 4f
        lui $t1, %hi(REFILLS)
        b 5f
        lw $s7, %lo(REFILLS)($t1)
4:      move $s7, $s1                   /* the user code's checksum */
5:      sw $s7, 0($s2)                  /* the count, for `citcat dump` */
        lw $t0, 4($s3)
        beq $t0, $s7, 6f
        nop
        li $s4, FAIL
6:      move $a0, $s5
        bal puts
        addiu $s5, $s5, 12
        bal puthex
        move $a0, $s7
        addiu $s2, $s2, 4
        addiu $s6, $s6, 1
        slti $t0, $s6, EXPECTED
        bnez $t0, 2b
        addiu $s3, $s3, 8
        sw $s4, 0($s2)                  /* the verdict */
        li $t0, PASS
        la $a0, pass
        beq $s4, $t0, 7f
        nop
        la $a0, fail
7:      bal puts
        nop
        li $t0, POWER_OFF
        sw $zero, 0($t0)
8:      b 8b
        nop

/* Prints the NUL-terminated string at $a0. Uses $t8, $t9. */
puts:
        li $t9, UART
1:      lbu $t8, 0($a0)
        beqz $t8, 2f
        addiu $a0, $a0, 1
        b 1b
        sw $t8, 0($t9)
2:      jr $ra
        nop

/* Prints $a0 as 8 hex digits and a newline. Uses $t7, $t8, $t9. */
puthex:
        li $t9, UART
        li $t7, 28
1:      srlv $t8, $a0, $t7
        andi $t8, $t8, 0xF
        slti $at, $t8, 10
        bnez $at, 2f
        addiu $t8, $t8, '0'
        addiu $t8, $t8, 'a' - '0' - 10
2:      sw $t8, 0($t9)
        bnez $t7, 1b
        addiu $t7, $t7, -4
        li $t8, '\n'
        jr $ra
        sw $t8, 0($t9)

/* What the counts must be: (ExcCode or -1 refills or -2 checksum, value). */
        .align 3
expected:
        .word 0, 1                      /* Int: the software interrupt */
        .word 1, 1                      /* Mod: the user store to its code page */
        .word 4, 2                      /* AdEL: kernel misaligned, user load from kseg0 */
        .word 5, 1                      /* AdES: user misaligned store */
        .word 8, 3                      /* Sys: kernel, user, user's return */
        .word 9, 3                      /* Bp: kernel, kernel delay slot, user */
        .word -1, 3                     /* refills: kernel (BEV=1), user store, user load */
        .word -2, 0x3fe0                /* the user code's checksum */
names:                                  /* 12 bytes each, in the order of expected */
        .asciz "interrupt  "
        .asciz "tlb-mod    "
        .asciz "adel       "
        .asciz "ades       "
        .asciz "syscall    "
        .asciz "break      "
        .asciz "tlb-refill "
        .asciz "checksum   "
banner: .asciz "citcat bare-metal R4400 self-test\n"
report: .asciz "exceptions taken:\n"
pass:   .asciz "PASS\n"
fail:   .asciz "FAIL\n"

/* ---- the user code: this ROM's second page, mapped at USER_CODE_VA ---- */
        .org 0x1000
user_start:
        lui $s0, %hi(USER_DATA_VA)
        li $t0, 0
        li $t1, 64
1:      sll $t2, $t0, 2
        addu $t2, $t2, $s0
        sll $t3, $t0, 3
        xor $t3, $t3, $t0
        sw $t3, 0($t2)                  /* the first store: a TLB refill */
        addiu $t0, $t0, 1
        bne $t0, $t1, 1b
        nop
        li $s1, 0                       /* checksum of what was stored */
        li $t0, 0
2:      lw $t3, 0($s0)
        addu $s1, $s1, $t3
        addiu $t0, $t0, 1
        bne $t0, $t1, 2b
        addiu $s0, $s0, 4
        lui $t4, %hi(USER_DATA_VA + 0x8000)
        lw $t5, %lo(USER_DATA_VA + 0x8000)($t4)  /* another pair: a refill on a load */
        addu $s1, $s1, $t5
        lui $t4, 0x8000
        lw $t5, 0($t4)                  /* kseg0 from user mode: address error */
        sw $t5, 2($s0)                  /* misaligned: address error on store */
        lui $t4, %hi(USER_CODE_VA)
        sw $t5, 0x10($t4)               /* the code page is read-only: TLB Modified */
        break 3
        move $v0, $zero
        syscall                         /* a plain system call: resumes here */
        li $v0, 1
        syscall                         /* back to the kernel */
1:      b 1b                            /* never reached */
        nop
