/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CITCAT driver of a traced Linux (docs/machines/i486-linux.md, "The driver"): the begin of
 * the trace and the state dump, as the machine's contract (citcat_contract.h) has it.
 *
 *   asmlinkage void citcat_driver(unsigned long gdt_physical);   from a running kernel
 *   citcat_boot_driver                                             from startup_32
 *
 * Both return with every register as it was. The dump (citcat_dump) is taken with paging and
 * the cache off, so that the TLB and the cache are empty at the resume point, and returns from
 * there to its caller's physical address.
 *
 * From a running kernel, interrupts off: this code switches to initial_page_table (which maps
 * low memory onto itself as well as at PAGE_OFFSET, as machine_real_restart needs it), jumps
 * to its own physical address, turns paging off, moves to a stack of its own inside the
 * kernel image (the task's stack may lie outside that identity map), and after the dump goes
 * back to its virtual address, the caller's stack and the caller's page tables. gdt_physical is
 * the physical address of this CPU's GDT: GDTR holds its read-only alias in the CPU entry area.
 *
 * From startup_32, once it has loaded its boot GDT and data segments, when the command line
 * holds "citcat.from_boot": the trace then begins at the kernel's first instructions.
 */
#include <linux/linkage.h>
#include <asm/page_types.h>
#include <asm/processor-flags.h>
#include <asm/segment.h>

#include "citcat_contract.h"

#include "citcat_state_dump.inc"

#define pa(x) ((x) - __PAGE_OFFSET)

/* The dump: paging off, the cache disabled and empty, EBX = the GDT's physical base, ESI = the
   CR0 to restore at the resume point; called physically, returns to its caller from the
   resume point with paging and the cache as ESI says. */
	.text
	.set	citcat_resume_physical, pa(citcat_resume)
SYM_CODE_START_LOCAL(citcat_dump)
	citcat_state_dump citcat_resume_physical, __PAGE_OFFSET, 1
SYM_INNER_LABEL(citcat_resume, SYM_L_GLOBAL)
	movl	%eax, %cr0		/* the caller's paging and cache; replay starts here */
	jmp	1f
1:	RET
SYM_CODE_END(citcat_dump)

/* Every segment register again from the GDT, CS from \cs: the hidden descriptor caches then
   hold exactly what the descriptors dumped say. \offset: what to take from the link address
   of the next instruction (__PAGE_OFFSET when running at physical addresses). */
	.macro	reload_segments cs, offset
	ljmp	$\cs, $(1f - \offset)
1:	movw	%ss, %ax
	movw	%ax, %ss
	movw	%ds, %ax
	movw	%ax, %ds
	movw	%es, %ax
	movw	%ax, %es
	movw	%fs, %ax
	movw	%ax, %fs
	movw	%gs, %ax
	movw	%ax, %gs
	sldt	%ax
	testw	%ax, %ax
	jz	2f
	lldt	%ax
2:
	.endm

/* CR0 into ESI, then the cache disabled and flushed: it stays empty while CD = 1. */
	.macro	cache_off
	movl	%cr0, %esi
	movl	%esi, %eax
	andl	$~X86_CR0_PG, %eax
	orl	$X86_CR0_CD, %eax
	andl	$~X86_CR0_NW, %eax
	movl	%eax, %cr0
	jmp	3f
3:	movl	%cr3, %eax
	movl	%eax, %cr3
	wbinvd
	.endm

SYM_FUNC_START(citcat_driver)
	movl	4(%esp), %edx		/* the GDT's physical address */
	pushfl
	cli
	pushal				/* the caller's registers, back after the dump */
	movl	%cr3, %eax
	pushl	%eax			/* the caller's page tables, back after the dump */
	movl	%edx, %ebx
	reload_segments __KERNEL_CS, 0

	/* onto the identity map and its physical address, paging and the cache off, a stack
	   inside the kernel image */
	movl	$pa(initial_page_table), %eax
	movl	%eax, %cr3
	movl	$pa(4f), %eax
	jmp	*%eax
4:	cache_off
	movl	%esp, pa(citcat_caller_esp)
	movl	$pa(citcat_stack_end), %esp
	call	citcat_dump

	/* paging is on again, on the identity map: back to the kernel's addresses */
	movl	$5f, %eax
	jmp	*%eax
5:	movl	citcat_caller_esp, %esp
	popl	%eax
	movl	%eax, %cr3		/* the caller's page tables */
	popal
	popfl
	RET
SYM_FUNC_END(citcat_driver)

/* Called physically from startup_32 with the boot GDT loaded and the ROM's stack. */
SYM_CODE_START(citcat_boot_driver)
	pushal
	cld
	/* "citcat.from_boot" on the command line (boot_params.hdr.cmd_line_ptr, at 228h)? */
	movl	0x228(%esi), %edx
	testl	%edx, %edx
	jz	9f
6:	cmpb	$0, (%edx)
	je	9f
	movl	%edx, %edi
	movl	$pa(citcat_from_boot), %esi
	movl	$citcat_from_boot_end - citcat_from_boot, %ecx
	repe cmpsb
	je	7f
	incl	%edx
	jmp	6b
7:	movl	$pa(citcat_boot_gdtr), %eax
	sgdt	(%eax)
	movl	pa(citcat_boot_gdtr) + 2, %ebx
	reload_segments __BOOT_CS, __PAGE_OFFSET
	cache_off
	call	citcat_dump
	movl	$1, pa(citcat_begun)
9:	popal
	RET
SYM_CODE_END(citcat_boot_driver)

	.section .rodata
citcat_from_boot:
	.ascii	"citcat.from_boot"
citcat_from_boot_end:

	.data
	.balign	4
SYM_DATA(citcat_begun, .long 0)	/* the trace has begun: no second dump (in .data: startup_32
					   clears .bss after the boot driver) */
citcat_caller_esp:
	.long	0
citcat_boot_gdtr:
	.skip	8
citcat_stack:
	.skip	64
citcat_stack_end:
