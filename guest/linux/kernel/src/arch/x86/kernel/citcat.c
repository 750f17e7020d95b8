// SPDX-License-Identifier: GPL-2.0
/*
 * The CITCAT hooks of a Linux traced on the traced i486 PC (docs/machines/i486-linux.md):
 * the begin of the trace (a write to /proc/citcat, the driver in citcat_driver.S), the
 * interrupt report, and power-off through the machine's power switch. The reserved area and its
 * slots are the machine's contract (citcat_contract.h, a copy of machine/i486/contract.h).
 */
#include <linux/init.h>
#include <linux/proc_fs.h>
#include <linux/reboot.h>
#include <linux/irqflags.h>
#include <asm/citcat.h>
#include <asm/desc.h>
#include <asm/fixmap.h>
#include <asm/io.h>
#include <asm/ptrace.h>

#include "citcat_contract.h"

#define CITCAT_POWER_OFF_PORT 0x5C8 /* the machine's power switch: any byte written */

/* The driver: begins the trace and returns with every register as it was (citcat_driver.S). */
asmlinkage void citcat_driver(unsigned long gdt_physical);
/* Set once the trace has begun, by the boot driver too: the machine takes one state dump. */
extern int citcat_begun;

void __init citcat_early_init(void)
{
	__set_fixmap(FIX_CITCAT_INTERRUPT, CITCAT_I486_RESERVED_BASE + CITCAT_I486_INTERRUPT,
		     PAGE_KERNEL_IO_NOCACHE);
}

/*
 * ECX first, then EIP: extract keys the interrupt by the acknowledge's branch count, this EIP
 * and this ECX (the count left of an interrupted REP). CS and EFLAGS are for people reading
 * the CAT. The stores are uncached: one bus record each.
 */
void citcat_report_interrupt(struct pt_regs *regs)
{
	u8 __iomem *report = (u8 __iomem *)fix_to_virt(FIX_CITCAT_INTERRUPT);

	writel(regs->cx, report + CITCAT_I486_INTERRUPT_ECX);
	writel(regs->ip, report + CITCAT_I486_INTERRUPT_EIP);
	writel(regs->cs, report + CITCAT_I486_INTERRUPT_CS);
	writel(regs->flags, report + CITCAT_I486_INTERRUPT_EFLAGS);
}

/* Any write to /proc/citcat begins the trace, unless it has begun. */
static ssize_t citcat_begin_write(struct file *file, const char __user *buffer, size_t count,
				  loff_t *pos)
{
	unsigned long flags;

	if (citcat_begun)
		return -EBUSY;
	citcat_begun = 1;
	local_irq_save(flags);
	citcat_driver(__pa(get_cpu_gdt_rw(0)));
	local_irq_restore(flags);
	return count;
}

static const struct proc_ops citcat_proc_ops = {
	.proc_write = citcat_begin_write,
};

static int citcat_power_off(struct sys_off_data *data)
{
	outb(0, CITCAT_POWER_OFF_PORT);
	return NOTIFY_DONE;
}

static int __init citcat_init(void)
{
	proc_create("citcat", 0200, NULL, &citcat_proc_ops);
	register_sys_off_handler(SYS_OFF_MODE_POWER_OFF, SYS_OFF_PRIO_DEFAULT, citcat_power_off,
				 NULL);
	return 0;
}
device_initcall(citcat_init);
