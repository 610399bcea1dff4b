/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ustack_arch.h - the architecture part of the user-stack glue (in
 * compat/, with the kernel differences): which walker mode a task's saved user
 * registers need, and how they map onto struct fsm_uw_regs. Everything else
 * in ustack*.c is architecture independent.
 *
 *   x86-64   user_64bit_mode(): FSM_UW_MODE_X86_64 (ip, sp, rbp), else
 *            FSM_UW_MODE_IA32 (flat segments checked by the caller).
 *   arm64    compat_user_mode(): FSM_UW_MODE_A32 with fp = r11, or r7 and
 *            FSM_UW_REGS_THUMB in Thumb state (PSR_AA32_T_BIT), lr = r14;
 *            in Thumb state at a syscall (in_syscall(): every EL0 entry
 *            sets syscallno to NO_SYSCALL, el0_svc to the number) r7 is the
 *            syscall number (EABI), so FSM_UW_REGS_SYSCALL and r12, r11 as
 *            the other candidates (unwind_user.h, a32_syscall_top());
 *            else FSM_UW_MODE_ARM64 with fp = x29, lr = x30 and the
 *            pointer-authentication mask.
 *
 * Pointer authentication: 6.1 strips a user return address with
 * ptrauth_strip_insn_pac() = ptrauth_clear_pac(), i.e. for a user address
 * (bit 55 clear) ptr & ~ptrauth_user_pac_mask(), GENMASK_ULL(54,
 * vabits_actual) (arch/arm64/include/asm/compiler.h). We clear
 * GENMASK_ULL(63, vabits_actual): the same bits plus a top-byte tag (TBI is
 * on for user space); no user address has any of them set, so the mask is
 * right whether the CPU or the task uses PAC or not. vabits_actual is
 * exported (arch/arm64/mm/mmu.c).
 *
 * The syscall number (fsm_ust_arch_syscall()) feeds the entry signature:
 * orig_ax on x86, syscallno on arm64 (-1 when not in a syscall on both).
 */
#ifndef FSM_USTACK_ARCH_H
#define FSM_USTACK_ARCH_H

#include <linux/bits.h>
#include <linux/string.h>
#include <asm/ptrace.h>

#include "fsm_unwind.h"

#if defined(CONFIG_X86_64)

#include <asm/segment.h>

#define FSM_UST_ARCH_COMPAT_NAME "ia32"

static inline void fsm_ust_arch_regs(const struct pt_regs *regs,
				     struct fsm_uw_regs *u)
{
	memset(u, 0, sizeof(*u));
	u->ip = regs->ip;
	u->sp = regs->sp;
	u->fp = regs->bp;
	u->mode = user_64bit_mode((struct pt_regs *)regs) ?
		  FSM_UW_MODE_X86_64 : FSM_UW_MODE_IA32;
}

static inline long fsm_ust_arch_syscall(const struct pt_regs *regs)
{
	return regs->orig_ax;
}

/*
 * ia32: only flat segments can be walked (ustack.rst). The 32-bit data
 * selector is the 64-bit one: 6.1 spells it __USER32_DS, an alias of
 * __USER_DS that later kernels dropped; __USER_DS is in both (no probe).
 */
static inline bool fsm_ust_arch_flat(const struct pt_regs *regs)
{
	return regs->cs == __USER32_CS && regs->ss == __USER_DS;
}

#elif defined(CONFIG_ARM64)

#include <asm/memory.h>

#define FSM_UST_ARCH_COMPAT_NAME "aarch32"

static inline void fsm_ust_arch_regs(const struct pt_regs *regs,
				     struct fsm_uw_regs *u)
{
	memset(u, 0, sizeof(*u));
	u->ip = regs->pc;
	if (compat_user_mode(regs)) {
		u->sp = regs->compat_sp;
		u->lr = regs->compat_lr;
		u->mode = FSM_UW_MODE_A32;
		if (compat_thumb_mode(regs)) {
			u->fp = regs->regs[7];
			u->flags |= FSM_UW_REGS_THUMB;
			if (in_syscall(regs)) {
				/* r7 = syscall number: r12, r11 instead */
				u->flags |= FSM_UW_REGS_SYSCALL;
				u->alt_fp[0] = regs->regs[12];
				u->alt_fp[1] = regs->compat_fp;
			}
		} else {
			u->fp = regs->compat_fp;
		}
		return;
	}
	u->sp = regs->sp;
	u->fp = regs->regs[29];
	u->lr = regs->regs[30];
	u->pac_mask = GENMASK_ULL(63, vabits_actual);
	u->mode = FSM_UW_MODE_ARM64;
}

static inline long fsm_ust_arch_syscall(const struct pt_regs *regs)
{
	return regs->syscallno;
}

/* AArch32 tasks have no segments. */
static inline bool fsm_ust_arch_flat(const struct pt_regs *regs)
{
	return true;
}

#else
#error "ftrace_stackmap: user stacks are implemented for x86-64 and arm64"
#endif /* CONFIG_X86_64 / CONFIG_ARM64 */

/* A 32-bit (compat) user stack: ia32 or AArch32 (FSM_USF_IA32). */
static inline bool fsm_ust_arch_compat(const struct fsm_uw_regs *u)
{
	return u->mode == FSM_UW_MODE_IA32 || u->mode == FSM_UW_MODE_A32;
}

#endif /* FSM_USTACK_ARCH_H */
