/* Constants shared by the kernel's C and assembly: the task save area, the memory map, CP0 bits.
   See docs/machines/r4400-guest.md. */
#ifndef CITCAT_GUEST_R4400_KERNEL_LAYOUT_H_
#define CITCAT_GUEST_R4400_KERNEL_LAYOUT_H_

/* ---- struct task: the save area the exception entry writes (offsets in bytes) ---- */
#define T_GPR 0x000    /* 32 x 8: full 64-bit GPRs ($0 slot unused) */
#define T_HI 0x100
#define T_LO 0x108
#define T_EPC 0x110
#define T_STATUS 0x118 /* 4 bytes */
#define T_FCSR 0x11C   /* 4 bytes */
#define T_FPR 0x120    /* 16 x 8: the even FPRs as SDC1 stores them with FR=0 */
#define T_SAVE_END 0x1A0

/* ---- physical memory (kseg0 = physical + 0x80000000) ---- */
#define KSEG0 0x80000000
#define KSEG1 0xA0000000
#define BOOT_ARGS 0x80000F00  /* the boot string, 256 bytes */
#define KERNEL_BASE 0x80010000 /* kernel image: text, data, bss (stack, page tables, buffers) */
#define LOAD_AREA 0x80200000  /* 2 MB staging area for program files read at boot */
#define LOAD_AREA_SIZE 0x00200000
#define PAGE_POOL 0x80400000  /* user page frames, up to PAGE_POOL_END */
#define PAGE_POOL_END 0x81000000 /* at most 12 MB of frames; less if RAM ends before 16 MiB */

/* ---- user address space ---- */
#define USER_TOP 0x00800000   /* kuseg is mapped below 8 MB */
#define USER_STACK_SIZE 0x10000
#define PT_BYTES 0x2000       /* per-task page table: 1024 VPN2 pairs x (EntryLo0, EntryLo1) */

/* ---- devices and the reserved CITCAT area (kseg1 addresses) ---- */
#define UART_TX 0xBF000000
#define UART_STATUS 0xBF000004
#define DISK_BLOCK 0xBF100000
#define DISK_ADDR 0xBF100004
#define DISK_COUNT 0xBF100008
#define DISK_COMMAND 0xBF10000C
#define DISK_STATUS 0xBF100010
#define DISK_ACK 0xBF100014
#define CLOCK_ENTROPY 0xBF200000
#define CLOCK_MICROS 0xBF200004
#define CLOCK_POWER_OFF 0xBF200008
/* the reserved area (CITCAT_R4400_*): what the hooks store where, shared with the host tools */
#include "machine/r4400/contract.h"

/* ---- CP0 ---- */
#define ST_IE 0x00000001
#define ST_EXL 0x00000002
#define ST_KSU_USER 0x00000010
#define ST_UX 0x00000020
#define ST_IM3 0x00000800
#define ST_IM7 0x00008000
#define ST_FR 0x04000000
#define ST_CU0 0x10000000
#define ST_CU1 0x20000000
#define CAUSE_IP3 0x00000800
#define CAUSE_IP7 0x00008000

/* Status of the kernel while booting (interrupts off), of the idle loop, and of a user task
   (as restored before ERET: EXL set, ERET clears it). FR = 0 everywhere (o32 FPU model). */
#define KERNEL_STATUS (ST_CU0 | ST_CU1 | ST_IM3 | ST_IM7)
#define IDLE_STATUS (ST_CU0 | ST_CU1 | ST_IM3 | ST_IM7 | ST_EXL | ST_IE)
#define USER_STATUS (ST_CU1 | ST_IM3 | ST_IM7 | ST_UX | ST_KSU_USER | ST_EXL | ST_IE)

#endif /* CITCAT_GUEST_R4400_KERNEL_LAYOUT_H_ */
