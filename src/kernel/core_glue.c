// SPDX-License-Identifier: GPL-2.0
/*
 * core_glue.c - the kernel implementation of the C++ core's platform hooks
 * (the fsm_plat_* functions declared in src/core/fsm_core.h).
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/cpumask.h>
#include <linux/stacktrace.h>
#include <linux/vmalloc.h>
#include <linux/mm.h>

#include "fsm.h"

/*
 * Context: task (may sleep). Returns zeroed memory or NULL. Charged to the
 * memory cgroup of the task that creates the map (GFP_KERNEL_ACCOUNT), like
 * other user-triggered kernel allocations; the module's own cap is
 * memory_budget_mb (map.c).
 */
void *fsm_plat_alloc(unsigned long long size)
{
	if (size > SIZE_MAX)
		return NULL;
	return kvzalloc((size_t)size, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
}

void fsm_plat_free(void *p)
{
	kvfree(p);
}

/*
 * Context: any. The core only uses the CPU number to pick a counter shard,
 * so migration right after the read is harmless. The core's one way to
 * read it (platform_kernel.h says why it is a call); main.c checks at load
 * that the core reaches it. Called on every map insert, NMI included:
 * notrace and not kprobe-able, so that no function-trace or kprobe event
 * can run a nested insert (and its own probes) from inside one.
 */
unsigned int notrace fsm_plat_cpu(void)
{
	return raw_smp_processor_id();
}
NOKPROBE_SYMBOL(fsm_plat_cpu);

unsigned int fsm_plat_nr_cpus(void)
{
	return nr_cpu_ids;
}

/* Context: task. */
void fsm_plat_yield(void)
{
	cond_resched();
	cpu_relax();
}

/* Context: task. reset()'s handshake; every kernel inserter is unpreemptible. */
void fsm_plat_nopreempt_begin(void)
{
	preempt_disable();
}

void fsm_plat_nopreempt_end(void)
{
	preempt_enable();
}

void fsm_plat_random(void *buf, unsigned long long len)
{
	get_random_bytes(buf, (size_t)len);
}
