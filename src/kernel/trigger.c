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
 * How it gets in: register_event_command() is __init and not exported,
 * and struct event_command is not in the public headers. So:
 * - the layouts are checked at build time (compat/layouts.h); without them
 *   the trigger is built out and dmesg says why at load. Kernels keep the
 *   callbacks of trigger data in two places (6.1: data->ops; 6.12.113+:
 *   the command): compat/trig_layout.h puts ours where this one looks;
 *   nothing below depends on which;
 * - the layouts must be the running kernel's, release and build
 *   (fsm_compat_layouts_why()), else no trigger;
 * - the static trigger_commands list, trigger_cmd_mutex, event_mutex and
 *   the kernel's own trigger_stacktrace_cmd are found through kallsyms
 *   (compat/ksyms.c); stacktrace's command is checked (name, type, flags,
 *   and each callback by its symbol name, fsm_compat_fn_is()) and its
 *   generic callbacks are reused: parse (event_trigger_parse), reg
 *   (register_trigger), unreg (unregister_trigger), set_filter
 *   (set_trigger_filter), and the init/free of its data
 *   (event_trigger_init/event_trigger_free). Only parse and reg are
 *   wrapped: parse strips a leading "user" parameter (which the kernel's
 *   parser would take for a filter) and notes it for reg; reg finds our
 *   instance, prepares its map and tracks the trigger. It has no
 *   unreg_all, so "echo > trigger" (O_TRUNC) keeps stacktrace triggers,
 *   and ours too: the same rule.
 *
 * Lifecycle (all under event_mutex, which the kernel holds around parse,
 * reg, unreg and the data's free):
 * - a registered trigger has a struct fsm_trig (its data->private_data,
 *   in place of the event file the kernel's parser put there), on
 *   fsm_trigs, holding a reference on our instance;
 * - the free with the last reference (unregister_trigger: "!stackmap";
 *   clear_event_triggers: rmdir of the instance) lets the kernel's free
 *   wait for running triggers (tracepoint_synchronize_unregister() in
 *   trigger_data_free(); 7.x frees the data later from a kthread, and the
 *   wait is fsm_kl_data_free_wait()) and free the data; then fsm_trig goes;
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

#include "compat/compat.h"
#include "compat/ksyms.h"
#include "compat/trig_layout.h"
#include "tracing.h"
#include "ustack.h"
#include "verdict.h"


#define FSM_TRIG_NAME	"stackmap"

#if FSM_HAVE_KL_TRIGGER

/*
 * stacktrace's callbacks, reused, each checked by name at load
 * (fsm_trig_resolve()): its parse and reg (the rest is in fsm_cmd), and
 * the init and free of its data.
 */
static typeof_member(struct fsm_kl_command, parse) fsm_k_parse;
static typeof_member(struct fsm_kl_command, reg) fsm_k_reg;
static struct fsm_kl_cbs fsm_k_data;
/* free_event_filter() was found (fsm_kcall()): rmmod frees in one batch */
static bool fsm_k_free_filter;

/* The stackmap command (on trigger_commands) and its data's callbacks. */
static struct fsm_kl_kind fsm_cmd;
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
 * @user:     "stackmap:user": the user stack is requested too (set before
 *            the data is published, then read-only)
 * @iref:     on @inst's list of events with a stackmap trigger (event_mutex):
 *            such an event is refused as a source (fsm_inst_has_trig())
 */
struct fsm_trig {
	struct list_head node;
	struct fsm_inst_trig iref;
	struct fsm_kl_trigger_data *data;
	struct trace_event_file *file;
	struct trace_event_file *sid_file;
	struct fsm_inst *inst;
	struct module *mod;
	struct fsm_kl_trigger_data comp;
	bool comp_on;
	bool user;
};

static LIST_HEAD(fsm_trigs);
/* rmmod: triggers off their events, freed after one grace period */
static LIST_HEAD(fsm_trigs_dead);
static bool fsm_trig_exiting;	/* event_mutex */
/* "user" seen by fsm_trig_parse(), for fsm_trig_reg() (event_mutex) */
static bool fsm_parse_user;
/* fsm_trig_reg() said why it refused (event_mutex): one dmesg line */
static bool fsm_reg_said;

/*
 * Count down data->count (-1: unlimited, the count of every data without
 * ":N"), as stacktrace's count does, but with cmpxchg: two CPUs that both
 * see 1 cannot both fire (and wrap the count to "unlimited"), so ":N"
 * gives exactly N records. Each failed cmpxchg means another CPU took
 * one: at most count + CPUs rounds. The kernel never counts for us
 * (compat/trig_layout.h). Context: the trigger. Return: true to fire.
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
 * Each stackmap trigger has a companion trigger data that judges its
 * record before the commit; the post trigger takes the verdict it left
 * (verdict.c, "The verdict"). The slot's tag is the trigger's address with
 * the keep bit: the trigger is aligned past that bit.
 */
static_assert(__alignof__(struct fsm_trig) > FSM_TRIG_KEEP);

/*
 * The slots of stackmap triggers; sources have their own (src_trig.c):
 * apart, since one event may have both, and all its pre-commit calls run
 * before all its post calls: one slot would hold the verdict of only one.
 */
static DEFINE_PER_CPU(struct fsm_verdict_slots, fsm_verdicts);

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

/* The companions (command fsm_vkind.cmd: never on trigger_commands). */
static struct fsm_kl_kind fsm_vkind;
static const struct fsm_kl_cbs fsm_vcbs = {
	.trigger = fsm_trig_judge,
	.print = fsm_verdict_print_none,
	.free = fsm_trig_comp_free,
};

/*
 * One hit: check the record was kept, take one from ":N", write (with the
 * user stack for "stackmap:user").
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
static void notrace fsm_trig_fire(struct fsm_kl_trigger_data *data,
				  const struct fsm_caller *caller)
{
	struct fsm_trig *t = data->private_data;

	preempt_disable_notrace();
	if (fsm_trig_record_kept(t) && fsm_trig_take(data))
		fsm_record_event_to(t->inst, t->sid_file, fsm_trig_src, t->user,
				    caller);
	preempt_enable_notrace();
}

/* The trigger of stackmap data, ":N" or not (fsm_trig_take()). */
static void notrace fsm_trig_hit(struct fsm_kl_trigger_data *data,
				 struct trace_buffer *buffer, void *rec,
				 struct ring_buffer_event *rbe)
{
	struct fsm_caller caller;

	FSM_CALLER(&caller);
	fsm_trig_fire(data, &caller);
}
NOKPROBE_SYMBOL(fsm_trig_hit);

/*
 * The kernel's event_trigger_print() format, "stackmap" or "stackmap:user".
 * Context: task, event_mutex held (the trigger file's listing): @data is
 * registered, its private_data is our struct fsm_trig.
 */
static int fsm_trig_print(struct seq_file *m, struct fsm_kl_trigger_data *data)
{
	struct fsm_trig *t = data->private_data;
	long count = (long)data->count;

	seq_puts(m, t->user ? FSM_TRIG_NAME ":user" : FSM_TRIG_NAME);
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

static int fsm_trig_init(struct fsm_kl_trigger_data *data)
{
	return fsm_k_data.init(data);
}

/*
 * The data's free: the kernel calls it when the trigger leaves its event
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
		list_del_init(&t->iref.node);
		/* the companion goes too (its free clears comp_on) */
		if (t->comp_on)
			fsm_cmd.cmd.unreg(FSM_TRIG_NAME, &t->comp, t->file);
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
	fsm_k_data.free(data);
	if (last) {
		fsm_kl_data_free_wait();	/* 7.x frees @data later */
		fsm_trig_clear_slots(t);
		module_put(t->mod);
		fsm_inst_put(t->inst);
		kfree(t);
		/*
		 * Standing patterns left the event out while it had the
		 * trigger (sources.c): they take it now, as an event that
		 * appeared.
		 */
		fsm_sources_follow_kick();
	}
}

/*
 * The rest of the kernel's trigger_data_free() (kernel/trace/trace_events_
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
		fsm_kcall(free_event_filter)(filter);
	kfree(data->filter_str);
	kfree(data);
	fsm_trig_clear_slots(t);
	fsm_inst_put(t->inst);	/* its module: fsm_trig_put_mods() */
	kfree(t);
}

/*
 * Module exit, after the grace periods that follow the unreg loop: no
 * trigger callback of the dead triggers runs, their events' files are not
 * needed any more, so their modules' references go, under event_mutex
 * (against fsm_trig_module_notify(), which puts them itself for a module
 * that is force-unloaded meanwhile). Context: task, no lock held.
 */
static void fsm_trig_put_mods(void)
{
	struct fsm_trig *t;

	mutex_lock(fsm_ks.event_mutex);
	list_for_each_entry(t, &fsm_trigs_dead, node) {
		module_put(t->mod);
		t->mod = NULL;
	}
	mutex_unlock(fsm_ks.event_mutex);
}

static const struct fsm_kl_cbs fsm_cbs = {
	.trigger = fsm_trig_hit,
	.print = fsm_trig_print,
	.init = fsm_trig_init,
	.free = fsm_trig_free,
};

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
	ret = fsm_k_parse(cmd, file, glob, cmdstr, p);
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

	fsm_kl_data_init(c, &fsm_vkind, t);
	if (WARN_ON_ONCE(fsm_k_reg(FSM_TRIG_NAME, c, t->file)))
		return;
	/*
	 * A kernel invariant the rmdir path relies on (6.1, 6.12): register_trigger()
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
	sid = fsm_kcall(find_event_file)(file->tr, "stackmap", "stack_id");
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
	 *
	 * The reference holds only a live module: one still in init
	 * (MODULE_STATE_COMING, which try_module_get() accepts) whose init
	 * fails is freed whatever its count, its event files with it, our
	 * trigger on one of them; rmmod of this module would then walk the
	 * freed file and put the freed module. So such a module's events get
	 * no trigger until its init has returned. The state is read once,
	 * under event_mutex (held by the trigger write), which the removal
	 * of the module's events takes before the module is freed; a module
	 * seen LIVE leaves only through delete_module(), which the reference
	 * blocks, unless forced (rmmod -f, which taints the kernel and is
	 * unsafe with any reference held).
	 */
	if (!(call->flags & TRACE_EVENT_FL_DYNAMIC) && call->module) {
		struct module *owner = call->module;
		enum module_state st = READ_ONCE(owner->state);

		if (st != MODULE_STATE_LIVE || !try_module_get(owner)) {
			bool coming = st == MODULE_STATE_COMING;

			pr_warn_ratelimited("%s:%s: its module is %s: no stackmap trigger\n",
					    call->class->system,
					    trace_event_name(call),
					    coming ? "still loading (try again once loaded)" :
						     "going away");
			fsm_reg_said = true;
			kfree(t);
			return coming ? -EBUSY : -ENODEV;
		}
		mod = owner;
	}

	mutex_lock(&fsm_mutex);
	inst = fsm_ready ? fsm_inst_find_or_create_locked(file) :
			   ERR_PTR(-ENODEV);
	/*
	 * One id record per record: a source event already gets one. The
	 * sources change under event_mutex too (fsm_event_lock()), held
	 * here, so none becomes a source before @t is on inst->trigs.
	 */
	if (!IS_ERR(inst) && fsm_sources_has_file_locked(inst, file)) {
		pr_warn_ratelimited("%s: %s:%s is a source of this instance (stack_map_events): its records have their id record, no stackmap trigger\n",
				    fsm_inst_label(inst), call->class->system,
				    trace_event_name(call));
		fsm_reg_said = true;
		inst = ERR_PTR(-EBUSY);
	}
	if (!IS_ERR(inst))
		kref_get(&inst->ref);
	mutex_unlock(&fsm_mutex);
	if (IS_ERR(inst)) {
		module_put(mod);
		kfree(t);
		return PTR_ERR(inst);
	}
	if (fsm_parse_user && !fsm_ustack_enabled(inst->id)) {
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
	t->user = fsm_parse_user;
	/*
	 * Published to the trigger by the kernel's list_add_rcu() of @data
	 * (a release): the trigger sees t, its fields and the map.
	 */
	data->private_data = t;
	list_add(&t->node, &fsm_trigs);
	t->iref.file = file;
	list_add(&t->iref.node, &inst->trigs);
	ret = fsm_k_reg(glob, data, file);
	if (!ret) {
		fsm_trig_comp_reg(t);
		return 0;
	}
	/* not registered (or added and taken off again): no free will come */
	list_del(&t->node);
	list_del(&t->iref.node);
	tracepoint_synchronize_unregister();
	data->private_data = file;
fail:
	fsm_inst_put(inst);
	module_put(mod);
	kfree(t);
	return ret;
}


/*
 * The kernel's stacktrace command: its name, type and flags, and each
 * callback the stackmap command reuses or calls, checked by its symbol
 * name before anything calls it (fsm_compat_fn_is()).
 * Return: NULL, or why not (for dmesg).
 */
static const char *fsm_trig_check_stacktrace(struct fsm_kl_command *st)
{
	const struct fsm_fn_expect want[] = {
		{ "stacktrace's parse", st->parse, "event_trigger_parse" },
		{ "stacktrace's reg", st->reg, "register_trigger" },
		{ "stacktrace's unreg", st->unreg, "unregister_trigger" },
		{ "stacktrace's set_filter", st->set_filter, "set_trigger_filter" },
	};
	const char *why;

	if (strcmp(st->name, "stacktrace") ||
	    st->trigger_type != ETT_STACKTRACE ||
	    st->flags != FSM_KL_CMD_FL_POST_TRIGGER)
		return "trigger_stacktrace_cmd is not the stacktrace command this module knows";
	/* none in 6.1 and 6.12: "echo > trigger" keeps stacktrace's and ours */
	if (st->unreg_all)
		return "stacktrace's command has an unreg_all this module does not know";
	why = fsm_compat_fns_are(want, ARRAY_SIZE(want));
	/* the callbacks of its data: where this kernel's layout has them */
	return why ?: fsm_kl_stacktrace_cbs(st, &fsm_k_data);
}

/* Resolve and check everything. Return: NULL, or why not (for dmesg). */
static const char *fsm_trig_resolve(void)
{
	struct fsm_kl_command *p, *st = fsm_ks.trigger_stacktrace_cmd;
	unsigned long start, size;
	bool listed = false;
	const char *why;

	/*
	 * The layouts were read for one build of one kernel. A module built
	 * without the top Makefile (a plain "make -C KDIR M=") may carry a
	 * stale generated header, and two builds of one release (a new
	 * package with the same ABI) may differ: the static_asserts then
	 * checked another kernel.
	 */
	why = fsm_compat_layouts_why();
	if (why)
		return why;
	fsm_verdict_check_temp_buffer();
	if (!fsm_ks.trigger_commands || !fsm_ks.trigger_cmd_mutex || !fsm_ks.event_mutex ||
	    !st || !fsm_ks.find_event_file)
		return "kallsyms: trigger_commands, trigger_cmd_mutex, event_mutex, trigger_stacktrace_cmd or find_event_file not found";
	why = fsm_trig_check_stacktrace(st);
	if (why)
		return why;
	fsm_k_parse = st->parse;
	fsm_k_reg = st->reg;
	fsm_k_free_filter = fsm_ks.free_event_filter != NULL;
	if (!fsm_k_free_filter)
		pr_info("free_event_filter not found: rmmod frees stackmap triggers one by one (slower)\n");

	/* the list we found is the one stacktrace is on */
	mutex_lock(fsm_ks.trigger_cmd_mutex);
	list_for_each_entry(p, fsm_ks.trigger_commands, list)
		listed |= p == st;
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

/*
 * A module whose event has a stackmap trigger is held (fsm_trig_reg()), so
 * "rmmod MOD" fails. A forced unload (rmmod -f, CONFIG_MODULE_FORCE_UNLOAD,
 * which Debian's kernels have) ignores the reference: the trace events'
 * notifier (priority 1) then frees the module's event files with our
 * trigger still on one, and our rmmod would walk the freed file and put
 * the freed module. So, before it, each such trigger is removed as
 * "!stackmap" would remove it (its free puts the module: harmless on a
 * module going away, whose struct lives until the chain has run).
 * Context: task (module notifier chain, no lock held).
 */
static int fsm_trig_module_notify(struct notifier_block *nb,
				  unsigned long state, void *data)
{
	struct module *mod = data;
	struct fsm_trig *t, *n;

	if (state != MODULE_STATE_GOING || !mod->num_trace_events)
		return NOTIFY_DONE;
	mutex_lock(fsm_ks.event_mutex);
	/* the unreg frees t (and only t) from fsm_trigs */
	list_for_each_entry_safe(t, n, &fsm_trigs, node) {
		if (t->mod != mod)
			continue;
		pr_info("%s: stackmap trigger on %s:%s removed: module %s unloads (forced)\n",
			fsm_inst_label(t->inst), t->file->event_call->class->system,
			trace_event_name(t->file->event_call), mod->name);
		fsm_cmd.cmd.unreg(FSM_TRIG_NAME, t->data, t->file);
	}
	/*
	 * Our own rmmod, between its unreg loop and fsm_trig_put_mods():
	 * the triggers are off their events already; their reference goes
	 * now, while the module's struct is still there.
	 */
	list_for_each_entry(t, &fsm_trigs_dead, node) {
		if (t->mod == mod) {
			module_put(mod);
			t->mod = NULL;
		}
	}
	mutex_unlock(fsm_ks.event_mutex);
	return NOTIFY_DONE;
}

static struct notifier_block fsm_trig_module_nb = {
	.notifier_call = fsm_trig_module_notify,
	.priority = 2,	/* before trace events (1) */
};
static bool fsm_trig_module_nb_on;

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
		pr_warn("no stackmap trigger: %s\n", why);
		return;
	}
	fsm_kl_kind_init(&fsm_cmd, FSM_TRIG_NAME, type,
			 FSM_KL_CMD_FL_POST_TRIGGER, &fsm_cbs);
	fsm_kl_kind_listed(&fsm_cmd);
	fsm_cmd.cmd.parse = fsm_trig_parse;
	fsm_cmd.cmd.reg = fsm_trig_reg;
	/* checked by fsm_trig_check_stacktrace(); no unreg_all (as there) */
	fsm_cmd.cmd.unreg = fsm_ks.trigger_stacktrace_cmd->unreg;
	fsm_cmd.cmd.set_filter = fsm_ks.trigger_stacktrace_cmd->set_filter;
	fsm_kl_kind_init(&fsm_vkind, FSM_TRIG_NAME, ETT_NONE,
			 FSM_KL_CMD_FL_NEEDS_REC, &fsm_vcbs);

	/*
	 * Before the first trigger can be set (fsm_trig_module_notify()),
	 * and outside trigger_cmd_mutex: the chain calls us with its lock
	 * held, and we take event_mutex there, which the kernel takes
	 * before trigger_cmd_mutex.
	 */
	fsm_trig_module_nb_on = !register_module_notifier(&fsm_trig_module_nb);

	/* register_event_command(), plus the check of the type bit */
	mutex_lock(fsm_ks.trigger_cmd_mutex);
	list_for_each_entry(p, fsm_ks.trigger_commands, list) {
		if (!strcmp(p->name, FSM_TRIG_NAME))
			why = "a trigger named stackmap exists";
		else if (p->trigger_type & type)
			why = "the trigger type bit after ETT_EVENT_EPROBE is taken";
	}
	if (!why && !fsm_trig_module_nb_on)
		why = "no module notifier";
	if (!why) {
		list_add(&fsm_cmd.cmd.list, fsm_ks.trigger_commands);
		fsm_cmd_on = true;
	}
	mutex_unlock(fsm_ks.trigger_cmd_mutex);
	if (why && fsm_trig_module_nb_on) {
		unregister_module_notifier(&fsm_trig_module_nb);
		fsm_trig_module_nb_on = false;
	}
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

	/*
	 * The module notifier stays until every trigger is off its event and
	 * has put its module: a forced unload of such a module meanwhile
	 * must still find ours (fsm_trig_module_notify()).
	 */
	if (fsm_cmd_on) {
		mutex_lock(fsm_ks.event_mutex);
		mutex_lock(fsm_ks.trigger_cmd_mutex);
		list_del_init(&fsm_cmd.cmd.list);
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
			fsm_cmd.cmd.unreg(FSM_TRIG_NAME, t->data, t->file);
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
		fsm_trig_put_mods();
	}
	if (fsm_trig_module_nb_on)
		unregister_module_notifier(&fsm_trig_module_nb);
	fsm_trig_module_nb_on = false;
	if (!list_empty(&fsm_trigs_dead)) {
		list_for_each_entry_safe(t, n, &fsm_trigs_dead, node)
			fsm_trig_release(t);
		INIT_LIST_HEAD(&fsm_trigs_dead);
	}
	kfree(fsm_trig_src);
	fsm_trig_src = NULL;
}

#else /* !FSM_HAVE_KL_TRIGGER */

/* Built out: see fsm_src_trig_init() in src_trig.c and compat/layouts.h. */
void fsm_trigger_init(void)
{
	pr_warn("no stackmap trigger: the trigger path is built out (%s)\n",
		FSM_KL_TRIGGER_WHY);
}

void fsm_trigger_exit(void)
{
}

#endif /* FSM_HAVE_KL_TRIGGER */
