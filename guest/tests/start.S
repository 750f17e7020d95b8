/* Entry point of the oracle guest programs: call main(sp), then exit with its return value.
   Linux starts the process with sp pointing at argc, followed by the argv pointers (each an
   unsigned long / pointer of the ABI); main may read them through its argument. */
#if _MIPS_SIM == _ABIN32
#define SYS_EXIT 6058
#elif _MIPS_SIM == _ABI64
#define SYS_EXIT 5058
#else
#define SYS_EXIT 4001
#endif
        .text
        .set    noreorder
        .globl  __start
        .ent    __start
__start:
        move    $a0, $sp
#if _MIPS_SIM == _ABIO32
        addiu   $sp, $sp, -32          /* o32: room for the callee's argument slots */
#endif
        jal     main
        nop
        move    $a0, $v0
        li      $v0, SYS_EXIT
        syscall
1:      b       1b
        nop
        .end    __start
