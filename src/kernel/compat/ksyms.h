/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ksyms.h - the kernel symbols that the module borrows without an export.
 *
 * All lookups by name are in compat/: compat.c resolves four symbols
 * through a kprobe (kallsyms_lookup_name, kallsyms_show_value,
 * tracefs_create_file, tracefs_remove: see compat.h), and this file every
 * other one through kallsyms_lookup_name(), once at module load
 * (fsm_ksyms_init(), right after fsm_compat_init()), cached here and never
 * looked up again. A function pointer is kept only if it is a valid
 * indirect-call target (IBT/BTI). NULL means "not found": every user
 * checks for it, says once in dmesg what it does without, and degrades
 * (the feature is off or takes a slower path); nothing outside compat/
 * looks a symbol up.
 *
 * Written before any probe, trigger or hook that reads them is registered
 * (registration publishes with a release: rcu_assign_pointer() for
 * tracepoint probes and trigger lists, the kprobe's own registration), and
 * cleared only after they are all gone: readers need no ordering of their
 * own.
 */
#ifndef FSM_COMPAT_KSYMS_H
#define FSM_COMPAT_KSYMS_H

#include <linux/types.h>

struct event_filter;
struct fsm_kl_command;
struct list_head;
struct mutex;
struct pt_regs;
struct trace_array;
struct trace_buffer;
struct trace_event_file;

/**
 * struct fsm_ksyms - the borrowed kernel symbols (NULL: not found).
 * @stack_trace_save_regs:  capture from the caller's registers (record.c)
 * @tracer_tracing_is_on:   the instance's buffer takes writes (record.c)
 * @temp_buffer:            the kernel's buffer for records that go nowhere
 *                          (verdict.c)
 * @trigger_commands:       the list of trigger commands (trigger.c)
 * @trigger_cmd_mutex:      its lock
 * @event_mutex:            the trace events' lock (fsm_compat_event_lock())
 * @trigger_stacktrace_cmd: the "stacktrace" command, whose callbacks the
 *                          "stackmap" command reuses (trigger.c)
 * @find_event_file:        an instance's file of an event (trigger.c)
 * @free_event_filter:      frees a trigger's filter (trigger.c, rmmod)
 * @update_cond_flag:       recomputes EVENT_FILE_FL_TRIGGER_COND
 *                          (src_trig.c)
 * @kprobes_all_disarmed:   kprobes are switched off (src_trig.c)
 * @event_file_get:         pin an event file (src_trig.c)
 * @event_file_put:         unpin it
 * @trace_buffered_event_enable:  take a count of the kernel's per-CPU
 *                          buffered events (src_trig.c)
 * @trace_buffered_event_disable: give one back
 */
struct fsm_ksyms {
	unsigned int (*stack_trace_save_regs)(struct pt_regs *regs,
					      unsigned long *store,
					      unsigned int size,
					      unsigned int skipnr);
	bool (*tracer_tracing_is_on)(struct trace_array *tr);
	struct trace_buffer **temp_buffer;
	struct list_head *trigger_commands;
	struct mutex *trigger_cmd_mutex;
	struct mutex *event_mutex;
	struct fsm_kl_command *trigger_stacktrace_cmd;
	struct trace_event_file *(*find_event_file)(struct trace_array *tr,
						    const char *system,
						    const char *event);
	void (*free_event_filter)(struct event_filter *filter);
	void (*update_cond_flag)(struct trace_event_file *file);
	bool *kprobes_all_disarmed;
	void (*event_file_get)(struct trace_event_file *file);
	void (*event_file_put)(struct trace_event_file *file);
	void (*trace_buffered_event_enable)(void);
	void (*trace_buffered_event_disable)(void);
};

extern struct fsm_ksyms fsm_ks;

/**
 * fsm_ksyms_init - look every symbol of struct fsm_ksyms up, once.
 * Context: task (module init, after fsm_compat_init()), may sleep.
 */
void fsm_ksyms_init(void);


/*
 * event_mutex, the lock of the trace events (kernel/trace/trace_events.c),
 * not exported: taken by the module around changes of event files' trigger
 * lists. No-ops when the symbol was not found (then nothing of the module
 * touches those lists: the features that would are off).
 */
void fsm_compat_event_lock(void);
void fsm_compat_event_unlock(void);

/* tracer_tracing_is_on(), if found (true if not). Context: any. */
bool fsm_tracing_is_on(struct trace_array *tr);
/* Whether fsm_tracing_is_on() can tell. Context: any, after init. */
bool fsm_tracing_state_known(void);
#endif /* FSM_COMPAT_KSYMS_H */
