// SPDX-License-Identifier: GPL-2.0
/*
 * ustack.c - deferred user stacks: one walk per kernel entry, delivered to
 * every instance that asked (Documentation/ustack.rst). This file holds
 * the requests (what the stack_id probe calls) and the task table; the
 * other jobs have files of their own (ustack_internal.h lists them):
 * queueing and the task works (ustack_work.c), the walk and the user map
 * key (ustack_ukey.c), the records (ustack_deliver.c).
 *
 * Request (any context, NMI included; fsm_ustack_request(), called by the
 * stack_id probe of an instance with options/stackmap_user set):
 *   refuse kernel threads, io workers, exiting tasks, tasks without mm or
 *   not coming from user space; find or claim the task's slot in a table
 *   preallocated at load time (6.1 has no task_struct field for us), keyed
 *   by the task pointer and its start time; ask the per-entry cache
 *   (fsm_uwc_request). The first request of an entry queues the slot's
 *   task work with task_work_add(TWA_RESUME): directly from task/irq
 *   context, through a per-CPU hard irq_work from NMI (task_work_add is not
 *   NMI-safe, and the irq_work's interrupt makes the return to user space
 *   run the work now) and on KASAN kernels always (the add may allocate).
 *
 * The rest of the walk's life: queueing and the task works that walk on the
 * way out to user space and end the entry (ustack_work.c); the walk and the
 * user map key it builds (ustack_ukey.c); the user_stack and file_map
 * records, one per instance that asked, deduplicated in the instance's
 * user stack map (ustack_deliver.c). Unload never waits for a task to
 * return to user space (ustack_work.c, fsm_ustack_exit()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/siphash.h>
#include <asm/syscall.h>

#include "tracing.h"
#include "ustack_internal.h"

struct fsm_ust_slot *fsm_ust_slots;
static DEFINE_PER_CPU(u64, fsm_ust_seq);

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
static struct fsm_ust_slot *fsm_ust_slot_get(struct task_struct *t)
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


/* ---- request ---- */

void fsm_ust_regs(struct pt_regs *regs, struct fsm_uw_regs *u)
{
	memset(u, 0, sizeof(*u));
	u->ip = instruction_pointer(regs);
	u->sp = user_stack_pointer(regs);
#ifdef CONFIG_X86
	u->fp = regs->bp;
	u->mode = user_64bit_mode(regs) ? FSM_UW_MODE_X86_64 : FSM_UW_MODE_IA32;
#elif defined(CONFIG_ARM64)
	/*
	 * Build glue only (issue 11): AArch64 x29 frame records; compat
	 * tasks' A32 r11 as an AAPCS frame record. The walkers' own glue
	 * (Thumb r7, pointer-auth mask) belongs to the arm64 walker work.
	 */
	if (compat_user_mode(regs)) {
		u->fp = regs->compat_fp;
		u->mode = FSM_UW_MODE_A32_FRAME_RECORD;
	} else {
		u->fp = regs->regs[29];
		u->mode = FSM_UW_MODE_ARM64;
	}
#else
#error "user stacks: no register glue for this architecture"
#endif
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
	return fsm_uwc_entry_sig(&u, syscall_get_nr(current, regs));
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


/**
 * fsm_ustack_enabled - is options/stackmap_user set in an instance?
 * @inst_id: instance id
 *
 * Context: any. Return: true when the instance's requests get user stacks.
 */
bool fsm_ustack_enabled(u32 inst_id)
{
	return inst_id < FSM_UST_MAX_INST &&
	       (READ_ONCE(fsm_ust_on) & BIT_ULL(inst_id));
}

/**
 * fsm_ustack_request - the cookie of current's user stack for an instance.
 * @inst_id: requesting instance
 *
 * Context: any, NMI included. No lock, no allocation, bounded.
 * Return: the cookie of the current kernel entry, or 0 (no user stack:
 * the option is off, the task is not eligible, or a counted drop).
 */
u64 fsm_ustack_request(u32 inst_id)
{
	struct task_struct *t = current;
	struct fsm_ust_slot *slot;
	struct pt_regs *regs;
	u64 cookie = 0;
	int ret;

	if (inst_id >= FSM_UST_MAX_INST ||
	    !(READ_ONCE(fsm_ust_on) & BIT_ULL(inst_id)) ||
	    !READ_ONCE(fsm_ust_ready))
		return 0;
	if ((t->flags & (PF_KTHREAD | PF_IO_WORKER | PF_EXITING)) || !t->mm) {
		fsm_ust_count(inst_id, FSM_UST_REFUSED);
		return 0;
	}
	regs = task_pt_regs(t);
	if (!user_mode(regs)) {
		fsm_ust_count(inst_id, FSM_UST_REFUSED);
		return 0;
	}
	slot = fsm_ust_slot_get(t);
	if (!slot) {
		fsm_ust_count(inst_id, FSM_UST_NO_SLOT);
		return 0;
	}
	/*
	 * The loop bound of fsm_ust_end_entry(), for task-context requests
	 * only: an interrupt or NMI that asks (a timer sampling a user spin
	 * loop: identical registers each time) opens an entry of its own and
	 * cannot be that loop.
	 */
	if (unlikely(READ_ONCE(slot->same_regs) >= FSM_UST_SAME_REGS_MAX) &&
	    in_task() && fsm_uwc_state(&slot->uwc, NULL) == FSM_UWC_STATE_IDLE &&
	    fsm_ust_regs_hash(regs) == READ_ONCE(slot->end_regs)) {
		fsm_ust_count(inst_id, FSM_UST_SAME_REGS);
		return 0;
	}
	ret = fsm_uwc_request(&slot->uwc, fsm_ust_sig(regs), inst_id,
			      this_cpu_ptr(&fsm_ust_seq), raw_smp_processor_id(),
			      &cookie);
	switch (ret) {
	case FSM_UWC_QUEUE:
		/* only the claimer writes it; read by our own task work */
		slot->exec_id = t->self_exec_id;
		if (!fsm_ust_queue(slot->walk)) {
			/*
			 * Nobody will walk this entry: end it now, or every
			 * later request of the task would join it forever.
			 */
			fsm_ust_work_refused(slot->walk);
			fsm_ust_count(inst_id, FSM_UST_QUEUE_FAILED);
			return 0;
		}
		fsm_ust_count(inst_id, FSM_UST_QUEUED);
		break;
	case FSM_UWC_PENDING:
	case FSM_UWC_DELIVERED:
		fsm_ust_count(inst_id, FSM_UST_REUSES);
		break;
	case FSM_UWC_CACHED:
		/* all late requests of an entry have its cookie */
		WRITE_ONCE(slot->late_cookie, cookie);
		/* orders the cookie before the bit: the emit work reads them so */
		smp_mb__before_atomic();
		atomic64_or(BIT_ULL(inst_id), &slot->late_mask);
		/* one emit work at a time; it re-reads the mask */
		if (!atomic_xchg(&slot->emit_queued, 1) &&
		    !fsm_ust_queue(slot->emit)) {
			fsm_ust_work_refused(slot->emit);
			fsm_ust_count(inst_id, FSM_UST_QUEUE_FAILED);
			return 0;
		}
		fsm_ust_count(inst_id, FSM_UST_LATE);
		break;
	default:
		fsm_ust_count(inst_id, FSM_UST_BUSY);
		return 0;
	}
	fsm_ust_count(inst_id, FSM_UST_REQUESTS);
	return cookie;
}

