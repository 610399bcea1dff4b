/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trig_layout.h - the module's trigger data and commands, whatever the
 * kernel's trigger layout (compat/layouts.h).
 *
 * Kernels put the callbacks of trigger data (trigger, init, free, print)
 * in one of two places:
 * - FSM_KL_TRIGGER_OPS (6.1 up to 6.12.112): in a struct event_trigger_ops
 *   that each data points to (data->ops); the parser of a command asks
 *   the command's get_trigger_ops() which one a new data gets;
 * - FSM_KL_TRIGGER_CMD (6.12.113+): in the command itself (data->cmd_ops),
 *   with a count_func() that the kernel calls before trigger() for data
 *   made with a ":N" (EVENT_TRIGGER_FL_COUNT).
 * The module's trigger code (trigger.c: the stackmap command and its
 * companion; src_trig.c: the sources' judge and post data) is written once
 * for both: it describes what a kind of data does (struct fsm_kl_cbs) and
 * gets a struct fsm_kl_kind that holds it where this kernel looks. One of
 * compat/trig_ops.c and compat/trig_cmd.c implements the functions below,
 * the one of this kernel's layout (the other compiles to nothing); the
 * inline helpers here serve both.
 *
 * ":N" is counted by the module's own trigger callback (a cmpxchg, see
 * trigger.c), never by the kernel: the FSM_KL_TRIGGER_CMD kinds have no
 * count_func, so the kernel never sets EVENT_TRIGGER_FL_COUNT on their
 * data, and the 6.1 command hands the same ops to counted and uncounted
 * data (an uncounted data has count -1: unlimited).
 */
#ifndef FSM_COMPAT_TRIG_LAYOUT_H
#define FSM_COMPAT_TRIG_LAYOUT_H

#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/rcupdate.h>
#include <linux/tracepoint.h>

#include "compat.h"
#include "layouts.h"

#if FSM_HAVE_KL_TRIGGER

/* What data of one kind do, in either layout (NULL: nothing). */
struct fsm_kl_cbs {
	fsm_kl_trigger_fn trigger;
	fsm_kl_init_fn init;
	fsm_kl_free_fn free;
	fsm_kl_print_fn print;
};

/**
 * struct fsm_kl_kind - a kind of trigger data of the module.
 * @cmd: the command its data point to (data->cmd_ops): name, type, flags,
 *       and for a command on trigger_commands its parse, reg, unreg,
 *       unreg_all and set_filter (set by the caller, the same members in
 *       both layouts); with FSM_KL_TRIGGER_CMD also the callbacks
 * @ops: with FSM_KL_TRIGGER_OPS, the callbacks (data->ops)
 */
struct fsm_kl_kind {
	struct fsm_kl_command cmd;
#if FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_OPS
	struct fsm_kl_trigger_ops ops;
#endif /* FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_OPS */
};

/*
 * FSM_KL_CBS_HOLDER(k) - where this layout keeps the callbacks of @k's data
 * (the same member names in struct event_trigger_ops and, 6.12.113+, in
 * struct event_command).
 */
#if FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_OPS
#define FSM_KL_CBS_HOLDER(k)	(&(k)->ops)
#else
#define FSM_KL_CBS_HOLDER(k)	(&(k)->cmd)
#endif /* FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_OPS */

/* Copy the four callbacks out of a holder (ops, or a command) into @out. */
#define FSM_KL_CBS_GET(out, h) do {				\
		(out)->trigger = (h)->trigger;			\
		(out)->init = (h)->init;			\
		(out)->free = (h)->free;			\
		(out)->print = (h)->print;			\
	} while (0)

/**
 * fsm_kl_kind_init - make @k the kind of data that do @cbs.
 * @k:      the kind (static storage: data point into it)
 * @name:   the command's name
 * @type:   its trigger type (one bit; ETT_NONE for a companion)
 * @flags:  FSM_KL_CMD_FL_*
 * @cbs:    what its data do
 *
 * With FSM_KL_TRIGGER_CMD the command has no count_func (see the top).
 * Context: task (module init), before any data of the kind exists.
 */
static inline void fsm_kl_kind_init(struct fsm_kl_kind *k, char *name,
				    enum event_trigger_type type, int flags,
				    const struct fsm_kl_cbs *cbs)
{
	k->cmd.name = name;
	k->cmd.trigger_type = type;
	k->cmd.flags = flags;
#if FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_CMD
	k->cmd.count_func = NULL;
#endif /* FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_CMD */
	FSM_KL_CBS_HOLDER(k)->trigger = cbs->trigger;
	FSM_KL_CBS_HOLDER(k)->init = cbs->init;
	FSM_KL_CBS_HOLDER(k)->free = cbs->free;
	FSM_KL_CBS_HOLDER(k)->print = cbs->print;
}

/**
 * fsm_kl_kind_listed - @k's command goes on trigger_commands: the kernel's
 * parser will make its data (6.1: through the command's get_trigger_ops(),
 * which then hands out @k's ops; nothing to do in 6.12.113+). One listed
 * kind at most.
 * Context: task (module init), after fsm_kl_kind_init(@k).
 */
void fsm_kl_kind_listed(struct fsm_kl_kind *k);

/**
 * fsm_kl_data_init - make @d a data of kind @k, as trigger_data_alloc()
 * does (count -1, one reference, no filter, no flags: neither
 * EVENT_TRIGGER_FL_COUNT nor _PROBE), with @priv as private_data.
 * For data the module puts on a list itself (companions, sources).
 * Context: any; @d is not on a list.
 */
static inline void fsm_kl_data_init(struct fsm_kl_trigger_data *d,
				    struct fsm_kl_kind *k, void *priv)
{
	d->count = -1;
	d->ref = 1;
	d->flags = 0;
#if FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_OPS
	d->ops = &k->ops;
#endif /* FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_OPS */
	d->cmd_ops = &k->cmd;
	d->private_data = priv;
	RCU_INIT_POINTER(d->filter, NULL);
	INIT_LIST_HEAD(&d->list);
	INIT_LIST_HEAD(&d->named_list);
#if defined(FSM_KL_HAVE_event_trigger_data_pdfree)
	d->private_data_free = NULL;
#endif /* FSM_KL_HAVE_event_trigger_data_pdfree */
}

/**
 * fsm_kl_data_free_wait - after the kernel's free took a trigger data's
 * last reference (its stacktrace free, event_trigger_free()): wait until
 * no trigger callback can still be running on that data.
 *
 * Kernels whose trigger data has no llist free it in trigger_data_free()
 * after tracepoint_synchronize_unregister(): when their free returns,
 * what the data's private_data points to can go. Those with one (7.x,
 * FSM_KL_DATA_FREE_DEFERRED, from the layouts) queue the data to a
 * kthread that waits and frees it later, and return at once: then the
 * wait is here, where the kernel's free used to do it.
 * Context: task, may sleep (event_mutex may be held: the kernel's free
 * slept under it too).
 */
static inline void fsm_kl_data_free_wait(void)
{
#if FSM_KL_DATA_FREE_DEFERRED
	tracepoint_synchronize_unregister();
#endif /* FSM_KL_DATA_FREE_DEFERRED */
}

/**
 * fsm_kl_stacktrace_cbs - the data callbacks of the kernel's stacktrace
 * command, each checked by name (fsm_kl_check_stacktrace_cbs()).
 * @st:  the kernel's trigger_stacktrace_cmd (checked by the caller: name,
 *       type, flags)
 * @out: its trigger, init, free and print
 *
 * 6.1: through its get_trigger_ops (checked, then called) for data
 * without a count; 6.12.113+: its own members (count_func checked too).
 * Context: task (module init).
 * Return: NULL, or why not (fsm_compat_fn_is()'s message).
 */
const char *fsm_kl_stacktrace_cbs(struct fsm_kl_command *st,
				  struct fsm_kl_cbs *out);

/*
 * Copy the callbacks of stacktrace's data out of @h (its ops, or its
 * command) into @out, and check that they are the functions they must be
 * (both layouts). Return: NULL, or why not.
 */
#define fsm_kl_get_stacktrace_cbs(out, h) ({				\
	FSM_KL_CBS_GET(out, h);						\
	fsm_kl_check_stacktrace_cbs(out);				\
})

static inline const char *fsm_kl_check_stacktrace_cbs(const struct fsm_kl_cbs *c)
{
	const struct fsm_fn_expect want[] = {
		{ "stacktrace's trigger", c->trigger, "stacktrace_trigger" },
		{ "stacktrace's init", c->init, "event_trigger_init" },
		{ "stacktrace's free", c->free, "event_trigger_free" },
		{ "stacktrace's print", c->print, "stacktrace_trigger_print" },
	};

	return fsm_compat_fns_are(want, ARRAY_SIZE(want));
}

#endif /* FSM_HAVE_KL_TRIGGER */
#endif /* FSM_COMPAT_TRIG_LAYOUT_H */
