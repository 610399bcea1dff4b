// SPDX-License-Identifier: GPL-2.0
/*
 * verdict.c - the judge and post slots: whether the record a post-commit
 * trigger follows was kept ("The verdict" below). Used by the stackmap
 * trigger (trigger.c) and the trigger backend of sources (src_trig.c),
 * each with slots of its own (verdict.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/rculist.h>
#include <linux/ring_buffer.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/trace_events.h>

#include "compat/ksyms.h"
#include "compat/layouts.h"
#include "verdict.h"

#if FSM_HAVE_KL_TRIGGER


/* Context: the event, preemption disabled. */
static void notrace fsm_trig_snap_take(struct trace_event_file *file,
				       struct fsm_trig_snap *s)
{
	s->flags = READ_ONCE(file->flags) & FSM_TRIG_FL;
	/*
	 * __event_trigger_test_discard() reads file->filter the same way;
	 * it is freed after tracepoint_synchronize_unregister(), which
	 * waits for us.
	 */
	s->filter = rcu_dereference_raw(file->filter);
	s->ignore_pid = (s->flags & EVENT_FILE_FL_PID_FILTER) &&
			trace_event_ignore_this_pid(file);
}

static bool notrace fsm_trig_snap_same(const struct fsm_trig_snap *a,
				       const struct fsm_trig_snap *b)
{
	return a->flags == b->flags && a->filter == b->filter &&
	       a->ignore_pid == b->ignore_pid;
}

static unsigned long notrace fsm_trig_csw(struct task_struct *task)
{
	return READ_ONCE(task->nvcsw) + READ_ONCE(task->nivcsw);
}

/*
 * Take the verdict left in @slots for the owner @me (the post call's half
 * of "The verdict" below).
 * Context: the post call, preemption disabled.
 * Return: 1 keep, 0 discarded, FSM_VERDICT_NONE.
 */
int notrace fsm_verdict_take(struct fsm_verdict_slots __percpu *slots,
			     unsigned long me, struct trace_event_file *file)
{
	unsigned char level = interrupt_context_level();
	struct fsm_trig_verdict *v, seen;
	struct fsm_trig_snap now;
	unsigned long tag;

	if (unlikely(level >= FSM_TRIG_LEVELS))
		return FSM_VERDICT_NONE;
	v = &this_cpu_ptr(slots)->v[level];
	/* the stamp first, then take the tag: see "The verdict" below */
	seen.task = READ_ONCE(v->task);
	seen.csw = READ_ONCE(v->csw);
	seen.snap = v->snap;
	barrier();
	tag = this_cpu_xchg(slots->v[level].tag, 0);
	if ((tag & ~FSM_TRIG_KEEP) != me)
		return FSM_VERDICT_NONE;
	if (seen.task != current || seen.csw != fsm_trig_csw(current))
		return FSM_VERDICT_NONE;
	fsm_trig_snap_take(file, &now);
	if (!fsm_trig_snap_same(&seen.snap, &now))
		return FSM_VERDICT_NONE;
	return !!(tag & FSM_TRIG_KEEP);
}

/*
 * A freed owner's memory can come back as another owner: clear the slots
 * that still name it. Context: task, after the owner's judging data left
 * its event.
 */
void fsm_verdict_clear(struct fsm_verdict_slots __percpu *slots,
		       unsigned long me)
{
	int cpu, l;

	for_each_possible_cpu(cpu)
		for (l = 0; l < FSM_TRIG_LEVELS; l++) {
			unsigned long *p = &per_cpu_ptr(slots, cpu)->v[l].tag;

			cmpxchg(p, me, 0);
			cmpxchg(p, me | FSM_TRIG_KEEP, 0);
		}
}

/*
 * The verdict on the triggering event's record. A post trigger runs after
 * the commit whether the record went in or not (the kernel calls it on
 * its "discard" path too: the event is soft-disabled, its filter refused
 * the record, or set_event_pid did), and it gets no record to look at.
 * Records are paired with their source record by position: an id record
 * written for a discarded record would follow some other record and hand
 * it a foreign stack.
 *
 * So each stackmap trigger has a companion trigger data on the same
 * event (t->comp, command fsm_vcmd: flag NEEDS_REC, type ETT_NONE, not
 * on trigger_commands): event_triggers_call() calls it with the record
 * before __event_trigger_test_discard() decides, and it makes the same
 * tests (soft-disabled, the event's filter on the record, the pid filter)
 * and leaves the verdict in a per-CPU slot of its interrupt context level
 * (task, softirq, irq, NMI). The post trigger of the same event, same CPU,
 * same level takes it. The companion is invisible to the kernel's trigger
 * code: it prints nothing in the trigger file, no command has its type
 * (register_trigger's EEXIST, unregister_trigger, "!stackmap" and O_TRUNC
 * never match it), and it holds one tm_ref like any trigger
 * (register_trigger/unregister_trigger or clear_event_triggers keep the
 * count).
 *
 * Order in file->triggers: the companion is added after the trigger, at
 * the head (register_trigger()'s list_add_rcu in 6.1 and 6.12), so it
 * comes first; nothing is ever added between them (fsm_trig_comp_reg()
 * checks it).
 * clear_event_triggers() (rmdir) therefore frees it before the trigger;
 * "!stackmap" and rmmod take the trigger off, whose free takes the
 * companion off (fsm_trig_free()).
 *
 * A verdict is written only for a hit that will reach the post trigger:
 * the companion makes event_triggers_call()'s own test of the trigger
 * (not paused, the trigger's "if" on the record) and, when it refuses,
 * clears the slot instead. So no slot is left behind by a refused hit.
 *
 * The slot (struct fsm_trig_verdict): @tag is the trigger and the verdict
 * in one word (t | keep; t is at least 8-aligned), 0 = none. The other
 * fields stamp the hit: the task and its context switch count (nvcsw +
 * nivcsw: any preemption, sleep or migration between the two calls
 * changes it, and a uprobe's post trigger runs with preemption enabled),
 * and a snapshot of what __event_trigger_test_discard() reads after the
 * companion (the file flags it tests, file->filter, the pid filter's
 * answer). The post trigger takes the verdict only if the tag is its own
 * and the task, the count and a fresh snapshot are equal; anything else
 * is "no verdict". A filter is freed only after
 * tracepoint_synchronize_unregister(), which waits for the whole event
 * (both calls are inside one RCU or RCU-sched section): an equal
 * filter pointer is the same filter.
 *
 * Memory ordering. A slot is written and read on its own CPU only (both
 * calls run with preemption disabled), so only an interrupt or NMI that
 * nests at the same context level can interleave (an int3 kprobe inside
 * an NMI handler, an NMI inside an int3 handler: both level 3). A nested
 * event runs to completion before the outer code resumes, and a nested
 * companion is always followed by its own post trigger (see above), which
 * takes the tag (xchg to 0): a complete nested pair leaves tag == 0.
 * - The companion first clears the tag (this_cpu_write), then writes the
 *   stamp, then (barrier(): compiler order is all a same-CPU reader
 *   needs) publishes the tag. A nested post trigger in between sees
 *   tag 0, never a tag with the stamp of another hit.
 * - The post trigger reads the stamp first, then (barrier()) takes the
 *   tag with this_cpu_xchg() (one instruction for interrupts on this CPU).
 *   A nested pair before the xchg leaves tag 0: no verdict. A nested pair
 *   after it cannot change what was taken. So the tag and the stamp used
 *   belong to one companion call.
 *
 * A post call never takes the verdict of an earlier hit. A
 * judge (the companion, or a source's judge) sits right before its post
 * data on the list: a source's pair is linked at the tail, the judge
 * first, and unlinked together (fsm_srct_link_locked()); a companion is
 * added at the head, right before its trigger (fsm_trig_comp_reg()). The
 * only pointer to the post data is the judge's ->next, in the link it was
 * added with and in any later one (list_del_rcu() leaves ->next as it
 * was), and list_for_each_entry_rcu() calls an entry before it reads its
 * ->next: every walk of file->triggers that calls a post has called its
 * judge first. One exception: the kernel's clear_event_triggers() (rmdir
 * with kprobes disarmed, the hook did not take the pair off) deletes the
 * judge first, so for a moment the entry before it points at the post and
 * a walk can call the post without its judge. Harmless: the post takes
 * only a verdict tagged with its pair and stamped with this task, CPU,
 * level and switch count, and a verdict left by an earlier hit of the
 * same task with no switch since would have been taken by that hit's own
 * post (the deleted judge's ->next still leads to it); what remains is
 * the same-level nested case listed below as not closed. A walk is one
 * of:
 * - event_triggers_call() with the record, before the commit: the judge
 *   writes this hit's verdict (a tag, or 0), and the walk adds the post's
 *   type to tt only after that. event_triggers_post_call() calls the post
 *   only for a type in tt: the post call of a hit always follows the
 *   judge call of the same hit (nested events leave the slot as above);
 * - an unconditional walk, event_triggers_call(file, NULL, NULL, NULL),
 *   from trace_trigger_soft_disabled(): the event is in trigger mode
 *   (another trigger's tm_ref) and TRIGGER_COND was clear when the flags
 *   were read (no record is needed), e.g. the pair was linked after that
 *   read and before its update_cond_flag(). It calls every data, the
 *   post too, with no record, before the record exists. The judge clears
 *   the slot then (fsm_verdict_none()), so the post finds no verdict.
 * So the verdict a post takes was written in the same walk or hit. Before
 * this, an unconditional walk left the slot alone: a hit whose post was
 * skipped (its pair unlinked between its judge and its post: a refused
 * removal, options/stackmap 1-0-1, relinked with no grace period) left a
 * verdict that the next unconditional walk of the same task took: an id
 * record with the stack of the later hit, written before that hit's own
 * record, after the earlier one's. No sequence number is needed on top:
 * the slot has one writer per walk, the judge, and it always writes.
 * Remaining ways to take a verdict that is not this hit's (not closed):
 * a flag or filter change and its undo, both between the companion and
 * the post trigger (ABA); a same-level nested hit of the same trigger
 * while its companion is being removed (the inner post finds the trigger
 * gone and leaves its tag, which the outer post can take).
 *
 * No verdict (the post trigger writes nothing, counted in
 * trigger_no_verdict): the hits of a trigger while its companion is not
 * on the list yet or any more (t->comp_on), a uprobe task preempted or
 * moved between the two calls, a change of enable/filter/set_event_pid
 * between them, an event nested at the same level on the same CPU in
 * between (the ring buffer's one allowed recursion, or another event with
 * its own stackmap trigger, e.g. a hist trigger's .trace() to a synthetic
 * event: the inner post trigger takes the slot). Slots of a freed trigger
 * are cleared before its memory can be reused (fsm_trig_clear_slots()).
 */

/* __event_trigger_test_discard()'s answer on @rec, from a snapshot. */
static bool notrace fsm_trig_keep(const struct fsm_trig_snap *s, void *rec)
{
	if (s->flags & EVENT_FILE_FL_SOFT_DISABLED)
		return false;
	if ((s->flags & EVENT_FILE_FL_FILTERED) && s->filter &&
	    !filter_match_preds(s->filter, rec))
		return false;
	return !s->ignore_pid;
}


/*
 * The kernel's temp_buffer (kernel/trace/trace.c): with trigger data that
 * needs the record (ours), trace_event_buffer_lock_reserve() falls back to
 * it when the instance's ring buffer refuses the reservation (tracing_on
 * is 0, the buffer is full in non-overwrite mode, recursion): the record
 * is then given to the triggers and recorded nowhere. Such a record is
 * judged "not kept": no id record may follow a record that is not there.
 * NULL when the symbol is not found (then such hits write an id record
 * whose source record is missing; said at load).
 */

static bool notrace fsm_trig_temp_buffer(struct trace_buffer *buffer)
{
	return fsm_ks.temp_buffer && buffer == READ_ONCE(*fsm_ks.temp_buffer);
}

/*
 * Judge @rec for the owner @me (a struct fsm_trig or struct fsm_srct,
 * 8-aligned) in @slots: the companion's half of "The verdict" above.
 * @will_post: the post call will come for this hit (else clear the slot).
 * Context: the event (any), a record to judge.
 */
/*
 * Trigger types whose data write records of their own from the pre-commit
 * call, while this event's record is reserved and not committed: an eprobe
 * (its event's record) and a hist trigger (onmatch/onmax/.trace() actions
 * write synthetic events). Their records land after this event's record
 * and before any id record the post call writes, which would then follow
 * the wrong record. A hist trigger without
 * actions writes nothing, but its actions are not visible from here: any
 * hist trigger counts. A snapshot trigger swaps the instance's buffer
 * under the reserved record: the id record would go to the new buffer,
 * after some older record. (The stacktrace trigger and options/stacktrace
 * write a kernel_stack record after the commit and before our post call:
 * a record of the kernel's own kind, which readers skip when they pair.)
 */
#define FSM_NESTED_WRITERS	(ETT_EVENT_HIST | ETT_EVENT_EPROBE | ETT_SNAPSHOT)

/*
 * A record the post call must not get an id for, whatever the filters say:
 * - another trigger of @file writes records in between (above);
 * - @rbe is longer than the ring buffer takes: such a record reserved in
 *   the per-CPU buffered event (filtered or soft-disabled events) is
 *   dropped by ring_buffer_write() at commit (BUF_MAX_DATA_SIZE, 4072
 *   bytes of data with 4 KiB pages, 8 fewer with absolute time stamps),
 *   silently. ring_buffer_event_length() of the
 *   buffered event reads 4 bytes short, so the bound is lower than that
 *   limit: a record of the ring buffer itself in the last bytes of the
 *   range gets no id either.
 * Context: the pre-commit trigger call (RCU read side of file->triggers).
 */
#define FSM_REC_MAX_LEN		(PAGE_SIZE - 64)

static bool notrace fsm_verdict_unpairable(struct trace_event_file *file,
					   struct ring_buffer_event *rbe)
{
	struct fsm_kl_trigger_data *d;

	if (rbe && ring_buffer_event_length(rbe) > FSM_REC_MAX_LEN)
		return true;
	list_for_each_entry_rcu(d, &file->triggers, list, true)
		if (d->cmd_ops &&
		    (d->cmd_ops->trigger_type & FSM_NESTED_WRITERS))
			return true;
	return false;
}

void notrace fsm_verdict_judge(struct fsm_verdict_slots __percpu *slots,
			       unsigned long me, struct trace_event_file *file,
			       bool will_post, void *rec,
			       struct trace_buffer *buffer,
			       struct ring_buffer_event *rbe)
{
	struct fsm_trig_verdict *v;
	unsigned long tag;
	unsigned char level;

	preempt_disable_notrace();
	level = interrupt_context_level();
	if (likely(level < FSM_TRIG_LEVELS)) {
		/* the tag off first, then the stamp, then the tag: see above */
		this_cpu_write(slots->v[level].tag, 0);
		barrier();
		tag = 0;
		/* unpairable: no verdict, the post call writes nothing */
		if (will_post && !fsm_verdict_unpairable(file, rbe)) {
			v = &this_cpu_ptr(slots)->v[level];
			v->task = current;
			v->csw = fsm_trig_csw(current);
			fsm_trig_snap_take(file, &v->snap);
			tag = me;
			/*
			 * Tracing off: besides temp_buffer, a record of an
			 * event with a filter is in the per-CPU buffered
			 * event, which ring_buffer_write() refuses at the
			 * commit.
			 */
			if (fsm_trig_keep(&v->snap, rec) &&
			    !fsm_trig_temp_buffer(buffer) &&
			    fsm_tracing_is_on(file->tr))
				tag |= FSM_TRIG_KEEP;
		}
		barrier();
		this_cpu_write(slots->v[level].tag, tag);
	}
	preempt_enable_notrace();
}

/*
 * An unconditional call of the judge (no record, see "The verdict"): no
 * verdict at this level, so that the post data, which the same walk calls
 * next, takes none. Context: the event (any).
 */
void notrace fsm_verdict_none(struct fsm_verdict_slots __percpu *slots)
{
	unsigned char level;

	preempt_disable_notrace();
	level = interrupt_context_level();
	if (likely(level < FSM_TRIG_LEVELS))
		this_cpu_write(slots->v[level].tag, 0);
	preempt_enable_notrace();
}

/*
 * The print of hidden judging data (the stackmap trigger's companion, a
 * source's post data): nothing, so the trigger file lists what the user
 * wrote and nothing else. Context: task (the trigger file's seq_file).
 * Return: 0.
 */
int fsm_verdict_print_none(struct seq_file *m, struct fsm_kl_trigger_data *data)
{
	return 0;
}

/**
 * fsm_verdict_check_temp_buffer - say once if temp_buffer was not found.
 * Context: task (module init).
 */
void fsm_verdict_check_temp_buffer(void)
{
	static bool said;

	if (fsm_ks.temp_buffer || said)
		return;
	said = true;
	pr_warn("kallsyms: no temp_buffer: a record made while tracing is off may still get an id record\n");
}

#endif /* FSM_HAVE_KL_TRIGGER */
