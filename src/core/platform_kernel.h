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
 * Every caller of the core's per-CPU writers (insert, def_claim,
 * def_sweep: tracepoint probes, triggers, the user-stack work) runs with
 * preemption off, or in interrupt or NMI context, so the CPU whose shard
 * and hit cache an insert picked is the one it runs on until it returns:
 * cpu_add() and cpu_cmpxchg() (platform.h) may then be atomic against
 * this CPU only, as the kernel's this_cpu ops are (x86-64: no lock
 * prefix). A new caller must keep preemption off around the call.
 */
#define FSM_PLAT_CPU_LOCAL 1

/*
 * The CPU number: no FSM_PLAT_CPU_INLINE here, so plat_cpu() calls the
 * glue's fsm_plat_cpu() (src/kernel/core_glue.c: raw_smp_processor_id()).
 * Where the kernel keeps the number (a per-CPU variable of its own, or a
 * field of a per-CPU structure) changes across kernels, and this header
 * must know nothing of kernels. The cost: one direct call and return per
 * map insert (a few nanoseconds, more with return-thunk mitigations),
 * next to a stack capture of a microsecond or more.
 */

#endif /* FSM_PLATFORM_KERNEL_H */
