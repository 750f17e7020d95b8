/* A flat 32-bit ring-0 program for the i486 replay tests (i486_replay_test.cc): a loop of
   arithmetic, memory traffic and REP MOVSB/STOSD that interrupts can land in anywhere, the
   interrupt handler of the i486 contract's report (machine/i486/contract.h), a port read and a
   power-off port write at the end. Linked at 0x10000; the test builds the GDT and IDT. */
#include "machine/i486/contract.h"

#define REPORT (CITCAT_I486_RESERVED_BASE + CITCAT_I486_INTERRUPT)

        .code32
        .text
        .globl  _start
_start:
        xor     %eax, %eax
        xor     %ebx, %ebx
1:      inc     %eax
        mov     $src, %esi
        mov     $dst, %edi
        mov     $97, %ecx
        cld
        rep movsb
        mov     $dst2, %edi
        mov     $33, %ecx
        mov     %eax, %edx
        rep stosl
        add     (dst), %ebx
        imul    $7, %ebx, %ebx
        test    $15, %eax
        jnz     2f
        push    %eax
        in      $0x71, %al              /* a device read now and then */
        add     %al, %bl
        pop     %eax
2:      cmp     $300, %eax
        jb      1b
        mov     $0x5C8, %dx             /* power off */
        out     %eax, %dx
        hlt

        /* Vector 0x20, an interrupt gate: the report, then back. */
        .globl  handler
handler:
        mov     %ecx, REPORT + CITCAT_I486_INTERRUPT_ECX
        push    %eax
        mov     4(%esp), %eax
        mov     %eax, REPORT + CITCAT_I486_INTERRUPT_EIP
        mov     8(%esp), %eax
        mov     %eax, REPORT + CITCAT_I486_INTERRUPT_CS
        mov     12(%esp), %eax
        mov     %eax, REPORT + CITCAT_I486_INTERRUPT_EFLAGS
        pop     %eax
        iret

        .data
src:    .fill   128, 1, 0x5A
dst:    .fill   128, 1, 0
dst2:   .fill   160, 1, 0
