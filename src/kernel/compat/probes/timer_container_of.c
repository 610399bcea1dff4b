// SPDX-License-Identifier: GPL-2.0
/*
 * The timer_list calls renamed in 6.16 (timer_container_of() for
 * from_timer(), timer_delete_sync() for del_timer_sync(),
 * timer_destroy_on_stack() for destroy_timer_on_stack(); the old names
 * are gone there). Used by the KUnit module's softirq context.
 * yes: compat/timers.h maps fsm_timer_* to the new names
 * no:  compat/timers.h maps them to from_timer() and the del_/destroy_ names
 */
#include <linux/timer.h>

struct fsm_probe_t {
	struct timer_list t;
};

static void __used fsm_probe(struct timer_list *t)
{
	struct fsm_probe_t *p = timer_container_of(p, t, t);

	timer_delete_sync(&p->t);
	timer_destroy_on_stack(&p->t);
}
