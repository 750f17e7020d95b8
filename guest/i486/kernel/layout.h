/* Constants shared by the i486 kernel's C and assembly: the trap frame, selectors, the memory
   map, CR0 and EFLAGS bits, ports. See docs/machines/i486-guest.md. */
#ifndef CITCAT_GUEST_I486_KERNEL_LAYOUT_H_
#define CITCAT_GUEST_I486_KERNEL_LAYOUT_H_

/* ---- struct frame: the trap frame (offsets in bytes). The processor pushes EIP..SS, the entry
   stub the vector and error code, trap_common the general registers (PUSHAD) and the data
   segment registers. A trap from ring 0 (the idle loop) has no ESP and SS. ---- */
#define F_GS 0x00
#define F_FS 0x04
#define F_ES 0x08
#define F_DS 0x0C
#define F_EDI 0x10
#define F_ESI 0x14
#define F_EBP 0x18
#define F_ESP_PUSHAD 0x1C /* PUSHAD's copy of ESP: ignored by POPAD */
#define F_EBX 0x20
#define F_EDX 0x24
#define F_ECX 0x28
#define F_EAX 0x2C
#define F_VECTOR 0x30
#define F_ERROR 0x34
#define F_EIP 0x38
#define F_CS 0x3C
#define F_EFLAGS 0x40
#define F_ESP 0x44
#define F_SS 0x48
#define F_SIZE 0x4C

/* ---- selectors of the GDT (kernel.c) ---- */
#define KERNEL_CS 0x08
#define KERNEL_DS 0x10
#define USER_CS 0x1B /* GDT entry 3, RPL 3 */
#define USER_DS 0x23 /* GDT entry 4, RPL 3 */
#define TSS_SEL 0x28
#define USER_CS16 0x33 /* GDT entry 6, RPL 3: 16-bit code at 0x40000000, 64 KB */
#define GDT_ENTRIES 7

/* ---- vectors ---- */
#define VEC_IRQ0 0x20 /* IRQ 0-7: 20h-27h (master PIC), IRQ 8-15: 28h-2Fh (slave) */
#define VEC_SYSCALL 0x80

/* ---- memory (linear = physical for the kernel) ---- */
#define KSTACK_SIZE 16384
#define LOAD_AREA_SIZE 0x00200000 /* program files are read here at boot, after the kernel */
#define MAX_RAM 0x04000000        /* the kernel uses at most 64 MiB */
#define HOLE_BASE 0x000A0000      /* no RAM from here to 1 MiB */
#define HOLE_END 0x00100000

/* ---- the user address space (per task: its own page directory) ---- */
#define USER_BASE 0x40000000
#define USER_TOP 0x80000000
#define USER_STACK_SIZE 0x01000000 /* the 16 MiB below USER_TOP, demand-zero */

/* ---- page table entries ---- */
#define PTE_P 0x001
#define PTE_W 0x002
#define PTE_U 0x004
#define PTE_PWT 0x008
#define PTE_PCD 0x010
#define PTE_A 0x020
#define PTE_D 0x040

/* ---- CR0 and EFLAGS ---- */
#define CR0_PE 0x00000001
#define CR0_MP 0x00000002
#define CR0_TS 0x00000008
#define CR0_ET 0x00000010
#define CR0_NE 0x00000020
#define CR0_NW 0x20000000
#define CR0_CD 0x40000000
#define CR0_PG 0x80000000
#define KERNEL_CR0 (CR0_PE | CR0_MP | CR0_ET | CR0_NE | CR0_PG) /* TS as the FPU owner wants */
#define EFLAGS_IF 0x00000200
#define EFLAGS_RESERVED 0x00000002

/* The x87 control word a task starts with: FNINIT's, but precision control 53 bits, so that
   double arithmetic rounds as IEEE double (x87 registers keep their wider exponent). */
#define TASK_FPU_CW 0x027F

/* ---- ports ---- */
#define PIC1 0x20
#define PIC2 0xA0
#define PIT_CH0 0x40
#define PIT_CONTROL 0x43
#define CMOS_INDEX 0x70
#define CMOS_DATA 0x71
#define UART 0x3F8
#define UART_LSR (UART + 5)
#define ATA 0x1F0
#define ATA_STATUS (ATA + 7)
#define BM_COMMAND 0xC000
#define BM_STATUS 0xC002
#define BM_PRD 0xC004
#define CLOCK_ENTROPY 0x5C0
#define CLOCK_MICROS 0x5C4
#define CLOCK_POWER_OFF 0x5C8

/* The reserved CITCAT area (CITCAT_I486_*), mapped linear = physical */
#include "machine/i486/contract.h"

#endif /* CITCAT_GUEST_I486_KERNEL_LAYOUT_H_ */
