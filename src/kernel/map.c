// SPDX-License-Identifier: GPL-2.0
/*
 * map.c - every stack map of the module is made here: the per-load random
 * hash key, the "bits" capacity parameter and the memory budget
 * (memory_budget_mb) that all maps together are charged to. The bottom of
 * the C glue: calls only the C++ core.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/random.h>

#include "fsm.h"
#include "param.h"

unsigned int fsm_bits = FSM_BITS_DEFAULT;
static u64 fsm_key[2];

/*
 * memory_budget_mb: all stack maps of the module together (kernel and user
 * maps of every instance), in MiB. fsm_map_new() charges a map's exact size
 * (fsm_map_memory_bytes()) before allocating it and refuses past the
 * budget; fsm_map_free() gives it back.
 */
#define FSM_BUDGET_MIN_MB	1
#define FSM_BUDGET_MAX_MB	(1U << 20)	/* 1 TiB */
#define FSM_BUDGET_DEFAULT_MB	1024
static unsigned int fsm_budget_mb = FSM_BUDGET_DEFAULT_MB;
static atomic64_t fsm_mem_charged = ATOMIC64_INIT(0);

/*
 * bits: capacity exponent of every stack map (2^bits stacks per instance,
 * 2^(bits+1) hash slots). Validated, never clamped (param.h).
 */
static struct fsm_param_range fsm_bits_range = {
	.val = &fsm_bits, .min = FSM_BITS_MIN, .max = FSM_BITS_MAX,
};
module_param_cb(bits, &fsm_param_range_ops, &fsm_bits_range, 0444);
MODULE_PARM_DESC(bits,
		 "Stack map capacity exponent: 2^bits distinct stacks per instance, accepted "
		 __stringify(FSM_BITS_MIN) ".." __stringify(FSM_BITS_MAX)
		 " (default " __stringify(FSM_BITS_DEFAULT) ")");

/*
 * memory_budget_mb: validated like bits. Writable at run time (0644): a
 * lower budget refuses new maps, it never frees existing ones.
 */
static struct fsm_param_range fsm_budget_range = {
	.val = &fsm_budget_mb, .min = FSM_BUDGET_MIN_MB, .max = FSM_BUDGET_MAX_MB,
};
module_param_cb(memory_budget_mb, &fsm_param_range_ops, &fsm_budget_range, 0644);
MODULE_PARM_DESC(memory_budget_mb,
		 "Memory of all stack maps together, MiB, accepted "
		 __stringify(FSM_BUDGET_MIN_MB) ".." __stringify(FSM_BUDGET_MAX_MB)
		 " (default " __stringify(FSM_BUDGET_DEFAULT_MB) ")");

/**
 * fsm_map_new - create a stack map keyed with this module's random key.
 * @p:     parameters; the key is filled in here
 * @label: owner of the map, for the message
 * @what:  "stack map", "user stack map", for the message
 * @gen:   set to the map's first generation
 *
 * Context: task (allocates).
 * Return: the map, or an ERR_PTR() after one dmesg line.
 */
struct fsm_map *fsm_map_new(struct fsm_map_params *p, const char *label,
			    const char *what, u32 *gen)
{
	u64 budget = (u64)READ_ONCE(fsm_budget_mb) << 20;
	u64 size = fsm_map_memory_bytes(p);
	struct fsm_map_stats st;
	struct fsm_map *map;
	s64 charged;
	int err = 0;

	if (!size) {
		pr_warn_ratelimited("%s: invalid %s parameters (bits=%u)\n",
				    label, what, p->bits);
		return ERR_PTR(-EINVAL);
	}
	/* Charge first: concurrent creations cannot overshoot together. */
	charged = atomic64_add_return(size, &fsm_mem_charged);
	if (charged > budget) {
		atomic64_sub(size, &fsm_mem_charged);
		pr_warn_ratelimited("%s: the %s (bits=%u) needs %llu KiB, over memory_budget_mb=%u (%llu KiB in use)\n",
				    label, what, p->bits, size >> 10,
				    READ_ONCE(fsm_budget_mb),
				    (u64)(charged - size) >> 10);
		return ERR_PTR(-ENOMEM);
	}
	p->key[0] = fsm_key[0];
	p->key[1] = fsm_key[1];
	map = fsm_map_create(p, &err);
	if (!map) {
		atomic64_sub(size, &fsm_mem_charged);
		pr_warn("%s: cannot allocate the %s (bits=%u): %d\n",
			label, what, p->bits, err);
		return ERR_PTR(err ? err : -ENOMEM);
	}
	fsm_map_stats(map, &st);
	WARN_ON_ONCE(st.memory_bytes != size);
	*gen = st.generation;
	return map;
}

/**
 * fsm_map_free - destroy a map made by fsm_map_new() and give its memory
 * back to the budget.
 * @map: the map (NULL: nothing)
 *
 * Context: task; no inserter or reader may still use @map.
 */
void fsm_map_free(struct fsm_map *map)
{
	struct fsm_map_stats st;

	if (!map)
		return;
	fsm_map_stats(map, &st);
	fsm_map_destroy(map);
	atomic64_sub(st.memory_bytes, &fsm_mem_charged);
}

/**
 * fsm_map_init - draw the per-load hash key of every map.
 * Context: task (module init), before any map is made.
 */
void fsm_map_init(void)
{
	get_random_bytes(fsm_key, sizeof(fsm_key));
}
