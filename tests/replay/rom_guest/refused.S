/* Bare-metal R4400 programs that do what a trace from reset cannot show, each stopping the
   capture with an error (docs/replay.md, "Traces from reset"): built with -DREFUSE_INTERRUPT
   (the timer interrupt taken), -DREFUSE_COUNT (Count read), -DREFUSE_CAUSE (Cause read while
   the timer line is pending, interrupts masked). Each prints a line first, so that the capture
   has run a while. */

        .set noreorder

        .text
        .globl _start
_start:
        li $t9, 0xBF000000              /* the console UART */
        li $t8, 'r'
        sw $t8, 0($t9)
        li $t0, 0x8000
        mtc0 $t0, $12                   /* Status: IM7 only; BEV and ERL cleared, IE off */
#if defined(REFUSE_COUNT)
        mfc0 $t1, $9                    /* Count */
#else
        li $t0, 100
        mtc0 $t0, $11                   /* Compare: the timer line rises at Count = 100 */
        li $t1, 2000
1:      bnez $t1, 1b                    /* Count passes 100 in here */
        addiu $t1, $t1, -1
#if defined(REFUSE_INTERRUPT)
        li $t0, 0x8001
        mtc0 $t0, $12                   /* IE: the pending timer interrupt is taken */
        nop
#else
        mfc0 $t1, $13                   /* Cause, IP7 set */
#endif
#endif
        li $t0, 0xBF200008              /* power off (never reached) */
        sw $zero, 0($t0)
2:      b 2b
        nop
