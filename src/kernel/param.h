/* SPDX-License-Identifier: GPL-2.0 */
/*
 * param.h - ranged unsigned int module parameters, one rule for all of
 * them: a value is accepted only if it parses (kstrtouint, base 0) and
 * lies in [min, max]; anything else is refused with -EINVAL and one
 * ratelimited dmesg line "NAME=VALUE out of range (accepted: MIN..MAX)",
 * never clamped. Usage (the range struct is the parameter's argument):
 *
 *	static struct fsm_param_range fsm_x_range = {
 *		.val = &fsm_x, .min = 1, .max = 10,
 *	};
 *	module_param_cb(x, &fsm_param_range_ops, &fsm_x_range, 0644);
 *
 * The value is written with WRITE_ONCE() (a writable parameter changes
 * while others read it with READ_ONCE()) and read back as "%u\n".
 */
#ifndef FSM_PARAM_H
#define FSM_PARAM_H

#include <linux/moduleparam.h>

struct fsm_param_range {
	unsigned int *val;
	unsigned int min;
	unsigned int max;
};

extern const struct kernel_param_ops fsm_param_range_ops;

#endif /* FSM_PARAM_H */
