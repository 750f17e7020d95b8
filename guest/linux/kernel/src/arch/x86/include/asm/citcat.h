/* SPDX-License-Identifier: GPL-2.0 */
/* The CITCAT hooks of a Linux traced on the traced i486 PC (docs/machines/i486-linux.md). */
#ifndef _ASM_X86_CITCAT_H
#define _ASM_X86_CITCAT_H

#ifdef CONFIG_CITCAT
struct pt_regs;

/* Maps the interrupt report's page: from setup_arch, before interrupts are ever on. */
void citcat_early_init(void);
/* The interrupt report: the first thing an external interrupt's C handler does. */
void citcat_report_interrupt(struct pt_regs *regs);
#else
static inline void citcat_early_init(void) {}
static inline void citcat_report_interrupt(struct pt_regs *regs) {}
#endif

#endif /* _ASM_X86_CITCAT_H */
