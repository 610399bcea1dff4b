/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ustack_internal.h - what the parts of the deferred user stacks share.
 *
 * The user-stack code is split along its jobs (overview in
 * Documentation/ustack.rst), each file calling only those below it:
 *   ustack_work.c     requests (what the capture calls), queueing the task
 *                     works, the works themselves, the end of an entry,
 *                     init and exit (module-exit disarm)
 *   ustack_deliver.c  delivery: the user_stack/file_map records, the user map
 *                     ids, the events' .reg, options/stackmap_user, statistics
 *   ustack_ukey.c     the walk: frames, then the user map key (address-space
 *                     key, file ids and offsets)
 *   ustack.c          the task table, the entry's registers
 * This header is private to those four files.
 */
#ifndef FSM_USTACK_INTERNAL_H
#define FSM_USTACK_INTERNAL_H

#include <linux/atomic.h>
#include <linux/siphash.h>
#include <linux/types.h>

#include <ftrace_stackmap/ustack_abi.h>

#include "fsm.h"
#include "fsm_unwind.h"
#include "ustack.h"

struct pt_regs;
struct task_struct;

static_assert(FSM_USTACK_MAX_FRAMES == FSM_MAX_USER_DEPTH, "ustack_abi.h and fsm_unwind.h disagree");
static_assert(FSM_UST_MAX_INST == FSM_UWC_MAX_INSTANCES, "ustack.h and fsm_unwind.h disagree");

#define FSM_UST_SLOTS		512	/* tasks tracked at once; power of two */
#define FSM_UST_PROBE		16	/* slots looked at per lookup */
#define FSM_UST_NMI_QUEUE	4	/* per-CPU deferred task_work_add()s */
#define FSM_UST_SAME_REGS_MAX	16	/* see fsm_ust_end_entry() */

/**
 * struct fsm_ust_slot - per-task state.
 * @task:      key: the task, 0 = free. Claimed with cmpxchg by a request
 *             of that task, freed with smp_store_release() by the
 *             sched_process_free probe (pairs with the acquire loads of
 *             the lookup), when nothing can run for the task any more
 * @start:     the task's start_time, second half of the key (a stale slot
 *             of a reused task_struct is reset); written after the claim
 * @exec_id:   self_exec_id when the walk was queued (exec detection)
 * @walk:      the walk task work, queued at most once per entry (cache)
 * @emit:      the emit-only task work of late requests
 * @emit_queued: @emit is queued (xchg by requesters, cleared by it)
 * @late_mask: instances to serve from @emit (atomic OR / xchg)
 * @late_cookie: the entry those late requests belong to (the emit work
 *             serves them only if the slot's stack is still that entry's)
 * @xl_cookie: the entry @frames belong to
 * @nr, @flags, @reason, @stop: the translated stack of that entry
 * @words:     the user map key of that stack (ustack.h, FSM_UKEY_*): the
 *             address-space key, a meta word, then the (file id,
 *             offset | flags) pairs (fsm_ust_frames()); written by the walk
 *             and the delivery, both task works of the slot's task (never
 *             concurrent); the frames are published by the cache's DONE
 *             store-release
 * @uwc:       the per-entry cache state
 * @end_regs:  hash of the user registers (fsm_ust_regs_hash()) when the
 *             last entry ended (fsm_ust_end_entry())
 * @same_regs: consecutive entries that ended with equal @end_regs; both
 *             written only by the slot's task works, read by requests
 *             (READ_ONCE: a heuristic bound, no ordering needed)
 * @emitting:  the instances the emit work is serving now (taken from
 *             @late_mask), ~0 while it takes them, 0 otherwise; written
 *             only by the emit work, read by fsm_ustack_ids_busy() (see
 *             there for the ordering)
 */
struct fsm_ust_slot {
	unsigned long task;
	u64 start;
	u32 exec_id;
	struct fsm_ust_work *walk;
	struct fsm_ust_work *emit;
	atomic_t emit_queued;
	atomic64_t late_mask;
	u64 late_cookie;
	u64 xl_cookie;
	u32 nr;
	u16 flags;
	u8 reason;
	u8 stop;
	u64 words[FSM_UKEY_HDR + 2 * FSM_MAX_USER_DEPTH];
	struct fsm_uwc_task uwc;
	u64 end_regs;
	u32 same_regs;
	u64 emitting;
};

#define fsm_ust_frames(slot)	(&(slot)->words[FSM_UKEY_HDR])

/**
 * struct fsm_ust_work - one task work of a slot, allocated on its own.
 * @head:   first member: at unload a queued work's func becomes kfree(),
 *          which then frees exactly this object (fsm_ustack_exit())
 * @slot:   the slot it works for
 * @queued: 1 from the queue until the work runs; whoever takes it back to
 *          0 (xchg: the work itself, a refused queue, or module exit) owns
 *          what happens next, exactly once
 */
struct fsm_ust_work {
	struct callback_head head;
	struct fsm_ust_slot *slot;
	atomic_t queued;
};
static_assert(offsetof(struct fsm_ust_work, head) == 0,
	      "kfree(head) must free the whole work");

/* Key words of the longest stack a record (and the user map) holds. */
#define FSM_UST_MAP_DEPTH	(FSM_UKEY_HDR + 2 * FSM_USTACK_MAX_RECORD_FRAMES)
/* User map arena: sized for a mean of 12 frames per stack. */
#define FSM_UST_MEAN_WORDS	(FSM_UKEY_HDR + 2 * 12)
static_assert(FSM_UST_MAP_DEPTH <= FSM_MAX_MAP_DEPTH, "user map keys too wide for the core");

enum fsm_ust_stat {
	FSM_UST_REQUESTS,	/* requests that got a cookie */
	FSM_UST_QUEUED,		/* ... first of an entry: walk queued */
	FSM_UST_REUSES,		/* ... served by an entry's single walk */
	FSM_UST_LATE,		/* ... walk done, served by the emit work */
	FSM_UST_REFUSED,	/* kthread, io worker, exiting, no mm, kernel mode */
	FSM_UST_NO_SLOT,	/* task table full */
	FSM_UST_BUSY,		/* cache retries exhausted / deferral queue full */
	FSM_UST_DELIVERED,	/* user_stack records written */
	FSM_UST_LOST,		/* user_stack records the buffer refused */
	FSM_UST_EMPTY,		/* user_stack records with no frame */
	FSM_UST_INLINE,		/* ... with an id and its frames (first use) */
	FSM_UST_FALLBACK,	/* ... with frames but no id (map full...) */
	FSM_UST_INLINE_LOST,	/* lost records that should have been INLINE */
	FSM_UST_QUEUE_FAILED,	/* walk could not be queued: entry ended, no stack */
	FSM_UST_SAME_REGS,	/* refused: too many entries in a row, same registers */
	FSM_UST_REDEFS,		/* user_stack definitions written again (REDEF) */
	FSM_UST_FILE_REDEFS,	/* file_map records written again on a CPU */
	FSM_UST_NR_STATS
};

/**
 * struct fsm_ust_inst - user-stack state of one instance (by instance id).
 * @us_file: stackmap:user_stack's event file while enabled there, else
 *           NULL; set/cleared by fsm_ust_reg() (event_mutex), read with
 *           READ_ONCE() under preempt_disable(): the kernel waits for
 *           such sections (tracepoint_synchronize_unregister()) before
 *           freeing an instance's event files
 * @fm_file: same for stackmap:file_map
 * @epoch:   user recording epoch, never 0: bumped when user_stack is
 *           enabled (a new recording) and when a user_stack record that
 *           should have carried its frames inline was lost, so that
 *           file_map records and every ustack id's frames go out again
 *           (a plain value compared by the map and fileid.c: no ordering)
 * @stat:    counters (atomic64: requests come from NMI too)
 * @empty:   empty user_stack records by reason
 */
struct fsm_ust_inst {
	struct trace_event_file *us_file;
	struct trace_event_file *fm_file;
	atomic_t epoch;
	atomic64_t stat[FSM_UST_NR_STATS];
	atomic64_t empty[FSM_URS_NR];
};

struct fsm_ust_walk_ctx {
	struct fsm_ust_slot *slot;
	struct pt_regs *regs;
};

/* ---- shared state (defined by the file named) ---- */

/* ustack.c: the task table, FSM_UST_SLOTS slots */
extern struct fsm_ust_slot *fsm_ust_slots;
/* ustack_deliver.c: per-instance state; options/stackmap_user bits */
extern struct fsm_ust_inst fsm_ust_insts[FSM_UST_MAX_INST];
extern u64 fsm_ust_on;
/* ustack_ukey.c: walks of all instances */
extern atomic64_t fsm_ust_walks;
/* ustack.c: key of the address-space hash */
extern siphash_key_t fsm_ust_mm_siphash;
/* ustack_work.c: requests and queues accepted (init done, exit not begun) */
extern bool fsm_ust_ready;

static __always_inline void fsm_ust_count(u32 inst, enum fsm_ust_stat s)
{
	atomic64_inc(&fsm_ust_insts[inst].stat[s]);
}

/* ---- shared functions (defined by the file named) ---- */

/* ustack.c */
struct fsm_ust_slot *fsm_ust_slot_get(struct task_struct *t);
void fsm_ust_task_free(void *data, struct task_struct *t);
void fsm_ust_regs(struct pt_regs *regs, struct fsm_uw_regs *u);
u64 fsm_ust_sig(struct pt_regs *regs);
u64 fsm_ust_regs_hash(const struct pt_regs *regs);

/* ustack_work.c */
void fsm_ust_work_refused(struct fsm_ust_work *w);
bool fsm_ust_queue(struct fsm_ust_work *head);

/* ustack_ukey.c */
unsigned int fsm_ust_walk(void *ctx, unsigned long long *entries,
			  unsigned int max, struct fsm_uw_result *res);

/* ustack_deliver.c */
int fsm_ust_events_check(void);
int fsm_ust_sweepers_init(void);
void fsm_ust_sweepers_exit(void);
void fsm_ust_deliver(struct fsm_ust_slot *slot, u64 cookie, u64 mask,
		     u16 flags);

#endif /* FSM_USTACK_INTERNAL_H */
