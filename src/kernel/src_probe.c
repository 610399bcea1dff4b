// SPDX-License-Identifier: GPL-2.0
/*
 * src_probe.c - the source backend of tracepoint probes: a source event
 * is attached by registering fsm_probe() on its tracepoint, right after
 * the trace event's own probe (struct fsm_src_ops, sources.c).
 *
 * The backend of kernels where the trigger backend (src_trig.c) is not
 * available (no trigger layouts or hooks, Debian's arm64) or not wanted
 * (force_probe_sources=1). It sees only static tracepoint events, and
 * only what the event file's flags and the instance's buffer say of the
 * kernel's decision on the record (fsm_probe()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/trace_events.h>
#include <linux/tracepoint.h>

#include "compat/compat.h"
#include "compat/ksyms.h"
#include "compat/layouts.h"
#include "tracing.h"

/*
 * The probe is registered on tracepoints of any prototype as
 * void probe(void *data): it ignores the tracepoint's arguments. On x86-64
 * and arm64 the extra arguments are simply not read. Kernel CFI checks the
 * prototype of every indirect call and would kill such a call.
 */
#if FSM_HAVE_KCFI
#error "ftrace_stackmap: kernel CFI: the generic tracepoint probe would trap"
#endif /* FSM_HAVE_KCFI */

/*
 * Run after the trace event probes (TRACEPOINT_DEFAULT_PRIO, higher runs
 * first, equal priorities in registration order), so that our record lands
 * right behind the source event's record on this CPU; and, before them,
 * fsm_probe_pre(), which looks at the instance's buffer first.
 */
#define FSM_PROBE_PRIO		(TRACEPOINT_DEFAULT_PRIO - 1)
#define FSM_PROBE_PRE_PRIO	(TRACEPOINT_DEFAULT_PRIO + 1)

/*
 * Whether the instance's ring buffer and options can be read (the
 * trace_array layout of this kernel, compat/layouts.h): then an id record
 * is written only after a count of the records around the kernel's probe
 * (fsm_probe_pre(), fsm_probe_paired()). Set at init, before any probe is
 * registered.
 */
static bool fsm_probe_exact __read_mostly;

/*
 * fsm_probe_pre - tracepoint probe registered with each source, run
 * before the kernel's probe of the event: how many records this CPU's
 * buffer of the instance has taken so far.
 * @data: the struct fsm_src
 *
 * The look goes into this CPU's slot of the context level we run at: an
 * interrupt that hits the same event in between uses another slot, or,
 * nested at the same level (a tracepoint inside the kernel's probe),
 * takes this one and leaves it empty (fsm_probe_paired() then writes
 * nothing). The slot is emptied before it is filled and published last,
 * so an interrupt between the stores leaves it empty or its own. All on
 * this CPU: compiler barriers order the stores against interrupts.
 * Context: as fsm_probe().
 */
static __always_inline void fsm_probe_pre_here(void *data)
{
	struct fsm_src *src = data;
	struct trace_buffer *buf;
	struct fsm_src_pre *p;
	unsigned long n;

	if (!(READ_ONCE(src->file->flags) & EVENT_FILE_FL_ENABLED))
		return;
	p = &this_cpu_ptr(src->pc)->pre[interrupt_context_level()];
	WRITE_ONCE(p->buf, NULL);
	barrier();
	buf = fsm_kl_tr_buffer(src->tr);
	if (!buf || !fsm_rb_written(buf, smp_processor_id(), &n))
		return;
	p->count = n;
	p->task = current;
	barrier();
	WRITE_ONCE(p->buf, buf);
}

/*
 * Tracepoint probes run with preemption disabled up to 6.x, and under
 * SRCU only, preemptible, on 7.x (__DO_TRACE's srcu_fast guard; the
 * kernel's event probes disable preemption themselves): both probes of
 * ours read and write this CPU's slots and counters and insert into the
 * map, whose per-CPU words take CPU-local RMWs, so they disable it too.
 * A migration between the two probes leaves the slot of the first CPU
 * to a later call and finds this CPU's empty or another task's:
 * unpaired, never a wrong pairing.
 */
static void notrace fsm_probe_pre(void *data)
{
	preempt_disable_notrace();
	fsm_probe_pre_here(data);
	preempt_enable_notrace();
}
NOKPROBE_SYMBOL(fsm_probe_pre);

/*
 * fsm_probe_paired - whether the record just before ours, on this CPU, is
 * the source event's: the instance's buffer took exactly one record
 * since fsm_probe_pre() of this call, plus the stack records the kernel
 * adds after every record of the instance while options/stacktrace
 * (a kernel_stack) or options/userstacktrace (a user_stack, not in NMI,
 * and only on kernels with CONFIG_USER_STACKTRACE_SUPPORT: Debian's arm64
 * 6.1 accepts the option and writes nothing) is set, which readers skip
 * when they pair (ftrace_trace_stack() and ftrace_trace_userstack(),
 * called by the commit). Anything else and the
 * id record could follow a record that is not its own:
 * - nothing written: the kernel's probe wrote no record (a reservation
 *   refused for a record longer than a page takes, tracing off or the
 *   event soft-disabled by the time the kernel looked, the flags read
 *   here being older or newer);
 * - more: other writers in between (another probe of the tracepoint
 *   writing into the instance, an interrupt's records on this CPU);
 * - no look, another task's look, another buffer (the snapshot swapped
 *   it), no consistent count: unknown.
 * The slot is emptied here, so a look is used once.
 * What it cannot tell: a record of another writer in place of the
 * source's own when the kernel's probe wrote none (two of the above at
 * once), and options changed while the kernel's probe ran
 * (Documentation/tracing.rst, "Semantics and limits").
 * Context: as fsm_probe(). Return: true if paired.
 */
static bool notrace fsm_probe_paired(struct fsm_src *src, unsigned int level)
{
	struct fsm_src_pre *p = &this_cpu_ptr(src->pc)->pre[level];
	struct trace_buffer *buf = READ_ONCE(p->buf);
	unsigned long n, want;
	u32 opts;

	if (!buf)
		return false;
	WRITE_ONCE(p->buf, NULL);
	barrier();	/* the fields were written before buf (fsm_probe_pre()) */
	if (p->task != current || buf != fsm_kl_tr_buffer(src->tr) ||
	    !fsm_rb_written(buf, smp_processor_id(), &n))
		return false;
	opts = fsm_kl_tr_flags(src->tr);
	want = 1 + !!(opts & FSM_KL_TR_STACKTRACE) +
	       (IS_ENABLED(CONFIG_USER_STACKTRACE_SUPPORT) &&
		(opts & FSM_KL_TR_USERSTACKTRACE) && !in_nmi());
	return n - p->count == want;
}

/*
 * fsm_probe - tracepoint probe attached to each chosen source event, run
 * after the kernel's probe of the event wrote (or not) its record.
 * @data: the struct fsm_src
 *
 * Context: any (tracepoint; irq, softirq, NMI), preemption disabled by
 * fsm_probe().
 */
static __always_inline void fsm_probe_here(void *data)
{
	struct fsm_src *src = data;
	struct fsm_caller caller;
	unsigned int level = interrupt_context_level();
	bool paired;
	unsigned long fl;

	/*
	 * An id record is written only right behind its own source record:
	 * the kernel's probe of the event (registered above this one) has
	 * just written it, or not. This probe sees what decided it through
	 * the event file's flags and, where the instance's buffer can be
	 * read (fsm_probe_exact), through the count of records the buffer
	 * took since fsm_probe_pre():
	 * - soft-disabled, or refused by set_event_pid (the kernel's pid
	 *   probes of sched_switch run at INT_MAX and 0, around this one:
	 *   ignore_pid is what the kernel's probe read), or the instance's
	 *   buffer takes no writes (tracing_on 0): no source record, so no
	 *   capture, no insert, no id record; counted as "filtered";
	 * - a filter on the event (EVENT_FILE_FL_FILTERED) or a conditional
	 *   trigger (EVENT_FILE_FL_TRIGGER_COND: "traceon if", snapshot,
	 *   hist, eprobe) decide, or act, at the commit of the record inside
	 *   the kernel's probe: the record may have been discarded, have
	 *   gone to temp_buffer while a traceon turned tracing on, have been
	 *   swapped into the snapshot, or be followed by the trigger's own
	 *   records. This probe writes nothing: no verdict (judged, neither
	 *   hit nor filtered).
	 * - otherwise a hit, written only if the count says the record just
	 *   before ours is the source's (fsm_probe_paired()); else counted
	 *   "unpaired", no capture, no id record: other probes of the
	 *   tracepoint writing into the instance in between, an
	 *   enable_event trigger on the event itself (the kernel's probe
	 *   tested the flags it read before its triggers ran), a record too
	 *   long for the ring buffer, a change of the flags, of tracing_on
	 *   or of the pid list while the kernel's probe ran.
	 * Unconditional traceon/traceoff/snapshot triggers act before the
	 * record is reserved, and this probe sees their effect as the
	 * kernel's reservation did. Without fsm_probe_exact the flags alone
	 * decide, and those routes give an id record after a record that is
	 * not its own: Documentation/tracing.rst, "Semantics and limits".
	 * tracing_cpumask and a full non-overwrite buffer leave the buffer
	 * unchanged: unpaired, or with the flags alone the stack is inserted
	 * and our reserve fails.
	 */
	fl = READ_ONCE(src->file->flags);
	if (!(fl & EVENT_FILE_FL_ENABLED))
		return;
	/* always, so that a look is never used by a later call */
	paired = fsm_probe_exact && fsm_probe_paired(src, level);
	local64_inc(&this_cpu_ptr(src->pc)->judged);
	if (fl & (EVENT_FILE_FL_FILTERED | EVENT_FILE_FL_TRIGGER_COND))
		return;
	if ((fl & EVENT_FILE_FL_SOFT_DISABLED) ||
	    ((fl & EVENT_FILE_FL_PID_FILTER) &&
	     trace_event_ignore_this_pid(src->file)) ||
	    !fsm_tracing_is_on(src->tr)) {
		local64_inc(&this_cpu_ptr(src->pc)->filtered);
		return;
	}
	if (fsm_probe_exact && !paired) {
		local64_inc(&this_cpu_ptr(src->pc)->unpaired);
		return;
	}
	local64_inc(&this_cpu_ptr(src->pc)->hits);
	FSM_CALLER(&caller);	/* this function's frame: see fsm_capture() */
	if (fsm_record_event(src->inst, src, &caller))
		local64_inc(&this_cpu_ptr(src->pc)->records);
	else
		local64_inc(&this_cpu_ptr(src->pc)->drops);
}

/*
 * The body is inlined: its FSM_CALLER() names this frame, the last of
 * ours a captured stack skips. Preemption off: see fsm_probe_pre().
 */
static void notrace fsm_probe(void *data)
{
	preempt_disable_notrace();
	fsm_probe_here(data);
	preempt_enable_notrace();
}
NOKPROBE_SYMBOL(fsm_probe);


/*
 * Attach: register the probe. tracepoint_probe_register_prio() publishes it
 * with rcu_assign_pointer(), after every field of the source and of its
 * instance that the probe reads was written.
 * Context: task, fsm_mutex held. Return: 0 or the kernel's error.
 */
static int fsm_src_probe_attach(struct fsm_src *src)
{
	int ret;

	if (fsm_probe_exact) {
		ret = tracepoint_probe_register_prio(src->tp,
						     (void *)fsm_probe_pre, src,
						     FSM_PROBE_PRE_PRIO);
		if (ret)
			goto out;
	}
	ret = tracepoint_probe_register_prio(src->tp, (void *)fsm_probe, src,
					     FSM_PROBE_PRIO);
	if (ret && fsm_probe_exact)
		WARN_ON_ONCE(tracepoint_probe_unregister(src->tp,
							 (void *)fsm_probe_pre,
							 src));
out:
	if (ret)
		pr_warn_ratelimited("%s: cannot attach to %s (%d)\n",
				    fsm_inst_label(src->inst), src->name, ret);
	return ret;
}

/*
 * Detach: the probe may still be running on other CPUs when this returns
 * (tracepoint_synchronize_unregister() before @src or its instance is
 * freed). Context: task, fsm_mutex held.
 */
static void fsm_src_probe_detach(struct fsm_src *src)
{
	WARN_ON_ONCE(tracepoint_probe_unregister(src->tp, (void *)fsm_probe, src));
	if (fsm_probe_exact)
		WARN_ON_ONCE(tracepoint_probe_unregister(src->tp,
							 (void *)fsm_probe_pre,
							 src));
}

/*
 * Only the static tracepoint events: a synthetic event has a tracepoint
 * too, but it is freed when the event is removed, and nothing tells this
 * backend (the removal hooks come with the trigger backend): a probe left
 * on it is a use after free (seen on arm64, whose Debian kernel has no
 * KALLSYMS_ALL, so no trigger backend). Never ftrace's own events
 * (IGNORE_ENABLE: function, print...).
 */
static const char *fsm_src_probe_refuses(const struct trace_event_call *call)
{
	if (!(call->flags & TRACE_EVENT_FL_IGNORE_ENABLE) &&
	    (call->flags & TRACE_EVENT_FL_TRACEPOINT) &&
	    !(call->flags & TRACE_EVENT_FL_DYNAMIC))
		return NULL;
	return (call->flags & TRACE_EVENT_FL_DYNAMIC) ?
	       "a dynamic event, and sources through triggers are not available" :
	       "no tracepoint, and sources through triggers are not available";
}

/*
 * The event's tracepoint and its iterator (__traceiter_*, trimmed from
 * captured stacks by address). Context: task, resolution. Return: 0.
 */
static int fsm_src_probe_prepare(struct fsm_src *src,
				 struct trace_event_call *call)
{
	unsigned long start = 0, size;

	src->tp = call->tp;
	src->mod = call->module;
	size = fsm_compat_symbol_size((unsigned long)call->tp->iterator, &start);
	src->iter_start = start;
	src->iter_size = size;
	return 0;
}

static const struct fsm_src_ops fsm_src_probe_ops = {
	.name = "tracepoint probe",
	.refuses = fsm_src_probe_refuses,
	.prepare = fsm_src_probe_prepare,
	.attach = fsm_src_probe_attach,
	.detach = fsm_src_probe_detach,
};

/**
 * fsm_src_probe_init - the tracepoint-probe backend, and what it cannot
 * see (dmesg).
 * Context: task (module init). Return: its ops (never NULL).
 */
const struct fsm_src_ops *fsm_src_probe_init(void)
{
	const char *why = FSM_HAVE_KL_TR_BUFFER ? fsm_compat_layouts_why() :
			  FSM_KL_TR_BUFFER_WHY;

	if (!fsm_tracing_state_known())
		pr_warn("tracer_tracing_is_on not found: tracepoint-probe sources insert stacks while tracing is off\n");
	fsm_probe_exact = !why;
	if (why)
		pr_warn("tracepoint-probe sources cannot count the records around the event's own (%s): an id record may follow a record not its own\n",
			why);
	return &fsm_src_probe_ops;
}
