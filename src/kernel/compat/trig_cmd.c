// SPDX-License-Identifier: GPL-2.0
/*
 * trig_cmd.c - trig_layout.h for the FSM_KL_TRIGGER_CMD layout (6.12.113+):
 * struct event_trigger_ops is gone; the callbacks of trigger data are
 * members of struct event_command (data->cmd_ops), with count_func() called
 * before trigger() for data that have EVENT_TRIGGER_FL_COUNT. Empty with
 * another layout (trig_ops.c then).
 *
 * How 6.12.118 calls them (kernel/trace/trace_events_trigger.c):
 * - event_triggers_call() and event_triggers_post_call() go through
 *   data_ops_trigger(): count_func() first if the data has
 *   EVENT_TRIGGER_FL_COUNT (stop if it says false), then trigger();
 * - trigger_data_alloc() sets EVENT_TRIGGER_FL_COUNT when the trigger has
 *   a ":N" and the command a count_func. The module's kinds have none:
 *   ":N" is counted by the module's trigger (trigger.c), and data the
 * *   module makes itself never get the flag (fsm_kl_data_init());
 * - register_trigger() calls cmd_ops->init, try_unregister_trigger() and
 *   clear_event_triggers() cmd_ops->free, trigger_show() cmd_ops->print
 *   (for every data of a file that has one not flagged
 *   EVENT_TRIGGER_FL_PROBE: every data needs a print);
 * - trigger_data_free() (set_filter(NULL), a grace period, kfree) is
 *   unchanged from 6.1, and event_trigger_parse() still takes and drops
 *   its own reference around reg with event_trigger_init/free called
 *   directly, not through the command.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "trig_layout.h"

#if FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_CMD

/* The parser makes data with trigger_data_alloc(): nothing to add. */
void fsm_kl_kind_listed(struct fsm_kl_kind *k)
{
}

const char *fsm_kl_stacktrace_cbs(struct fsm_kl_command *st,
				  struct fsm_kl_cbs *out)
{
	const char *why;

	/* not called by the module, but it proves the layout once more */
	why = fsm_compat_fn_is("stacktrace's count_func", st->count_func,
			       "event_trigger_count");
	if (why)
		return why;
	return fsm_kl_get_stacktrace_cbs(out, st);
}

#endif /* FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_CMD */
