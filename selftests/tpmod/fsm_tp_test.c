// SPDX-License-Identifier: GPL-2.0
/*
 * fsm_tp_test.ko - a module that owns one trace event, for the guest tests
 * of ftrace_stackmap: a source event whose tracepoint goes away with its
 * module (selftests/guest/stackmap_lifecycle.sh races its unload against
 * the unload of ftrace_stackmap). The event fires from a timer every
 * 10 ms while the module is loaded. With fail_init_ms=N its init sleeps N
 * ms (the module is COMING, its event exists) and then fails: the kernel
 * frees a module whose init failed whatever its refcount.
 *
 * For the tests of tracepoint-probe sources (stackmap_probe_pair.sh), each
 * tick also fires fsm_tp_big when big_len=N is set (N bytes of data on even
 * ticks, 8 on odd ones), and writing between=M adds a probe of fsm_tp_ping
 * at the trace events' priority, registered after them (so the kernel's
 * probe of an event enabled before runs first, then this one, then
 * ftrace_stackmap's): M=1 fires fsm_tp_between on odd ticks; M=2 turns
 * the top level's tracing off before the trace events' probes (a probe of
 * a higher priority) and on again after them, on odd ticks; 0 removes
 * them.
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/timer.h>
#include <linux/kernel.h>
#include <linux/mutex.h>

#define CREATE_TRACE_POINTS
#include "fsm_tp_test_events.h"

static struct timer_list fsm_tp_timer;
static unsigned long fsm_tp_count;
static unsigned int fsm_tp_big_len;
module_param_named(big_len, fsm_tp_big_len, uint, 0644);
MODULE_PARM_DESC(big_len, "Also fire fsm_tp_big with this many bytes on even ticks (0: never)");

static void fsm_tp_fire(struct timer_list *t)
{
	unsigned int len = READ_ONCE(fsm_tp_big_len);

	trace_fsm_tp_ping(++fsm_tp_count);
	if (len)
		trace_fsm_tp_big(fsm_tp_count, fsm_tp_count & 1 ? 8 : len);
	mod_timer(&fsm_tp_timer, jiffies + msecs_to_jiffies(10));
}

/* The probe of between=M, on fsm_tp_ping. Context: the timer (softirq). */
static unsigned int fsm_tp_between_mode;

static void fsm_tp_between_probe(void *data, unsigned long n)
{
	switch (READ_ONCE(fsm_tp_between_mode)) {
	case 1:
		if (n & 1)
			trace_fsm_tp_between(n);
		break;
	case 2:
		if (n & 1)
			tracing_on();
		break;
	}
}

/* between=2: before every trace event probe of fsm_tp_ping */
static void fsm_tp_early_probe(void *data, unsigned long n)
{
	if (READ_ONCE(fsm_tp_between_mode) == 2 && (n & 1))
		tracing_off();
}

static DEFINE_MUTEX(fsm_tp_between_lock);
static bool fsm_tp_between_on;

static int fsm_tp_between_set(const char *val, const struct kernel_param *kp)
{
	unsigned int m;
	int ret = kstrtouint(val, 0, &m);

	if (ret || m > 2)
		return -EINVAL;
	mutex_lock(&fsm_tp_between_lock);
	WRITE_ONCE(fsm_tp_between_mode, m);
	if (m && !fsm_tp_between_on) {
		ret = register_trace_prio_fsm_tp_ping(fsm_tp_early_probe, NULL,
						      TRACEPOINT_DEFAULT_PRIO + 2);
		if (!ret)
			ret = register_trace_prio_fsm_tp_ping(fsm_tp_between_probe,
							      NULL,
							      TRACEPOINT_DEFAULT_PRIO);
		if (ret)
			unregister_trace_fsm_tp_ping(fsm_tp_early_probe, NULL);
	} else if (!m && fsm_tp_between_on) {
		unregister_trace_fsm_tp_ping(fsm_tp_between_probe, NULL);
		ret = unregister_trace_fsm_tp_ping(fsm_tp_early_probe, NULL);
	}
	if (!ret)
		fsm_tp_between_on = m;
	mutex_unlock(&fsm_tp_between_lock);
	return ret;
}

static const struct kernel_param_ops fsm_tp_between_ops = {
	.set = fsm_tp_between_set,
	.get = param_get_uint,
};
module_param_cb(between, &fsm_tp_between_ops, &fsm_tp_between_mode, 0644);
MODULE_PARM_DESC(between, "A probe of fsm_tp_ping after the kernel's: 1 fires fsm_tp_between on odd ticks, 2 toggles tracing_on (0: none)");

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
	if (fsm_tp_between_on) {
		unregister_trace_fsm_tp_ping(fsm_tp_between_probe, NULL);
		unregister_trace_fsm_tp_ping(fsm_tp_early_probe, NULL);
		tracepoint_synchronize_unregister();
	}
}

module_init(fsm_tp_init);
module_exit(fsm_tp_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ftrace_stackmap tests: a module with one trace event");
