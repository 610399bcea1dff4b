// SPDX-License-Identifier: GPL-2.0
/*
 * ksyms.c - the one place that looks kernel symbols up by name (ksyms.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/mutex.h>
#include <linux/string.h>

#include "compat.h"
#include "ksyms.h"

/*
 * Written once, by fsm_ksyms_init() during module init, then read-only
 * (the module loader write-protects __ro_after_init data once init
 * returns): the pointers are called from NMI and int3 handlers, so no
 * later write can race them, and none clears them at exit.
 */
struct fsm_ksyms fsm_ks __ro_after_init;

/* Data symbols (false) are taken as they are; functions are checked. */
#define FSM_KSYM(field, func)						\
	(fsm_ks.field = (typeof(fsm_ks.field))fsm_compat_ksym(#field, func))

void fsm_ksyms_init(void)
{
	FSM_KSYM(stack_trace_save_regs, true);
	FSM_KSYM(tracer_tracing_is_on, true);
	FSM_KSYM(temp_buffer, false);
	FSM_KSYM(trigger_commands, false);
	FSM_KSYM(trigger_cmd_mutex, false);
	FSM_KSYM(event_mutex, false);
	FSM_KSYM(trigger_stacktrace_cmd, false);
	FSM_KSYM(find_event_file, true);
	FSM_KSYM(free_event_filter, true);
	FSM_KSYM(update_cond_flag, true);
	FSM_KSYM(kprobes_all_disarmed, false);
	FSM_KSYM(event_file_get, true);
	FSM_KSYM(event_file_put, true);
	FSM_KSYM(trace_buffered_event_enable, true);
	FSM_KSYM(trace_buffered_event_disable, true);
}


/*
 * Context: task, may sleep. Only the source backend that needs it takes it
 * (sources.c, fsm_event_lock()), in the order event_mutex -> fsm_mutex.
 */
void fsm_compat_event_lock(void)
{
	if (fsm_ks.event_mutex)
		mutex_lock(fsm_ks.event_mutex);
}

void fsm_compat_event_unlock(void)
{
	if (fsm_ks.event_mutex)
		mutex_unlock(fsm_ks.event_mutex);
}

/**
 * fsm_tracing_is_on - whether @tr's ring buffer takes writes now.
 * @tr: an instance whose buffer is alive (an event file of it is in use)
 *
 * tracer_tracing_is_on(): one atomic_read(), no lock, NMI safe. True when
 * the symbol was not found (the state is unknown: said at load).
 * Context: any.
 */
bool notrace fsm_tracing_is_on(struct trace_array *tr)
{
	return !fsm_ks.tracer_tracing_is_on || fsm_ks.tracer_tracing_is_on(tr);
}
NOKPROBE_SYMBOL(fsm_tracing_is_on);

/* Whether fsm_tracing_is_on() can tell. Context: any, after init. */
bool fsm_tracing_state_known(void)
{
	return fsm_ks.tracer_tracing_is_on;
}
