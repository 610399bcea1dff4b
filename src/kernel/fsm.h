/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fsm.h - internal interfaces of the ftrace_stackmap C glue.
 *
 * The module is three layers: the C++ core (src/core, no kernel headers,
 * reached through src/core/fsm_core.h), this C glue (kernel APIs), and the
 * compat layer (src/kernel/compat.h: the one place that knows about kernel
 * differences and non-exported symbols).
 */
#ifndef FSM_H
#define FSM_H

#include <linux/types.h>
#include "fsm_core.h"

#define FSM_NAME "ftrace_stackmap"

/* Value of the "bits" module parameter (validated at load). */
extern unsigned int fsm_bits;

/* Per-boot random hash key shared by all maps of this module instance. */
void fsm_map_key(u64 key[2]);

/* Tracing glue: stack ids in the trace, tracefs nodes, instances. */
int fsm_tracing_init(void);
void fsm_tracing_exit(void);

#endif /* FSM_H */
