/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat/timers.h - timer_list and hrtimer calls under the names each
 * kernel has (compile probes timer_container_of and hrtimer_setup). Only
 * the KUnit module arms timers (its softirq and hardirq contexts); the
 * module itself does not.
 */
#ifndef FSM_COMPAT_TIMERS_H
#define FSM_COMPAT_TIMERS_H

#include <linux/hrtimer.h>
#include <linux/timer.h>

#include "probes.h"

#if FSM_HAVE_TIMER_CONTAINER_OF
#define fsm_timer_container_of(var, t, field) timer_container_of(var, t, field)
#define fsm_timer_delete_sync(t) timer_delete_sync(t)
#define fsm_timer_destroy_on_stack(t) timer_destroy_on_stack(t)
#else
#define fsm_timer_container_of(var, t, field) from_timer(var, t, field)
#define fsm_timer_delete_sync(t) del_timer_sync(t)
#define fsm_timer_destroy_on_stack(t) destroy_timer_on_stack(t)
#endif

static inline void fsm_hrtimer_setup(struct hrtimer *t,
				     enum hrtimer_restart (*fn)(struct hrtimer *),
				     clockid_t clock, enum hrtimer_mode mode)
{
#if FSM_HAVE_HRTIMER_SETUP
	hrtimer_setup(t, fn, clock, mode);
#else
	hrtimer_init(t, clock, mode);
	t->function = fn;
#endif
}

#endif /* FSM_COMPAT_TIMERS_H */
