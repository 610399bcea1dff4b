// SPDX-License-Identifier: GPL-2.0
/*
 * ftrace_stackmap - record each distinct stack once, put a stack id in the
 * trace.
 *
 * main.c: module parameters, load/unload, the load-time self-check of the
 * C++ core.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/kernel.h>
#include <linux/random.h>
#include <linux/kstrtox.h>

#include "fsm.h"

unsigned int fsm_bits = FSM_BITS_DEFAULT;
static u64 fsm_key[2];

/*
 * bits: capacity exponent of every stack map (2^bits stacks per instance,
 * 2^(bits+1) hash slots). Validated, never clamped: a malformed or
 * out-of-range value fails the load with -EINVAL and one dmesg line.
 */
static int fsm_bits_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;
	int ret;

	ret = kstrtouint(val, 0, &v);
	if (ret) {
		pr_err("bits=%s is not a number (accepted: %u..%u)\n",
		       val, FSM_BITS_MIN, FSM_BITS_MAX);
		return -EINVAL;
	}
	if (v < FSM_BITS_MIN || v > FSM_BITS_MAX) {
		pr_err("bits=%u out of range (accepted: %u..%u)\n",
		       v, FSM_BITS_MIN, FSM_BITS_MAX);
		return -EINVAL;
	}
	*(unsigned int *)kp->arg = v;
	return 0;
}

static const struct kernel_param_ops fsm_bits_ops = {
	.set = fsm_bits_set,
	.get = param_get_uint,
};

module_param_cb(bits, &fsm_bits_ops, &fsm_bits, 0444);
MODULE_PARM_DESC(bits,
		 "Stack map capacity exponent: 2^bits distinct stacks per instance, accepted "
		 __stringify(FSM_BITS_MIN) ".." __stringify(FSM_BITS_MAX)
		 " (default " __stringify(FSM_BITS_DEFAULT) ")");

void fsm_map_key(u64 key[2])
{
	key[0] = fsm_key[0];
	key[1] = fsm_key[1];
}

static int __init fsm_init(void)
{
	int ret;

	get_random_bytes(fsm_key, sizeof(fsm_key));

	ret = fsm_core_selfcheck();
	if (ret) {
		pr_err("core self-check failed (%d)\n", ret);
		return ret;
	}

	return fsm_tracing_init();
}

static void __exit fsm_exit(void)
{
	fsm_tracing_exit();
}

module_init(fsm_init);
module_exit(fsm_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Deduplicated kernel and user stack traces for ftrace");
MODULE_AUTHOR("ftrace_stackmap developers");
