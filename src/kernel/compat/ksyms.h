/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ksyms.h - the kernel symbols that the module borrows without an export.
 *
 * All lookups by name are in compat/ and go through a kprobe
 * (fsm_compat_ksym(): register_kprobe() resolves the name, data symbols
 * included, without the module calling kallsyms_lookup_name()): compat.c
 * resolves kallsyms_show_value, tracefs_create_file and tracefs_remove,
 * this file every other one, once at module load (fsm_ksyms_init(), right
 * after fsm_compat_init()), cached here and never looked up again. The
 * functions are called directly (fsm_kcall()), never through a pointer
 * taken by name. NULL means "not found": every user
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

#include <linux/static_call.h>
#include <linux/types.h>

struct event_filter;
struct fsm_kl_command;
struct list_head;
struct mutex;
struct pt_regs;
struct trace_array;
struct trace_buffer;
struct trace_event_file;

/*
 * The prototypes of the borrowed functions, each spelled once: the static
 * call of each (below) has exactly this type. Declarations only, for
 * typeof(): nothing defines or calls them.
 */
unsigned int fsm_ks_stack_trace_save_regs_proto(struct pt_regs *regs,
						unsigned long *store,
						unsigned int size,
						unsigned int skipnr);
bool fsm_ks_tracer_tracing_is_on_proto(struct trace_array *tr);
struct trace_event_file *fsm_ks_find_event_file_proto(struct trace_array *tr,
						      const char *system,
						      const char *event);
void fsm_ks_free_event_filter_proto(struct event_filter *filter);
void fsm_ks_update_cond_flag_proto(struct trace_event_file *file);
void fsm_ks_event_file_get_proto(struct trace_event_file *file);
void fsm_ks_event_file_put_proto(struct trace_event_file *file);
void fsm_ks_trace_buffered_event_enable_proto(void);
void fsm_ks_trace_buffered_event_disable_proto(void);

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
 *
 * The function members are addresses, not pointers to call: a borrowed
 * function is called only through fsm_kcall() (see there), and its member
 * says whether it was found.
 */
struct fsm_ksyms {
	const void *stack_trace_save_regs;
	const void *tracer_tracing_is_on;
	struct trace_buffer **temp_buffer;
	struct list_head *trigger_commands;
	struct mutex *trigger_cmd_mutex;
	struct mutex *event_mutex;
	struct fsm_kl_command *trigger_stacktrace_cmd;
	const void *find_event_file;
	const void *free_event_filter;
	const void *update_cond_flag;
	bool *kprobes_all_disarmed;
	const void *event_file_get;
	const void *event_file_put;
	const void *trace_buffered_event_enable;
	const void *trace_buffered_event_disable;
};

extern struct fsm_ksyms fsm_ks;

/*
 * fsm_kcall(name)(args...) calls the borrowed function @name (its member
 * of fsm_ks non-NULL: check first). It is a static call (the kernel's
 * <linux/static_call.h>), set once at fsm_ksyms_init(): on x86 a direct
 * call instruction that the kernel patched to the function, so the
 * function needs no ENDBR. That matters because 6.12 and 7.x seal (poison
 * at boot) the ENDBR of every function whose address nothing in the
 * kernel takes, and nothing takes these: an indirect call to them faults
 * (#CP) on a CPU that enforces IBT, a direct one does not. Without arch
 * static calls (arm64) it is a call through the key's pointer, and
 * fsm_compat_ksym() checked the BTI landing pad of the target before.
 */
#define fsm_kcall(name) static_call(fsm_ks_##name)

DECLARE_STATIC_CALL(fsm_ks_stack_trace_save_regs, fsm_ks_stack_trace_save_regs_proto);
DECLARE_STATIC_CALL(fsm_ks_tracer_tracing_is_on, fsm_ks_tracer_tracing_is_on_proto);
DECLARE_STATIC_CALL(fsm_ks_find_event_file, fsm_ks_find_event_file_proto);
DECLARE_STATIC_CALL(fsm_ks_free_event_filter, fsm_ks_free_event_filter_proto);
DECLARE_STATIC_CALL(fsm_ks_update_cond_flag, fsm_ks_update_cond_flag_proto);
DECLARE_STATIC_CALL(fsm_ks_event_file_get, fsm_ks_event_file_get_proto);
DECLARE_STATIC_CALL(fsm_ks_event_file_put, fsm_ks_event_file_put_proto);
DECLARE_STATIC_CALL(fsm_ks_trace_buffered_event_enable,
		    fsm_ks_trace_buffered_event_enable_proto);
DECLARE_STATIC_CALL(fsm_ks_trace_buffered_event_disable,
		    fsm_ks_trace_buffered_event_disable_proto);

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
