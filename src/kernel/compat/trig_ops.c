// SPDX-License-Identifier: GPL-2.0
/*
 * trig_ops.c - trig_layout.h for the FSM_KL_TRIGGER_OPS layout (6.1 up to
 * 6.12.112): the callbacks of trigger data in a struct event_trigger_ops
 * (data->ops), chosen by the command's get_trigger_ops() at parse time.
 * Empty with another layout (trig_cmd.c then).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bug.h>

#include "trig_layout.h"

#if FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_OPS

/* The one kind on trigger_commands: get_trigger_ops() hands out its ops. */
static struct fsm_kl_kind *fsm_kl_listed;

/*
 * event_trigger_parse() asks for the ops of a new data: the same for every
 * data of the listed command, ":N" or not (the trigger counts).
 * Context: task, event_mutex and trigger_cmd_mutex held (the parse).
 */
static struct fsm_kl_trigger_ops *fsm_kl_get_ops(char *cmd, char *param)
{
	return &fsm_kl_listed->ops;
}

void fsm_kl_kind_listed(struct fsm_kl_kind *k)
{
	WARN_ON_ONCE(fsm_kl_listed && fsm_kl_listed != k);
	fsm_kl_listed = k;
	k->cmd.get_trigger_ops = fsm_kl_get_ops;
}

const char *fsm_kl_stacktrace_cbs(struct fsm_kl_command *st,
				  struct fsm_kl_cbs *out)
{
	struct fsm_kl_trigger_ops *ops;
	const char *why;

	why = fsm_compat_fn_is("stacktrace's get_trigger_ops",
			       st->get_trigger_ops, "stacktrace_get_trigger_ops");
	if (why)
		return why;
	/* the ops of a data without ":N" (param NULL) */
	ops = st->get_trigger_ops("stacktrace", NULL);
	if (!ops)
		return "stacktrace's get_trigger_ops gave no ops";
	return fsm_kl_get_stacktrace_cbs(out, ops);
}

#endif /* FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_OPS */
