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
 * returns): the functions are called from NMI and int3 handlers, so no
 * later write can race them, and none clears them at exit. The static
 * calls are likewise set once, at init, and never changed.
 */
struct fsm_ksyms fsm_ks __ro_after_init;

DEFINE_STATIC_CALL_NULL(fsm_ks_stack_trace_save_regs, fsm_ks_stack_trace_save_regs_proto);
DEFINE_STATIC_CALL_NULL(fsm_ks_tracer_tracing_is_on, fsm_ks_tracer_tracing_is_on_proto);
DEFINE_STATIC_CALL_NULL(fsm_ks_find_event_file, fsm_ks_find_event_file_proto);
DEFINE_STATIC_CALL_NULL(fsm_ks_free_event_filter, fsm_ks_free_event_filter_proto);
DEFINE_STATIC_CALL_NULL(fsm_ks_update_cond_flag, fsm_ks_update_cond_flag_proto);
DEFINE_STATIC_CALL_NULL(fsm_ks_event_file_get, fsm_ks_event_file_get_proto);
DEFINE_STATIC_CALL_NULL(fsm_ks_event_file_put, fsm_ks_event_file_put_proto);
DEFINE_STATIC_CALL_NULL(fsm_ks_trace_buffered_event_enable,
			fsm_ks_trace_buffered_event_enable_proto);
DEFINE_STATIC_CALL_NULL(fsm_ks_trace_buffered_event_disable,
			fsm_ks_trace_buffered_event_disable_proto);

/* A data symbol, taken as it is. */
#define FSM_KSYM_DATA(field)						\
	(fsm_ks.field = (typeof(fsm_ks.field))fsm_compat_ksym(#field, false))

/*
 * A function: its address, and its static call pointed at it before any
 * fsm_kcall() can run (nothing that calls them is registered yet).
 * static_call_update() patches the module's own call sites (text_poke),
 * which is fine at init, before the module's hooks exist.
 */
#define FSM_KSYM_FUNC(field)						\
	do {								\
		fsm_ks.field = fsm_compat_ksym(#field, true);		\
		if (fsm_ks.field)					\
			static_call_update(fsm_ks_##field,		\
				(typeof(&fsm_ks_##field##_proto))fsm_ks.field);	\
	} while (0)

void fsm_ksyms_init(void)
{
	FSM_KSYM_FUNC(stack_trace_save_regs);
	FSM_KSYM_FUNC(tracer_tracing_is_on);
	FSM_KSYM_DATA(temp_buffer);
	FSM_KSYM_DATA(trigger_commands);
	FSM_KSYM_DATA(trigger_cmd_mutex);
	FSM_KSYM_DATA(event_mutex);
	FSM_KSYM_DATA(trigger_stacktrace_cmd);
	FSM_KSYM_FUNC(find_event_file);
	FSM_KSYM_FUNC(free_event_filter);
	FSM_KSYM_FUNC(update_cond_flag);
	FSM_KSYM_DATA(kprobes_all_disarmed);
	FSM_KSYM_FUNC(event_file_get);
	FSM_KSYM_FUNC(event_file_put);
	FSM_KSYM_FUNC(trace_buffered_event_enable);
	FSM_KSYM_FUNC(trace_buffered_event_disable);
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
	return !fsm_ks.tracer_tracing_is_on ||
	       fsm_kcall(tracer_tracing_is_on)(tr);
}
NOKPROBE_SYMBOL(fsm_tracing_is_on);

/* Whether fsm_tracing_is_on() can tell. Context: any, after init. */
bool fsm_tracing_state_known(void)
{
	return fsm_ks.tracer_tracing_is_on;
}
