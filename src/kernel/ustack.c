// SPDX-License-Identifier: GPL-2.0
/*
 * ustack.c - deferred user stacks: one walk per kernel entry, delivered to
 * every instance that asked (Documentation/ustack.rst).
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
 * Task work (task context, just before the return to user space):
 *   fsm_uwc_complete() walks once: frame pointers with
 *   copy_from_user_nofault() reads (no lock held), then mmap_read_lock()
 *   to turn each address into (file, offset, flags), then, with the lock
 *   dropped, file ids (fileid.c). The result stays in the slot for late
 *   requesters. Every instance of the delivery mask gets the file_map
 *   records it needs and one user_stack record. An exiting task (after
 *   exit_mm), an exec in between, no mm: an empty stack with a reason.
 *
 * Deduplication: each instance that asked inserts the stack, keyed by the
 * address space (fsm_ust_mm_key()) and the frames, into its user stack map
 * (inst->umap, the core map of src/core, allocated when options/
 * stackmap_user is turned on). The user_stack record carries the id, and
 * the frames only the first time the id appears in the instance's current
 * recording (FSM_INSERT_FIRST_EMIT with the instance's user epoch), or
 * with FSM_USF_FALLBACK when no id can be had.
 *
 * Late requests (CACHED: the walk of this entry is done but this instance
 * was not in it, e.g. an event on the way out) add their instance to the
 * slot's late mask and queue a second, emit-only task work, at most once
 * per instance and entry: no requeue livelock.
 *
 * Unload never waits for a task to return to user space (a task that asked
 * from sched_switch and then sleeps for an hour would hold it for an hour):
 * task_work_cancel is not exported, so module exit disarms the works still
 * queued instead. Each task work is a small object of its own
 * (struct fsm_ust_work, callback_head first); exit points every queued one
 * at kfree(), core kernel code, so that when its task runs it, it only
 * frees itself. See fsm_ustack_exit() for why no module code can run after
 * exit returns.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/irq_work.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/sched/task_stack.h>
#include <linux/seq_file.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/trace_events.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <asm/segment.h>

#include <ftrace_stackmap/ustack_abi.h>

#include "compat.h"
#include "tracing.h"
#include "fsm_unwind.h"
#include "ustack.h"

static int fsm_ust_reg(struct trace_event_call *call, enum trace_reg type,
		       void *data);
#define trace_event_reg fsm_ust_reg
#define CREATE_TRACE_POINTS
#include <ftrace_stackmap/ustack_events.h>
#undef trace_event_reg

static_assert(FSM_USTACK_MAX_FRAMES == FSM_MAX_USER_DEPTH, "ustack_abi.h and fsm_unwind.h disagree");
static_assert(FSM_UST_MAX_INST == FSM_UWC_MAX_INSTANCES, "ustack.h and fsm_unwind.h disagree");

#define FSM_UST_SLOTS		512	/* tasks tracked at once; power of two */
#define FSM_UST_PROBE		16	/* slots looked at per lookup */
#define FSM_UST_NMI_QUEUE	4	/* per-CPU deferred task_work_add()s */
#define FSM_UST_SAME_REGS_MAX	16	/* see fsm_ust_end_entry() */

/**
 * struct fsm_ust_slot - per-task state.
 * @task:      key: the task, 0 = free. Claimed with cmpxchg by a request
 *             of that task, freed with smp_store_release() by the
 *             sched_process_free probe (pairs with the acquire loads of
 *             the lookup), when nothing can run for the task any more
 * @start:     the task's start_time, second half of the key (a stale slot
 *             of a reused task_struct is reset); written after the claim
 * @exec_id:   self_exec_id when the walk was queued (exec detection)
 * @walk:      the walk task work, queued at most once per entry (cache)
 * @emit:      the emit-only task work of late requests
 * @emit_queued: @emit is queued (xchg by requesters, cleared by it)
 * @late_mask: instances to serve from @emit (atomic OR / xchg)
 * @late_cookie: the entry those late requests belong to (the emit work
 *             serves them only if the slot's stack is still that entry's)
 * @xl_cookie: the entry @frames belong to
 * @nr, @flags, @reason, @stop: the translated stack of that entry
 * @words:     the user map key of that stack (ustack.h, FSM_UKEY_*): the
 *             address-space key, a meta word, then the (file id,
 *             offset | flags) pairs (fsm_ust_frames()); written by the walk
 *             and the delivery, both task works of the slot's task (never
 *             concurrent); the frames are published by the cache's DONE
 *             store-release
 * @uwc:       the per-entry cache state
 * @end_regs:  hash of the user registers (fsm_ust_regs_hash()) when the
 *             last entry ended (fsm_ust_end_entry())
 * @same_regs: consecutive entries that ended with equal @end_regs; both
 *             written only by the slot's task works, read by requests
 *             (READ_ONCE: a heuristic bound, no ordering needed)
 */
struct fsm_ust_slot {
	unsigned long task;
	u64 start;
	u32 exec_id;
	struct fsm_ust_work *walk;
	struct fsm_ust_work *emit;
	atomic_t emit_queued;
	atomic64_t late_mask;
	u64 late_cookie;
	u64 xl_cookie;
	u32 nr;
	u16 flags;
	u8 reason;
	u8 stop;
	u64 words[FSM_UKEY_HDR + 2 * FSM_MAX_USER_DEPTH];
	struct fsm_uwc_task uwc;
	u64 end_regs;
	u32 same_regs;
};

#define fsm_ust_frames(slot)	(&(slot)->words[FSM_UKEY_HDR])

/**
 * struct fsm_ust_work - one task work of a slot, allocated on its own.
 * @head:   first member: at unload a queued work's func becomes kfree(),
 *          which then frees exactly this object (fsm_ustack_exit())
 * @slot:   the slot it works for
 * @queued: 1 from the queue until the work runs; whoever takes it back to
 *          0 (xchg: the work itself, a refused queue, or module exit) owns
 *          what happens next, exactly once
 */
struct fsm_ust_work {
	struct callback_head head;
	struct fsm_ust_slot *slot;
	atomic_t queued;
};
static_assert(offsetof(struct fsm_ust_work, head) == 0,
	      "kfree(head) must free the whole work");

/* Key words of the longest stack a record (and the user map) holds. */
#define FSM_UST_MAP_DEPTH	(FSM_UKEY_HDR + 2 * FSM_USTACK_MAX_RECORD_FRAMES)
/* User map arena: sized for a mean of 12 frames per stack. */
#define FSM_UST_MEAN_WORDS	(FSM_UKEY_HDR + 2 * 12)
static_assert(FSM_UST_MAP_DEPTH <= FSM_MAX_MAP_DEPTH, "user map keys too wide for the core");

enum fsm_ust_stat {
	FSM_UST_REQUESTS,	/* requests that got a cookie */
	FSM_UST_QUEUED,		/* ... first of an entry: walk queued */
	FSM_UST_REUSES,		/* ... served by an entry's single walk */
	FSM_UST_LATE,		/* ... walk done, served by the emit work */
	FSM_UST_REFUSED,	/* kthread, io worker, exiting, no mm, kernel mode */
	FSM_UST_NO_SLOT,	/* task table full */
	FSM_UST_BUSY,		/* cache retries exhausted / deferral queue full */
	FSM_UST_DELIVERED,	/* user_stack records written */
	FSM_UST_LOST,		/* user_stack records the buffer refused */
	FSM_UST_EMPTY,		/* user_stack records with no frame */
	FSM_UST_INLINE,		/* ... with an id and its frames (first use) */
	FSM_UST_FALLBACK,	/* ... with frames but no id (map full...) */
	FSM_UST_INLINE_LOST,	/* lost records that should have been INLINE */
	FSM_UST_QUEUE_FAILED,	/* walk could not be queued: entry ended, no stack */
	FSM_UST_SAME_REGS,	/* refused: too many entries in a row, same registers */
	FSM_UST_NR_STATS
};

static const char * const fsm_ust_stat_names[] = {
	[FSM_UST_REQUESTS] = "user_requests",
	[FSM_UST_QUEUED] = "user_walks_queued",
	[FSM_UST_REUSES] = "user_cache_reuses",
	[FSM_UST_LATE] = "user_late_emits",
	[FSM_UST_REFUSED] = "user_refused",
	[FSM_UST_NO_SLOT] = "user_no_slot",
	[FSM_UST_BUSY] = "user_busy_drops",
	[FSM_UST_DELIVERED] = "user_stacks",
	[FSM_UST_LOST] = "user_stacks_lost",
	[FSM_UST_EMPTY] = "user_stacks_empty",
	[FSM_UST_INLINE] = "user_inline_emits",
	[FSM_UST_FALLBACK] = "user_fallbacks",
	[FSM_UST_INLINE_LOST] = "user_inline_lost",
	[FSM_UST_QUEUE_FAILED] = "user_queue_failed",
	[FSM_UST_SAME_REGS] = "user_same_regs_refused",
};
static_assert(ARRAY_SIZE(fsm_ust_stat_names) == FSM_UST_NR_STATS);

static const char * const fsm_urs_names[] = {
	[FSM_URS_WALKED] = "walked",
	[FSM_URS_EXITING] = "exiting",
	[FSM_URS_EXEC] = "exec",
	[FSM_URS_NO_MM] = "no_mm",
	[FSM_URS_FIRST_FAULT] = "first_fault",
	[FSM_URS_NOMEM] = "nomem",
	[FSM_URS_SEGMENTS] = "segments",
};
static_assert(ARRAY_SIZE(fsm_urs_names) == FSM_URS_NR);

/**
 * struct fsm_ust_inst - user-stack state of one instance (by instance id).
 * @us_file: stackmap:user_stack's event file while enabled there, else
 *           NULL; set/cleared by fsm_ust_reg() (event_mutex), read with
 *           READ_ONCE() under preempt_disable(): the kernel waits for
 *           such sections (tracepoint_synchronize_unregister()) before
 *           freeing an instance's event files
 * @fm_file: same for stackmap:file_map
 * @epoch:   user recording epoch, never 0: bumped when user_stack is
 *           enabled (a new recording) and when a user_stack record that
 *           should have carried its frames inline was lost, so that
 *           file_map records and every ustack id's frames go out again
 *           (a plain value compared by the map and fileid.c: no ordering)
 * @stat:    counters (atomic64: requests come from NMI too)
 * @empty:   empty user_stack records by reason
 */
struct fsm_ust_inst {
	struct trace_event_file *us_file;
	struct trace_event_file *fm_file;
	atomic_t epoch;
	atomic64_t stat[FSM_UST_NR_STATS];
	atomic64_t empty[FSM_URS_NR];
};

/*
 * Per-CPU hand-off of task_work_add() from NMI (and, on KASAN kernels, from
 * every context). @task: 0 = free, FSM_UST_NMIQ_CLAIMING = taken by a
 * claimer that has not published yet, else the task (a reference held).
 */
struct fsm_ust_nmiq {
	struct irq_work work;
	struct {
		unsigned long task;
		struct fsm_ust_work *head;
	} e[FSM_UST_NMI_QUEUE];
};
#define FSM_UST_NMIQ_CLAIMING	1UL

static struct fsm_ust_slot *fsm_ust_slots;
static struct fsm_ust_inst fsm_ust_insts[FSM_UST_MAX_INST];
/* options/stackmap_user bits; plain flags read by the probe */
static u64 fsm_ust_on;
static DEFINE_PER_CPU(u64, fsm_ust_seq);
static DEFINE_PER_CPU(struct fsm_ust_nmiq, fsm_ust_nmiq);
/* task works executing our code now (fsm_ust_work_enter/_leave) */
static atomic_t fsm_ust_running = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(fsm_ust_wq);
static atomic64_t fsm_ust_walks = ATOMIC64_INIT(0);
/* key of the address-space hash (fsm_ust_mm_key()), random per load */
static siphash_key_t fsm_ust_mm_siphash;
static struct tracepoint *fsm_ust_tp_free;
static bool fsm_ust_ready;

static void fsm_ust_walk_work(struct callback_head *head);
static void fsm_ust_emit_work(struct callback_head *head);

/*
 * Tests only: the next queue of a task work for the task with this pid
 * fails as if the deferral queue were full, then the value goes back to 0
 * (selftests/guest/ustack_entry.sh: a failed queue must not leave the task
 * without user stacks). Root-only, 0 (off) by default.
 */
static atomic_t fsm_ust_test_fail_pid = ATOMIC_INIT(0);
static int fsm_ust_test_fail_set(const char *val, const struct kernel_param *kp)
{
	int pid, ret = kstrtoint(val, 0, &pid);

	if (ret || pid < 0 || pid > PID_MAX_LIMIT) {
		pr_warn("test_fail_queue_pid=%s: not a pid\n", val);
		return -EINVAL;
	}
	atomic_set(&fsm_ust_test_fail_pid, pid);
	return 0;
}

static int fsm_ust_test_fail_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&fsm_ust_test_fail_pid));
}

static const struct kernel_param_ops fsm_ust_test_fail_ops = {
	.set = fsm_ust_test_fail_set,
	.get = fsm_ust_test_fail_get,
};
module_param_cb(test_fail_queue_pid, &fsm_ust_test_fail_ops, NULL, 0600);
MODULE_PARM_DESC(test_fail_queue_pid,
		 "Tests only: fail the next user-stack task-work queue of this pid once (0: off)");

static __always_inline void fsm_ust_count(u32 inst, enum fsm_ust_stat s)
{
	atomic64_inc(&fsm_ust_insts[inst].stat[s]);
}

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
static void fsm_ust_task_free(void *data, struct task_struct *t)
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
		/* pairs with smp_load_acquire() in fsm_ust_slot_get() */
		smp_store_release(&slot->task, 0UL);
	}
}

/* ---- queueing the task works ---- */

/*
 * Every task work function starts with fsm_ust_work_enter() and ends with
 * fsm_ust_work_leave() (the last thing it does); module exit waits until
 * none is between the two, then for an RCU-tasks grace period, which covers
 * the instructions before the first and after the last (fsm_ustack_exit()).
 */
static void fsm_ust_work_enter(void)
{
	atomic_inc(&fsm_ust_running);
}

static void fsm_ust_work_leave(void)
{
	/* pairs with wait_event() in fsm_ustack_exit() */
	if (atomic_dec_and_test(&fsm_ust_running))
		wake_up(&fsm_ust_wq);
}

/*
 * A work that will never run (the task is exiting, or the deferral queue
 * was full): end what it stood for. A walk's entry is aborted (the next
 * request starts a new one instead of joining an entry nobody walks); an
 * emit work lets the next late request queue one again.
 * Context: any.
 */
static void fsm_ust_work_refused(struct fsm_ust_work *w)
{
	struct fsm_ust_slot *slot = w->slot;
	u64 cookie;

	if (w == slot->walk) {
		if (fsm_uwc_state(&slot->uwc, &cookie) == FSM_UWC_STATE_PENDING)
			(void)fsm_uwc_abort(&slot->uwc, cookie);
	} else {
		/* the late requests it stood for get nothing: no record later */
		atomic64_set(&slot->late_mask, 0);
		atomic_set(&slot->emit_queued, 0);
	}
}

/* Context: task or irq (not NMI). */
static void fsm_ust_add(struct task_struct *t, struct fsm_ust_work *w)
{
	/* exiting: nothing will run */
	if (task_work_add(t, &w->head, TWA_RESUME) && atomic_xchg(&w->queued, 0))
		fsm_ust_work_refused(w);
}

/*
 * The per-CPU deferral of NMI (and KASAN) requests. Context: hard irq of
 * the CPU whose queue it is; only an NMI can interrupt it, and an NMI only
 * claims free entries. An entry still being claimed (FSM_UST_NMIQ_CLAIMING:
 * we interrupted its claimer) is left alone: its claimer publishes it and
 * queues us again.
 */
static void fsm_ust_nmiq_fn(struct irq_work *w)
{
	struct fsm_ust_nmiq *q = container_of(w, struct fsm_ust_nmiq, work);
	struct fsm_ust_work *head;
	unsigned long t;
	unsigned int i;

	for (i = 0; i < FSM_UST_NMI_QUEUE; i++) {
		/* pairs with the claimer's store-release: head and our reference */
		t = smp_load_acquire(&q->e[i].task);
		if (!t || t == FSM_UST_NMIQ_CLAIMING)
			continue;
		head = q->e[i].head;
		/* head is read before the entry can be claimed again */
		smp_store_release(&q->e[i].task, 0UL);
		fsm_ust_add((struct task_struct *)t, head);
		put_task_struct((struct task_struct *)t);
	}
}

/*
 * Queue @head for current. Context: any. From NMI, and always on KASAN
 * kernels, through this CPU's irq_work. An entry goes free -> CLAIMING ->
 * published -> free: it is claimed with cmpxchg (a nested NMI cannot take
 * it, the irq_work skips it), then the task reference is taken and the
 * head written, then the task is published with a store-release; only then
 * can the irq_work use it. Publishing before get_task_struct() (or before
 * the head) would let an irq_work that interrupts us here (KASAN kernels
 * queue from task context too) queue a stale head or drop a reference it
 * never got.
 * Return: false if the queue was full or the module is going away; the
 * caller ends what @head stood for (fsm_ust_work_refused()) and counts it.
 */
static bool fsm_ust_queue(struct fsm_ust_work *head)
{
	struct fsm_ust_nmiq *q;
	unsigned int i;

	if (unlikely(atomic_read(&fsm_ust_test_fail_pid)) &&
	    atomic_cmpxchg(&fsm_ust_test_fail_pid, current->pid, 0) == current->pid)
		return false;
	/* module exit stops requests before it disarms the queued works */
	if (!READ_ONCE(fsm_ust_ready))
		return false;
	/* queued from here on: the work, a refusal or module exit ends it */
	atomic_set(&head->queued, 1);
	if (!in_nmi() && !IS_ENABLED(CONFIG_KASAN)) {
		fsm_ust_add(current, head);
		return true;
	}
	q = this_cpu_ptr(&fsm_ust_nmiq);
	for (i = 0; i < FSM_UST_NMI_QUEUE; i++) {
		if (cmpxchg(&q->e[i].task, 0UL, FSM_UST_NMIQ_CLAIMING))
			continue;
		get_task_struct(current);
		q->e[i].head = head;
		/* pairs with the irq_work's smp_load_acquire() */
		smp_store_release(&q->e[i].task, (unsigned long)current);
		irq_work_queue(&q->work);
		return true;
	}
	atomic_set(&head->queued, 0);
	return false;
}

/* ---- request ---- */

static void fsm_ust_regs(struct pt_regs *regs, struct fsm_uw_regs *u)
{
	memset(u, 0, sizeof(*u));
	u->ip = regs->ip;
	u->sp = regs->sp;
	u->fp = regs->bp;
	u->mode = user_64bit_mode(regs) ? FSM_UW_MODE_X86_64 : FSM_UW_MODE_IA32;
}

/*
 * What stays constant within one kernel entry and differs between many:
 * the saved user registers and the syscall number (-1 for interrupts and
 * exceptions). Not the context switch counts: the walk may sleep, and a
 * changed signature on the way out would queue another walk.
 */
static u64 fsm_ust_sig(struct pt_regs *regs)
{
	struct fsm_uw_regs u;

	fsm_ust_regs(regs, &u);
	return fsm_uwc_entry_sig(&u, regs->orig_ax);
}

/*
 * All the user registers the task returns to (pt_regs, orig_ax included).
 * Equal for two entries only if user space ran from the exact same state,
 * or did not run at all in between. Context: any (pure computation).
 */
static u64 fsm_ust_regs_hash(const struct pt_regs *regs)
{
	return siphash(regs, sizeof(*regs), &fsm_ust_mm_siphash);
}

/*
 * End the kernel entry: called last by the slot's task works. They run on
 * the way out to user space (exit_to_user_mode_loop()), so a later request
 * belongs to a later entry, or to the rest of this exit path (a reschedule
 * or a signal after the work). Either way it starts a new entry and its
 * own walk of the registers the task will return to: no entry is ever
 * given another entry's stack (the old register signature could not tell
 * `f() { g(); } f(); f();` from two different callers of f). Requests made
 * while our works run (our own records, the walk's sleeps) still join this
 * entry: its state is BUSY or DONE until here. An emit work still queued
 * ends the entry itself when it has run.
 *
 * The rest of an exit path could in theory request, walk and request again
 * forever (each walk waking a reader that preempts us on the way out). Such
 * a loop ends entries with identical user registers; after
 * FSM_UST_SAME_REGS_MAX of those in a row, requests with those registers
 * get no user stack (counted) until the registers differ. Legitimate runs of
 * entries from one identical register state that long are rare (a tight
 * loop around one syscall with nothing changing); they get "none", never a
 * wrong stack.
 * Context: task work of the slot's task.
 */
static void fsm_ust_end_entry(struct fsm_ust_slot *slot)
{
	u64 h;

	if (atomic_read(&slot->emit_queued))
		return;	/* the emit work ends it */
	/*
	 * Task works also run inside a syscall (io_uring's wait loop, ptrace
	 * stops, get_signal()): there the entry goes on, later requests walk
	 * again (same registers: a correct stack). Only resume_user_mode_work()
	 * clears TIF_NOTIFY_RESUME before it runs the works: count the bound
	 * only there, on the way out, where the loop it stops can happen.
	 */
	if (test_thread_flag(TIF_NOTIFY_RESUME))
		goto end;
	h = fsm_ust_regs_hash(task_pt_regs(current));
	if (h == slot->end_regs) {
		if (slot->same_regs < U32_MAX)
			WRITE_ONCE(slot->same_regs, slot->same_regs + 1);
	} else {
		WRITE_ONCE(slot->same_regs, 0);
	}
	WRITE_ONCE(slot->end_regs, h);
end:
	fsm_uwc_entry_exit(&slot->uwc);
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

/* ---- the walk ---- */

static bool fsm_ust_read(void *ctx, unsigned long long addr, unsigned int size,
			 unsigned long long *val)
{
	u32 v32;

	if (size == 8)
		return !copy_from_user_nofault(val, (const void __user *)
					       (unsigned long)addr, 8);
	if (copy_from_user_nofault(&v32, (const void __user *)(unsigned long)addr,
				   4))
		return false;
	*val = v32;
	return true;
}

struct fsm_ust_walk_ctx {
	struct fsm_ust_slot *slot;
	struct pt_regs *regs;
};

/*
 * Turn slot->uwc.entries[0..nr) into (file id, offset | flags) pairs in
 * fsm_ust_frames(slot). Context: task, may sleep; the mm is current's and alive.
 */
static void fsm_ust_translate(struct fsm_ust_slot *slot,
			      const unsigned long long *ips, unsigned int nr)
{
	struct mm_struct *mm = current->mm;
	u64 *fr = fsm_ust_frames(slot);
	unsigned int i;

	mmap_read_lock(mm);
	for (i = 0; i < nr; i++) {
		unsigned long ip = ips[i];
		struct vm_area_struct *vma = vma_lookup(mm, ip);
		const char *name;

		fr[2 * i] = 0;
		if (!vma) {
			fr[2 * i + 1] = (ip & FSM_UFR_OFFSET_MASK) | FSM_UFR_NOVMA;
		} else if (vma->vm_file) {
			/* the file pointer for now: its id after the unlock */
			fr[2 * i] = (unsigned long)get_file(vma->vm_file);
			fr[2 * i + 1] = (ip - vma->vm_start +
					 ((u64)vma->vm_pgoff << PAGE_SHIFT)) &
					FSM_UFR_OFFSET_MASK;
		} else if (vma->vm_ops && vma->vm_ops->name) {
			/* special mappings name themselves: [vdso], [vvar] */
			name = vma->vm_ops->name(vma);
			if (name && !strcmp(name, "[vdso]"))
				fr[2 * i + 1] = ((ip - vma->vm_start) &
						 FSM_UFR_OFFSET_MASK) | FSM_UFR_VDSO;
			else
				fr[2 * i + 1] = (ip & FSM_UFR_OFFSET_MASK) |
						FSM_UFR_SPECIAL;
		} else {
			fr[2 * i + 1] = (ip & FSM_UFR_OFFSET_MASK) | FSM_UFR_ANON;
		}
	}
	mmap_read_unlock(mm);
	/* file ids may sleep (path, build-id): without mmap_lock */
	for (i = 0; i < nr; i++) {
		struct file *f = (struct file *)(unsigned long)fr[2 * i];

		if (!f)
			continue;
		fr[2 * i] = fsm_fileid_get(f);
		fput(f);
	}
}

/*
 * The address-space identity of a user stack: a keyed hash of the mm, the
 * thread group leader's start time and exec count, under a key of our own
 * (never the raw pointer, never the %p key). Equal for all threads of a
 * process between two execs; a reused mm pointer of a later process hashes
 * differently. Context: task work of @t, @t->mm alive.
 */
static u64 fsm_ust_mm_key(struct task_struct *t)
{
	struct task_struct *leader;
	u64 start;
	u32 exec;

	rcu_read_lock();	/* group_leader changes only in a de_thread() exec */
	leader = READ_ONCE(t->group_leader);
	start = leader->start_time;
	exec = READ_ONCE(leader->self_exec_id);
	rcu_read_unlock();
	return siphash_3u64((unsigned long)t->mm, start, exec,
			    &fsm_ust_mm_siphash);
}

static unsigned int fsm_ust_abort(struct fsm_ust_slot *slot,
				  struct fsm_uw_result *res, u8 reason)
{
	memset(res, 0, sizeof(*res));
	res->stop = FSM_UW_STOP_ABORTED;
	slot->reason = reason;
	slot->stop = FSM_UW_STOP_ABORTED;
	slot->nr = 0;
	return 0;
}

/* fsm_uwc_walk_fn: called once per entry by fsm_uwc_complete(). */
static unsigned int fsm_ust_walk(void *ctx, unsigned long long *entries,
				 unsigned int max, struct fsm_uw_result *res)
{
	struct fsm_ust_walk_ctx *c = ctx;
	struct fsm_ust_slot *slot = c->slot;
	struct task_struct *t = current;
	struct pt_regs *regs = c->regs;
	struct fsm_uw_regs u;
	unsigned int nr;

	slot->flags = 0;
	/* after exit_mm() (sched_process_exit is later): never touch the mm */
	if (t->flags & PF_EXITING)
		return fsm_ust_abort(slot, res, FSM_URS_EXITING);
	if (!t->mm)
		return fsm_ust_abort(slot, res, FSM_URS_NO_MM);
	if (t->self_exec_id != slot->exec_id)
		return fsm_ust_abort(slot, res, FSM_URS_EXEC);
	fsm_ust_regs(regs, &u);
	if (u.mode == FSM_UW_MODE_IA32) {
		slot->flags |= FSM_USF_IA32;
		if (regs->cs != __USER32_CS || regs->ss != __USER32_DS)
			return fsm_ust_abort(slot, res, FSM_URS_SEGMENTS);
	}
	atomic64_inc(&fsm_ust_walks);
	slot->words[FSM_UKEY_MM] = fsm_ust_mm_key(t);
	nr = fsm_uw_walk(&u, fsm_ust_read, NULL, entries, max, res);
	slot->stop = res->stop;
	slot->reason = res->stop == FSM_UW_STOP_FIRST_FAULT ?
		       FSM_URS_FIRST_FAULT : FSM_URS_WALKED;
	if (res->stop == FSM_UW_STOP_DEPTH)
		slot->flags |= FSM_USF_TRUNCATED;
	fsm_ust_translate(slot, entries, nr);
	slot->nr = nr;
	return nr;
}

/* ---- writing records ---- */

static bool fsm_ust_write_file_map(void *ctx, u64 id, const char *path,
				   const u8 *bid, u32 bid_len)
{
	u32 inst = (u32)(unsigned long)ctx;
	struct trace_event_raw_file_map *entry;
	struct trace_event_buffer fbuffer;
	struct trace_event_file *file;
	u32 plen = strlen(path) + 1;
	u32 off = sizeof(*entry);
	bool ok = false;

	preempt_disable_notrace();
	file = READ_ONCE(fsm_ust_insts[inst].fm_file);
	if (!file || trace_trigger_soft_disabled(file))
		goto out;
	entry = trace_event_buffer_reserve(&fbuffer, file,
					   sizeof(*entry) + plen + bid_len);
	if (!entry)
		goto out;
	entry->file_id = id;
	entry->inst = inst;
	/* __data_loc: length in the high 16 bits, offset from the entry start */
	entry->__data_loc_path = (plen << 16) | off;
	memcpy((char *)entry + off, path, plen);
	entry->__data_loc_build_id = (bid_len << 16) | (off + plen);
	memcpy((char *)entry + off + plen, bid, bid_len);
	trace_event_buffer_commit(&fbuffer);
	ok = true;
out:
	preempt_enable_notrace();
	return ok;
}

/* What one user_stack record says (ustack_abi.h). */
struct fsm_ust_rec {
	u64 cookie;
	u32 id;
	u32 gen;
	u16 flags;
	u8 reason;
	u8 stop;
	u8 id_reason;
	u32 nr;			/* frame pairs in @frames */
	const u64 *frames;
};

/*
 * Write one user_stack record into an instance. Context: task.
 * Return: true if committed; false if the event is off there or the ring
 * buffer refused it (counted as lost).
 */
static bool fsm_ust_write_user_stack(u32 inst, const struct fsm_ust_rec *r)
{
	struct trace_event_raw_user_stack *entry;
	struct trace_event_buffer fbuffer;
	struct trace_event_file *file;
	u32 len = 2 * r->nr * sizeof(u64);
	bool ok = false;

	preempt_disable_notrace();
	file = READ_ONCE(fsm_ust_insts[inst].us_file);
	if (!file || trace_trigger_soft_disabled(file))
		goto out;
	entry = trace_event_buffer_reserve(&fbuffer, file, sizeof(*entry) + len);
	if (!entry) {
		fsm_ust_count(inst, FSM_UST_LOST);
		goto out;
	}
	entry->cookie = r->cookie;
	entry->ustack_id = r->id;
	entry->gen = r->gen;
	entry->inst = inst;
	entry->nr = r->nr;
	entry->flags = r->flags;
	entry->reason = r->reason;
	entry->stop = r->stop;
	entry->id_reason = r->id_reason;
	entry->__data_loc_frames = (len << 16) |
				   offsetof(struct trace_event_raw_user_stack, __data);
	memcpy(entry->__data, r->frames, len);
	trace_event_buffer_commit(&fbuffer);
	ok = true;
out:
	preempt_enable_notrace();
	return ok;
}

/*
 * The id of the slot's stack (@nr frames of it) in an instance's user map.
 * Fills @r's id, gen, flags (NEW, INLINE, FALLBACK) and id_reason.
 * Context: task work of the slot's task (may sleep: instance reference).
 */
static void fsm_ust_get_id(struct fsm_ust_slot *slot, u32 inst_id, u32 nr,
			   u32 epoch, struct fsm_ust_rec *r)
{
	struct fsm_insert_result res;
	struct fsm_inst *inst;
	struct fsm_map *umap;
	int ret;

	inst = fsm_inst_get_by_id(inst_id);
	/* Pairs with smp_store_release() in fsm_ust_umap_alloc(). */
	umap = inst ? smp_load_acquire(&inst->umap) : NULL;
	if (!umap) {
		r->flags |= FSM_USF_FALLBACK;
		r->id_reason = FSM_UIR_NO_MAP;
		goto out;
	}
	slot->words[FSM_UKEY_META] = (r->flags & (FSM_USF_IA32 | FSM_USF_TRUNCATED)) |
				     (u64)slot->stop << 16;
	/* a reset waits for inserters: keep this short and unpreempted */
	preempt_disable();
	ret = fsm_map_insert(umap, slot->words, FSM_UKEY_HDR + 2 * nr, epoch,
			     &res);
	preempt_enable();
	if (!ret) {
		r->id = res.id;
		r->gen = res.generation;
		if (res.flags & FSM_INSERT_NEW)
			r->flags |= FSM_USF_NEW;
		if (res.flags & FSM_INSERT_FIRST_EMIT)
			r->flags |= FSM_USF_INLINE;
	} else {
		/* no id: the record carries the frames, never lost silently */
		r->gen = READ_ONCE(inst->ugen);
		r->flags |= FSM_USF_FALLBACK;
		r->id_reason = -ret;
	}
out:
	if (inst)
		fsm_inst_put(inst);
}

/* Serve one instance. Context: task work of the slot's task. */
static void fsm_ust_deliver_one(struct fsm_ust_slot *slot, u32 inst, u64 cookie,
				u16 flags)
{
	struct fsm_ust_inst *ui = &fsm_ust_insts[inst];
	u32 epoch = atomic_read(&ui->epoch);
	u32 nr = min_t(u32, slot->nr, FSM_USTACK_MAX_RECORD_FRAMES);
	const u64 *fr = fsm_ust_frames(slot);
	struct fsm_ust_rec r = {
		.cookie = cookie,
		.id = FSM_USTACK_ID_NONE,
		.flags = slot->flags | flags,
		.reason = slot->reason,
		.stop = slot->stop,
		.frames = fr,
	};
	unsigned int i;

	if (!READ_ONCE(ui->us_file))
		return;		/* user_stack is off here: nothing to write */
	if (nr < slot->nr)
		r.flags |= FSM_USF_TRUNCATED;
	for (i = 0; i < nr; i++) {
		u64 id = fr[2 * i];

		if (!id || (i && fr[2 * i - 2] == id))
			continue;
		fsm_fileid_emit(id, inst, epoch, fsm_ust_write_file_map,
				(void *)(unsigned long)inst);
	}
	/* an empty stack has no id: nothing to deduplicate */
	if (nr)
		fsm_ust_get_id(slot, inst, nr, epoch, &r);
	if (r.flags & (FSM_USF_INLINE | FSM_USF_FALLBACK))
		r.nr = nr;
	if (!fsm_ust_write_user_stack(inst, &r)) {
		if (r.flags & FSM_USF_INLINE) {
			fsm_ust_count(inst, FSM_UST_INLINE_LOST);
			/*
			 * The id's first appearance did not reach the trace:
			 * a new epoch, so that ids (and file_map records) go
			 * out inline once more. One winner per epoch; a plain
			 * value compared by the map, no ordering needed.
			 */
			atomic_cmpxchg(&ui->epoch, epoch, epoch + 1 ? epoch + 1 : 1);
		}
		return;
	}
	fsm_ust_count(inst, FSM_UST_DELIVERED);
	if (!slot->nr)
		fsm_ust_count(inst, FSM_UST_EMPTY);
	if (r.flags & FSM_USF_INLINE)
		fsm_ust_count(inst, FSM_UST_INLINE);
	if (r.flags & FSM_USF_FALLBACK)
		fsm_ust_count(inst, FSM_UST_FALLBACK);
	atomic64_inc(&ui->empty[slot->reason < FSM_URS_NR ? slot->reason : 0]);
}

/* Serve every instance of @mask. Context: task work of the slot's task. */
static void fsm_ust_deliver(struct fsm_ust_slot *slot, u64 cookie, u64 mask,
			    u16 flags)
{
	unsigned int inst;

	for_each_set_bit(inst, (unsigned long *)&mask, FSM_UST_MAX_INST)
		fsm_ust_deliver_one(slot, inst, cookie, flags);
}

/**
 * fsm_ustack_write_reset - mark a new user map generation in the trace.
 * @inst: instance whose user map was reset
 * @gen:  the generation that starts
 *
 * A user_stack record with FSM_USF_RESET, no cookie, no stack. Written only
 * while user_stack is enabled in the instance. Context: task.
 */
void fsm_ustack_write_reset(struct fsm_inst *inst, u32 gen)
{
	struct fsm_ust_rec r = {
		.id = FSM_USTACK_ID_NONE,
		.gen = gen,
		.flags = FSM_USF_RESET,
	};

	if (inst->id < FSM_UST_MAX_INST)
		fsm_ust_write_user_stack(inst->id, &r);
}

/*
 * Start of a task work: false if module exit took it back (its func was
 * still ours when the task read it): then only free it.
 */
static bool fsm_ust_work_start(struct fsm_ust_work *w)
{
	fsm_ust_work_enter();
	if (atomic_xchg(&w->queued, 0))
		return true;
	kfree(w);
	fsm_ust_work_leave();
	return false;
}

static void fsm_ust_walk_work(struct callback_head *head)
{
	struct fsm_ust_work *w = container_of(head, struct fsm_ust_work, head);
	struct fsm_ust_slot *slot = w->slot;
	struct fsm_ust_walk_ctx c = { .slot = slot, .regs = task_pt_regs(current) };
	struct fsm_uwc_delivery out;

	if (!fsm_ust_work_start(w))
		return;
	if (!fsm_uwc_complete(&slot->uwc, fsm_ust_sig(c.regs), fsm_ust_walk,
			      &c, &out)) {
		WRITE_ONCE(slot->xl_cookie, out.cookie);
		fsm_ust_deliver(slot, out.cookie, out.mask & ~BIT_ULL(63), 0);
	}
	fsm_ust_end_entry(slot);
	fsm_ust_work_leave();
}

static void fsm_ust_emit_work(struct callback_head *head)
{
	struct fsm_ust_work *w = container_of(head, struct fsm_ust_work, head);
	struct fsm_ust_slot *slot = w->slot;
	u64 mask;

	if (!fsm_ust_work_start(w))
		return;
	/* clear first: a request after the xchg below queues us again */
	atomic_set(&slot->emit_queued, 0);
	smp_mb__after_atomic();	/* pairs with the requesters' OR then xchg */
	/* full barrier: the cookie of these bits is read after them */
	mask = atomic64_xchg(&slot->late_mask, 0);
	/*
	 * A walk of a newer entry may have run first (a late request raced
	 * with the end of its entry, then a new entry's walk was queued ahead
	 * of us): its frames are not the late requesters'. They get no record
	 * then (counted), never the newer entry's stack.
	 */
	if (mask && READ_ONCE(slot->late_cookie) == READ_ONCE(slot->xl_cookie))
		fsm_ust_deliver(slot, slot->xl_cookie, mask, FSM_USF_LATE);
	else if (mask)
		fsm_ust_count(__ffs64(mask), FSM_UST_QUEUE_FAILED);
	fsm_ust_end_entry(slot);
	fsm_ust_work_leave();
}

/* ---- events, option, statistics ---- */

static struct fsm_ust_inst *fsm_ust_inst_of_file(struct trace_event_file *file,
						  u32 *id)
{
	struct fsm_inst *inst;

	lockdep_assert_held(&fsm_mutex);
	if (!fsm_ready)
		return ERR_PTR(fsm_shutting_down ? -ENODEV : -EBUSY);
	inst = fsm_inst_find_or_create_locked(file);
	if (IS_ERR(inst))
		return ERR_CAST(inst);
	if (inst->id >= FSM_UST_MAX_INST) {
		pr_warn_ratelimited("%s: user stacks need an instance id below %u\n",
				    fsm_inst_label(inst), FSM_UST_MAX_INST);
		return ERR_PTR(-ENOSPC);
	}
	*id = inst->id;
	return &fsm_ust_insts[inst->id];
}

/*
 * .reg of user_stack and file_map: remember the instance's event file
 * (records are written by the task work, the tracepoints never fire).
 * Context: task, event_mutex held.
 */
static int fsm_ust_reg(struct trace_event_call *call, enum trace_reg type,
		       void *data)
{
	struct trace_event_file *file = data;
	bool us = call == &event_user_stack;
	struct fsm_ust_inst *ui;
	unsigned int i;
	u32 id;

	switch (type) {
	case TRACE_REG_REGISTER:
		mutex_lock(&fsm_mutex);
		ui = fsm_ust_inst_of_file(file, &id);
		if (!IS_ERR(ui)) {
			if (us) {
				/* 0 means "never inline": skip it */
				if (!atomic_inc_return(&ui->epoch))
					atomic_inc(&ui->epoch);
				WRITE_ONCE(ui->us_file, file);
			} else {
				WRITE_ONCE(ui->fm_file, file);
			}
		}
		mutex_unlock(&fsm_mutex);
		return PTR_ERR_OR_ZERO(ui);
	case TRACE_REG_UNREGISTER:
		for (i = 0; i < FSM_UST_MAX_INST; i++) {
			if (us && fsm_ust_insts[i].us_file == file)
				WRITE_ONCE(fsm_ust_insts[i].us_file, NULL);
			if (!us && fsm_ust_insts[i].fm_file == file)
				WRITE_ONCE(fsm_ust_insts[i].fm_file, NULL);
		}
		return 0;
	default:
		return 0;	/* perf and the rest: nothing to do, never fires */
	}
}

static int fsm_ust_set_event(struct fsm_inst *inst, const char *event, bool on)
{
	struct trace_event_file *file;
	int ret;

	file = trace_get_event_file(inst->name, "stackmap", event);
	if (IS_ERR(file))
		return PTR_ERR(file) == -ENOENT ? -ENODEV : PTR_ERR(file);
	if (file->tr != READ_ONCE(inst->tr))
		ret = -ENODEV;
	else
		ret = trace_array_set_clr_event(file->tr, "stackmap", event, on);
	trace_put_event_file(file);
	return ret;
}

static int fsm_ust_opt_open(struct inode *inode, struct file *file)
{
	u32 id = (u32)(unsigned long)inode->i_private;

	if (id >= FSM_UST_MAX_INST)
		return -ENOSPC;
	file->private_data = inode->i_private;
	return nonseekable_open(inode, file);
}

static ssize_t fsm_ust_opt_read(struct file *file, char __user *ubuf,
				size_t cnt, loff_t *ppos)
{
	u32 id = (u32)(unsigned long)file->private_data;
	char buf[2] = { READ_ONCE(fsm_ust_on) & BIT_ULL(id) ? '1' : '0', '\n' };

	return simple_read_from_buffer(ubuf, cnt, ppos, buf, sizeof(buf));
}

static DEFINE_MUTEX(fsm_ust_opt_mutex);

/*
 * Allocate the instance's user stack map (once; it lives as long as the
 * instance). Context: task, fsm_ust_opt_mutex held.
 * Return: 0 or -errno (with one dmesg line).
 */
static int fsm_ust_umap_alloc(struct fsm_inst *inst)
{
	struct fsm_map_params p = {
		.bits = fsm_bits,
		.max_depth = FSM_UST_MAP_DEPTH,
		.arena_bytes = (8ULL * FSM_UST_MEAN_WORDS + 16) << fsm_bits,
	};
	struct fsm_map *map;

	lockdep_assert_held(&fsm_ust_opt_mutex);
	if (inst->umap)
		return 0;
	map = fsm_map_new(&p, fsm_inst_label(inst), "user stack map",
			  &inst->ugen);
	if (IS_ERR(map))
		return PTR_ERR(map);
	/* Pairs with smp_load_acquire() in fsm_ust_get_id() and nodes.c. */
	smp_store_release(&inst->umap, map);
	return 0;
}

/*
 * 1: stack_id records of this instance carry cookies, and user_stack and
 * file_map are enabled in it. 0: the reverse.
 */
static ssize_t fsm_ust_opt_write(struct file *file, const char __user *ubuf,
				 size_t cnt, loff_t *ppos)
{
	u32 id = (u32)(unsigned long)file->private_data;
	struct fsm_inst *inst;
	bool on;
	int ret;

	if (!cnt || cnt > 8 || kstrtobool_from_user(ubuf, cnt, &on)) {
		pr_warn_ratelimited("options/stackmap_user: write 1 or 0\n");
		return -EINVAL;
	}
	inst = fsm_inst_get_by_id(id);
	if (!inst)
		return -ENODEV;
	if (on) {
		mutex_lock(&fsm_ust_opt_mutex);
		ret = fsm_ust_umap_alloc(inst);
		mutex_unlock(&fsm_ust_opt_mutex);
		if (ret) {
			fsm_inst_put(inst);
			return ret;
		}
	}
	ret = fsm_ust_set_event(inst, "file_map", on);
	if (!ret)
		ret = fsm_ust_set_event(inst, "user_stack", on);
	mutex_lock(&fsm_ust_opt_mutex);
	if (!ret && on)
		WRITE_ONCE(fsm_ust_on, fsm_ust_on | BIT_ULL(id));
	else if (!on)
		WRITE_ONCE(fsm_ust_on, fsm_ust_on & ~BIT_ULL(id));
	mutex_unlock(&fsm_ust_opt_mutex);
	fsm_inst_put(inst);
	return ret ? ret : cnt;
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

const struct file_operations fsm_ustack_opt_fops = {
	.owner = THIS_MODULE,
	.open = fsm_ust_opt_open,
	.read = fsm_ust_opt_read,
	.write = fsm_ust_opt_write,
	.llseek = no_llseek,
};

/**
 * fsm_ustack_stat_show - user-stack lines of stack_map_stat.
 * @m:    the seq_file
 * @inst: instance (reference held by the reader)
 * Context: task.
 */
void fsm_ustack_stat_show(struct seq_file *m, struct fsm_inst *inst)
{
	unsigned long long drops = 0;
	struct fsm_map_stats st = {};
	struct fsm_ust_inst *ui;
	struct fsm_map *umap;
	unsigned int i;

	if (inst->id >= FSM_UST_MAX_INST)
		return;
	ui = &fsm_ust_insts[inst->id];
	seq_printf(m, "user_option: %u\n", !!(READ_ONCE(fsm_ust_on) & BIT_ULL(inst->id)));
	seq_printf(m, "user_walks_all_instances: %lld\n", atomic64_read(&fsm_ust_walks));
	for (i = 0; i < FSM_UST_NR_STATS; i++)
		seq_printf(m, "%s: %lld\n", fsm_ust_stat_names[i],
			   atomic64_read(&ui->stat[i]));
	for (i = 0; i < FSM_URS_NR; i++)
		seq_printf(m, "user_stacks_reason_%s: %lld\n", fsm_urs_names[i],
			   atomic64_read(&ui->empty[i]));
	/* Pairs with smp_store_release() in fsm_ust_umap_alloc(). */
	umap = smp_load_acquire(&inst->umap);
	if (umap)
		fsm_map_stats(umap, &st);
	for (i = 1; i < FSM_DROP_NR_REASONS; i++)
		drops += st.drops[i];
	seq_printf(m, "user_map_allocated: %d\n", umap != NULL);
	seq_printf(m, "user_entries: %u\n", st.entries);
	seq_printf(m, "user_capacity: %u\n", st.capacity);
	seq_printf(m, "user_max_words: %u\n", st.max_depth);
	seq_printf(m, "user_arena_used: %llu\n", st.arena_used);
	seq_printf(m, "user_arena_size: %llu\n", st.arena_size);
	seq_printf(m, "user_memory_bytes: %llu\n", st.memory_bytes);
	seq_printf(m, "user_generation: %u\n", st.generation);
	seq_printf(m, "user_hits: %llu\n", st.hits);
	seq_printf(m, "user_inserts: %llu\n", st.inserts);
	seq_printf(m, "user_drops: %llu\n", drops);
	for (i = 1; i < FSM_DROP_NR_REASONS; i++)
		seq_printf(m, "user_drops_%s: %llu\n", fsm_drop_reason_name(i),
			   st.drops[i]);
	seq_printf(m, "user_lost_races: %llu\n", st.lost_races);
}

/* ---- init / exit ---- */

static void fsm_ust_find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_free"))
		fsm_ust_tp_free = tp;
}

static struct fsm_ust_work *fsm_ust_work_new(struct fsm_ust_slot *slot,
					     task_work_func_t fn)
{
	struct fsm_ust_work *w = kzalloc(sizeof(*w), GFP_KERNEL);

	if (w) {
		init_task_work(&w->head, fn);
		w->slot = slot;
	}
	return w;
}

/* Free the works module exit (or a failed init) still owns. */
static void fsm_ust_free_works(void)
{
	unsigned int i;

	if (!fsm_ust_slots)
		return;
	for (i = 0; i < FSM_UST_SLOTS; i++) {
		kfree(fsm_ust_slots[i].walk);
		kfree(fsm_ust_slots[i].emit);
	}
}

/*
 * Module exit: point a work still queued on its task at kfree() and give
 * up ownership, or keep it (to free) if nothing will run it. Whoever takes
 * @queued to 0 owns the work (xchg, a full barrier): here, the work itself
 * (fsm_ust_work_start(): it runs or ran, exit waits for it), or a refused
 * queue. func is written before the xchg: a task that reads func after the
 * xchg calls kfree() (core kernel code) on the object; a task that read the
 * old func before runs fsm_ust_*_work(), whose xchg sees 0 and frees it.
 * Return: true if the work is not ours any more.
 */
static bool fsm_ust_work_disarm(struct fsm_ust_work *w)
{
	if (!w)
		return false;
	WRITE_ONCE(w->head.func, fsm_compat_kfree_task_work());
	return atomic_xchg(&w->queued, 0);
}

/**
 * fsm_ustack_init - allocate the task table, hook task frees.
 * Context: task (module init, before any stack_id probe is attached).
 * Return: 0 or -errno.
 */
int fsm_ustack_init(void)
{
	unsigned int i;
	int cpu, ret;

	if (event_class_user_stack.reg != fsm_ust_reg ||
	    event_class_file_map.reg != fsm_ust_reg) {
		pr_err("user-stack events are not routed through the module's .reg\n");
		return -EINVAL;
	}
	get_random_bytes(&fsm_ust_mm_siphash, sizeof(fsm_ust_mm_siphash));
	ret = fsm_fileid_init();
	if (ret)
		return ret;
	fsm_ust_slots = vzalloc(array_size(FSM_UST_SLOTS, sizeof(*fsm_ust_slots)));
	if (!fsm_ust_slots) {
		ret = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < FSM_UST_SLOTS; i++) {
		struct fsm_ust_slot *slot = &fsm_ust_slots[i];

		slot->walk = fsm_ust_work_new(slot, fsm_ust_walk_work);
		slot->emit = fsm_ust_work_new(slot, fsm_ust_emit_work);
		if (!slot->walk || !slot->emit) {
			ret = -ENOMEM;
			goto fail;
		}
	}
	for_each_possible_cpu(cpu)
		init_irq_work(&per_cpu(fsm_ust_nmiq, cpu).work, fsm_ust_nmiq_fn);
	for_each_kernel_tracepoint(fsm_ust_find_tp, NULL);
	if (!fsm_ust_tp_free) {
		pr_err("no sched_process_free tracepoint\n");
		ret = -ENOENT;
		goto fail;
	}
	ret = tracepoint_probe_register(fsm_ust_tp_free, (void *)fsm_ust_task_free,
					NULL);
	if (ret)
		goto fail;
	WRITE_ONCE(fsm_ust_ready, true);
	return 0;
fail:
	fsm_ust_free_works();
	vfree(fsm_ust_slots);
	fsm_ust_slots = NULL;
	fsm_fileid_exit();
	return ret;
}

/**
 * fsm_ustack_exit - disarm queued task works, unhook, free.
 *
 * Called after every stack_id probe is detached (no new request). Never
 * waits for a task to return to user space: task works still queued are
 * disarmed (fsm_ust_work_disarm(): they free themselves when their task
 * runs them, with no module code). What remains is code of ours running
 * now, which this waits for, in two parts:
 *  - works between fsm_ust_work_enter() and fsm_ust_work_leave(): counted;
 *    a walk and its records (they may sleep in mmap_read_lock() and, while
 *    fileid.c still reads ELF notes with kernel_read(), in file I/O: a
 *    hung file system delays the unload, logged every 10 s);
 *  - a task that read the old func but is not yet in fsm_ust_work_enter(),
 *    or is past fsm_ust_work_leave() and not yet returned: preempted there
 *    (neither part sleeps), so an RCU-tasks grace period, which waits for
 *    every task to switch voluntarily or run in user space, ends only
 *    after it left our text.
 * Context: task (module exit).
 */
void fsm_ustack_exit(void)
{
	unsigned int i;
	int cpu;

	WRITE_ONCE(fsm_ust_ready, false);
	WRITE_ONCE(fsm_ust_on, 0);
	/* requests that passed the checks above are done after this */
	synchronize_rcu();
	/* hand-offs still in the per-CPU queues reach task_work_add() */
	for_each_possible_cpu(cpu)
		irq_work_sync(&per_cpu(fsm_ust_nmiq, cpu).work);
	for (i = 0; i < FSM_UST_SLOTS; i++) {
		struct fsm_ust_slot *slot = &fsm_ust_slots[i];

		if (fsm_ust_work_disarm(slot->walk))
			slot->walk = NULL;	/* its task frees it */
		if (fsm_ust_work_disarm(slot->emit))
			slot->emit = NULL;
	}
	while (!wait_event_timeout(fsm_ust_wq, !atomic_read(&fsm_ust_running),
				   10 * HZ))
		pr_info("unload waits for %d user-stack walks running now\n",
			atomic_read(&fsm_ust_running));
	synchronize_rcu_tasks();
	tracepoint_probe_unregister(fsm_ust_tp_free, (void *)fsm_ust_task_free,
				    NULL);
	/* the free probe's last instructions */
	tracepoint_synchronize_unregister();
	fsm_ust_free_works();
	vfree(fsm_ust_slots);
	fsm_ust_slots = NULL;
	fsm_fileid_exit();
}
