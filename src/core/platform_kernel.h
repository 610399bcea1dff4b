/* SPDX-License-Identifier: GPL-2.0 */
/*
 * platform_kernel.h - the kernel side of platform.h (FSM_KERNEL defined).
 *
 * Included only through platform.h. Everything the core needs from the
 * kernel goes through the fsm_plat_* hooks declared in fsm_core.h and
 * implemented in C by the kernel glue; this file only decides what an
 * assertion does.
 *
 * FSM_ASSERT checks internal invariants on paths that may run in NMI. In
 * the kernel there is no way to report from here without a glue hook, and a
 * trap in NMI context is worse than the broken invariant, so assertions
 * compile to nothing unless FSM_DEBUG is defined (then: trap, i.e. BUG).
 * The user-space builds always check them.
 */
#ifndef FSM_PLATFORM_KERNEL_H
#define FSM_PLATFORM_KERNEL_H

/*
 * GCC for aarch64-linux defaults to -moutline-atomics: every __atomic
 * builtin becomes a call to a libgcc helper (__aarch64_ldadd8_acq_rel, ...),
 * which a module cannot link. Inline LL/SC or LSE instead, whatever flags
 * the build passes. (clang only outlines with an explicit flag.)
 */
#if defined(__aarch64__) && !defined(__clang__)
#pragma GCC target("no-outline-atomics")
#endif

#ifdef FSM_DEBUG
#define FSM_ASSERT(cond)	do { if (__builtin_expect(!(cond), 0)) __builtin_trap(); } while (0)
#else
#define FSM_ASSERT(cond)	do { (void)sizeof(!(cond)); } while (0)
#endif

/*
 * The CPU number without a call: fsm_plat_cpu() is on every insert. On
 * x86-64 this is exactly what the kernel's raw_smp_processor_id() expands
 * to in 6.1 (this_cpu_read(cpu_number): one %gs-relative load of the
 * exported per-CPU variable cpu_number, RIP-relative like the kernel's own
 * code). main.c checks at load time that it agrees with
 * raw_smp_processor_id() (fsm_core_cpu()). Other architectures call the
 * glue's fsm_plat_cpu().
 */
#if defined(__x86_64__)
extern "C" int cpu_number;	/* DECLARE_PER_CPU_READ_MOSTLY(int, cpu_number) */

static inline __attribute__((__always_inline__)) unsigned int fsm_plat_cpu_inline(void)
{
	unsigned int cpu;

	asm volatile("movl %%gs:%1, %0" : "=r"(cpu) : "m"(cpu_number));
	return cpu;
}
#define FSM_PLAT_CPU_INLINE fsm_plat_cpu_inline
#endif /* __x86_64__ */

#endif /* FSM_PLATFORM_KERNEL_H */
