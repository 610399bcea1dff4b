// SPDX-License-Identifier: GPL-2.0
/*
 * fsm_tp_test.ko - a module that owns one trace event, for the guest tests
 * of ftrace_stackmap: a source event whose tracepoint goes away with its
 * module (selftests/guest/stackmap_lifecycle.sh races its unload against
 * the unload of ftrace_stackmap). The event fires from a timer every
 * 10 ms while the module is loaded.
 */
#include <linux/module.h>
#include <linux/timer.h>

#define CREATE_TRACE_POINTS
#include "fsm_tp_test_events.h"

static struct timer_list fsm_tp_timer;
static unsigned long fsm_tp_count;

static void fsm_tp_fire(struct timer_list *t)
{
	trace_fsm_tp_ping(++fsm_tp_count);
	mod_timer(&fsm_tp_timer, jiffies + msecs_to_jiffies(10));
}

static int __init fsm_tp_init(void)
{
	timer_setup(&fsm_tp_timer, fsm_tp_fire, 0);
	mod_timer(&fsm_tp_timer, jiffies + 1);
	return 0;
}

static void __exit fsm_tp_exit(void)
{
	del_timer_sync(&fsm_tp_timer);
}

module_init(fsm_tp_init);
module_exit(fsm_tp_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ftrace_stackmap tests: a module with one trace event");
