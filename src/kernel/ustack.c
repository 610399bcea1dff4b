// SPDX-License-Identifier: GPL-2.0
/*
 * ustack.c - deferred user stacks: one walk per kernel entry, delivered to
 * every instance that asked (Documentation/ustack.rst). This file holds
 * the task table (a slot per task, found or claimed by the requests) and
 * what identifies a kernel entry (its saved user registers); the other
 * jobs have files of their own (ustack_internal.h lists them): the
 * requests, queueing and the task works (ustack_work.c), the walk
 * (ustack_ukey.c), the records (ustack_deliver.c). The bottom of the
 * pipeline: it calls none of them.
 *
 * The task table is preallocated at load time (6.1 has no task_struct
 * field for us), keyed by the task pointer and its start time; a slot is
 * freed from sched_process_free (fsm_ust_task_free()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/siphash.h>

#include "tracing.h"
#include "compat/ustack_arch.h"
#include "ustack_internal.h"

struct fsm_ust_slot *fsm_ust_slots;
/* key of the address-space hash (fsm_ust_mm_key()), random per load */
siphash_key_t fsm_ust_mm_siphash;

/* ---- the task table ---- */

static __always_inline u32 fsm_ust_home(const struct task_struct *t)
{
	return hash_ptr(t, 32) & (FSM_UST_SLOTS - 1);
}

/*
 * Find the slot of @t, claiming one if it has none. Context: any, NMI
 * included, called only for current (so the only concurrent claimers for
 * the same task are contexts nested on it): scan the whole window for a
 * match first, then claim the first free slot; a lost cmpxchg re-checks
 * that slot (a nested context may have claimed it for @t). Bounded.
 */
struct fsm_ust_slot *fsm_ust_slot_get(struct task_struct *t)
{
	unsigned long key = (unsigned long)t;
	u32 home = fsm_ust_home(t), i, s;
	struct fsm_ust_slot *slot;
	int attempt;

	for (attempt = 0; attempt < 4; attempt++) {
		int free = -1;

		for (i = 0; i < FSM_UST_PROBE; i++) {
			unsigned long k;

			s = (home + i) & (FSM_UST_SLOTS - 1);
			slot = &fsm_ust_slots[s];
			/* pairs with the release of the free probe */
			k = smp_load_acquire(&slot->task);
			if (k == key) {
				u64 st = READ_ONCE(slot->start);

				if (st && st != t->start_time) {
					/* stale: a missed free; idle state */
					fsm_uwc_init(&slot->uwc);
					WRITE_ONCE(slot->same_regs, 0);
					WRITE_ONCE(slot->start, t->start_time);
				}
				return slot;
			}
			if (!k && free < 0)
				free = s;
		}
		if (free < 0)
			return NULL;
		slot = &fsm_ust_slots[free];
		/* full barrier on success: the claim precedes our uses */
		if (cmpxchg(&slot->task, 0UL, key) == 0UL) {
			WRITE_ONCE(slot->start, t->start_time);
			return slot;
		}
	}
	return NULL;
}

/*
 * sched_process_free: the task is gone, nothing runs for it any more (its
 * task works ran in do_exit). Context: RCU callback (softirq).
 */
void fsm_ust_task_free(void *data, struct task_struct *t)
{
	u32 home = fsm_ust_home(t), i;

	for (i = 0; i < FSM_UST_PROBE; i++) {
		struct fsm_ust_slot *slot =
			&fsm_ust_slots[(home + i) & (FSM_UST_SLOTS - 1)];

		if (READ_ONCE(slot->task) != (unsigned long)t)
			continue;
		fsm_uwc_init(&slot->uwc);
		slot->start = 0;
		slot->nr = 0;
		slot->end_regs = 0;
		slot->same_regs = 0;
		atomic64_set(&slot->late_mask, 0);
		atomic_set(&slot->emit_queued, 0);
		slot->emitting = 0;
		/* pairs with smp_load_acquire() in fsm_ust_slot_get() */
		smp_store_release(&slot->task, 0UL);
	}
}


/* ---- the entry's registers ---- */

void fsm_ust_regs(struct pt_regs *regs, struct fsm_uw_regs *u)
{
	fsm_ust_arch_regs(regs, u);
}

/*
 * What stays constant within one kernel entry and differs between many:
 * the saved user registers and the syscall number (-1 for interrupts and
 * exceptions). Not the context switch counts: the walk may sleep, and a
 * changed signature on the way out would queue another walk.
 */
u64 fsm_ust_sig(struct pt_regs *regs)
{
	struct fsm_uw_regs u;

	fsm_ust_regs(regs, &u);
	return fsm_uwc_entry_sig(&u, fsm_ust_arch_syscall(regs));
}

/*
 * All the user registers the task returns to (pt_regs, orig_ax included).
 * Equal for two entries only if user space ran from the exact same state,
 * or did not run at all in between. Context: any (pure computation).
 */
u64 fsm_ust_regs_hash(const struct pt_regs *regs)
{
	return siphash(regs, sizeof(*regs), &fsm_ust_mm_siphash);
}
