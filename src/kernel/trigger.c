// SPDX-License-Identifier: GPL-2.0
/*
 * trigger.c - the "stackmap" event trigger, the counterpart of the kernel's
 * "stacktrace" trigger (Documentation/tracing.rst, "The stackmap trigger").
 *
 *   echo 'stackmap' > events/SYS/EV/trigger         # every hit
 *   echo 'stackmap:5 if pid > 1' > ...              # count and filter
 *   echo 'stackmap:user' > ...                      # user stack too
 *   echo '!stackmap' > ...                          # remove
 *
 * A post trigger (EVENT_CMD_FL_POST_TRIGGER): it runs after the event's
 * record was committed (or discarded), follows its own "if" filter, not the
 * event's, exactly as "stacktrace". Each hit writes the stack id records of
 * fsm_record_event_to() into the instance of the triggering event, through
 * that instance's stackmap:stack_id file, whether or not stack_id is
 * enabled there (stacktrace needs no enable either).
 *
 * How it gets in (6.1): register_event_command() is __init and not
 * exported, and struct event_command is not in the public headers. So:
 * - the layouts are checked at build time (compat/layouts.h); without them
 *   the trigger is built out and dmesg says why at load;
 * - the static trigger_commands list, trigger_cmd_mutex, event_mutex and
 *   the kernel's own trigger_stacktrace_cmd are found through kallsyms
 *   (compat.c); stacktrace's command is checked (name, type, flags) and
 *   its generic callbacks are reused: parse (event_trigger_parse), unreg
 *   (unregister_trigger), set_filter (set_trigger_filter), and the init/
 *   free of its ops (event_trigger_init/event_trigger_free). Only parse
 *   and reg are wrapped: parse strips a leading "user" parameter (which the
 *   kernel's parser would take for a filter) and notes it for
 *   get_trigger_ops; reg finds our instance, prepares its map and tracks
 *   the trigger. It has no unreg_all, so "echo > trigger" (O_TRUNC) keeps
 *   stacktrace triggers, and ours too: the same rule.
 *
 * Lifecycle (all under event_mutex, which the kernel holds around parse,
 * reg, unreg and ops->free):
 * - a registered trigger has a struct fsm_trig (its data->private_data,
 *   in place of the event file the kernel's parser put there), on
 *   fsm_trigs, holding a reference on our instance;
 * - ops->free with the last reference (unregister_trigger: "!stackmap";
 *   clear_event_triggers: rmdir of the instance) lets the kernel's free
 *   wait for running triggers (tracepoint_synchronize_unregister() in
 *   trigger_data_free()) and free the data; then fsm_trig goes;
 * - rmmod (fsm_trigger_exit()): under event_mutex, the command leaves
 *   trigger_commands first (under trigger_cmd_mutex: no new "stackmap"
 *   can be parsed, and event_mutex is held throughout, so none was parsed
 *   in between), then every tracked trigger is unregistered with the
 *   command's unreg, as "!stackmap" would. Then synchronize_rcu() (which
 *   covers RCU-sched) and tracepoint_synchronize_unregister(): no trigger
 *   callback (module text) runs any more when the module goes;
 * - a kprobe or synthetic event with a stackmap trigger cannot be removed
 *   (EBUSY): the trigger soft-enables the event, the kernel's rule for
 *   every trigger.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/kprobes.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/rculist.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/trace_events.h>
#include <linux/tracepoint.h>
#include <linux/utsname.h>

#include "compat/compat.h"
#include "compat/ksyms.h"
#include "compat/layouts.h"
#include "tracing.h"
#include "ustack.h"

#define FSM_TRIG_NAME	"stackmap"

#if FSM_HAVE_KL_TRIGGER
/* The verdict slots ("The verdict" below): of stackmap triggers and sources. */
#define FSM_TRIG_FL	(EVENT_FILE_FL_SOFT_DISABLED | EVENT_FILE_FL_FILTERED | \
			 EVENT_FILE_FL_PID_FILTER)

/* What __event_trigger_test_discard() reads after the companion. */
struct fsm_trig_snap {
	unsigned long flags;		/* file->flags & FSM_TRIG_FL */
	struct event_filter *filter;	/* file->filter */
	bool ignore_pid;		/* the pid filter refuses this task */
};

struct fsm_trig_verdict {
	unsigned long tag;		/* fsm_trig | keep; 0 = none */
	struct task_struct *task;
	unsigned long csw;		/* task->nvcsw + task->nivcsw */
	struct fsm_trig_snap snap;
};

#define FSM_TRIG_KEEP	1UL

#define FSM_TRIG_LEVELS 4	/* interrupt_context_level(): 0..3 */
struct fsm_verdict_slots {
	struct fsm_trig_verdict v[FSM_TRIG_LEVELS];
};

/* sources: the trigger-path judges */
static DEFINE_PER_CPU(struct fsm_verdict_slots, fsm_src_verdicts);

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

#define FSM_VERDICT_NONE	-1

/*
 * Take the verdict left in @slots for the owner @me (the post call's half
 * of "The verdict" below).
 * Context: the post call, preemption disabled.
 * Return: 1 keep, 0 discarded, FSM_VERDICT_NONE.
 */
static int notrace fsm_verdict_take(struct fsm_verdict_slots __percpu *slots,
				    unsigned long me,
				    struct trace_event_file *file)
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
static void fsm_verdict_clear(struct fsm_verdict_slots __percpu *slots,
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

#endif /* FSM_HAVE_KL_TRIGGER */

/* Probe mode chosen at load: say what it cannot see. Context: task. */
static void fsm_probe_warn(void)
{
	if (!fsm_tracing_state_known())
		pr_warn("tracer_tracing_is_on not found: tracepoint-probe sources insert stacks while tracing is off\n");
}

#if FSM_HAVE_KL_TRIGGER

/* stacktrace's callbacks, reused */
static int (*fsm_k_init)(struct fsm_kl_trigger_data *data);
static void (*fsm_k_free)(struct fsm_kl_trigger_data *data);
/* free_event_filter(), for the rmmod path (NULL: free one by one) */
static void (*fsm_k_free_filter)(struct event_filter *filter);

static struct fsm_kl_command fsm_cmd;
/* The commands of a source's trigger data pair: never on trigger_commands. */
static struct fsm_kl_command fsm_srct_jcmd = {
	.name = "stackmap_source",
	.flags = FSM_KL_CMD_FL_NEEDS_REC,
};
static struct fsm_kl_command fsm_srct_pcmd = {
	.name = "stackmap_source",
	.flags = FSM_KL_CMD_FL_POST_TRIGGER,
};
static bool fsm_cmd_on;		/* fsm_cmd is on trigger_commands */
/* The trimmed frame: event_triggers_post_call() calls the trigger. */
static struct fsm_src *fsm_trig_src;

/**
 * struct fsm_trig - one registered stackmap trigger.
 * @node:     in fsm_trigs (event_mutex)
 * @data:     the kernel's trigger data (private_data points here)
 * @file:     the triggering event's file
 * @sid_file: our stackmap:stack_id file in the same instance: the records
 *            go through it; valid as long as the instance (its triggers
 *            are cleared before its files are freed) and this module
 * @inst:     our instance (a reference held)
 * @mod:      the module of the triggering event (a reference held), or
 *            NULL (built-in or dynamic event): its event files live as
 *            long as the module, and rmmod of it would free @file under
 *            the trigger (the kernel never clears a module's triggers)
 * @comp:     the companion trigger data that judges the record
 *            (fsm_trig_judge())
 * @comp_on:  @comp is on the event's trigger list (event_mutex; read by
 *            the trigger)
 */
struct fsm_trig {
	struct list_head node;
	struct fsm_kl_trigger_data *data;
	struct trace_event_file *file;
	struct trace_event_file *sid_file;
	struct fsm_inst *inst;
	struct module *mod;
	struct fsm_kl_trigger_data comp;
	bool comp_on;
};

static LIST_HEAD(fsm_trigs);
/* rmmod: triggers off their events, freed after one grace period */
static LIST_HEAD(fsm_trigs_dead);
static bool fsm_trig_exiting;	/* event_mutex */
/* "user" seen by fsm_trig_parse(), for fsm_trig_get_ops() (event_mutex) */
static bool fsm_parse_user;
/* fsm_trig_reg() said why it refused (event_mutex): one dmesg line */
static bool fsm_reg_said;

/*
 * Count down data->count (-1: unlimited), as stacktrace_count_trigger()
 * does, but with cmpxchg: two CPUs that both see 1 cannot both fire (and
 * wrap the count to "unlimited"), so ":N" gives exactly N records. Each
 * failed cmpxchg means another CPU took one: at most count + CPUs rounds.
 * Context: the trigger. Return: true to fire.
 */
static bool notrace fsm_trig_take(struct fsm_kl_trigger_data *data)
{
	unsigned long c = READ_ONCE(data->count);

	for (;;) {
		unsigned long old;

		if (!c)
			return false;
		if (c == -1UL)
			return true;
		old = cmpxchg(&data->count, c, c - 1);
		if (old == c)
			return true;
		c = old;
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
 * the head (register_trigger()'s list_add_rcu in 6.1), so it comes first;
 * nothing is ever added between them (fsm_trig_comp_reg() checks it).
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
 * A post call never takes the verdict of an earlier hit (review s7). A
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
static_assert(__alignof__(struct fsm_trig) > FSM_TRIG_KEEP);

/*
 * The slots of stackmap triggers, and those of sources (fsm_srct below):
 * apart, since one event may have both, and all its pre-commit calls run
 * before all its post calls: one slot would hold the verdict of only one.
 */
static DEFINE_PER_CPU(struct fsm_verdict_slots, fsm_verdicts);

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
 * event_triggers_call()'s test of the stackmap trigger itself on @rec:
 * true if its post trigger will be called for this hit.
 */
static bool notrace fsm_trig_will_post(struct fsm_kl_trigger_data *data,
				       void *rec)
{
	struct event_filter *filter;

	if (READ_ONCE(data->paused))
		return false;
	filter = rcu_dereference_sched(data->filter);
	return !filter || filter_match_preds(filter, rec);
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
 * the wrong record (review src5, finding 2). A hist trigger without
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
 *   silently (review src5, finding 3). ring_buffer_event_length() of the
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

static void notrace fsm_verdict_judge(struct fsm_verdict_slots __percpu *slots,
				      unsigned long me,
				      struct trace_event_file *file,
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
			 * commit (review s8 F2).
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
static void notrace fsm_verdict_none(struct fsm_verdict_slots __percpu *slots)
{
	unsigned char level;

	preempt_disable_notrace();
	level = interrupt_context_level();
	if (likely(level < FSM_TRIG_LEVELS))
		this_cpu_write(slots->v[level].tag, 0);
	preempt_enable_notrace();
}



/* The companion's trigger: judge @rec. Context: the event (any). */
static void notrace fsm_trig_judge(struct fsm_kl_trigger_data *data,
				   struct trace_buffer *buffer, void *rec,
				   struct ring_buffer_event *rbe)
{
	struct fsm_trig *t = container_of(data, struct fsm_trig, comp);

	if (!rec) {	/* an unconditional call: the post comes next */
		fsm_verdict_none(&fsm_verdicts);
		return;
	}
	fsm_verdict_judge(&fsm_verdicts, (unsigned long)t, t->file,
			  fsm_trig_will_post(t->data, rec), rec, buffer, rbe);
}

/*
 * Take the verdict the companion left for this hit.
 * Context: the trigger, preemption disabled. Return: true to write.
 */
static bool notrace fsm_trig_record_kept(struct fsm_trig *t)
{
	int v = FSM_VERDICT_NONE;

	if (likely(READ_ONCE(t->comp_on)))
		v = fsm_verdict_take(&fsm_verdicts, (unsigned long)t, t->file);
	if (v != FSM_VERDICT_NONE)
		return v;
	local64_inc(&this_cpu_ptr(t->inst->pcpu)->trig_no_verdict);
	return false;
}

/*
 * A freed trigger's memory can come back as another trigger: clear the
 * slots that still name it. Context: task, after @t's companion left its
 * event (from its free, and again after the grace period that follows).
 */
static void fsm_trig_clear_slots(struct fsm_trig *t)
{
	fsm_verdict_clear(&fsm_verdicts, (unsigned long)t);
}

/* The companion prints nothing: the trigger file lists stackmap once. */
static int fsm_trig_print_none(struct seq_file *m,
			       struct fsm_kl_trigger_data *data)
{
	return 0;
}

/*
 * The companion's free: called by unregister_trigger() (from
 * fsm_trig_free()) or clear_event_triggers(), after it left the list. The
 * memory is the trigger's (freed with it).
 * Context: task, event_mutex held.
 */
static void fsm_trig_comp_free(struct fsm_kl_trigger_data *data)
{
	struct fsm_trig *t = container_of(data, struct fsm_trig, comp);

	lockdep_assert_held(fsm_ks.event_mutex);
	WRITE_ONCE(t->comp_on, false);
	/*
	 * rmdir (clear_event_triggers()) unlinks us and calls this before
	 * it unlinks the trigger: a post trigger that skipped the unlinked
	 * companion may still read comp_on == true. Its hit wrote no stamp,
	 * and no verdict of an earlier hit is left (see "The verdict"); clear
	 * what a racing companion call may still have left, too.
	 */
	fsm_trig_clear_slots(t);
}

static struct fsm_kl_trigger_ops fsm_vops = {
	.trigger = fsm_trig_judge,
	.print = fsm_trig_print_none,
	.free = fsm_trig_comp_free,
};

/* The companion's command: never on trigger_commands. */
static struct fsm_kl_command fsm_vcmd = {
	.name = FSM_TRIG_NAME,
	.trigger_type = ETT_NONE,
	.flags = FSM_KL_CMD_FL_NEEDS_REC,
};

/*
 * One hit: check the record was kept, take one from ":N", write.
 * The trigger may run with preemption enabled: a uprobe event's post
 * trigger runs after the ring buffer's unlock under rcu_read_lock() only
 * (uprobe_trace_func()). fsm_record_event_to() uses per-CPU buffers and
 * counters and trace_event_buffer_reserve()'s context: disable preemption
 * around it, as fsm_write_reset_record() does. Interrupts that nest are
 * fine: the per-CPU reservation counts levels.
 * @caller: event_triggers_post_call()'s frame, taken by the callback it
 * called (FSM_CALLER(): the capture starts there, see fsm_capture()).
 * Context: the trigger (any context; rcu_read_lock or rcu_read_lock_sched).
 */
static void notrace fsm_trig_fire(struct fsm_kl_trigger_data *data, bool user,
				  bool counted, const struct fsm_caller *caller)
{
	struct fsm_trig *t = data->private_data;

	preempt_disable_notrace();
	if (fsm_trig_record_kept(t) && (!counted || fsm_trig_take(data)))
		fsm_record_event_to(t->inst, t->sid_file, fsm_trig_src, user,
				    caller);
	preempt_enable_notrace();
}

static void notrace fsm_trig_kernel(struct fsm_kl_trigger_data *data,
				    struct trace_buffer *buffer, void *rec,
				    struct ring_buffer_event *rbe)
{
	struct fsm_caller caller;

	FSM_CALLER(&caller);
	fsm_trig_fire(data, false, false, &caller);
}
NOKPROBE_SYMBOL(fsm_trig_kernel);

static void notrace fsm_trig_kernel_count(struct fsm_kl_trigger_data *data,
					  struct trace_buffer *buffer, void *rec,
					  struct ring_buffer_event *rbe)
{
	struct fsm_caller caller;

	FSM_CALLER(&caller);
	fsm_trig_fire(data, false, true, &caller);
}
NOKPROBE_SYMBOL(fsm_trig_kernel_count);

static void notrace fsm_trig_user(struct fsm_kl_trigger_data *data,
				  struct trace_buffer *buffer, void *rec,
				  struct ring_buffer_event *rbe)
{
	struct fsm_caller caller;

	FSM_CALLER(&caller);
	fsm_trig_fire(data, true, false, &caller);
}
NOKPROBE_SYMBOL(fsm_trig_user);

static void notrace fsm_trig_user_count(struct fsm_kl_trigger_data *data,
					struct trace_buffer *buffer, void *rec,
					struct ring_buffer_event *rbe)
{
	struct fsm_caller caller;

	FSM_CALLER(&caller);
	fsm_trig_fire(data, true, true, &caller);
}
NOKPROBE_SYMBOL(fsm_trig_user_count);

/* The kernel's event_trigger_print() format, "stackmap" or "stackmap:user". */
static int fsm_trig_print_as(struct seq_file *m, struct fsm_kl_trigger_data *data,
			     const char *name)
{
	long count = (long)data->count;

	seq_puts(m, name);
	if (count == -1)
		seq_puts(m, ":unlimited");
	else
		seq_printf(m, ":count=%ld", count);
	if (data->filter_str)
		seq_printf(m, " if %s\n", data->filter_str);
	else
		seq_putc(m, '\n');
	return 0;
}

static int fsm_trig_print(struct seq_file *m, struct fsm_kl_trigger_data *data)
{
	return fsm_trig_print_as(m, data, FSM_TRIG_NAME);
}

static int fsm_trig_print_user(struct seq_file *m,
			       struct fsm_kl_trigger_data *data)
{
	return fsm_trig_print_as(m, data, FSM_TRIG_NAME ":user");
}

static int fsm_trig_init(struct fsm_kl_trigger_data *data)
{
	return fsm_k_init(data);
}

/*
 * ops->free: the kernel calls it when the trigger leaves its event
 * ("!stackmap", rmdir of the instance, rmmod through our unreg). With the
 * last reference the kernel's free waits for running triggers and frees
 * @data; only then does our part go.
 * Context: task, event_mutex held.
 */
static void fsm_trig_free(struct fsm_kl_trigger_data *data)
{
	struct fsm_trig *t = data->private_data;
	bool last = data->ref == 1;

	lockdep_assert_held(fsm_ks.event_mutex);
	if (last) {
		list_del_init(&t->node);
		/* the companion goes too (its free clears comp_on) */
		if (t->comp_on)
			fsm_ks.trigger_stacktrace_cmd->unreg(FSM_TRIG_NAME, &t->comp, t->file);
	}
	if (last && fsm_trig_exiting && fsm_k_free_filter) {
		/*
		 * rmmod: event_trigger_free() without its grace periods
		 * (trigger_data_free() waits once for the filter, once for
		 * the data): off every list now, freed by
		 * fsm_trig_release() after one wait for all of them.
		 */
		data->ref--;
		list_add_tail(&t->node, &fsm_trigs_dead);
		return;
	}
	fsm_k_free(data);
	if (last) {
		fsm_trig_clear_slots(t);
		module_put(t->mod);
		fsm_inst_put(t->inst);
		kfree(t);
	}
}

/*
 * The rest of 6.1's trigger_data_free() (kernel/trace/trace_events_
 * trigger.c) for a trigger fsm_trig_free() queued at rmmod: its filter
 * (set_trigger_filter(NULL): free_event_filter() and filter_str), the
 * data, then our part.
 * Context: task, after tracepoint_synchronize_unregister() following the
 * removal of @t's data from its event (no trigger callback can see it).
 */
static void fsm_trig_release(struct fsm_trig *t)
{
	struct fsm_kl_trigger_data *data = t->data;
	struct event_filter *filter = rcu_access_pointer(data->filter);

	if (filter)
		fsm_k_free_filter(filter);
	kfree(data->filter_str);
	kfree(data);
	fsm_trig_clear_slots(t);
	module_put(t->mod);
	fsm_inst_put(t->inst);
	kfree(t);
}

/* [user][count], as stacktrace_get_trigger_ops() for the count */
static struct fsm_kl_trigger_ops fsm_ops[2][2] = {
	{
		{ .trigger = fsm_trig_kernel, .print = fsm_trig_print,
		  .init = fsm_trig_init, .free = fsm_trig_free },
		{ .trigger = fsm_trig_kernel_count, .print = fsm_trig_print,
		  .init = fsm_trig_init, .free = fsm_trig_free },
	}, {
		{ .trigger = fsm_trig_user, .print = fsm_trig_print_user,
		  .init = fsm_trig_init, .free = fsm_trig_free },
		{ .trigger = fsm_trig_user_count, .print = fsm_trig_print_user,
		  .init = fsm_trig_init, .free = fsm_trig_free },
	},
};

static bool fsm_ops_user(const struct fsm_kl_trigger_ops *ops)
{
	return ops == &fsm_ops[1][0] || ops == &fsm_ops[1][1];
}

/* Context: task, event_mutex held (trigger_data_alloc() in parse). */
static struct fsm_kl_trigger_ops *fsm_trig_get_ops(char *cmd, char *param)
{
	return &fsm_ops[fsm_parse_user][param != NULL];
}

/*
 * The kernel's event_trigger_parse(), after taking a leading "user"
 * parameter off: "user", "user:N", "user if ...", "user:N if ...".
 * Context: task, event_mutex and trigger_cmd_mutex held.
 */
static int fsm_trig_parse(struct fsm_kl_command *cmd,
			  struct trace_event_file *file, char *glob,
			  char *cmdstr, char *param_and_filter)
{
	char *p = param_and_filter;
	char *text;
	int ret;

	lockdep_assert_held(fsm_ks.event_mutex);
	/* the kernel's parser cuts the text (strsep): keep it for dmesg */
	text = param_and_filter ? kstrdup(param_and_filter, GFP_KERNEL) : NULL;
	fsm_parse_user = false;
	if (p && !strncmp(p, "user", 4) &&
	    (!p[4] || p[4] == ':' || isspace(p[4]))) {
		fsm_parse_user = true;
		p += 4;
		if (*p == ':')
			p++;
		p = skip_spaces(p);
		if (!*p)
			p = NULL;
	}
	fsm_reg_said = false;
	ret = fsm_ks.trigger_stacktrace_cmd->parse(cmd, file, glob, cmdstr, p);
	fsm_parse_user = false;
	/* ":N" past unsigned long: kstrtoul()'s -ERANGE is bad input too */
	if (ret == -ERANGE)
		ret = -EINVAL;
	if (ret == -EINVAL && !fsm_reg_said)
		pr_warn_ratelimited("%s:%s: trigger '%s%s%s' refused (expected [!]stackmap[:user][:N] [if FILTER])\n",
				    file->event_call->class->system,
				    trace_event_name(file->event_call), glob,
				    param_and_filter ? ":" : "",
				    param_and_filter ? (text ? text : "...") : "");
	kfree(text);
	return ret;
}

/*
 * Put the companion of @t on its event, after @t's data (see "The verdict"
 * above): register_trigger() links it at the head, takes a tm_ref and
 * sets the event's TRIGGER_COND (NEEDS_REC). It cannot fail: the only
 * type-0 data of an event is the companion of its one stackmap trigger,
 * and the event is already in trigger mode. If it did, the trigger would
 * write nothing (no verdict), counted.
 * Context: task, event_mutex held.
 */
static void fsm_trig_comp_reg(struct fsm_trig *t)
{
	struct fsm_kl_trigger_data *c = &t->comp;

	c->count = -1;
	c->ref = 1;
	c->ops = &fsm_vops;
	c->cmd_ops = &fsm_vcmd;
	c->private_data = t;
	INIT_LIST_HEAD(&c->list);
	INIT_LIST_HEAD(&c->named_list);
	if (WARN_ON_ONCE(fsm_ks.trigger_stacktrace_cmd->reg(FSM_TRIG_NAME, c, t->file)))
		return;
	/*
	 * A kernel invariant the rmdir path relies on (6.1): register_trigger()
	 * adds at the head, so the companion sits right before the trigger and
	 * clear_event_triggers() frees it first. Say it loudly if a kernel
	 * ever orders the list otherwise.
	 */
	WARN_ON_ONCE(c->list.next != &t->data->list);
	WRITE_ONCE(t->comp_on, true);
}

/*
 * reg: the kernel's register_trigger() (-EEXIST when the event already has
 * a stackmap trigger), after finding the instance and preparing its map.
 * The map is allocated here, under event_mutex (there is no earlier hook):
 * -ENOMEM with one dmesg line past memory_budget_mb.
 * Context: task, event_mutex held.
 */
static int fsm_trig_reg(char *glob, struct fsm_kl_trigger_data *data,
			struct trace_event_file *file)
{
	struct trace_event_call *call = file->event_call;
	struct fsm_kl_trigger_data *test;
	struct trace_event_file *sid;
	struct module *mod = NULL;
	struct fsm_inst *inst;
	struct fsm_trig *t;
	int ret;

	lockdep_assert_held(fsm_ks.event_mutex);
	if (!strcmp(call->class->system, "stackmap")) {
		/* our records commit through stack_id: it would call itself */
		pr_warn_ratelimited("stackmap:%s: no stackmap trigger on the module's own events\n",
				    trace_event_name(call));
		fsm_reg_said = true;
		return -EINVAL;
	}
	/*
	 * register_trigger()'s -EEXIST test, first: nothing below (the map,
	 * the epoch) is done for a trigger that cannot be registered.
	 */
	list_for_each_entry(test, &file->triggers, list)
		if (test->cmd_ops->trigger_type == data->cmd_ops->trigger_type)
			return -EEXIST;
	sid = fsm_ks.find_event_file(file->tr, "stackmap", "stack_id");
	if (!sid)
		return -ENODEV;
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	/*
	 * A module's event: hold the module while the trigger is set. Its
	 * unload frees the event's files without clearing their triggers;
	 * rmmod of this module would then unregister from freed memory.
	 * With the reference, rmmod of that module fails (in use) until
	 * "!stackmap". Dynamic events (kprobe, uprobe, synthetic...) have
	 * no module (call->module shares a union with their refcount):
	 * the trigger's soft mode keeps them (EBUSY on removal).
	 */
	if (!(call->flags & TRACE_EVENT_FL_DYNAMIC) && call->module) {
		if (!try_module_get(call->module)) {
			pr_warn_ratelimited("%s:%s: its module is going away: no stackmap trigger\n",
					    call->class->system,
					    trace_event_name(call));
			fsm_reg_said = true;
			kfree(t);
			return -ENODEV;
		}
		mod = call->module;
	}

	mutex_lock(&fsm_mutex);
	inst = fsm_ready ? fsm_inst_find_or_create_locked(file) :
			   ERR_PTR(-ENODEV);
	if (!IS_ERR(inst))
		kref_get(&inst->ref);
	mutex_unlock(&fsm_mutex);
	if (IS_ERR(inst)) {
		module_put(mod);
		kfree(t);
		return PTR_ERR(inst);
	}
	if (fsm_ops_user(data->ops) && !fsm_ustack_enabled(inst->id)) {
		pr_warn_ratelimited("%s: stackmap:user needs options/stackmap_user=1 in this instance\n",
				    fsm_inst_label(inst));
		fsm_reg_said = true;
		ret = -EINVAL;
		goto fail;
	}
	ret = fsm_inst_prepare_map(inst);
	if (ret)
		goto fail;
	/*
	 * A new recording for this instance: ids carry their stack once
	 * more (as fsm_register() does; 0 means "never inline").
	 */
	if (!atomic_inc_return(&inst->epoch))
		atomic_inc(&inst->epoch);

	t->data = data;
	t->file = file;
	t->sid_file = sid;
	t->inst = inst;
	t->mod = mod;
	/*
	 * Published to the trigger by the kernel's list_add_rcu() of @data
	 * (a release): the trigger sees t, its fields and the map.
	 */
	data->private_data = t;
	list_add(&t->node, &fsm_trigs);
	ret = fsm_ks.trigger_stacktrace_cmd->reg(glob, data, file);
	if (!ret) {
		fsm_trig_comp_reg(t);
		return 0;
	}
	/* not registered (or added and taken off again): no free will come */
	list_del(&t->node);
	tracepoint_synchronize_unregister();
	data->private_data = file;
fail:
	fsm_inst_put(inst);
	module_put(mod);
	kfree(t);
	return ret;
}

static void fsm_trig_resolve_temp_buffer(void)
{
	static bool said;

	if (fsm_ks.temp_buffer || said)
		return;
	said = true;
	pr_warn("kallsyms: no temp_buffer: a record made while tracing is off may still get an id record\n");
}

/* Resolve and check everything. Return: NULL, or why not (for dmesg). */
static const char *fsm_trig_resolve(void)
{
	struct fsm_kl_trigger_ops *st_ops;
	struct fsm_kl_command *p;
	unsigned long start, size;
	bool listed = false;

	/*
	 * The layouts were read for FSM_KL_RELEASE. A module built without
	 * the top Makefile (a plain "make -C KDIR M=") may carry a stale
	 * generated header from another kernel: the static_asserts then
	 * checked the wrong kernel.
	 */
	if (strcmp(FSM_KL_RELEASE, init_utsname()->release)) {
		pr_warn("no stackmap trigger: layouts generated for %s, running %s (rebuild through the top Makefile)\n",
			FSM_KL_RELEASE, init_utsname()->release);
		return "";
	}
	fsm_trig_resolve_temp_buffer();
	if (!fsm_ks.trigger_commands || !fsm_ks.trigger_cmd_mutex || !fsm_ks.event_mutex ||
	    !fsm_ks.trigger_stacktrace_cmd || !fsm_ks.find_event_file)
		return "kallsyms: trigger_commands, trigger_cmd_mutex, event_mutex, trigger_stacktrace_cmd or find_event_file not found";
	if (strcmp(fsm_ks.trigger_stacktrace_cmd->name, "stacktrace") ||
	    fsm_ks.trigger_stacktrace_cmd->trigger_type != ETT_STACKTRACE ||
	    fsm_ks.trigger_stacktrace_cmd->flags != FSM_KL_CMD_FL_POST_TRIGGER)
		return "trigger_stacktrace_cmd is not the stacktrace command this module knows";
	if (!fsm_compat_call_target_ok("stacktrace parse", fsm_ks.trigger_stacktrace_cmd->parse) ||
	    !fsm_compat_call_target_ok("stacktrace reg", fsm_ks.trigger_stacktrace_cmd->reg) ||
	    !fsm_compat_call_target_ok("stacktrace unreg", fsm_ks.trigger_stacktrace_cmd->unreg) ||
	    !fsm_compat_call_target_ok("stacktrace set_filter",
				       fsm_ks.trigger_stacktrace_cmd->set_filter) ||
	    !fsm_compat_call_target_ok("stacktrace get_trigger_ops",
				       fsm_ks.trigger_stacktrace_cmd->get_trigger_ops))
		return "a stacktrace callback cannot be called from here";
	if (fsm_ks.trigger_stacktrace_cmd->unreg_all &&
	    !fsm_compat_call_target_ok("stacktrace unreg_all",
				       fsm_ks.trigger_stacktrace_cmd->unreg_all))
		return "stacktrace's unreg_all cannot be called from here";
	st_ops = fsm_ks.trigger_stacktrace_cmd->get_trigger_ops("stacktrace", NULL);
	if (!st_ops || !fsm_compat_call_target_ok("event_trigger_init", st_ops->init) ||
	    !fsm_compat_call_target_ok("event_trigger_free", st_ops->free))
		return "stacktrace's trigger ops have no usable init/free";
	fsm_k_init = st_ops->init;
	fsm_k_free = st_ops->free;
	fsm_k_free_filter = fsm_ks.free_event_filter;
	if (fsm_k_free_filter &&
	    !fsm_compat_call_target_ok("free_event_filter", fsm_k_free_filter))
		fsm_k_free_filter = NULL;
	if (!fsm_k_free_filter)
		pr_info("free_event_filter not found: rmmod frees stackmap triggers one by one (slower)\n");

	/* the list we found is the one stacktrace is on */
	mutex_lock(fsm_ks.trigger_cmd_mutex);
	list_for_each_entry(p, fsm_ks.trigger_commands, list)
		listed |= p == fsm_ks.trigger_stacktrace_cmd;
	mutex_unlock(fsm_ks.trigger_cmd_mutex);
	if (!listed)
		return "trigger_stacktrace_cmd is not on trigger_commands";

	size = fsm_compat_symbol_size((unsigned long)event_triggers_post_call,
				      &start);
	if (!size)
		return "no size for event_triggers_post_call";
	fsm_trig_src = kzalloc(struct_size(fsm_trig_src, name,
					   sizeof(FSM_TRIG_NAME)), GFP_KERNEL);
	if (!fsm_trig_src)
		return "out of memory";
	fsm_trig_src->iter_start = start;
	fsm_trig_src->iter_size = size;
	strcpy(fsm_trig_src->name, FSM_TRIG_NAME);
	return NULL;
}

/**
 * fsm_trigger_init - offer the stackmap trigger.
 *
 * Without the layouts (built out), the kallsyms symbols, or a stacktrace
 * command as expected: no trigger, one dmesg line, the rest works.
 * Context: task (module init), after recording may start (fsm_ready).
 */
void fsm_trigger_init(void)
{
	enum event_trigger_type type = (enum event_trigger_type)
				       (FSM_KL_ETT_EVENT_EPROBE << 1);
	struct fsm_kl_command *p;
	const char *why;

	why = fsm_trig_resolve();
	if (why) {
		if (*why)
			pr_warn("no stackmap trigger: %s\n", why);
		return;
	}
	fsm_cmd.name = FSM_TRIG_NAME;
	fsm_cmd.trigger_type = type;
	fsm_cmd.flags = FSM_KL_CMD_FL_POST_TRIGGER;
	fsm_cmd.parse = fsm_trig_parse;
	fsm_cmd.reg = fsm_trig_reg;
	fsm_cmd.unreg = fsm_ks.trigger_stacktrace_cmd->unreg;
	fsm_cmd.unreg_all = fsm_ks.trigger_stacktrace_cmd->unreg_all;	/* NULL in 6.1 */
	fsm_cmd.set_filter = fsm_ks.trigger_stacktrace_cmd->set_filter;
	fsm_cmd.get_trigger_ops = fsm_trig_get_ops;

	/* register_event_command(), plus the check of the type bit */
	mutex_lock(fsm_ks.trigger_cmd_mutex);
	list_for_each_entry(p, fsm_ks.trigger_commands, list) {
		if (!strcmp(p->name, FSM_TRIG_NAME))
			why = "a trigger named stackmap exists";
		else if (p->trigger_type & type)
			why = "the trigger type bit after ETT_EVENT_EPROBE is taken";
	}
	if (!why) {
		list_add(&fsm_cmd.list, fsm_ks.trigger_commands);
		fsm_cmd_on = true;
	}
	mutex_unlock(fsm_ks.trigger_cmd_mutex);
	if (why)
		pr_warn("no stackmap trigger: %s\n", why);
}

/**
 * fsm_trigger_exit - take the command away and remove every stackmap
 * trigger (see the top comment for the order).
 * Context: task (module exit), before the instances are torn down; no
 * lock held.
 */
void fsm_trigger_exit(void)
{
	struct list_head *first;
	struct fsm_trig *t, *n;

	if (fsm_cmd_on) {
		mutex_lock(fsm_ks.event_mutex);
		mutex_lock(fsm_ks.trigger_cmd_mutex);
		list_del_init(&fsm_cmd.list);
		fsm_cmd_on = false;
		mutex_unlock(fsm_ks.trigger_cmd_mutex);
		/*
		 * Each unreg ends in fsm_trig_free(), which unlinks it and,
		 * while fsm_trig_exiting, queues it on fsm_trigs_dead instead
		 * of waiting twice for a grace period per trigger with
		 * event_mutex held (all tracing control blocked).
		 */
		fsm_trig_exiting = true;
		while (!list_empty(&fsm_trigs)) {
			first = fsm_trigs.next;
			t = list_entry(first, struct fsm_trig, node);
			fsm_cmd.unreg(FSM_TRIG_NAME, t->data, t->file);
			if (WARN_ON_ONCE(fsm_trigs.next == first))
				list_del_init(first);	/* not found: leak */
		}
		fsm_trig_exiting = false;
		mutex_unlock(fsm_ks.event_mutex);
		/*
		 * No trigger callback, parse or print of ours runs after
		 * this: every data left its event's list (list_del_rcu) before;
		 * triggers run under rcu_read_lock_sched (tracepoints) or
		 * rcu_read_lock (uprobes), both covered.
		 */
		synchronize_rcu();
		tracepoint_synchronize_unregister();
		list_for_each_entry_safe(t, n, &fsm_trigs_dead, node)
			fsm_trig_release(t);
		INIT_LIST_HEAD(&fsm_trigs_dead);
	}
	kfree(fsm_trig_src);
	fsm_trig_src = NULL;
}


/*
 * ---- Sources through hidden trigger data (issue 9 items 1, 2, 5) ----
 *
 * A source event (stack_map_events, events=) of the trigger path is a
 * pair of trigger data on the event's file in its instance, linked while
 * the instance records (fsm_src_attach_locked()):
 * - judge (command fsm_srct_jcmd, NEEDS_REC): called by
 *   event_triggers_call() with the record before the discard test; it
 *   judges the record as the stackmap trigger's companion does (the same
 *   functions, its own slots: fsm_src_verdicts), see "The verdict";
 * - post (fsm_srct_pcmd, POST_TRIGGER): called by
 *   event_triggers_post_call() after the commit or discard; it writes the
 *   stack id records only if the verdict says the record was kept.
 * Every event type commits through trace_event_buffer_commit() (tracepoint,
 * syscall, kprobe, uprobe, synthetic, eprobe): one path for all of them,
 * and the event's filter, soft disable and pid filter are honoured.
 *
 * What the kernel's trigger code sees of them (6.1):
 * - no tm_ref: the pair never soft-enables the event (a source records
 *   only while its event is enabled, as before), so EVENT_FILE_FL_ENABLED
 *   never comes from us and a dynamic event stays removable. The
 *   TRIGGER_COND flag is kept by the kernel's own update_cond_flag();
 * - types of their own (two bits after the stackmap trigger's, checked
 *   free at load): register_trigger()'s -EEXIST, unregister_trigger()
 *   ("!cmd", and the stackmap companion's removal, type ETT_NONE) never
 *   match them; they are not on trigger_commands, so an O_TRUNC open of
 *   "trigger" (unreg_all of registered commands) does not see them;
 * - listing: the judge prints nothing, except the kernel's "# Available
 *   triggers" header when the pair is all there is on the event (the
 *   kernel prints it only for an empty list): the file reads as without
 *   the source;
 * - clear_event_triggers() (rmdir of an instance; it would drop a tm_ref
 *   per data: an underflow for ours) and trace_remove_event_call() (a
 *   dynamic event's removal; it frees the event's files but not their
 *   triggers): there is no notifier. So a kprobe on the first and a
 *   kretprobe on the second take our data off the files before the
 *   kernel touches them. Both functions run with event_mutex held by
 *   their caller (clear_event_triggers(): event_trace_del_tracer();
 *   trace_remove_event_call() asserts it), the lock every writer of
 *   file->triggers holds, ours too: the handlers, running in the thread
 *   that holds it, are serialised with every change of the lists and of
 *   our link state. They run from int3 (NMI-like): no lock is taken;
 *   fsm_src_all is read under RCU. trace_remove_event_call() can still
 *   fail (-EBUSY: enabled in some instance): the return handler links the
 *   data back then, else marks the sources gone and queues the work that
 *   drops them with a dmesg line (sources.c). Module events: the module
 *   notifier (sources.c) unlinks under event_mutex before the trace
 *   events' notifier frees the files.
 *
 * Invariant: linked implies the event file is alive (every path that
 * frees an event file unlinks first, above), and a source with ->gone set
 * is never linked again.
 */
struct fsm_src_trig {
	struct fsm_kl_trigger_data judge;
	struct fsm_kl_trigger_data post;
	struct fsm_src *src;
	bool linked;	/* both data on src->file->triggers (event_mutex) */
	bool removal;	/* unlinked by the removal hook's entry (event_mutex) */
	bool pinned;	/* a reference on src->file (event_file_get()) */
	u8 freed;	/* halves the kernel took off itself (event_mutex) */
	/* counts of the kernel's buffered events held (event_mutex), below */
	u8 paid;
	/*
	 * Linked but detached (fsm_srctrig_quiesce()): judge and post return
	 * at once. Written under event_mutex, read by both (READ_ONCE).
	 */
	bool inert;
};

static bool fsm_srct_ready;
/*
 * Not memory safety's only guard (review src5, finding 1): the removal
 * hooks are kprobes, and "echo 0 > /sys/kernel/debug/kprobes/enabled"
 * disarms them. So each source holds a reference on its event file
 * (event_file_get(), 6.1.192: a removed file is only marked
 * EVENT_FILE_FL_FREED while referenced), and a pair is never linked while
 * kprobes are disarmed.
 *
 * Disarming them while pairs are linked, then removing an instance, leaves
 * the kernel's own clear_event_triggers() to take our data off. For each
 * data it calls trace_event_trigger_enable_disable(file, 0) before
 * ops->free: a tm_ref we never took. Our data are linked at the tail,
 * after the triggers added before them and after the ordinary triggers
 * added later (register_trigger() adds at the head); hist triggers
 * (hist_trigger_enable()) and eprobe triggers (enable_eprobe()) also add
 * at the tail, so one added after our pair comes after it. With only
 * triggers before us, tm_ref is 0 when ours come: it goes negative, the
 * file leaves trigger mode, sm_ref goes negative and the file leaves
 * soft mode, and trace_buffered_event_disable() drops one count of the
 * kernel's buffered events (global) that nobody took: the count reaches
 * 0 under other users (their pages freed) or warns (review s7). With a
 * hist or eprobe trigger after us, our two fake decrements take its
 * tm_ref (and, once it reaches 0, its sm_ref and buffered count), our
 * clamp then puts 0 back, and its own decrement leaves tm_ref (and
 * sm_ref) at -1 on the dying file; the buffered-event count still
 * balances (two drops paid by us, one by it, each taken once), and the
 * file is freed right after: harmless. No hook can run first (disarmed:
 * the point), and nothing but a kprobe sees that path. So the module pays
 * in advance:
 * - fsm_srctrig_link() takes two counts of buffered events
 *   (trace_buffered_event_enable(), under event_mutex, as the kernel
 *   does) before a pair is first linked, one per data (st->paid);
 * - fsm_srct_free_data() (the kernel took a data off) sets the file's
 *   tm_ref and sm_ref back to 0 if negative (the file is being removed;
 *   its flags already say "no trigger mode, no soft mode", as they should
 *   with our data gone) and marks one count as used by the kernel;
 * - the counts left are given back when the pair is unlinked by the
 *   module in task context, else when it is freed (fsm_srctrig_free(),
 *   which takes event_mutex for it).
 * Holding counts only keeps the per-CPU buffered-event pages allocated:
 * the kernel uses them only for events that are filtered or soft-disabled,
 * whose filter or soft mode holds a count of its own anyway.
 * The kernel may also detach our sources inside that walk: an
 * enable_event/disable_event trigger on stackmap:stack_id freed there ends
 * stack_id's soft mode (UNREGISTER). The pairs are then quiesced, not taken
 * off (fsm_srctrig_quiesce()): the walk takes them off itself.
 * Not closed: a dynamic event removed while disarmed leaves its pair on
 * the removed (pinned) file, where nothing calls it; the module unlinks
 * it (under event_mutex) when recording stops in its instance, at rmdir
 * through the hook or the instance's UNREGISTER, or in the reaper.
 *
 * Costs (review s7): when the last count is given back,
 * trace_buffered_event_disable() waits for two grace periods
 * (synchronize_rcu()) and sends two IPI broadcasts, under event_mutex
 * (and fsm_mutex; and trace_types_lock on rmdir): an unlink of the last
 * linked pair (options/stackmap 0, a source removed) can take
 * milliseconds, more under a busy RCU. Each options/stackmap 1-0-1 of the
 * only user frees and allocates the buffered-event page of every CPU
 * again. trace_buffered_event_enable() and trace_buffered_event_disable()
 * are hard requirements of the trigger path: without them (kallsyms, or
 * a call target this module may not use) sources are tracepoint probes.
 */
static unsigned long fsm_srct_trim_start, fsm_srct_trim_size;

static void notrace fsm_srct_judge(struct fsm_kl_trigger_data *data,
				   struct trace_buffer *buffer, void *rec,
				   struct ring_buffer_event *rbe)
{
	struct fsm_src_trig *st = container_of(data, struct fsm_src_trig,
					       judge);

	/*
	 * An unconditional call: the post comes next. Inert: the post
	 * returns, and a verdict of before (a judge and post that saw the
	 * pair active) is not left for it if it is made active again.
	 */
	if (!rec || READ_ONCE(st->inert)) {
		fsm_verdict_none(&fsm_src_verdicts);
		return;
	}
	local64_inc(&this_cpu_ptr(st->src->pc)->judged);
	/* linked: the file is alive, and it is the one calling us */
	fsm_verdict_judge(&fsm_src_verdicts, (unsigned long)st, st->src->file,
			  true, rec, buffer, rbe);
}

/*
 * The post call: write the id records of a kept source record. Counted
 * per source. No verdict (an unconditional call, a uprobe task moved or
 * preempted in between, a nested event: see "The verdict") writes and
 * counts nothing.
 * Context: the event (any), preemption possibly enabled (uprobes).
 */
static void notrace fsm_srct_post(struct fsm_kl_trigger_data *data,
				  struct trace_buffer *buffer, void *rec,
				  struct ring_buffer_event *rbe)
{
	struct fsm_src_trig *st = container_of(data, struct fsm_src_trig, post);
	struct fsm_src *src = st->src;
	struct fsm_caller caller;
	struct fsm_src_pcpu *pc;
	int v;

	if (READ_ONCE(st->inert))	/* detached, still on the list */
		return;
	preempt_disable_notrace();
	v = fsm_verdict_take(&fsm_src_verdicts, (unsigned long)st, src->file);
	pc = this_cpu_ptr(src->pc);
	if (v == 0) {
		local64_inc(&pc->filtered);
	} else if (v > 0) {
		local64_inc(&pc->hits);
		/* event_triggers_post_call()'s frame: see fsm_capture() */
		FSM_CALLER(&caller);
		if (fsm_record_event(src->inst, src, &caller))
			local64_inc(&pc->records);
		else
			local64_inc(&pc->drops);
	}
	preempt_enable_notrace();
}
NOKPROBE_SYMBOL(fsm_srct_post);

/*
 * The judge's print: nothing, or the kernel's header for an empty list
 * when our pair is all the event has (trigger_show() of 6.1).
 * Context: task, event_mutex held (the trigger file's seq_start).
 */
static int fsm_srct_print(struct seq_file *m, struct fsm_kl_trigger_data *data)
{
	struct fsm_src_trig *st = container_of(data, struct fsm_src_trig,
					       judge);
	struct list_head *head = &st->src->file->triggers;
	struct fsm_kl_trigger_data *d;
	struct fsm_kl_command *p;

	if (head->next != &data->list)
		return 0;
	list_for_each_entry(d, head, list)
		if (d->cmd_ops != &fsm_srct_jcmd && d->cmd_ops != &fsm_srct_pcmd)
			return 0;
	seq_puts(m, "# Available triggers:\n");
	seq_putc(m, '#');
	mutex_lock(fsm_ks.trigger_cmd_mutex);
	list_for_each_entry_reverse(p, fsm_ks.trigger_commands, list)
		seq_printf(m, " %s", p->name);
	seq_putc(m, '\n');
	mutex_unlock(fsm_ks.trigger_cmd_mutex);
	return 0;
}

/*
 * ops->free: the kernel frees trigger data only through
 * unregister_trigger() (no command has our types) and
 * clear_event_triggers() (our hook unlinked us before). Reaching this is
 * a broken invariant: say it, keep the memory (it is the source's).
 */
static void fsm_srct_free_data(struct fsm_kl_trigger_data *data)
{
	struct fsm_src_trig *st = data->private_data;
	struct trace_event_file *file = st->src->file;

	lockdep_assert_held(fsm_ks.event_mutex);
	pr_warn_ratelimited("source %s: taken off its event by the kernel (kprobes disarmed?)\n",
			    st->src->name);
	/*
	 * clear_event_triggers() dropped a tm_ref of ours that never was,
	 * and with it a sm_ref and one count of buffered events (paid in
	 * advance, see "Not memory safety's only guard" above).
	 */
	if (atomic_read(&file->tm_ref) < 0)
		atomic_inc(&file->tm_ref);
	if (atomic_read(&file->sm_ref) < 0)
		atomic_inc(&file->sm_ref);
	if (st->paid)
		st->paid--;
	st->freed |= data == &st->judge ? 1 : 2;
	if (st->freed == 3) {
		st->linked = false;
		/* clear_event_triggers(): the instance goes (the reaper drops it) */
		WRITE_ONCE(st->src->gone, FSM_SRC_GONE_INST);
	}
}

static struct fsm_kl_trigger_ops fsm_srct_jops = {
	.trigger = fsm_srct_judge,
	.print = fsm_srct_print,
	.free = fsm_srct_free_data,
};

static struct fsm_kl_trigger_ops fsm_srct_pops = {
	.trigger = fsm_srct_post,
	.print = fsm_trig_print_none,
	.free = fsm_srct_free_data,
};

static void fsm_srct_data_init(struct fsm_kl_trigger_data *d,
			       struct fsm_kl_trigger_ops *ops,
			       struct fsm_kl_command *cmd, void *priv)
{
	d->count = -1;
	d->ref = 1;
	d->ops = ops;
	d->cmd_ops = cmd;
	d->private_data = priv;
	INIT_LIST_HEAD(&d->list);
	INIT_LIST_HEAD(&d->named_list);
}

bool fsm_srctrig_on(void)
{
	return READ_ONCE(fsm_srct_ready);
}

/**
 * fsm_srctrig_prepare - give a resolved source its trigger data pair.
 * @src: a source being resolved (not yet visible to anyone)
 *
 * Context: task, may sleep. Return: 0 or -ENOMEM.
 */
int fsm_srctrig_prepare(struct fsm_src *src)
{
	struct fsm_src_trig *st = kzalloc(sizeof(*st), GFP_KERNEL);

	if (!st)
		return -ENOMEM;
	fsm_srct_data_init(&st->judge, &fsm_srct_jops, &fsm_srct_jcmd, st);
	fsm_srct_data_init(&st->post, &fsm_srct_pops, &fsm_srct_pcmd, st);
	st->src = src;
	/* the frames above the post call, as for the stackmap trigger */
	src->iter_start = fsm_srct_trim_start;
	src->iter_size = fsm_srct_trim_size;
	/* resolution holds the event directory's lock: the file is alive */
	if (fsm_ks.event_file_get) {
		fsm_ks.event_file_get(src->file);
		st->pinned = true;
	}
	src->trig = st;
	return 0;
}

/*
 * Link: list_add_tail_rcu() publishes each data with a release, after
 * its fields (and the source's) are written; the judge before the post,
 * so a post is never seen without its judge. At the tail: never between
 * a stackmap trigger and its companion (fsm_trig_comp_reg()).
 * Context: event_mutex held (task, or the removal hook's return).
 */
static void fsm_srct_link_locked(struct fsm_src_trig *st)
{
	struct trace_event_file *file = st->src->file;

	list_add_tail_rcu(&st->judge.list, &file->triggers);
	list_add_tail_rcu(&st->post.list, &file->triggers);
	fsm_ks.update_cond_flag(file);
	st->linked = true;
}

/*
 * Unlink (list_del_rcu(): a running event may still call the data until
 * a grace period passed; the source is freed only after one, see
 * fsm_sources_free()'s callers). Linked again without a grace period (a
 * quick re-enable), a reader still on our data may end its walk early:
 * it skips the triggers after ours for that one event, nothing worse.
 * Context: event_mutex held (task, or a removal hook).
 */
static void fsm_srct_unlink_locked(struct fsm_src_trig *st)
{
	struct trace_event_file *file = st->src->file;

	list_del_rcu(&st->post.list);
	list_del_rcu(&st->judge.list);
	fsm_ks.update_cond_flag(file);
	st->linked = false;
}

/**
 * fsm_srctrig_link - put a source's pair on its event.
 * @src: source of the trigger path
 *
 * A source whose event or instance is gone is not linked (and not an
 * error: the work that drops it comes).
 * Context: task, event_mutex and fsm_mutex held. Return: 0.
 */
int fsm_srctrig_link(struct fsm_src *src)
{
	lockdep_assert_held(fsm_ks.event_mutex);
	if ((src->trig->linked && !src->trig->inert) ||
	    READ_ONCE(src->gone) || src->trig->freed)
		return 0;
	if (src->file->flags & EVENT_FILE_FL_FREED) {
		/* removed while the hooks were disarmed: drop it (dmesg) */
		WRITE_ONCE(src->gone, FSM_SRC_GONE_EVENT);
		fsm_sources_gone_kick();
		return 0;
	}
	if (fsm_ks.kprobes_all_disarmed && READ_ONCE(*fsm_ks.kprobes_all_disarmed)) {
		pr_warn_ratelimited("source %s: not attached: kprobes are disarmed (debug/kprobes/enabled), the removal hooks would not run\n",
				    src->name);
		return 0;
	}
	if (src->trig->linked) {
		/* quiesced, still on the list (its counts held): active again */
		WRITE_ONCE(src->trig->inert, false);
		return 0;
	}
	/* what clear_event_triggers() would drop for us (see above) */
	for (; src->trig->paid < 2; src->trig->paid++)
		fsm_ks.trace_buffered_event_enable();
	fsm_srct_link_locked(src->trig);
	return 0;
}

/* Give the counts of buffered events back. Context: task, event_mutex. */
static void fsm_srct_repay_locked(struct fsm_src_trig *st)
{
	lockdep_assert_held(fsm_ks.event_mutex);
	for (; st->paid; st->paid--)
		fsm_ks.trace_buffered_event_disable();
}

/**
 * fsm_srctrig_unlink - take a source's pair off its event.
 * @src: source of the trigger path
 *
 * Not from inside a walk of a trigger list by the kernel (the kernel's
 * UNREGISTER of stack_id on the soft path): fsm_srctrig_quiesce() there.
 * Context: task, fsm_mutex held; event_mutex held if the pair is linked
 * (an unlinked pair touches nothing).
 */
void fsm_srctrig_unlink(struct fsm_src *src)
{
	if (!src->trig || !src->trig->linked)
		return;
	lockdep_assert_held(fsm_ks.event_mutex);
	fsm_srct_unlink_locked(src->trig);
	WRITE_ONCE(src->trig->inert, false);
	fsm_srct_repay_locked(src->trig);
}

/**
 * fsm_srctrig_quiesce - detach a source's pair without taking it off.
 * @src: source of the trigger path
 *
 * For a detach that may run inside the kernel's walk of a trigger list
 * (review s7): clear_event_triggers() frees the data of a file with
 * list_for_each_entry_safe(), holding a pointer to the next data. When an
 * enable_event or disable_event trigger on stackmap:stack_id comes right
 * before our judge (it is added at the head, our pair at the tail), its
 * free ends stack_id's soft mode, whose UNREGISTER detaches the sources:
 * a list_del_rcu() of the judge there leaves the walk on a deleted entry
 * (LIST_POISON2: list corruption, a BUG with DEBUG_LIST and
 * BUG_ON_DATA_CORRUPTION) and its counts given back twice. With kprobes
 * armed the clear_event_triggers() hook took the pairs off before; with
 * them disarmed (or armed again during the walk) nothing did.
 * So the pair stays where it is, inert (judge and post return at once),
 * its counts held, and is taken off by whoever comes first, each under
 * event_mutex: the kernel's walk itself (fsm_srct_free_data()), the work
 * kicked here (fsm_sources_gone_fn() unlinks detached pairs), a relink
 * (active again in place), or fsm_srctrig_free().
 * Context: task, fsm_mutex and event_mutex held.
 */
void fsm_srctrig_quiesce(struct fsm_src *src)
{
	if (!src->trig || !src->trig->linked)
		return;
	lockdep_assert_held(fsm_ks.event_mutex);
	WRITE_ONCE(src->trig->inert, true);
	fsm_sources_gone_kick();
}

/**
 * fsm_srctrig_free - free a source's pair.
 * @src: source, detached, after a grace period (a pair still linked,
 *       inert, is taken off and waited for here)
 * Context: task; no fsm_mutex nor event_mutex held if the pair was ever
 * linked (its counts of buffered events are given back under event_mutex).
 */
void fsm_srctrig_free(struct fsm_src *src)
{
	struct fsm_src_trig *st = src->trig;

	if (!st)
		return;
	if (st->paid || st->linked) {
		/*
		 * Counts held: unlinked by a removal hook, or never unlinked in
		 * task context. Linked: quiesced (fsm_srctrig_quiesce()), the
		 * work did not take it off yet; a grace period after the unlink,
		 * as for any detach.
		 */
		bool linked;

		mutex_lock(fsm_ks.event_mutex);
		linked = st->linked;
		if (linked) {
			WARN_ON_ONCE(!READ_ONCE(st->inert));
			fsm_srct_unlink_locked(st);
		}
		fsm_srct_repay_locked(st);
		mutex_unlock(fsm_ks.event_mutex);
		if (linked)
			tracepoint_synchronize_unregister();
	}
	fsm_verdict_clear(&fsm_src_verdicts, (unsigned long)st);
	if (st->pinned)
		fsm_ks.event_file_put(src->file);
	kfree(st);
	src->trig = NULL;
}

/*
 * clear_event_triggers(tr) is about to run (rmdir of an instance): take
 * the pairs of @tr's sources off, and mark every source of @tr gone (its
 * files go with the instance).
 * Context: int3 (NMI-like), in the thread holding event_mutex.
 */
static int fsm_srct_clear_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct trace_array *tr =
		(struct trace_array *)regs_get_kernel_argument(regs, 0);
	struct fsm_src *src;

	rcu_read_lock();
	list_for_each_entry_rcu(src, &fsm_src_all, all) {
		if (src->tr != tr || READ_ONCE(src->gone))
			continue;
		if (src->trig && src->trig->linked)
			fsm_srct_unlink_locked(src->trig);
		WRITE_ONCE(src->gone, FSM_SRC_GONE_INST);
	}
	rcu_read_unlock();
	return 0;
}

static struct kprobe fsm_srct_clear_kp = {
	.symbol_name = "clear_event_triggers",
	.pre_handler = fsm_srct_clear_pre,
};

/* the event call being removed, per kretprobe instance */
struct fsm_srct_rm {
	struct trace_event_call *call;
};

/*
 * trace_remove_event_call(call) is about to run: unlink the pairs of the
 * sources of @call (its files may be freed before it returns).
 * Context: int3 (NMI-like), in the thread holding event_mutex.
 */
static int fsm_srct_rm_entry(struct kretprobe_instance *ri,
			     struct pt_regs *regs)
{
	struct fsm_srct_rm *rm = (struct fsm_srct_rm *)ri->data;
	struct fsm_src *src;

	rm->call = (struct trace_event_call *)regs_get_kernel_argument(regs, 0);
	rcu_read_lock();
	list_for_each_entry_rcu(src, &fsm_src_all, all) {
		if (src->call != rm->call || READ_ONCE(src->gone))
			continue;
		if (src->trig && src->trig->linked) {
			fsm_srct_unlink_locked(src->trig);
			src->trig->removal = true;
		}
	}
	rcu_read_unlock();
	return 0;
}

/*
 * It returned: removed (0), the sources of the call are gone (their
 * files are freed: only compared from now on); refused, link back what
 * the entry took off (the files are intact).
 * Context: the function's return (preemption disabled), event_mutex still
 * held by the same thread.
 */
static int fsm_srct_rm_ret(struct kretprobe_instance *ri,
			   struct pt_regs *regs)
{
	struct fsm_srct_rm *rm = (struct fsm_srct_rm *)ri->data;
	bool removed = !regs_return_value(regs), kick = false;
	struct fsm_src *src;

	rcu_read_lock();
	list_for_each_entry_rcu(src, &fsm_src_all, all) {
		if (src->call != rm->call || READ_ONCE(src->gone))
			continue;
		if (removed) {
			src->trig->removal = false;
			WRITE_ONCE(src->gone, FSM_SRC_GONE_EVENT);
			kick = true;
		} else if (src->trig->removal) {
			src->trig->removal = false;
			fsm_srct_link_locked(src->trig);
		}
	}
	rcu_read_unlock();
	if (kick)
		fsm_sources_gone_kick();
	return 0;
}

static struct kretprobe fsm_srct_rm_krp = {
	.kp.symbol_name = "trace_remove_event_call",
	.entry_handler = fsm_srct_rm_entry,
	.handler = fsm_srct_rm_ret,
	.data_size = sizeof(struct fsm_srct_rm),
	.maxactive = 8,		/* callers are serialised by event_mutex */
};

/*
 * trace_add_event_call() returned: a dynamic event exists now, with its
 * files in every instance (__add_event_to_tracers() ran before the
 * return): standing patterns may choose it (sources.c, "Patterns that
 * follow"). Context: the function's return, event_mutex held by the
 * caller; the work waits for it.
 */
static int fsm_srct_add_ret(struct kretprobe_instance *ri,
			    struct pt_regs *regs)
{
	if ((int)regs_return_value(regs) >= 0)
		fsm_sources_follow_kick();
	return 0;
}

static struct kretprobe fsm_srct_add_krp = {
	.kp.symbol_name = "trace_add_event_call",
	.handler = fsm_srct_add_ret,
	.maxactive = 8,		/* callers are serialised by event_mutex */
};

static bool fsm_srct_kp_on, fsm_srct_krp_on, fsm_srct_add_on;

/* Resolve, check and hook. Return: NULL, or why not (for dmesg). */
static const char *fsm_srct_resolve(void)
{
	enum event_trigger_type jt = (enum event_trigger_type)
				     (FSM_KL_ETT_EVENT_EPROBE << 2);
	enum event_trigger_type pt = (enum event_trigger_type)
				     (FSM_KL_ETT_EVENT_EPROBE << 3);
	const char *why = NULL;
	struct fsm_kl_command *p;
	unsigned long start, size;
	int ret;

	if (strcmp(FSM_KL_RELEASE, init_utsname()->release))
		return "trigger layouts generated for another kernel";
	if (!fsm_ks.trace_buffered_event_enable || !fsm_ks.trace_buffered_event_disable ||
	    !fsm_compat_call_target_ok("trace_buffered_event_enable",
				       fsm_ks.trace_buffered_event_enable) ||
	    !fsm_compat_call_target_ok("trace_buffered_event_disable",
				       fsm_ks.trace_buffered_event_disable))
		return "kallsyms: trace_buffered_event_enable or trace_buffered_event_disable not found";
	if (!fsm_ks.event_file_get || !fsm_ks.event_file_put ||
	    !fsm_compat_call_target_ok("event_file_get", fsm_ks.event_file_get) ||
	    !fsm_compat_call_target_ok("event_file_put", fsm_ks.event_file_put))
		return "kallsyms: event_file_get or event_file_put not found: event files cannot be pinned";
	if (!fsm_ks.kprobes_all_disarmed)
		return "kallsyms: kprobes_all_disarmed not found";
	fsm_trig_resolve_temp_buffer();
	if (!fsm_ks.trigger_commands || !fsm_ks.trigger_cmd_mutex || !fsm_ks.event_mutex ||
	    !fsm_ks.update_cond_flag)
		return "kallsyms: trigger_commands, trigger_cmd_mutex, event_mutex or update_cond_flag not found";
	if (!fsm_compat_call_target_ok("update_cond_flag", fsm_ks.update_cond_flag))
		return "update_cond_flag cannot be called from here";
	size = fsm_compat_symbol_size((unsigned long)event_triggers_post_call,
				      &start);
	if (!size)
		return "no size for event_triggers_post_call";
	fsm_srct_trim_start = start;
	fsm_srct_trim_size = size;

	mutex_lock(fsm_ks.trigger_cmd_mutex);
	list_for_each_entry(p, fsm_ks.trigger_commands, list)
		if (p->trigger_type & (jt | pt))
			why = "the trigger type bits of sources are taken";
	mutex_unlock(fsm_ks.trigger_cmd_mutex);
	if (why)
		return why;
	fsm_srct_jcmd.trigger_type = jt;
	fsm_srct_pcmd.trigger_type = pt;

	ret = register_kprobe(&fsm_srct_clear_kp);
	if (ret)
		return "no kprobe on clear_event_triggers";
	fsm_srct_kp_on = true;
	ret = register_kretprobe(&fsm_srct_rm_krp);
	if (ret)
		return "no kretprobe on trace_remove_event_call";
	fsm_srct_krp_on = true;
	return NULL;
}

/**
 * fsm_srctrig_init - sources through trigger data, if this kernel allows.
 * @force_probe: do not, as if it did not (force_probe_sources=1, tests)
 *
 * Without: sources are tracepoint probes (tracepoint events only, filters
 * not seen), one dmesg line says why.
 * Context: task (module init), before any source is resolved.
 */
void fsm_srctrig_init(bool force_probe)
{
	const char *why = force_probe ? "force_probe_sources=1" :
			  fsm_srct_resolve();

	if (why) {
		pr_warn("sources are tracepoint probes (tracepoint events only, filters not honoured): %s\n",
			why);
		fsm_probe_warn();
		fsm_srctrig_exit();
		return;
	}
	WRITE_ONCE(fsm_srct_ready, true);
	/* not needed for sources, only for patterns to follow new events */
	fsm_srct_add_on = !register_kretprobe(&fsm_srct_add_krp);
	if (!fsm_srct_add_on)
		pr_warn("no kretprobe on trace_add_event_call: dynamic events made later are not added by the chosen patterns\n");
}

/**
 * fsm_srctrig_exit - remove the hooks.
 * Context: task (module exit), no source linked any more.
 */
void fsm_srctrig_exit(void)
{
	if (fsm_srct_add_on)
		unregister_kretprobe(&fsm_srct_add_krp);
	fsm_srct_add_on = false;
	if (fsm_srct_krp_on)
		unregister_kretprobe(&fsm_srct_rm_krp);
	if (fsm_srct_kp_on)
		unregister_kprobe(&fsm_srct_clear_kp);
	fsm_srct_krp_on = false;
	fsm_srct_kp_on = false;
}

void fsm_event_lock(void)
{
	if (fsm_srctrig_on())
		mutex_lock(fsm_ks.event_mutex);
}

void fsm_event_unlock(void)
{
	if (fsm_srctrig_on())
		mutex_unlock(fsm_ks.event_mutex);
}

#else /* !FSM_HAVE_KL_TRIGGER */

void fsm_trigger_init(void)
{
	pr_warn("no stackmap trigger: built without it (%s)\n",
		FSM_KL_TRIGGER_WHY);
}

void fsm_trigger_exit(void)
{
}


bool fsm_srctrig_on(void)
{
	return false;
}

int fsm_srctrig_prepare(struct fsm_src *src)
{
	return -EOPNOTSUPP;
}

int fsm_srctrig_link(struct fsm_src *src)
{
	return -EOPNOTSUPP;
}

void fsm_srctrig_unlink(struct fsm_src *src)
{
}

void fsm_srctrig_quiesce(struct fsm_src *src)
{
}

void fsm_srctrig_free(struct fsm_src *src)
{
}

void fsm_srctrig_init(bool force_probe)
{
	pr_warn("sources are tracepoint probes (tracepoint events only, filters not honoured): built without the trigger layouts (%s)\n",
		FSM_KL_TRIGGER_WHY);
	fsm_probe_warn();
}

void fsm_srctrig_exit(void)
{
}

void fsm_event_lock(void)
{
}

void fsm_event_unlock(void)
{
}

#endif /* FSM_HAVE_KL_TRIGGER */
