// SPDX-License-Identifier: GPL-2.0
/*
 * param.c - the ranged unsigned int module parameter (param.h), shared by
 * bits, memory_budget_mb (map.c), file_table_bits and
 * file_map_interval_ms (fileid.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/kstrtox.h>
#include <linux/module.h>
#include <linux/printk.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "param.h"

/*
 * Context: task (insmod, or a write of /sys/module/.../parameters/NAME).
 * Base 10 only: kstrtouint's base 0 would read "010" as 8. One line per
 * refused value, not rate limited: only root can write these (0644 or
 * 0444), and a shared rate limit could hide one parameter's line behind
 * another's.
 */
static int fsm_param_range_set(const char *val, const struct kernel_param *kp)
{
	const struct fsm_param_range *r = kp->arg;
	int len = (int)strcspn(val, "\n");
	unsigned int v;

	if (kstrtouint(val, 10, &v)) {
		pr_err("%s=%.*s is not a decimal number (accepted: %u..%u)\n",
		       kp->name, len, val, r->min, r->max);
		return -EINVAL;
	}
	if (v < r->min || v > r->max) {
		pr_err("%s=%u out of range (accepted: %u..%u)\n",
		       kp->name, v, r->min, r->max);
		return -EINVAL;
	}
	WRITE_ONCE(*r->val, v);
	return 0;
}

static int fsm_param_range_get(char *buf, const struct kernel_param *kp)
{
	const struct fsm_param_range *r = kp->arg;

	return sysfs_emit(buf, "%u\n", READ_ONCE(*r->val));
}

const struct kernel_param_ops fsm_param_range_ops = {
	.set = fsm_param_range_set,
	.get = fsm_param_range_get,
};
