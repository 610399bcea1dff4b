// SPDX-License-Identifier: GPL-2.0
/*
 * hrtimer_setup() sets an hrtimer's function with its clock and mode
 * (6.13); hrtimer_init() and the separate ->function store are gone in
 * 7.x. Used by the KUnit module's hardirq context.
 * yes: fsm_hrtimer_setup() is hrtimer_setup()
 * no:  fsm_hrtimer_setup() is hrtimer_init() and a store to ->function
 */
#include <linux/hrtimer.h>

static enum hrtimer_restart fsm_probe_fn(struct hrtimer *t)
{
	return HRTIMER_NORESTART;
}

static void __used fsm_probe(struct hrtimer *t)
{
	hrtimer_setup(t, fsm_probe_fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
}
