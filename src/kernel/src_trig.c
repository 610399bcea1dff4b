// SPDX-License-Identifier: GPL-2.0
/*
 * src_trig.c - the source backend of hidden trigger data (struct
 * fsm_src_ops, sources.c): sources through the kernel's trigger lists.
 *
A source event (stack_map_events, events=) of the trigger backend is a
 * pair of trigger data on the event's file in its instance, linked while
 * the instance records (attached through struct fsm_src_ops, sources.c):
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
 * What the kernel's trigger code sees of them (6.1; the same in 6.12.113+,
 * where the callbacks are in the commands, compat/trig_layout.h):
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

#include "compat/compat.h"
#include "compat/ksyms.h"
#include "compat/trig_layout.h"
#include "tracing.h"
#include "verdict.h"


#if FSM_HAVE_KL_TRIGGER

/* sources: the trigger-path judges */
static DEFINE_PER_CPU(struct fsm_verdict_slots, fsm_src_verdicts);

/*
 * The kinds of a source's trigger data pair, judge and post (their
 * commands are never on trigger_commands): made by fsm_srct_resolve().
 */
static struct fsm_kl_kind fsm_srct_jkind, fsm_srct_pkind;
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

/*
 * Not memory safety's only guard: the removal
 * hooks are kprobes, and "echo 0 > /sys/kernel/debug/kprobes/enabled"
 * disarms them. So each source holds a reference on its event file
 * (event_file_get(), 6.1.192: a removed file is only marked
 * EVENT_FILE_FL_FREED while referenced), and a pair is never linked while
 * kprobes are disarmed.
 *
 * Disarming them while pairs are linked, then removing an instance, leaves
 * the kernel's own clear_event_triggers() to take our data off. For each
 * data it calls trace_event_trigger_enable_disable(file, 0) before
 * the data's free: a tm_ref we never took. Our data are linked at the tail,
 * after the triggers added before them and after the ordinary triggers
 * added later (register_trigger() adds at the head); hist triggers
 * (hist_trigger_enable()) and eprobe triggers (enable_eprobe()) also add
 * at the tail, so one added after our pair comes after it. With only
 * triggers before us, tm_ref is 0 when ours come: it goes negative, the
 * file leaves trigger mode, sm_ref goes negative and the file leaves
 * soft mode, and trace_buffered_event_disable() drops one count of the
 * kernel's buffered events (global) that nobody took: the count reaches
 * 0 under other users (their pages freed) or warns. With a
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
 * Costs: when the last count is given back,
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
 * when our pair is all the event has (trigger_show() of 6.1 and 6.12).
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
		if (d->cmd_ops != &fsm_srct_jkind.cmd &&
		    d->cmd_ops != &fsm_srct_pkind.cmd)
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
 * The data's free: the kernel frees trigger data only through
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

static const struct fsm_kl_cbs fsm_srct_jcbs = {
	.trigger = fsm_srct_judge,
	.print = fsm_srct_print,
	.free = fsm_srct_free_data,
};

static const struct fsm_kl_cbs fsm_srct_pcbs = {
	.trigger = fsm_srct_post,
	.print = fsm_verdict_print_none,
	.free = fsm_srct_free_data,
};

/**
 * fsm_srctrig_prepare - give a resolved source its trigger data pair.
 * @src: a source being resolved (not yet visible to anyone)
 *
 * Context: task, may sleep. Return: 0 or -ENOMEM.
 */
static int fsm_srctrig_prepare(struct fsm_src *src)
{
	struct fsm_src_trig *st = kzalloc(sizeof(*st), GFP_KERNEL);

	if (!st)
		return -ENOMEM;
	fsm_kl_data_init(&st->judge, &fsm_srct_jkind, st);
	fsm_kl_data_init(&st->post, &fsm_srct_pkind, st);
	st->src = src;
	/* the frames above the post call, as for the stackmap trigger */
	src->iter_start = fsm_srct_trim_start;
	src->iter_size = fsm_srct_trim_size;
	/* resolution holds the event directory's lock: the file is alive */
	if (fsm_ks.event_file_get) {
		fsm_kcall(event_file_get)(src->file);
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
	fsm_kcall(update_cond_flag)(file);
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
	fsm_kcall(update_cond_flag)(file);
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
static int fsm_srctrig_link(struct fsm_src *src)
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
		fsm_kcall(trace_buffered_event_enable)();
	fsm_srct_link_locked(src->trig);
	return 0;
}

/* Give the counts of buffered events back. Context: task, event_mutex. */
static void fsm_srct_repay_locked(struct fsm_src_trig *st)
{
	lockdep_assert_held(fsm_ks.event_mutex);
	for (; st->paid; st->paid--)
		fsm_kcall(trace_buffered_event_disable)();
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
static void fsm_srctrig_unlink(struct fsm_src *src)
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
 * For a detach that may run inside the kernel's walk of a trigger list:
 * clear_event_triggers() frees the data of a file with
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
static void fsm_srctrig_quiesce(struct fsm_src *src)
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
static void fsm_srctrig_free(struct fsm_src *src)
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
		fsm_kcall(event_file_put)(src->file);
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

	why = fsm_compat_layouts_why();
	if (why)
		return why;
	if (!fsm_ks.trace_buffered_event_enable || !fsm_ks.trace_buffered_event_disable)
		return "kallsyms: trace_buffered_event_enable or trace_buffered_event_disable not found";
	if (!fsm_ks.event_file_get || !fsm_ks.event_file_put)
		return "kallsyms: event_file_get or event_file_put not found: event files cannot be pinned";
	if (!fsm_ks.kprobes_all_disarmed)
		return "kallsyms: kprobes_all_disarmed not found";
	fsm_verdict_check_temp_buffer();
	if (!fsm_ks.trigger_commands || !fsm_ks.trigger_cmd_mutex || !fsm_ks.event_mutex ||
	    !fsm_ks.update_cond_flag)
		return "kallsyms: trigger_commands, trigger_cmd_mutex, event_mutex or update_cond_flag not found";
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
	fsm_kl_kind_init(&fsm_srct_jkind, "stackmap_source", jt,
			 FSM_KL_CMD_FL_NEEDS_REC, &fsm_srct_jcbs);
	fsm_kl_kind_init(&fsm_srct_pkind, "stackmap_source", pt,
			 FSM_KL_CMD_FL_POST_TRIGGER, &fsm_srct_pcbs);

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

/*
 * The trigger backend takes every event that commits through
 * trace_event_buffer_commit(): tracepoint, syscall, kprobe, uprobe,
 * synthetic and eprobe events. Never ftrace's own events (IGNORE_ENABLE:
 * function, print...), which have no triggers.
 */
static const char *fsm_srctrig_refuses(const struct trace_event_call *call)
{
	return (call->flags & TRACE_EVENT_FL_IGNORE_ENABLE) ?
	       "an ftrace internal event" : NULL;
}

/*
 * A source being resolved, under its event directory's lock: its module,
 * its pair, and a place on fsm_src_all, where the removal hooks find it.
 * Context: task. Return: 0 or -ENOMEM.
 */
static int fsm_srctrig_prepare_src(struct fsm_src *src,
				   struct trace_event_call *call)
{
	int ret;

	/* call->module is a refcount for dynamic events (a union) */
	if (call->flags & TRACE_EVENT_FL_DYNAMIC)
		src->mod = NULL;
	else
		src->mod = call->module;
	ret = fsm_srctrig_prepare(src);
	if (ret)
		return ret;
	/* inside the inode lock: the removal hooks see it from now */
	spin_lock(&fsm_src_pending_lock);
	list_add_tail_rcu(&src->all, &fsm_src_all);
	spin_unlock(&fsm_src_pending_lock);
	return 0;
}

static const struct fsm_src_ops fsm_srctrig_ops = {
	.name = "trigger data",
	.refuses = fsm_srctrig_refuses,
	.prepare = fsm_srctrig_prepare_src,
	.attach = fsm_srctrig_link,
	.detach = fsm_srctrig_unlink,
	.quiesce = fsm_srctrig_quiesce,
	.tidy = fsm_srctrig_unlink,
	.free = fsm_srctrig_free,
};

/**
 * fsm_src_trig_exit - remove the hooks.
 * Context: task (module exit), no source linked any more.
 */
void fsm_src_trig_exit(void)
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

/**
 * fsm_src_trig_init - sources through trigger data, if this kernel allows.
 * @force_probe: do not, as if it did not (force_probe_sources=1, tests)
 *
 * Without: sources are tracepoint probes (tracepoint events only, filters
 * not seen), one dmesg line says why; the caller picks that backend.
 * Context: task (module init), before any source is resolved.
 * Return: the backend's ops, or NULL.
 */
const struct fsm_src_ops *fsm_src_trig_init(bool force_probe)
{
	const char *why = force_probe ? "force_probe_sources=1" :
			  fsm_srct_resolve();

	if (why) {
		pr_warn("sources are tracepoint probes (tracepoint events only, filters not honoured): %s\n",
			why);
		fsm_src_trig_exit();
		return NULL;
	}
	/* not needed for sources, only for patterns to follow new events */
	fsm_srct_add_on = !register_kretprobe(&fsm_srct_add_krp);
	if (!fsm_srct_add_on)
		pr_warn("no kretprobe on trace_add_event_call: dynamic events made later are not added by the chosen patterns\n");
	return &fsm_srctrig_ops;
}

#else /* !FSM_HAVE_KL_TRIGGER */

/* Built out: the kernel has no trigger layout we know (compat/layouts.h). */
const struct fsm_src_ops *fsm_src_trig_init(bool force_probe)
{
	pr_warn("sources are tracepoint probes (tracepoint events only, filters not honoured): the trigger path is built out (%s)\n",
		FSM_KL_TRIGGER_WHY);
	return NULL;
}

void fsm_src_trig_exit(void)
{
}

#endif /* FSM_HAVE_KL_TRIGGER */
