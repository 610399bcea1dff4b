// SPDX-License-Identifier: GPL-2.0
/*
 * ustack.c - deferred user stacks: one walk per kernel entry, delivered to
 * every instance that asked (Documentation/ustack.rst). This file holds
 * the task table (a slot per task with an entry in progress), the history
 * of how entries ended (the loop bound of fsm_ust_close()) and what
 * identifies a kernel entry (its saved user registers); the other jobs have
 * files of their own (ustack_internal.h lists them): the requests, queueing
 * and the task works (ustack_work.c), the walk (ustack_ukey.c), the records
 * (ustack_deliver.c). The bottom of the pipeline: it calls none of them.
 *
 * The task table
 * --------------
 * 6.1 has no task_struct field for us, so per-task state lives in a table
 * preallocated at load (2^user_slots_bits slots of one cache line). A task
 * holds a slot only while it has something in progress: from the request
 * that claims it until its last request has returned and its entry, if it
 * started one, has been walked, delivered and ended by its task work (or
 * ended at once because the walk could not be queued). So the table bounds
 * the tasks with a request pending at the same moment (tasks inside the
 * kernel between a traced event and their return to user space, sleepers
 * included), not the tasks that ever asked: a process with 10,000 threads
 * that each asked once holds no slot once they are back in user space.
 *
 * Each task has two windows of FSM_UST_PROBE consecutive slots, at two
 * hashes of its task pointer. A lookup looks in both for the task's slot;
 * a claim takes the first free slot of the window with more free slots
 * (two choices keep the windows balanced: at 2^14 slots, with 10,000 tasks
 * pending at once, a claim found both windows full in 2 of 20,000
 * simulated fillings, at 12,000 in 34 of 1,000, where one window of 16
 * fails a few percent of claims at 10,000).
 *
 * Ownership and references (slot->owner)
 * --------------------------------------
 * The owner word is the task pointer plus a reference count in its low
 * FSM_UST_REF_BITS bits; 0 is free. Who uses a slot owned by task T: T's
 * requests (fsm_ustack_request() on current, in task context and in the
 * interrupts and NMIs nested on it, which run to completion before the
 * context they interrupted resumes), T's walk work (T itself), and, once T
 * is exiting and its requests are all refused, the irq_work that finds
 * T's walk cannot be queued. Each holds a reference while it uses the
 * slot; a slot whose count drops to zero is freed by the same RMW chain.
 *
 *   get (task T):   w = owner; if (w & ~REF_MASK) == T: cmpxchg(w, w + 1)
 *                   else claim a free slot: cmpxchg(0, T | 1)
 *   hold:           atomic_long_inc (the caller already holds one)
 *   put:            if atomic_long_dec_return() == T (no reference left):
 *                   cmpxchg(T, 0)
 *
 * The put is two RMWs: between them the word reads T with no reference.
 * A context nested there (an NMI of T) takes a reference on it with its
 * cmpxchg (T -> T | 1), and the put's cmpxchg (T -> 0) then fails and
 * leaves the slot to it; if the nested context itself drops to zero and
 * frees the slot, the put's cmpxchg fails too. Either way exactly one RMW
 * frees the slot, and only when no reference is held. A lookup never uses
 * a slot without first winning a cmpxchg on the word, so it never works
 * on a slot that was freed (or passed to another task) after it read the
 * owner.
 *
 * What a free slot holds: the entry reference is dropped only after the
 * entry ended (fsm_uwc_entry_end(), or fsm_uwc_abort()) and the walk work
 * cleared @emitting, so a free slot's cache state is idle and the next
 * task starts a new entry in it as if it were its own next entry.
 *
 * Every entry's reference is dropped: a queued walk work runs on the way
 * out to user space, or in do_exit() (exit_task_work(): an exiting task
 * gets an empty stack, reason exiting), or is disarmed at module exit
 * (then the table goes too); nothing else cancels it (task_work_cancel()
 * is not exported and no kernel caller knows our function). A walk that
 * cannot be queued (the task is past exit_task_work(), the NMI hand-off
 * queue is full) aborts its entry and drops the reference where it
 * failed. An exec between the request and the walk keeps the task and its
 * slot (an empty stack, reason exec); a fork starts the child with no task
 * works (copy_process()), so the child never shares the parent's slot.
 * Requests from NMI before the walk join the pending entry (its cookie,
 * its delivery); after the end they start an entry of their own, whose
 * walk is queued through the per-CPU irq_work (ustack_work.c).
 *
 * Memory ordering: value-returning atomics and successful cmpxchg are
 * full barriers. The RMW that frees a slot follows every access of the
 * releasing context to the slot, and the cmpxchg that claims it precedes
 * every access of the next owner: the next task sees the slot as the last
 * one left it (its cache state idle, @emitting 0). Between a task's own
 * contexts (nested ones) program order is enough. fsm_ustack_ids_busy()
 * reads slots it holds no reference on; its own comment has its pairing.
 *
 * A task with two slots: a task-context request that found no slot picks
 * a free one; an NMI nested on it before its cmpxchg may claim another
 * (the first free one it sees, which another CPU's free may have changed).
 * The task then has two slots: the outer request joins or starts an entry
 * in its own, and both entries are walked and delivered correctly (each
 * with its own cookie); the task's next requests use the first one found.
 * Harmless, and rare (a nested request in those few instructions, with a
 * slot freed meanwhile ahead in the window).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cache.h>
#include <linux/hash.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "tracing.h"
#include "param.h"
#include "compat/ustack_arch.h"
#include "ustack_internal.h"

struct fsm_ust_slot *fsm_ust_slots;
unsigned int fsm_ust_nslots;
/* key of the address-space hash (fsm_ust_mm_key()), random per load */
siphash_key_t fsm_ust_mm_siphash;

static unsigned int fsm_ust_slots_bits = FSM_UST_SLOTS_BITS_DEFAULT;

/*
 * user_slots_bits: 2^N task slots, fixed at load time. Validated like bits
 * (param.h): never clamped.
 */
static struct fsm_param_range fsm_ust_slots_bits_range = {
	.val = &fsm_ust_slots_bits,
	.min = FSM_UST_SLOTS_BITS_MIN, .max = FSM_UST_SLOTS_BITS_MAX,
};
module_param_cb(user_slots_bits, &fsm_param_range_ops, &fsm_ust_slots_bits_range,
		0444);
MODULE_PARM_DESC(user_slots_bits,
		 "Task slots exponent: 2^N tasks may have a user-stack request pending at once (until their return to user space), accepted "
		 __stringify(FSM_UST_SLOTS_BITS_MIN) ".." __stringify(FSM_UST_SLOTS_BITS_MAX)
		 " (default " __stringify(FSM_UST_SLOTS_BITS_DEFAULT) ")");

/* slots the free probe found still owned by a freed task (fsm_ust_task_free()) */
static atomic64_t fsm_ust_reclaimed = ATOMIC64_INIT(0);

/*
 * The history of entry ends: per task, a tag of the registers its last
 * entry ended with and how many entries in a row ended with them
 * (fsm_ust_close()). fsm_ust_nslots entries in sets of FSM_UST_HIST_WAYS,
 * one cache line per set. @task is a hint that finds the task's entry;
 * @state = tag | counts, the tag a keyed hash of the registers, the task
 * pointer and its start time: a state left by another task never matches,
 * so races between tasks that share a set (plain stores, no lock) can lose
 * a count, never make one task's requests refused for another's. Two
 * counts of ends in a row with the tag's registers: those on the way out
 * to user space (FSM_UST_HIST_OUT), and all of them (FSM_UST_HIST_ANY).
 */
struct fsm_ust_hist {
	unsigned long task;
	u64 state;
};
#define FSM_UST_HIST_OUT	0x1fULL		/* ends on the way out */
#define FSM_UST_HIST_ANY_SHIFT	5
#define FSM_UST_HIST_ANY	(0x7fULL << FSM_UST_HIST_ANY_SHIFT) /* every end */
#define FSM_UST_HIST_COUNT	(FSM_UST_HIST_OUT | FSM_UST_HIST_ANY)
static_assert(FSM_UST_SAME_REGS_MAX < FSM_UST_HIST_OUT);
static_assert(FSM_UST_ENDS_MAX < (FSM_UST_HIST_ANY >> FSM_UST_HIST_ANY_SHIFT));

static struct fsm_ust_hist *fsm_ust_hist;

/*
 * The walks' buffers (struct fsm_ust_stack): a cache of their own, so that
 * /proc/slabinfo shows them; allocated now (in walks or kept as a CPU's
 * spare), and the most at once. Each CPU keeps one spare: a walk takes
 * the spare of the CPU it starts on and leaves its buffer as the spare of
 * the CPU it ends on, so in the steady state a walk neither allocates
 * (nor zeroes: init_on_alloc, Debian's default) nor frees.
 */
static struct kmem_cache *fsm_ust_stack_cache;
static DEFINE_PER_CPU(struct fsm_ust_stack *, fsm_ust_spare);
static atomic_t fsm_ust_bufs = ATOMIC_INIT(0);
static atomic_t fsm_ust_bufs_peak = ATOMIC_INIT(0);

/* ---- the task table ---- */

/* Seed of the window hash, random per load (fsm_ust_table_init()). */
static u64 fsm_ust_home_seed;

/*
 * The two windows of @t: the two halves of one 64-bit hash of the pointer
 * (splitmix64's finalizer, every input bit reaches every output bit;
 * task_struct pointers differ only in their middle bits), seeded so that
 * which tasks share windows is not known in advance.
 */
static __always_inline void fsm_ust_homes(const struct task_struct *t, u32 home[2])
{
	u64 h = (unsigned long)t ^ fsm_ust_home_seed;

	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	h ^= h >> 31;
	home[0] = (u32)h & (fsm_ust_nslots - 1);
	home[1] = (u32)(h >> 32) & (fsm_ust_nslots - 1);
}

/*
 * Take a reference on @slot if its owner is @key: a cmpxchg on the owner
 * word, retried while only the reference count moves (nested contexts of
 * the same task, at most a few levels deep). Return 1 (taken), 0 (not or
 * no longer @key's), -1 (the count is full: a bug or absurd nesting).
 */
static int fsm_ust_ref_if(struct fsm_ust_slot *slot, unsigned long key)
{
	long w = atomic_long_read(&slot->owner);
	int attempt;

	for (attempt = 0; attempt < 8; attempt++) {
		if ((w & ~FSM_UST_REF_MASK) != key)
			return 0;
		if ((w & FSM_UST_REF_MASK) == FSM_UST_REF_MASK)
			return -1;
		/* full barrier on success: our uses follow the reference */
		if (atomic_long_try_cmpxchg(&slot->owner, &w, w + 1))
			return 1;
	}
	return -1;
}

/**
 * fsm_ust_slot_get - find or claim the slot of @t and take a reference.
 * @t:    current (requests are made for current only)
 * @busy: set when the slot was found but no reference could be taken
 *
 * Context: any, NMI included. No lock, bounded (at most four rounds of
 * 2 * FSM_UST_PROBE reads and a few cmpxchg).
 * Return: the slot, with one reference the caller drops with
 * fsm_ust_slot_put(); NULL if both windows are full (or *@busy).
 */
struct fsm_ust_slot *fsm_ust_slot_get(struct task_struct *t, bool *busy)
{
	unsigned long key = (unsigned long)t;
	struct fsm_ust_slot *slot;
	u32 home[2], i, w, s;
	int attempt, r;

	*busy = false;
	if (unlikely(key & FSM_UST_REF_MASK))
		return NULL;	/* task_structs are cache-line aligned */
	fsm_ust_homes(t, home);
	for (attempt = 0; attempt < 4; attempt++) {
		int free[2] = { -1, -1 }, nfree[2] = { 0, 0 }, c;

		for (w = 0; w < 2; w++) {
			for (i = 0; i < FSM_UST_PROBE; i++) {
				long o;

				s = (home[w] + i) & (fsm_ust_nslots - 1);
				slot = &fsm_ust_slots[s];
				o = atomic_long_read(&slot->owner);
				if ((o & ~FSM_UST_REF_MASK) == key) {
					r = fsm_ust_ref_if(slot, key);
					if (r > 0)
						return slot;
					if (r < 0) {
						*busy = true;
						return NULL;
					}
					/* freed under us: look again */
					o = atomic_long_read(&slot->owner);
				}
				if (!o) {
					nfree[w]++;
					if (free[w] < 0)
						free[w] = s;
				}
			}
		}
		c = nfree[1] > nfree[0];
		if (free[c] < 0)
			return NULL;
		slot = &fsm_ust_slots[free[c]];
		/*
		 * Full barrier on success: our uses follow the claim, and the
		 * previous owner's uses preceded its free (see the top).
		 */
		if (atomic_long_cmpxchg(&slot->owner, 0, key | 1) == 0)
			return slot;
	}
	return NULL;
}

/**
 * fsm_ust_slot_hold - one more reference on a slot the caller holds.
 * @slot: the slot (a reference held)
 *
 * For the entry a request starts: dropped by the walk work when the entry
 * has ended, or at once if the walk cannot be queued.
 * Context: any.
 */
void fsm_ust_slot_hold(struct fsm_ust_slot *slot)
{
	atomic_long_inc(&slot->owner);
}

/**
 * fsm_ust_slot_put - drop a reference; the last one frees the slot.
 * @slot: the slot
 *
 * The decrement is a full barrier: our accesses to the slot precede it,
 * and the free (a cmpxchg on the same word) comes after it; see the top
 * for a nested context taking a reference in between.
 * Context: any, NMI included. Wait-free.
 */
void fsm_ust_slot_put(struct fsm_ust_slot *slot)
{
	long w = atomic_long_dec_return(&slot->owner);

	if (!(w & FSM_UST_REF_MASK))
		atomic_long_cmpxchg(&slot->owner, w, 0);
}

/**
 * fsm_ust_slots_used - slots held right now (a snapshot, for statistics).
 * Context: any; O(fsm_ust_nslots).
 */
unsigned int fsm_ust_slots_used(void)
{
	unsigned int i, n = 0;

	for (i = 0; fsm_ust_slots && i < fsm_ust_nslots; i++)
		n += !!atomic_long_read(&fsm_ust_slots[i].owner);
	return n;
}

/* Slots found owned by a freed task (0 unless a reference was lost). */
u64 fsm_ust_slots_reclaimed(void)
{
	return atomic64_read(&fsm_ust_reclaimed);
}

/*
 * sched_process_free: the task is gone. Its task works ran in do_exit()
 * (exit_task_work()), or were disarmed at module exit, so it holds no
 * slot: every reference it took was dropped. A slot still owned by it
 * with no reference would be a lost put; it is made idle and freed, and
 * counted (stack_map_stat user_slots_reclaimed: the tests require 0).
 * A slot with references is left alone: a holder still uses it (an NMI
 * hand-off not yet run pins the task_struct too, so the key cannot be
 * reused), and its last put frees it; counted the same, said once.
 * Context: RCU callback (softirq); nothing runs for @t any more.
 */
void fsm_ust_task_free(void *data, struct task_struct *t)
{
	unsigned long key = (unsigned long)t;
	u32 home[2], w, i;

	fsm_ust_homes(t, home);
	for (w = 0; w < 2; w++) {
		for (i = 0; i < FSM_UST_PROBE; i++) {
			struct fsm_ust_slot *slot =
				&fsm_ust_slots[(home[w] + i) & (fsm_ust_nslots - 1)];

			long o = atomic_long_read(&slot->owner);

			if ((o & ~FSM_UST_REF_MASK) != key)
				continue;
			if (o & FSM_UST_REF_MASK) {
				atomic64_inc(&fsm_ust_reclaimed);
				pr_warn_once("user stacks: a freed task's slot still has references\n");
				continue;
			}
			fsm_uwc_init(&slot->uwc);
			WRITE_ONCE(slot->emitting, 0);
			atomic64_inc(&fsm_ust_reclaimed);
			/* the reset precedes the free (release) */
			atomic_long_set_release(&slot->owner, 0);
		}
	}
}

/* ---- the history of entry ends ---- */

static u64 fsm_ust_hist_tag(struct task_struct *t, const struct pt_regs *regs)
{
	u64 h = siphash(regs, sizeof(*regs), &fsm_ust_mm_siphash);

	return siphash_3u64(h, (unsigned long)t, t->start_time,
			    &fsm_ust_mm_siphash) & ~FSM_UST_HIST_COUNT;
}

/* The set of @t: fsm_ust_nslots / FSM_UST_HIST_WAYS sets (hash_ptr(): the top bits). */
static struct fsm_ust_hist *fsm_ust_hist_set(const struct task_struct *t)
{
	return &fsm_ust_hist[hash_ptr(t, fsm_ust_slots_bits - ilog2(FSM_UST_HIST_WAYS)) *
			     FSM_UST_HIST_WAYS];
}

/**
 * fsm_ust_hist_refuses - would a new entry of @t loop (fsm_ust_close())?
 * @t:    current
 * @regs: its user registers
 *
 * True after FSM_UST_SAME_REGS_MAX entries in a row ended on the way out
 * with exactly these registers, or FSM_UST_ENDS_MAX ended with them
 * wherever the walk work ran. Reads a racy snapshot (READ_ONCE): a
 * heuristic bound, no ordering needed; the tag makes another task's state
 * never match.
 * Context: any. Return: true to refuse the request.
 */
bool fsm_ust_hist_refuses(struct task_struct *t, const struct pt_regs *regs)
{
	struct fsm_ust_hist *e = fsm_ust_hist_set(t);
	unsigned int i;
	u64 st;

	for (i = 0; i < FSM_UST_HIST_WAYS; i++, e++) {
		if (READ_ONCE(e->task) != (unsigned long)t)
			continue;
		st = READ_ONCE(e->state);
		return ((st & FSM_UST_HIST_OUT) >= FSM_UST_SAME_REGS_MAX ||
			((st & FSM_UST_HIST_ANY) >> FSM_UST_HIST_ANY_SHIFT) >=
			FSM_UST_ENDS_MAX) &&
		       (st & ~FSM_UST_HIST_COUNT) == fsm_ust_hist_tag(t, regs);
	}
	return false;
}

/**
 * fsm_ust_hist_end - an entry of @t ended on the way out with @regs.
 * @t:    current
 * @regs: the registers it returns to user space with
 * @out:  the end is on the way out to user space (TIF_NOTIFY_RESUME was
 *        cleared before the task works ran), not inside a syscall
 *
 * Counts entries in a row that ended with the same registers: those with
 * @out (an end inside the kernel neither counts nor breaks that row), and
 * all of them. The task's
 * way of its set, else the way with the lowest count (a task in a run of
 * equal ends keeps its way against tasks that are not): writers of one set
 * race with plain stores and may lose a count, nothing else.
 * Context: the walk work of @t.
 */
void fsm_ust_hist_end(struct task_struct *t, const struct pt_regs *regs,
		      bool out)
{
	struct fsm_ust_hist *set = fsm_ust_hist_set(t), *e = NULL;
	u64 tag = fsm_ust_hist_tag(t, regs), st, n = 0, any = 0;
	unsigned int i;

	for (i = 0; i < FSM_UST_HIST_WAYS; i++) {
		if (READ_ONCE(set[i].task) == (unsigned long)t) {
			e = &set[i];
			break;
		}
		if (!e || (READ_ONCE(set[i].state) & FSM_UST_HIST_COUNT) <
			  (READ_ONCE(e->state) & FSM_UST_HIST_COUNT))
			e = &set[i];
	}
	WRITE_ONCE(e->task, (unsigned long)t);
	st = READ_ONCE(e->state);
	if ((st & ~FSM_UST_HIST_COUNT) == tag) {
		n = st & FSM_UST_HIST_OUT;
		if (out)
			n = min(n + 1, FSM_UST_HIST_OUT);
		any = (st & FSM_UST_HIST_ANY) >> FSM_UST_HIST_ANY_SHIFT;
		any = min(any + 1, FSM_UST_HIST_ANY >> FSM_UST_HIST_ANY_SHIFT);
	}
	WRITE_ONCE(e->state, tag | n | (any << FSM_UST_HIST_ANY_SHIFT));
}

/* ---- the walks' buffers ---- */

/**
 * fsm_ust_stack_alloc - a buffer for one walk and its deliveries.
 * Context: task, may sleep (the walk work, on the way out to user space).
 * Return: the buffer (its contents undefined: the walk writes what it
 * reads), or NULL (the entry then gets an empty stack, reason nomem).
 */
struct fsm_ust_stack *fsm_ust_stack_alloc(void)
{
	struct fsm_ust_stack *stk = this_cpu_xchg(fsm_ust_spare, NULL);
	int n, peak;

	if (stk)
		return stk;
	stk = kmem_cache_alloc(fsm_ust_stack_cache, GFP_KERNEL | __GFP_NOWARN);
	if (!stk)
		return NULL;
	n = atomic_inc_return(&fsm_ust_bufs);
	peak = atomic_read(&fsm_ust_bufs_peak);
	while (n > peak && !atomic_try_cmpxchg(&fsm_ust_bufs_peak, &peak, n))
		;
	return stk;
}

/**
 * fsm_ust_stack_free - done with a walk buffer: this CPU's spare, or freed.
 * @stk: the buffer, or NULL
 *
 * Return: true if it was freed (kmem_cache_free() fires kmem events: the
 * caller guards against its own requests, ustack_work.c).
 * Context: task.
 */
bool fsm_ust_stack_free(struct fsm_ust_stack *stk)
{
	if (!stk || !this_cpu_cmpxchg(fsm_ust_spare, NULL, stk))
		return false;
	kmem_cache_free(fsm_ust_stack_cache, stk);
	atomic_dec(&fsm_ust_bufs);
	return true;
}

/**
 * fsm_ust_mem_stats - memory of the user-stack side (stack_map_stat).
 * @fixed:     bytes allocated at load: the task table, its works, the history
 * @bufs:      walk buffers allocated now (in walks, or a CPU's spare)
 * @bufs_peak: the most allocated at once since the load
 * Context: any.
 */
void fsm_ust_mem_stats(u64 *fixed, unsigned int *bufs, unsigned int *bufs_peak)
{
	*fixed = (u64)fsm_ust_nslots * (sizeof(struct fsm_ust_slot) +
					kmalloc_size_roundup(sizeof(struct fsm_ust_work)) +
					sizeof(struct fsm_ust_hist));
	*bufs = atomic_read(&fsm_ust_bufs);
	*bufs_peak = atomic_read(&fsm_ust_bufs_peak);
}

/* ---- init / exit ---- */

/**
 * fsm_ust_table_init - allocate the task table, the history and the cache
 * of walk buffers.
 * Context: task (module init). Return: 0 or -ENOMEM (one dmesg line).
 */
int fsm_ust_table_init(void)
{
	BUILD_BUG_ON(L1_CACHE_BYTES <= FSM_UST_REF_MASK);
	BUILD_BUG_ON(FSM_UST_PROBE > (1 << FSM_UST_SLOTS_BITS_MIN));
	fsm_ust_nslots = 1U << fsm_ust_slots_bits;
	get_random_bytes(&fsm_ust_home_seed, sizeof(fsm_ust_home_seed));
	fsm_ust_slots = vzalloc(array_size(fsm_ust_nslots, sizeof(*fsm_ust_slots)));
	fsm_ust_hist = vzalloc(array_size(fsm_ust_nslots, sizeof(*fsm_ust_hist)));
	fsm_ust_stack_cache = KMEM_CACHE(fsm_ust_stack, 0);
	if (!fsm_ust_slots || !fsm_ust_hist || !fsm_ust_stack_cache) {
		pr_warn("cannot allocate the task table (user_slots_bits=%u)\n",
			fsm_ust_slots_bits);
		fsm_ust_table_exit();
		return -ENOMEM;
	}
	return 0;
}

/*
 * Context: task (module exit, after every walk work of ours returned, or a
 * failed init): no walk buffer is in use any more, only the spares.
 */
void fsm_ust_table_exit(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct fsm_ust_stack **spare = per_cpu_ptr(&fsm_ust_spare, cpu);

		if (*spare)
			kmem_cache_free(fsm_ust_stack_cache, *spare);
		*spare = NULL;
	}
	kmem_cache_destroy(fsm_ust_stack_cache);
	vfree(fsm_ust_slots);
	vfree(fsm_ust_hist);
	fsm_ust_stack_cache = NULL;
	fsm_ust_slots = NULL;
	fsm_ust_hist = NULL;
}

/* ---- the entry's registers ---- */

void fsm_ust_regs(struct pt_regs *regs, struct fsm_uw_regs *u)
{
	fsm_ust_arch_regs(regs, u);
}

/*
 * What stays constant within one kernel entry and differs between many:
 * the saved user registers and the syscall number (-1 for interrupts and
 * exceptions). Not the context switch counts: the walk may sleep, and a
 * changed signature on the way out would queue another walk.
 */
u64 fsm_ust_sig(struct pt_regs *regs)
{
	struct fsm_uw_regs u;

	fsm_ust_regs(regs, &u);
	return fsm_uwc_entry_sig(&u, fsm_ust_arch_syscall(regs));
}
