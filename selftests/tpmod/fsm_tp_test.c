// SPDX-License-Identifier: GPL-2.0
/*
 * fsm_tp_test.ko - a module that owns one trace event, for the guest tests
 * of ftrace_stackmap: a source event whose tracepoint goes away with its
 * module (selftests/guest/stackmap_lifecycle.sh races its unload against
 * the unload of ftrace_stackmap). The event fires from a timer every
 * 10 ms while the module is loaded. With fail_init_ms=N its init sleeps N
 * ms (the module is COMING, its event exists) and then fails: the kernel
 * frees a module whose init failed whatever its refcount.
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
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

static unsigned int fsm_tp_fail_init_ms;
module_param_named(fail_init_ms, fsm_tp_fail_init_ms, uint, 0444);
MODULE_PARM_DESC(fail_init_ms, "Sleep this long in init, then fail it (0: load normally)");

static int __init fsm_tp_init(void)
{
	if (fsm_tp_fail_init_ms) {
		msleep(fsm_tp_fail_init_ms);
		return -EAGAIN;
	}
	timer_setup(&fsm_tp_timer, fsm_tp_fire, 0);
	mod_timer(&fsm_tp_timer, jiffies + 1);
	return 0;
}

static void __exit fsm_tp_exit(void)
{
	timer_delete_sync(&fsm_tp_timer);
}

module_init(fsm_tp_init);
module_exit(fsm_tp_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ftrace_stackmap tests: a module with one trace event");
