/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fsm_core.h - the C ABI between the C++ core (src/core) and its callers.
 *
 * Both the kernel glue (C, src/kernel) and the user-space tests include this
 * header. It includes no kernel and no libc header: only compiler-provided
 * types, so it means the same thing in both worlds.
 *
 * Overview
 * --------
 * A struct fsm_map maps a stack (an array of 1..max_depth 64-bit addresses)
 * to a small dense stack id. Everything it needs is allocated by
 * fsm_map_create() (task context); afterwards fsm_map_insert() may be called
 * from any context, NMI included: it never allocates, never sleeps, takes no
 * lock and every loop in it is bounded.
 *
 * Ids are dense record indexes inside the current generation: the first new
 * stack of a generation gets id 0, the next one id 1, and so on. An id never
 * changes meaning while its generation lives. fsm_map_reset() starts a new
 * generation (ids restart at 0); the generation number is returned with every
 * id so that consumers can tell ids of different generations apart. The first
 * generation is 1; 0 is never a generation (consumers may use it as "none").
 * Generations count modulo 2^31 (skipping 0).
 *
 * The implementation (src/core/stackmap.h) documents the layout and the
 * memory-ordering argument of every atomic.
 *
 * The platform hooks at the end are implemented once per world: by the kernel
 * glue (src/kernel/core_glue.c) and by the user-space test platform.
 */
#ifndef FSM_CORE_H
#define FSM_CORE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Largest kernel stack the map stores (frames); longer stacks are truncated
 * by the caller and flagged. */
#define FSM_MAX_KERNEL_DEPTH	64
/*
 * Largest max_depth of any map, in 64-bit words. Kernel stacks use
 * FSM_MAX_KERNEL_DEPTH; the user stack map (src/kernel/ustack_ukey.c) keys a
 * stack by two header words and a (file id, offset) pair per frame.
 */
#define FSM_MAX_MAP_DEPTH	256

/* Accepted range and default of the capacity exponent (module param bits). */
#define FSM_BITS_MIN		6
#define FSM_BITS_MAX		20
#define FSM_BITS_DEFAULT	14

/* No stack id (0 is a valid id). */
#define FSM_ID_NONE		0xffffffffu

/* Why an insert did not produce an id. Returned negated by fsm_map_insert(). */
enum fsm_drop_reason {
	FSM_DROP_MAP_FULL = 1,	/* all 2^bits ids of this generation used */
	FSM_DROP_ARENA_FULL,	/* record arena exhausted */
	FSM_DROP_PROBE_LIMIT,	/* no free or matching slot within the probe bound */
	FSM_DROP_BUSY,		/* matching slot still being published (bounded wait) */
	FSM_DROP_RESETTING,	/* a reset is in progress */
	FSM_DROP_INVALID,	/* nr == 0 or nr > max_depth */
	FSM_DROP_NR_REASONS
};

struct fsm_map;

struct fsm_map_params {
	unsigned int bits;	/* capacity = 2^bits stacks, table = 2^(bits+1) slots */
	unsigned int max_depth;	/* frames per stack, <= FSM_MAX_MAP_DEPTH */
	/*
	 * Arena bytes for records; 0 = capacity * (record header + 16 frames),
	 * i.e. sized for a mean depth of 16 frames.
	 */
	unsigned long long arena_bytes;
	unsigned long long key[2];	/* hash key; callers pass random bytes */
	/*
	 * FSM_TEST_* flags, 0 in production. They degrade the hash on purpose
	 * so that tests can drive the collision paths deterministically.
	 */
	unsigned int test_flags;
};

/* Every stack starts probing at slot 0 (tags still differ). */
#define FSM_TEST_HASH_SAME_BUCKET	0x1
/* Every stack has the same hash: same bucket and same tag, so every probe
 * goes through the full stack comparison. */
#define FSM_TEST_HASH_SAME_TAG		0x2

/* Result of a successful insert-or-find. */
struct fsm_insert_result {
	unsigned int id;		/* dense id in generation @generation */
	unsigned int generation;
	unsigned int flags;		/* FSM_INSERT_* */
};

#define FSM_INSERT_NEW		0x1	/* this call created the record */
#define FSM_INSERT_FIRST_EMIT	0x2	/* caller is the first to see @id in @epoch */

/*
 * Statistics snapshot (fsm_map_stats). Counters are sums of per-CPU shards.
 * hits/inserts/drops/lost_races are cumulative over the map's life (they
 * survive resets); entries/arena_used belong to the current generation.
 * Every fsm_map_insert() call on a map is counted exactly once in
 * hits + inserts + drops[1..]. While inserts run, "hits" (derived from the
 * shards' call counters) may lag behind; it is exact when quiescent.
 */
struct fsm_map_stats {
	unsigned int bits;
	unsigned int generation;
	unsigned int entries;		/* ids handed out in this generation */
	unsigned int capacity;		/* 2^bits */
	unsigned int table_slots;	/* 2^(bits+1) */
	unsigned int max_depth;
	unsigned long long arena_used;
	unsigned long long arena_size;
	unsigned long long memory_bytes;	/* everything fsm_map_create allocated */
	unsigned long long hits;		/* inserts that found an existing stack
					 * (a twin that lost a race included) */
	unsigned long long inserts;		/* inserts that created a stack */
	unsigned long long drops[FSM_DROP_NR_REASONS];	/* [0] unused */
	unsigned long long lost_races;	/* insert raced a twin inserting the same
					 * stack and used the winner's id; its
					 * record's bytes are wasted unless they
					 * were still the arena top */
	unsigned long long defs_new;	/* fsm_map_def_claim() said "due": the
					 * CPU had no stamp of the id (first use
					 * there, or its stamp was evicted) */
	unsigned long long defs_aged;	/* ... its stamp was too far behind */
	unsigned long long defs_swept;	/* fsm_map_def_sweep() definitions */
};

/*
 * fsm_map_create - allocate and initialise a map.
 * Context: task, may sleep (calls fsm_plat_alloc).
 * Return: the map, or NULL with *err set (-EINVAL-like: -22 for bad params,
 * -12 for no memory).
 */
struct fsm_map *fsm_map_create(const struct fsm_map_params *params, int *err);

/* Context: task; no inserter or reader may still use @map. */
void fsm_map_destroy(struct fsm_map *map);

/*
 * fsm_map_insert - find the id of a stack, inserting it if new.
 * @ips, @nr:  the stack, innermost frame first; 1 <= nr <= max_depth.
 * @epoch:     recording epoch of the caller. If the record's last emitted
 *             epoch differs, exactly one caller gets FSM_INSERT_FIRST_EMIT and
 *             the record remembers @epoch (so a trace can carry the frames
 *             inline the first time an id appears in a recording). Pass 0 to
 *             never request it.
 * Context: any, NMI included. Lock-free, no allocation, bounded. The caller
 * should not sleep or be preempted for long inside (a reset waits for it):
 * kernel tracepoint probes run with preemption off, which is enough. In
 * the kernel preemption must be off (or the caller in interrupt or NMI
 * context): the per-CPU counters and hit cache use RMWs atomic against
 * this CPU only (FSM_PLAT_CPU_LOCAL, platform_kernel.h).
 * Return: 0 and *res filled, or -enum fsm_drop_reason (counted in stats;
 * FSM_DROP_BUSY also covers a reservation cmpxchg that lost too many times
 * in a row). A NULL @map returns -FSM_DROP_INVALID, not counted.
 */
int fsm_map_insert(struct fsm_map *map, const unsigned long long *ips,
		   unsigned int nr, unsigned int epoch,
		   struct fsm_insert_result *res);

/*
 * fsm_map_reset - start a new generation.
 * Inserters never block. Only inserts that start while the reset waits for
 * the inserts in flight (a few microseconds when those run with preemption
 * off) fail with FSM_DROP_RESETTING; nothing is cleared meanwhile. Storage
 * is reused only after every inserter that could still be inside the old
 * generation has left. Entries of the old generation are stale at once and
 * scrubbed while the new generation already runs.
 * Context: task, may sleep (it yields while waiting for inserters and while
 * scrubbing). Callers serialise resets against each other and against readers
 * (fsm_map_lookup_id / fsm_map_nr_ids users).
 * Return: the new generation number.
 */
unsigned int fsm_map_reset(struct fsm_map *map);

/* Number of ids handed out in the current generation (upper bound for ids). */
unsigned int fsm_map_nr_ids(const struct fsm_map *map);

/*
 * fsm_map_lookup_id - read a published record.
 * Records are immutable once published; an id handed out but not yet
 * published returns -2 (ENOENT-like) and readers skip it.
 * Context: any; serialised against fsm_map_reset by the caller.
 * Return: 0, with *ips (points into the map), *nr and *hits set (any of the
 * three may be NULL); -2 if @id is not published (yet); -22 if @id >=
 * capacity or @map is NULL. *hits = number of successful inserts that
 * returned @id in this generation, the creating one included (the RFC's
 * ref_count): a u32 total plus the u32 counts still in the per-CPU hit
 * caches; a lower bound while inserts run, the total wrapping at 2^32.
 */
int fsm_map_lookup_id(const struct fsm_map *map, unsigned int id,
		      const unsigned long long **ips, unsigned int *nr,
		      unsigned long long *hits);

/* Context: any. Snapshot of the counters (not atomic as a whole). */
void fsm_map_stats(const struct fsm_map *map, struct fsm_map_stats *st);

/*
 * fsm_map_def_claim - should the caller write the definition of @id (of
 * generation @gen) into the trace of the CPU it runs on?
 * @now:     the caller's write position in that CPU's trace buffer (a
 *           count that grows with every record of the buffer, read before
 *           the definition is written), modulo 2^32
 * @horizon: how far behind @now the last definition on this CPU may be and
 *           still count; 0: always due
 *
 * Each CPU keeps, per id, the position of the last definition it was told
 * to write (a per-CPU, 8-way set-associative table of
 * min(2^bits, 4096) stamps): due when it has none (first use on this CPU,
 * or the stamp was evicted) or when it is @horizon or more behind @now. A
 * due claim stamps @now. The caller writes the definition, or calls
 * fsm_map_def_unclaim() when it could not. Stamps of other generations
 * never count.
 * Context: any, NMI included, on one CPU throughout (preemption off).
 * Lock-free, allocation-free, bounded; writes nothing when not due.
 * Return: 1 if due, 0 if not (or @map is NULL).
 */
int fsm_map_def_claim(struct fsm_map *map, unsigned int id, unsigned int gen,
		      unsigned int now, unsigned int horizon);

/*
 * fsm_def_fn - write the definition of @id (generation @gen), whose stack
 * is @ips[0..@nr), into the trace of this CPU. Called by
 * fsm_map_def_sweep() with the map's insert window open.
 * Return: nonzero if it was written.
 */
typedef int (*fsm_def_fn)(void *ctx, unsigned int id, unsigned int gen,
			  const unsigned long long *ips, unsigned int nr);

/*
 * fsm_map_def_sweep - the definitions a buffer needs after an id's last
 * use: write again, on this CPU, through @fn, the definition of each id
 * that was used on this CPU since its last definition here
 * (fsm_map_def_claim() said "not due") once that definition is @horizon
 * or more behind @now. Without it, the uses of an id after its last
 * definition can outlive that definition in the buffer when the id is
 * not used again. A few stamp sets per call, so that every set is visited
 * once per @horizon / 2 positions (at most 16 sets and 4 definitions a
 * call; the rest on the next calls).
 * Context: as fsm_map_def_claim(); @fn runs with the map's insert window
 * open (a reset waits), so it must be short and must not sleep.
 * Return: the number of definitions written.
 */
unsigned int fsm_map_def_sweep(struct fsm_map *map, unsigned int now,
			       unsigned int horizon, fsm_def_fn fn, void *ctx);

/*
 * fsm_map_def_sweep_lag - how far behind this CPU's fsm_map_def_sweep()
 * is at @now, in 256ths of a round of its stamp sets (256: a round or
 * more): for a caller that cannot sweep in its context and hands the
 * sweep to one that can, when it falls behind.
 * Context: any; reads one per-CPU word. Return: 0..256; 0 when on time,
 * with @horizon 0 or a NULL @map.
 */
unsigned int fsm_map_def_sweep_lag(const struct fsm_map *map, unsigned int now,
				   unsigned int horizon);

/*
 * fsm_map_def_unclaim - the definition of a due fsm_map_def_claim(@id,
 * @gen, @now, ...) could not be written: drop its stamp if it is still
 * there. Context: as fsm_map_def_claim(), on the same CPU.
 */
void fsm_map_def_unclaim(struct fsm_map *map, unsigned int id,
			 unsigned int gen, unsigned int now);

/* Name of a drop reason, for stat files ("map_full", ...). */
const char *fsm_drop_reason_name(unsigned int reason);

/*
 * Kernel self-check run at module load: creates a bits=FSM_BITS_MIN map,
 * checks ids, dedup, FIRST_EMIT, definition stamps, limits, reset and
 * statistics, destroys it.
 * Context: task (allocates). Return: 0, -12 (no memory) or -22 (a check
 * failed).
 */
int fsm_core_selfcheck(void);

/*
 * fsm_core_call_through - call @probe(@arg) from inside a chain of C++
 * frames (src/core/call_through.cpp), so the caller can check that kernel
 * stack traces unwind through C++ code.
 * Context: any. Return: 0.
 */
int fsm_core_call_through(void (*probe)(void *), void *arg);

/*
 * fsm_core_cpu - the CPU number as the core sees it (fsm::plat_cpu()), so
 * the glue can check it against its own.
 * Context: any.
 */
unsigned int fsm_core_cpu(void);

/*
 * fsm_map_memory_bytes - what fsm_map_create(@params) would allocate now
 * (on fsm_plat_nr_cpus() CPUs): the same number as fsm_map_stats()'s
 * memory_bytes of the map. Lets the caller check a budget first.
 * Context: any. Return: bytes, or 0 if @params is invalid.
 */
unsigned long long fsm_map_memory_bytes(const struct fsm_map_params *params);

/* ---- Platform hooks: implemented by the kernel glue or the user platform ---- */

/* Zeroed memory, at least 8-byte aligned; task context. NULL on failure. */
void *fsm_plat_alloc(unsigned long long size);
void fsm_plat_free(void *p);
/* Current CPU (any context; caller tolerates migration). The core calls it
 * through fsm::plat_cpu(), which inlines it where the platform can. */
unsigned int fsm_plat_cpu(void);
/* Number of possible CPUs: fsm_plat_cpu() < fsm_plat_nr_cpus(). */
unsigned int fsm_plat_nr_cpus(void);
/* Task context: let others run while waiting (cond_resched / sched_yield). */
void fsm_plat_yield(void);
/*
 * Task context: no preemption between begin and end (preempt_disable() in
 * the kernel; nothing in user space, which cannot), so that reset's short
 * stop-the-world window is not stretched by the resetter being scheduled
 * out. No fsm_plat_yield() or allocation in between. Nests like
 * preempt_disable().
 */
void fsm_plat_nopreempt_begin(void);
void fsm_plat_nopreempt_end(void);
/* Fill with random bytes (task context). */
void fsm_plat_random(void *buf, unsigned long long len);

#ifdef __cplusplus
}
#endif

#endif /* FSM_CORE_H */
