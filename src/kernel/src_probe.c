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
 * right behind the source event's record on this CPU.
 */
#define FSM_PROBE_PRIO		(TRACEPOINT_DEFAULT_PRIO - 1)
/*
 * fsm_probe - tracepoint probe attached to each chosen source event, run
 * after the kernel's probe of the event wrote (or not) its record.
 * @data: the struct fsm_src
 *
 * Context: any (tracepoint: preemption disabled; irq, softirq, NMI).
 */
static void notrace fsm_probe(void *data)
{
	struct fsm_src *src = data;
	struct fsm_caller caller;
	unsigned long fl;

	/*
	 * An id record is written only right behind its own source record:
	 * the kernel's probe of the event (registered above this one) has
	 * just written it, or not. This probe sees what decided it through
	 * the event file's flags and the instance's buffer:
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
	 *   records. This probe cannot tell, so it writes nothing: no
	 *   verdict (judged, neither hit nor filtered). An id record written
	 *   there could follow another record, which would get this stack.
	 * Unconditional traceon/traceoff/snapshot triggers act before the
	 * record is reserved, and this probe sees their effect as the
	 * kernel's reservation did.
	 *
	 * Not seen (the flags are read, not locked; the per-CPU ring
	 * buffer's state is private), each open: other probes
	 * of the tracepoint above ours writing into the instance in between
	 * (a hist onmatch in another instance, bpf_printk); an enable_event
	 * trigger on the event itself (the kernel's probe tested the flags it
	 * read before its triggers ran); a record too long for the ring
	 * buffer; any change of what is read here while the kernel's probe
	 * runs (tracing_on, flags, pid list, by another CPU or an
	 * interrupt); tracing_cpumask and a full non-overwrite buffer. The
	 * stack is then inserted and our reserve fails, or an id record
	 * follows a record that is not its own: Documentation/tracing.rst,
	 * "Semantics and limits".
	 */
	fl = READ_ONCE(src->file->flags);
	if (!(fl & EVENT_FILE_FL_ENABLED))
		return;
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
	local64_inc(&this_cpu_ptr(src->pc)->hits);
	FSM_CALLER(&caller);	/* this function's frame: see fsm_capture() */
	if (fsm_record_event(src->inst, src, &caller))
		local64_inc(&this_cpu_ptr(src->pc)->records);
	else
		local64_inc(&this_cpu_ptr(src->pc)->drops);
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

	ret = tracepoint_probe_register_prio(src->tp, (void *)fsm_probe, src,
					     FSM_PROBE_PRIO);
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
	if (!fsm_tracing_state_known())
		pr_warn("tracer_tracing_is_on not found: tracepoint-probe sources insert stacks while tracing is off\n");
	return &fsm_src_probe_ops;
}
