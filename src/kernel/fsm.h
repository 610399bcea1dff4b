/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fsm.h - internal interfaces of the ftrace_stackmap C glue.
 *
 * The module is three layers: the C++ core (src/core, no kernel headers,
 * reached through src/core/fsm_core.h), this C glue (kernel APIs), and the
 * compat layer (src/kernel/compat/: the one place that knows about kernel
 * differences and non-exported symbols).
 */
#ifndef FSM_H
#define FSM_H

#include <linux/types.h>
#include "fsm_core.h"

#define FSM_NAME "ftrace_stackmap"

/* Value of the "bits" module parameter (validated at load). */
extern unsigned int fsm_bits;

/*
 * A stack map keyed with the per-load random hash key (map.c), charged to
 * the module's memory budget (memory_budget_mb); ERR_PTR() after one dmesg
 * line on failure (-ENOMEM past the budget).
 */
struct fsm_map *fsm_map_new(struct fsm_map_params *p, const char *label,
			    const char *what, u32 *gen);
/* Destroy a map of fsm_map_new(), uncharging it from the memory budget. */
void fsm_map_free(struct fsm_map *map);
/* Draw the maps' hash key (module init, before any map). */
void fsm_map_init(void);

#endif /* FSM_H */
