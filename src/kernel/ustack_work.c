// SPDX-License-Identifier: GPL-2.0
/*
 * ustack_work.c - deferred user stacks: the requests, queueing the task
 * works, the works, the end of a kernel entry, init and exit (overview in
 * ustack.c). The top of the user-stack pipeline.
 *
 * Task work (task context, just before the return to user space):
 *   fsm_uwc_complete() walks once (ustack_ukey.c) into a buffer the work
 *   allocates for the entry (struct fsm_ust_stack). Every instance of the
 *   delivery mask gets the file_map records it needs and one user_stack
 *   record (ustack_deliver.c); so does every instance that asked after the
 *   walk, until the work ends the entry, frees the buffer and drops the
 *   entry's reference on the slot (fsm_ust_close()).
 *
 * Queueing: task_work_add(TWA_RESUME) directly from task/irq context,
 * through a per-CPU hard irq_work from NMI (task_work_add is not NMI-safe,
 * and the irq_work's interrupt makes the return to user space run the work
 * now) and on KASAN kernels always (the add may allocate).
 *
 * Late requests (CACHED: the walk of this entry is done but this instance
 * was not in it: our own records' events, an interrupt during the
 * delivery) need nothing more: the entry is DONE only while its walk work
 * runs, and the work serves them before it ends the entry, at most once
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
#include <linux/irq_work.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/tracepoint.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>

#include "compat/compat.h"
#include "ustack_internal.h"


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

static DEFINE_PER_CPU(struct fsm_ust_nmiq, fsm_ust_nmiq);
/* task works executing our code now (fsm_ust_work_enter/_leave) */
static atomic_t fsm_ust_running = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(fsm_ust_wq);
static struct tracepoint *fsm_ust_tp_free;
bool fsm_ust_ready;
/* the per-CPU half of the request cookies (fsm_uwc_request()) */
static DEFINE_PER_CPU(u64, fsm_ust_seq);
/* the task whose walk work frees its buffer on this CPU (fsm_ust_walk_work()) */
static DEFINE_PER_CPU(struct task_struct *, fsm_ust_freeing);


static void fsm_ust_walk_work(struct callback_head *head);

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
 * The walk work will never run (the task is exiting, or the deferral queue
 * was full): abort its entry, so that the next request starts a new one
 * instead of joining an entry nobody walks, and drop the entry's reference
 * on the slot. Requesters that joined the aborted entry hold a cookie for
 * which no user_stack record comes (counted as user_queue_failed).
 * Context: any; the task's requests are refused from here on (exiting) or
 * the caller is one of them.
 */
void fsm_ust_work_refused(struct fsm_ust_work *w)
{
	struct fsm_ust_slot *slot = w->slot;
	u64 cookie;

	if (fsm_uwc_state(&slot->uwc, &cookie) == FSM_UWC_STATE_PENDING)
		(void)fsm_uwc_abort(&slot->uwc, cookie);
	fsm_ust_slot_put(slot);
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
bool fsm_ust_queue(struct fsm_ust_work *head)
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


/*
 * Serve the entry and end it: called last by the walk work, which runs on
 * the way out to user space (exit_to_user_mode_loop()), so a later request
 * belongs to a later entry, or to the rest of this exit path (a
 * reschedule or a signal after the work). Either way it starts a new entry
 * and its own walk of the registers the task will return to: no entry is
 * ever given another entry's stack (the old register signature could not
 * tell `f() { g(); } f(); f();` from two different callers of f). Requests
 * made while the work runs (our own records, the walk's sleeps, interrupts)
 * still join this entry: it is BUSY or DONE until the end here.
 *
 * Who is served: the instances of the harvest (d->mask), then those that
 * asked after it while the entry was DONE (fsm_uwc_late(): each instance
 * at most once per entry, so at most FSM_UST_MAX_INST rounds, each round's
 * records possibly making the next requests), then those that asked
 * between the last round and the end (fsm_uwc_entry_end(): only a context
 * nested in these few instructions). All from @stk, this entry's stack.
 *
 * Instance ids (fsm_ustack_ids_busy()): while the entry is DONE the
 * cache's live mask covers every instance it may serve; once it ended,
 * slot->emitting does: ~0 from before the end, then exactly the instances
 * still to serve, then 0 after a full barrier that follows their records.
 *
 * The rest of an exit path could in theory request, walk and request again
 * forever (each walk waking a reader that preempts us on the way out). Such
 * a loop ends entries with identical user registers; after
 * FSM_UST_SAME_REGS_MAX of those in a row on the way out, or
 * FSM_UST_ENDS_MAX wherever the work ran, requests with those registers
 * get no user stack (counted) until the registers differ (the history,
 * fsm_ust_hist_end() in ustack.c). Legitimate runs of entries from one
 * identical register state that long are rare (a tight loop around one
 * syscall with nothing changing); they get "none", never a wrong stack.
 * Context: the walk work of the slot's task.
 */
static void fsm_ust_close(struct fsm_ust_slot *slot, const struct fsm_ust_stack *stk,
			  const struct fsm_uwc_delivery *d)
{
	u64 served = d->mask, late;
	unsigned int round;

	fsm_ust_deliver(stk, d->cookie, served, 0);
	for (round = 0; round < FSM_UST_MAX_INST; round++) {
		late = fsm_uwc_late(&slot->uwc, d) & ~served;
		if (!late)
			break;
		served |= late;
		fsm_ust_deliver(stk, d->cookie, late, FSM_USF_LATE);
	}
	/*
	 * Task works also run inside a syscall (io_uring's wait loop, ptrace
	 * stops, get_signal()): there the entry goes on, later requests walk
	 * again (same registers: a correct stack). Only resume_user_mode_work()
	 * clears TIF_NOTIFY_RESUME before it runs the works: the tight bound
	 * counts only ends there, on the way out. But a work queued while
	 * task_work_run() runs (a reader woken by our records preempts us at
	 * its cond_resched(), a source in our context asks again) sets the
	 * flag again: that loop stays inside one task_work_run() and never
	 * gets out. So every end counts towards the looser FSM_UST_ENDS_MAX.
	 */
	fsm_ust_hist_end(current, task_pt_regs(current),
			 !test_thread_flag(TIF_NOTIFY_RESUME));
	/* Every id is busy while the entry ends. */
	WRITE_ONCE(slot->emitting, ~0ULL);
	/*
	 * The store precedes the end, so fsm_ustack_ids_busy() that sees the
	 * entry idle sees it. Pairs with the smp_rmb() there.
	 */
	smp_mb();
	late = fsm_uwc_entry_end(&slot->uwc, d) & ~served;
	WRITE_ONCE(slot->emitting, late);
	if (late)
		fsm_ust_deliver(stk, d->cookie, late, FSM_USF_LATE);
	/*
	 * The deliveries (reads of fsm_ust_insts[id] and of fsm_insts by id)
	 * are done before the ids read as free: an id that
	 * fsm_ustack_ids_busy() then finds free may pass to another instance
	 * at once. Pairs with the smp_mb() at its start.
	 */
	smp_mb();
	WRITE_ONCE(slot->emitting, 0);
}

/**
 * fsm_ustack_ids_busy - instance ids a user-stack delivery may still serve.
 *
 * For the reuse of instance ids (lifecycle.c). An id may be referred to
 * by a request bit of a task's current entry (fsm_uwc_live_mask(): from
 * the request that set it until the walk work ended the entry, or until
 * the entry was aborted; a walk work disarmed at module exit never runs),
 * or by the walk work serving it after the end (slot->emitting). Nothing
 * else keeps an id: deliveries take their ids only from those. A bit is
 * set only by a request, i.e. a stack_id probe of the instance; the caller
 * calls this after the instance's probes were detached and
 * tracepoint_synchronize_unregister() returned, so no bit of a retired id
 * appears any more, and a clear bit stays clear.
 *
 * A scan of the task table: no lock, no wait, nothing on the request
 * path (which stays as it was, NMI-safe). A task that asked and sleeps
 * for an hour keeps its entry, so its ids stay busy for that hour: the
 * caller then uses other ids.
 * Ordering: the walk work stores slot->emitting (~0), then a full
 * barrier, then ends the entry; here each slot's entry is read before its
 * emitting mask (smp_rmb()): an entry read as ended comes with ~0 or the
 * exact mask still served, or 0 once those records are written (the walk
 * work's barrier before it clears the mask). A slot read as free holds
 * nothing (it is freed after its work cleared emitting). The smp_mb() at
 * the start orders the scan after the caller's grace period, the one at
 * the end orders the caller's reuse of a free id after the scan.
 * Context: task or atomic, any lock; O(fsm_ust_nslots).
 * Return: a mask of busy ids (bit i: id i).
 */
u64 fsm_ustack_ids_busy(void)
{
	u64 busy = 0;
	unsigned int i;

	if (!fsm_ust_slots)
		return 0;
	/* after the caller's grace period; pairs with fsm_ust_close()'s */
	smp_mb();
	for (i = 0; i < fsm_ust_nslots; i++) {
		struct fsm_ust_slot *slot = &fsm_ust_slots[i];

		if (!atomic_long_read(&slot->owner))
			continue;	/* free: idle */
		busy |= fsm_uwc_live_mask(&slot->uwc);
		/* pairs with the smp_mb() after fsm_ust_close()'s ~0 store */
		smp_rmb();
		busy |= READ_ONCE(slot->emitting);
	}
	/* the caller's reuse of a free id comes after every read above */
	smp_mb();
	return busy & (BIT_ULL(FSM_UST_MAX_INST) - 1);
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

/* An entry completed without memory for its walk: an empty stack. */
static const struct fsm_ust_stack fsm_ust_nomem = {
	.reason = FSM_URS_NOMEM,
	.stop = FSM_UW_STOP_ABORTED,
};

static void fsm_ust_walk_work(struct callback_head *head)
{
	struct fsm_ust_work *w = container_of(head, struct fsm_ust_work, head);
	struct fsm_ust_slot *slot = w->slot;
	struct fsm_ust_walk_ctx c = { .regs = task_pt_regs(current) };
	struct fsm_uwc_delivery out;
	struct fsm_ust_stack *stk;

	if (!fsm_ust_work_start(w))
		return;
	c.exec_id = w->exec_id;
	/* task context on the way out: the allocation may sleep */
	stk = fsm_ust_stack_alloc();
	c.stk = stk;
	/*
	 * A queued walk always finds its entry PENDING (an entry is aborted
	 * only when its walk could not be queued): complete() fails only on a
	 * broken state, and then there is nothing to serve.
	 */
	if (!fsm_uwc_complete(&slot->uwc, stk ? &stk->walk : NULL,
			      fsm_ust_sig(c.regs), fsm_ust_walk, &c, &out))
		fsm_ust_close(slot, stk ?: &fsm_ust_nomem, &out);
	/*
	 * The entry has ended: a request of this task now would start a new
	 * one, and freeing the buffer fires kmem events (a source like any
	 * other: kmem:kmem_cache_free): each free would queue a walk whose
	 * free queues the next, forever, inside this task_work_run(). The
	 * free is the work's own doing, still on the same way out: requests
	 * it makes from task context are refused (counted, user_self_refused;
	 * fsm_ustack_request()). Not preemptible, so the marker is this CPU's.
	 */
	preempt_disable();
	this_cpu_write(fsm_ust_freeing, current);
	fsm_ust_stack_free(stk);
	this_cpu_write(fsm_ust_freeing, NULL);
	preempt_enable();
	/* the entry's reference (fsm_ustack_request(), FSM_UWC_QUEUE) */
	fsm_ust_slot_put(slot);
	fsm_ust_work_leave();
}


/* ---- init / exit ---- */

static void fsm_ust_find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_free"))
		fsm_ust_tp_free = tp;
}

static struct fsm_ust_work *fsm_ust_work_new(struct fsm_ust_slot *slot)
{
	struct fsm_ust_work *w = kzalloc(sizeof(*w), GFP_KERNEL);

	if (w) {
		init_task_work(&w->head, fsm_ust_walk_work);
		w->slot = slot;
	}
	return w;
}

/* Free the works module exit (or a failed init) still owns. */
static void fsm_ust_free_works(void)
{
	unsigned int i;

	for (i = 0; fsm_ust_slots && i < fsm_ust_nslots; i++)
		kfree(fsm_ust_slots[i].walk);
}

/*
 * Module exit: point a work still queued on its task at kfree() and give
 * up ownership, or keep it (to free) if nothing will run it. Whoever takes
 * @queued to 0 owns the work (xchg, a full barrier): here, the work itself
 * (fsm_ust_work_start(): it runs or ran, exit waits for it), or a refused
 * queue. func is written before the xchg: a task that reads func after the
 * xchg calls kfree() (core kernel code) on the object; a task that read the
 * old func before runs fsm_ust_walk_work(), whose xchg sees 0 and frees it.
 * Return: true if the work is not ours any more.
 */
static bool fsm_ust_work_disarm(struct fsm_ust_work *w)
{
	if (!w)
		return false;
	WRITE_ONCE(w->head.func, fsm_compat_kfree_task_work());
	return atomic_xchg(&w->queued, 0);
}

/* ---- requests ---- */

/*
 * Request (any context, NMI included; fsm_ustack_request(), called by the
 * capture of an instance with options/stackmap_user set, record.c):
 *   refuse kernel threads, io workers, exiting tasks, tasks without mm or
 *   not coming from user space; find or claim the task's slot and take a
 *   reference on it (ustack.c); ask the per-entry cache (fsm_uwc_request);
 *   drop the reference. The first request of an
 *   entry queues the slot's task work with task_work_add(TWA_RESUME):
 *   directly from task/irq context, through a per-CPU hard irq_work from
 *   NMI (task_work_add is not NMI-safe, and the irq_work's interrupt makes
 *   the return to user space run the work now) and on KASAN kernels always
 *   (the add may allocate).
 */

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
	u64 cookie = 0, c = 0;
	bool busy;
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
	/* our walk work's own events after its entry ended (the buffer's free) */
	if (unlikely(this_cpu_read(fsm_ust_freeing) == t) && in_task()) {
		fsm_ust_count(inst_id, FSM_UST_SELF);
		return 0;
	}
	slot = fsm_ust_slot_get(t, &busy);
	if (!slot) {
		fsm_ust_count(inst_id, busy ? FSM_UST_BUSY : FSM_UST_NO_SLOT);
		return 0;
	}
	/*
	 * The loop bound of fsm_ust_close(), for task-context requests that
	 * would start an entry: an interrupt or NMI that asks (a timer
	 * sampling a user spin loop: identical registers each time) opens an
	 * entry of its own and cannot be that loop.
	 */
	if (in_task() && fsm_uwc_state(&slot->uwc, NULL) == FSM_UWC_STATE_IDLE &&
	    unlikely(fsm_ust_hist_refuses(t, regs))) {
		fsm_ust_count(inst_id, FSM_UST_SAME_REGS);
		goto out;
	}
	ret = fsm_uwc_request(&slot->uwc, fsm_ust_sig(regs), inst_id,
			      this_cpu_ptr(&fsm_ust_seq), raw_smp_processor_id(),
			      &c);
	switch (ret) {
	case FSM_UWC_QUEUE:
		/* the entry's reference, dropped by the walk work or a refusal */
		fsm_ust_slot_hold(slot);
		/* only the claimer writes it; the queue publishes it */
		slot->walk->exec_id = t->self_exec_id;
		if (!fsm_ust_queue(slot->walk)) {
			/*
			 * Nobody will walk this entry: end it now, or every
			 * later request of the task would join it forever.
			 */
			fsm_ust_work_refused(slot->walk);
			fsm_ust_count(inst_id, FSM_UST_QUEUE_FAILED);
			goto out;
		}
		fsm_ust_count(inst_id, FSM_UST_QUEUED);
		break;
	case FSM_UWC_PENDING:
	case FSM_UWC_DELIVERED:
		fsm_ust_count(inst_id, FSM_UST_REUSES);
		break;
	case FSM_UWC_CACHED:
		/*
		 * The walk is done and its work is running (DONE lasts only
		 * that long): it serves us before it ends the entry.
		 */
		fsm_ust_count(inst_id, FSM_UST_LATE);
		break;
	default:
		fsm_ust_count(inst_id, FSM_UST_BUSY);
		goto out;
	}
	fsm_ust_count(inst_id, FSM_UST_REQUESTS);
	cookie = c;
out:
	fsm_ust_slot_put(slot);
	return cookie;
}

/**
 * fsm_ustack_init - allocate the task table and the works, hook task frees.
 * Context: task (module init, before any stack_id probe is attached).
 * Return: 0 or -errno.
 */
int fsm_ustack_init(void)
{
	unsigned int i;
	int cpu, ret;

	ret = fsm_ust_events_check();
	if (ret)
		return ret;
	get_random_bytes(&fsm_ust_mm_siphash, sizeof(fsm_ust_mm_siphash));
	ret = fsm_fileid_init();
	if (ret)
		return ret;
	ret = fsm_ust_sweepers_init();
	if (ret)
		goto fail;
	ret = fsm_ust_table_init();
	if (ret)
		goto fail;
	for (i = 0; i < fsm_ust_nslots; i++) {
		struct fsm_ust_slot *slot = &fsm_ust_slots[i];

		slot->walk = fsm_ust_work_new(slot);
		if (!slot->walk) {
			ret = -ENOMEM;
			goto fail;
		}
	}
	/*
	 * Hard: on PREEMPT_RT a plain irq_work runs in a kthread, late; the
	 * queue holds task references and slot references meanwhile, and
	 * the hand-off is meant to reach the task before it returns to user
	 * space. fsm_ust_nmiq_fn() adds task works (no sleeping lock).
	 */
	for_each_possible_cpu(cpu)
		per_cpu(fsm_ust_nmiq, cpu).work = IRQ_WORK_INIT_HARD(fsm_ust_nmiq_fn);
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
	fsm_ust_table_exit();
	fsm_ust_sweepers_exit();
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
	/* and the user sweeps handed to task context (no kick after the above) */
	fsm_ust_sweepers_exit();
	for (i = 0; i < fsm_ust_nslots; i++) {
		struct fsm_ust_slot *slot = &fsm_ust_slots[i];

		if (fsm_ust_work_disarm(slot->walk))
			slot->walk = NULL;	/* its task frees it */
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
	fsm_ust_table_exit();
	fsm_fileid_exit();
}

