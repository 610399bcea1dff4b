/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fsm_test_hooks.h - stop points inside fsm_map_insert(), for tests only.
 *
 * When the core is compiled with -DFSM_TEST_HOOKS (the user-space test
 * build; never the kernel module or the benchmark), fsm_map_insert() calls
 * fsm_test_hook() at the points below. A test can block an inserter there
 * and drive an interleaving that is otherwise a one-in-a-million race:
 * twin inserts, waiting on an unpublished id, reading an unpublished id,
 * a reset waiting for an inserter. The test build defines fsm_test_hook().
 */
#ifndef FSM_TEST_HOOKS_H
#define FSM_TEST_HOOKS_H

#ifdef __cplusplus
extern "C" {
#endif

struct fsm_map;

enum fsm_test_hook_point {
	FSM_HOOK_RECORD_WRITTEN = 1,	/* record written, slot not yet claimed */
	FSM_HOOK_SLOT_CLAIMED,		/* slot claimed, no id taken yet */
	FSM_HOOK_ID_TAKEN,		/* id taken, index[id] not yet published */
	FSM_HOOK_INDEX_PUBLISHED,	/* index[id] published, record->id not yet */
	FSM_HOOK_ID_WAIT,		/* found the stack, its id is unpublished:
					 * each bounded-wait iteration */
};

/* Context: whatever the inserter's context is. */
void fsm_test_hook(const struct fsm_map *map, unsigned int point);

#ifdef __cplusplus
}
#endif

#endif /* FSM_TEST_HOOKS_H */
