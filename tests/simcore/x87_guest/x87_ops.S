/* Every x87 instruction group the i486 core models, on values chosen to reach rounding, the
 * masked exception responses, NaNs, infinities and denormals; run under QEMU user
 * mode and the core in lock step (tests/simcore/x87_qemu_test.cc). Exits through int $0x80. */
        .text
        .globl _start
_start:
        fninit
        /* constants, under each rounding control */
        fld1
        fldz
        fldpi
        fldl2e
        fldl2t
        fldlg2
        fldln2
        fninit
        fldcw   cw_down
        fldpi
        fldl2e
        fldln2
        fldcw   cw_up
        fldl2t
        fldlg2
        fninit
        /* loads and arithmetic in all forms */
        flds    f_three
        fldl    d_tenth
        fldt    t_big
        fadd    %st(1), %st
        fmul    %st(2), %st
        fsubr   %st(1), %st
        fdivr   %st(2), %st
        fadd    %st, %st(2)
        fsub    %st, %st(1)
        fdiv    %st, %st(2)
        fsubr   %st, %st(1)
        fmulp   %st, %st(1)
        faddp   %st, %st(1)
        fadds   f_three
        fsubl   d_tenth
        fmuls   f_three
        fdivl   d_tenth
        fsubrs  f_three
        fdivrl  d_tenth
        fiadds  i16
        fisubl  i32
        fimull  i32
        fidivs  i16
        fisubrs i16
        fidivrl i32
        fsqrt
        frndint
        fsts    out
        fstpl   out
        /* precision control */
        fldcw   cw_pc24
        fld1
        fdivs   f_three
        fldcw   cw_pc53
        fld1
        fdivs   f_three
        fldcw   cw_chop
        fld1
        fdivs   f_three
        fninit
        /* stores with rounding, integers, BCD */
        fldl    d_tenth
        fsts    out
        fstl    out
        fstpt   out
        fildl   i32
        fists   out
        fistl   out
        fildll  i64
        fistpll out
        fildl   i32
        fchs
        fbstp   out
        fbld    bcd
        fistpl  out
        flds    f_three
        fistps  out
        /* compares and FXAM */
        fld1
        flds    f_three
        fcom    %st(1)
        fnstsw  %ax
        fcoms   f_three
        fnstsw  %ax
        fcompl  d_tenth
        fnstsw  %ax
        fucom   %st(1)
        fnstsw  %ax
        ficoms  i16
        fnstsw  %ax
        ficompl i32
        fnstsw  %ax
        fld1
        fcompp
        fnstsw  %ax
        fld1
        fldz
        fucompp
        fnstsw  %ax
        flds    f_three
        fchs
        ftst
        fnstsw  %ax
        fxam
        fnstsw  %ax
        fchs
        fxam
        fnstsw  %ax
        fabs
        fxam
        fnstsw  %ax
        /* NaNs, infinity, zero divide, invalid, denormals (all masked) */
        fninit
        flds    f_qnan
        fxam
        fnstsw  %ax
        fld1
        fucom   %st(1)
        fnstsw  %ax
        fcom    %st(1)
        fnstsw  %ax
        fnclex
        fldz
        fdivr   %st(1), %st
        fnstsw  %ax
        fxam
        fnstsw  %ax
        fnclex
        fldz
        fdiv    %st(0), %st
        fnstsw  %ax
        fnclex
        flds    f_denorm
        fnstsw  %ax
        fmuls   f_denorm
        fnstsw  %ax
        fninit
        fldt    t_big
        fmul    %st(0), %st
        fnstsw  %ax
        fmul    %st(0), %st
        fnstsw  %ax
        fsts    out
        fnstsw  %ax
        /* FSCALE, FXTRACT, FPREM, FPREM1 */
        fninit
        flds    f_three
        fldl    d_tenth
        fscale
        fxtract
        fninit
        flds    f_three
        flds    f_eleven
        fprem
        fnstsw  %ax
        fninit
        flds    f_three
        flds    f_eleven
        fprem1
        fnstsw  %ax
        fninit
        flds    f_three
        flds    f_big
1:      fprem
        fnstsw  %ax
        testb   $4, %ah
        jnz     1b
        /* transcendentals QEMU computes exactly (not FSIN/FCOS/FPTAN: host double there) */
        fninit
        fldl    d_tenth
        f2xm1
        fchs
        f2xm1
        flds    f_three
        fldl    d_tenth
        fyl2x
        flds    f_three
        fldl    d_tenth
        fyl2xp1
        fldl    d_tenth
        flds    f_three
        fpatan
        fld1
        fchs
        flds    f_eleven
        fpatan
        fnstsw  %ax
        /* stack management and faults */
        fninit
        fld1
        fld1
        fxch    %st(1)
        fincstp
        fdecstp
        ffree   %st(1)
        fstp    %st(0)
        fnstsw  %ax
        /* (stack overflow and underflow: QEMU does not model them; x87_insn_test.cc does) */
        /* the environment image and FSAVE/FRSTOR (32-bit protected layout) */
        fninit
        flds    f_three
        fadds   f_eleven
        fldpi
        fnstenv env
        movl    env+12, %esi
        movzwl  env+16, %edi    /* FCS only: QEMU 7.2 stores no opcode in bits 26..16 */
        movl    env+20, %ebp
        movl    env+8, %ecx
        movl    env+24, %eax
        fnsave  save
        movl    save+4, %edx
        frstor  save
        movl    save+28, %ebx
        fldenv  env
        /* the 16-bit protected layouts (QEMU 7.2 stores their pointer words as 0: not read) */
        data16 fnstenv env
        movl    env, %esi       /* CW, SW */
        movzwl  env+4, %edi     /* TW */
        data16 fnsave save
        movl    save+14, %edx   /* ST(0) */
        data16 frstor save
        /* control words and status */
        fnstcw  out
        movw    out, %cx
        fnstsw  out
        movw    out, %dx
        fwait
        fnop
        movl    $1, %eax
        xorl    %ebx, %ebx
        int     $0x80

        .data
cw_down:  .short 0x077f
cw_up:    .short 0x0b7f
cw_chop:  .short 0x0f7f
cw_pc24:  .short 0x007f
cw_pc53:  .short 0x027f
f_three:  .float 3.0
f_eleven: .float 11.0
f_big:    .float 1.0e30
f_qnan:   .long 0x7fc00001
f_denorm: .long 0x00000003
d_tenth:  .double 0.1
t_big:    .quad 0xc000000000000001
          .short 0x7ff0
i16:      .short -7
i32:      .long 123456789
i64:      .quad -98765432109876
bcd:      .byte 0x21, 0x43, 0x65, 0x87, 0x09, 0, 0, 0, 0, 0x80
        .balign 16
out:      .space 16
env:      .space 28
save:     .space 108
