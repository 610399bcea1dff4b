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
 *   ustack.c          the task table and its references, the history of
 *                     entry ends, the walk buffers, the entry's registers
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

/* The task table: 2^user_slots_bits slots (module parameter, ustack.c). */
#define FSM_UST_SLOTS_BITS_MIN		8
#define FSM_UST_SLOTS_BITS_MAX		16
#define FSM_UST_SLOTS_BITS_DEFAULT	14
#define FSM_UST_PROBE		16	/* slots per window; two windows per task */
#define FSM_UST_NMI_QUEUE	4	/* per-CPU deferred task_work_add()s */
#define FSM_UST_SAME_REGS_MAX	16	/* see fsm_ust_close() */
#define FSM_UST_ENDS_MAX	64	/* the same, ends inside the kernel too */
#define FSM_UST_HIST_WAYS	4	/* history entries per set (ustack.c) */

/*
 * The owner word of a slot: the task pointer with a reference count in its
 * low FSM_UST_REF_BITS bits (task_structs are L1_CACHE_BYTES aligned), 0
 * when free. The references: each request in progress (task context and
 * the contexts nested on it), and the entry from the request that queued
 * its walk until the walk work has served it and ended it (or the queue
 * failed). A task with no request in progress and no entry holds no slot.
 */
#define FSM_UST_REF_BITS	4
#define FSM_UST_REF_MASK	((1UL << FSM_UST_REF_BITS) - 1)

/**
 * struct fsm_ust_slot - one task's state while it has an entry in progress.
 * @owner:    the task and its references (FSM_UST_REF_*), 0 = free; see
 *            ustack.c for the protocol and its memory ordering
 * @uwc:      the per-entry cache state (32 bytes: the walk itself lives in
 *            a struct fsm_ust_stack only while the walk work runs); idle
 *            whenever @owner is free, so a slot passes to the next task as
 *            it is
 * @walk:     the slot's task work, allocated at load, queued at most once
 *            per entry (the cache decides)
 * @emitting: the instances the walk work is serving after the entry ended
 *            (late requesters, fsm_ust_close()), ~0 while it ends the
 *            entry, 0 otherwise; written only by the walk work, read by
 *            fsm_ustack_ids_busy() (see there for the ordering)
 *
 * One cache line: requests of tasks on different CPUs touch different
 * lines.
 */
struct fsm_ust_slot {
	atomic_long_t owner;
	struct fsm_uwc_task uwc;
	struct fsm_ust_work *walk;
	u64 emitting;
} ____cacheline_aligned_in_smp;

/**
 * struct fsm_ust_stack - the walk of one entry and its user map key.
 * @walk:   raw addresses (the cache's result buffer, fsm_uwc_complete())
 * @nr, @flags, @reason, @stop: the translated stack
 * @words:  the user map key (ustack.h, FSM_UKEY_*): the address-space key,
 *          a meta word, then the (file id, offset | flags) pairs
 *          (fsm_ust_frames())
 *
 * Taken by the walk work from its CPU's spare or a cache of its own
 * (fsm_ust_stack in /proc/slabinfo), given back when it has served the
 * entry: one object per task inside its walk work at that moment, plus
 * one spare per CPU. Only that work writes and reads it.
 */
struct fsm_ust_stack {
	struct fsm_uwc_result walk;
	u32 nr;
	u16 flags;
	u8 reason;
	u8 stop;
	u64 words[FSM_UKEY_HDR + 2 * FSM_MAX_USER_DEPTH];
};

#define fsm_ust_frames(stk)	(&(stk)->words[FSM_UKEY_HDR])

/**
 * struct fsm_ust_work - the task work of a slot, allocated on its own.
 * @head:    first member: at unload a queued work's func becomes kfree(),
 *           which then frees exactly this object (fsm_ustack_exit())
 * @slot:    the slot it works for
 * @queued:  1 from the queue until the work runs; whoever takes it back to
 *           0 (xchg: the work itself, a refused queue, or module exit) owns
 *           what happens next, exactly once
 * @exec_id: self_exec_id at the request that queued it (exec detection);
 *           written before the queue, which publishes it
 */
struct fsm_ust_work {
	struct callback_head head;
	struct fsm_ust_slot *slot;
	atomic_t queued;
	u32 exec_id;
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
	FSM_UST_LATE,		/* ... walk done, served before the entry ends */
	FSM_UST_REFUSED,	/* kthread, io worker, exiting, no mm, kernel mode */
	FSM_UST_NO_SLOT,	/* task table full */
	FSM_UST_BUSY,		/* cache retries exhausted, slot references full */
	FSM_UST_DELIVERED,	/* user_stack records written */
	FSM_UST_LOST,		/* user_stack records the buffer refused */
	FSM_UST_EMPTY,		/* user_stack records with no frame */
	FSM_UST_INLINE,		/* ... with an id and its frames (first use) */
	FSM_UST_FALLBACK,	/* ... with frames but no id (map full...) */
	FSM_UST_INLINE_LOST,	/* lost records that should have been INLINE */
	FSM_UST_QUEUE_FAILED,	/* walk could not be queued: entry ended, no stack */
	FSM_UST_SAME_REGS,	/* refused: too many entries in a row, same registers */
	FSM_UST_SELF,		/* refused: the walk work's own events after its entry */
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
	struct fsm_ust_stack *stk;
	u32 exec_id;
	struct pt_regs *regs;
};

/* ---- shared state (defined by the file named) ---- */

/* ustack.c: the task table, fsm_ust_nslots slots */
extern struct fsm_ust_slot *fsm_ust_slots;
extern unsigned int fsm_ust_nslots;
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
int fsm_ust_table_init(void);
void fsm_ust_table_exit(void);
struct fsm_ust_slot *fsm_ust_slot_get(struct task_struct *t, bool *busy);
void fsm_ust_slot_hold(struct fsm_ust_slot *slot);
void fsm_ust_slot_put(struct fsm_ust_slot *slot);
unsigned int fsm_ust_slots_used(void);
u64 fsm_ust_slots_reclaimed(void);
struct fsm_ust_stack *fsm_ust_stack_alloc(void);
bool fsm_ust_stack_free(struct fsm_ust_stack *stk);
void fsm_ust_mem_stats(u64 *fixed, unsigned int *bufs, unsigned int *bufs_peak);
void fsm_ust_task_free(void *data, struct task_struct *t);
void fsm_ust_regs(struct pt_regs *regs, struct fsm_uw_regs *u);
u64 fsm_ust_sig(struct pt_regs *regs);
bool fsm_ust_hist_refuses(struct task_struct *t, const struct pt_regs *regs);
void fsm_ust_hist_end(struct task_struct *t, const struct pt_regs *regs,
		      bool out);

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
void fsm_ust_deliver(const struct fsm_ust_stack *stk, u64 cookie, u64 mask,
		     u16 flags);

#endif /* FSM_USTACK_INTERNAL_H */
