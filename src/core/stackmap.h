/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stackmap.h - the lock-free, NMI-safe stack map behind fsm_core.h.
 *
 * Overview
 * --------
 * A StackMap turns a stack (1..max_depth u64 addresses) into a dense id.
 * Everything is preallocated by StackMap::create() in one zeroed block,
 * because insert() must work in any context, NMI included, where nothing
 * may be allocated, no lock may be taken and every loop must be bounded:
 *
 *   StackMap        configuration (read-only after create), the generation
 *                   word, the allocation word, the id counter
 *   CpuShard[ncpu]  one 128-byte, 128-byte aligned block per possible CPU:
 *                   enters/exits counters for reset, cumulative statistics
 *   slots[2^(bits+1)] u64 words of the open-addressing hash table
 *   index[2^bits]   u64: id -> generation and arena offset of the record
 *   hit_total[2^bits] u32 per-stack hit counts flushed from the CPU caches
 *   hit_cache[ncpu][C] per-CPU caches of per-stack hit counts, 8-way set
 *                   associative, one 64-byte line per set,
 *                   C = min(2^bits, kHitCacheEntries) u64 words per CPU
 *   def_stamp[ncpu][D] per-CPU stamps: where in this CPU's trace each id's
 *                   definition was last written (def_claim()), 8-way set
 *                   associative like the hit cache,
 *                   D = min(2^bits, kDefStampEntries) u64 words per CPU
 *   arena           variable-length records: 16-byte header + 8*nr bytes
 *
 * Memory (create() computes it exactly, fsm_map_memory_bytes() too):
 *   ~ 128 + 2^(bits+1)*8 + 2^bits*(8+4) + arena
 *     + ncpu*(128 + 8*min(2^bits, kHitCacheEntries)
 *             + 8*min(2^bits, kDefStampEntries))
 * with arena = 2^bits*(16 + 8*min(16, max_depth)) by default. The per-CPU
 * part is bounded by 65664 bytes per possible CPU whatever bits is.
 *
 * Slot word (u64): tag << 40 | gen8 << 32 | (record offset in 8-byte arena
 * units + 1). 0 means empty. The tag is 24 bits of the 64-bit keyed hash,
 * with 0 remapped to 1 (so an occupied slot's high half is never 0); gen8 is
 * the low 8 bits of the generation that wrote the slot; the low bits of the
 * hash pick the first slot. A slot whose gen8 is not the current one is
 * stale: every insert treats it exactly like an empty slot (claimable, never
 * compared), and reset() scrubs it back to 0 afterwards. Within a generation
 * a slot goes from empty (0 or stale) to its final value with one cmpxchg
 * and never changes again: there are no tombstones and no claimed-but-empty
 * slots, because the record is written *before* the slot is claimed.
 *
 * Allocation word (u64): entries reserved << 32 | arena units used. One
 * cmpxchg reserves an entry and the record's bytes together, and fails fast
 * (MAP_FULL / ARENA_FULL) instead of counting past the limit; it never
 * wraps (cf. CVE-2024-43890, where tracing_map's element counter did).
 *
 * Insert (hit): hash (before entering the in-flight window), probe from
 * hash & mask comparing the slot's high half (tag and generation) with
 * ours, compare nr and frames on a match, read the published id, bump the
 * hit count in this CPU's hit cache (its home way first). In steady state
 * (the CPU's hot stacks resident in its hit cache) a hit writes only lines
 * of its own CPU: its CpuShard and its hit-cache line; see count_hit().
 * Insert (miss): at the first empty slot of the probe sequence, (a) reserve
 * storage, (b) write the record, (c) cmpxchg the slot (release). Losing the
 * slot to another stack: keep probing with the same record. Losing it to
 * the same stack (a twin inserted concurrently): return the reservation
 * (and the bytes when they are still the arena top), count lost_races and
 * use the winner's id. (d) Only the winner takes an id and publishes it:
 * hit_total[id] = 0, index[id] (release) first, record->id (release) second.
 *
 * Reset: a new generation, O(number of CPUs) for the inserters. Inserters
 * never wait for a reset; a reset waits for the inserters in flight (see
 * reset() for the Dekker handshake); only inserts that start during that
 * short wait drop with FSM_DROP_RESETTING. Nothing is cleared while they
 * drop: the generation in slots, index and hit caches makes the old
 * entries stale, and reset() scrubs them after the new generation is open.
 *
 * Ids: dense record indexes of the current generation, handed out only to
 * slot winners, so ids 0..nr_ids()-1 are all valid except the few that are
 * taken but not yet published (lookup_id() returns -2 for them).
 *
 * Terms: "hits" of a stack = number of successful inserts that returned its
 * id in this generation, the creating insert included (the RFC's ref_count);
 * a lower bound, exact unless an insert of a stack is interrupted on its CPU
 * by another insert that uses the same hit-cache word (see count_hit()).
 * Map-wide "hits" in fsm_map_stats = successful inserts that found an
 * existing stack; "inserts" = inserts that created one; every call is
 * counted exactly once in hits + inserts + sum(drops).
 */
#ifndef FSM_STACKMAP_H
#define FSM_STACKMAP_H

#include "platform.h"
#include "hash.h"

namespace fsm {

/* Slots examined by one insert before FSM_DROP_PROBE_LIMIT. */
inline constexpr u32 kProbeLimit = 64;
/* cpu_relax() iterations waiting for a matching record's id (FSM_DROP_BUSY). */
inline constexpr u32 kPublishWaitLoops = 256;
/* Attempts of the reservation cmpxchg before FSM_DROP_BUSY. */
inline constexpr u32 kReserveRetries = 32;
/* Attempts of the emit-epoch cmpxchg (each failure means another epoch won). */
inline constexpr u32 kEmitRetries = 4;
/*
 * Words of each CPU's hit cache (at most: min(capacity, this)), i.e. 32
 * KiB per possible CPU (plus its 128-byte CpuShard). A power of two, split
 * into sets of kHitCacheWays words, one 64-byte line each: the set of an
 * id is id & (sets - 1), so up to kHitCacheWays hot ids that share a set
 * stay resident together, and each id has a home way in its set where a
 * hit finds it with one load (see count_hit()). As many as the definition
 * stamps, for the same 4096 Zipf stacks of the user-space bench: with 256
 * words 36% of its hits missed the cache and hit_ns_16 was 41 ns, with
 * 4096 (every id at home) 29 ns, side by side in one process.
 */
inline constexpr u32 kHitCacheEntries = 4096;
inline constexpr u32 kHitCacheWays = 8;
/*
 * Words of each CPU's definition stamps (at most: min(capacity, this)), 32
 * KiB per possible CPU, in sets of kDefStampWays words (one 64-byte line),
 * the set of an id chosen as in the hit cache. A CPU whose trace holds
 * more ids than this at once pays with extra definitions (an evicted stamp
 * reads as "never defined here"), never with a missing one, unless the
 * stamp evicted was waiting for the sweep (def_claim() evicts those last).
 * The user-space bench measures the evictions of 4096 Zipf stacks
 * (def_claims_due_per_1k: 116 per 1000 uses with 1024 words, 44 with
 * 2048, none with 4096).
 */
inline constexpr u32 kDefStampEntries = 4096;
inline constexpr u32 kDefStampWays = 8;
/* Most stamp sets one def_sweep() call visits, and definitions it writes. */
inline constexpr u32 kSweepMaxSets = 16;
inline constexpr u32 kSweepMaxDefs = 4;
/* cmpxchg attempts of a saturating add to a hit total (add_hit_total()) */
inline constexpr u32 kHitTotalTries = 4;
/* a + b, or 2^32 - 1 where that wraps (hit totals saturate) */
constexpr u32 hit_sat_add(u32 a, u32 b) { return a + b < a ? 0xffffffffu : a + b; }
/*
 * cpu_relax() iterations reset() spins, preemption off, waiting for the
 * inserts in flight on one CPU before it lets others run (and re-checks).
 * Kernel inserters run with preemption off and are bounded, so this is
 * normally enough; it only matters if an inserter's CPU is itself held up
 * (a vCPU descheduled by the host, a user-space thread preempted).
 */
inline constexpr u32 kResetSpinLoops = 1u << 16;
/* Attempts to claim one slot that stays empty (stale -> 0 by the scrub). */
inline constexpr u32 kClaimRetries = 2;
/* Bytes of a record header; a record is kRecordHeaderBytes + 8 * nr. */
inline constexpr u32 kRecordHeaderBytes = 16;
/* Words reset() scrubs between two fsm_plat_yield() calls. */
inline constexpr u64 kScrubChunkWords = 1ull << 16;
/*
 * Alignment of the per-CPU shards: two cache lines, because Intel's
 * adjacent-line prefetcher fetches 128-byte pairs, which makes 64-byte
 * neighbours written by different CPUs interfere.
 */
inline constexpr usize kShardAlign = 2 * kCacheLine;
/* Low bit of the generation word: a reset is in progress. */
inline constexpr u32 kResetting = 1;

static_assert(kProbeLimit * 2 <= (2u << FSM_BITS_MIN),
	      "a probe sequence must not wrap onto itself in the smallest table");

/*
 * Record - one stack in the arena, immutable once its slot is published
 * (except the two atomics). Followed by u64 ips[nr].
 */
struct Record {
	Atomic<u32> id;		/* FSM_ID_NONE until the winner publishes */
	Atomic<u32> emit_epoch;	/* last recording epoch that emitted it */
	u32 nr;			/* frames */
	u32 gen;		/* generation that created it (checks only) */

	u64 *ips() { return reinterpret_cast<u64 *>(this + 1); }
	const u64 *ips() const { return reinterpret_cast<const u64 *>(this + 1); }
};
static_assert(sizeof(Record) == kRecordHeaderBytes, "record header layout");

/* Size of a record of @nr frames, in 8-byte arena units. */
constexpr u32 record_units(u32 nr) { return kRecordHeaderBytes / 8 + nr; }

/*
 * CpuShard - per-CPU state, 128 bytes and 128-byte aligned, one per possible
 * CPU (fsm_plat_nr_cpus(), no cap). The shard is picked once per insert
 * (fsm_plat_cpu(), reduced modulo the shard count only if a platform ever
 * reported a CPU number out of range) and the same shard, and the same
 * hit cache, are used until the insert returns, so a task that migrates in
 * between still leaves enters/exits balanced. Counters are updated with
 * atomic RMWs (an NMI may nest on the same CPU, and a migrated task may
 * share the shard), but the line is normally written by one CPU only.
 * exits, the one counter besides enters that every insert writes, uses
 * a CPU-local RMW (cpu_add(), platform.h): where FSM_PLAT_CPU_LOCAL says
 * no caller migrates (the kernel) it is atomic against this CPU's nested
 * contexts only, which is all it needs there.
 *
 * enters/exits bracket the part of an insert that touches the table; their
 * difference is the number of inserts in flight (see reset()). All of them
 * are monotonic u64 (no wrap in practice), so "exits" doubles as the number
 * of calls that entered, and the map-wide hit count is derived as
 * exits - inserts - drops (all but FSM_DROP_INVALID, which is refused before
 * entering): the hit path pays for no statistics counter of its own.
 */
struct alignas(kShardAlign) CpuShard {
	/* First line: everything a hit touches. */
	Atomic<u64> enters;
	Atomic<u64> exits;
	Atomic<u64> inserts;
	Atomic<u64> lost_races;
	Atomic<u64> drops[FSM_DROP_NR_REASONS];	/* [0] unused */
	/* Second line: def_claim() outcomes that asked for a definition. */
	Atomic<u64> defs_new;	/* no stamp of the id on this CPU */
	Atomic<u64> defs_aged;	/* the stamp was @horizon or more behind */
	Atomic<u64> defs_swept;	/* definitions def_sweep() had written */
	/* def_sweep(): the next set to visit, and the position it is due at */
	Atomic<u32> sweep_set;
	Atomic<u32> sweep_pos;
	/* def_sweep() calls counted in exits: not inserts (see stats()) */
	Atomic<u64> sweeps;
};
static_assert(sizeof(CpuShard) == kShardAlign, "one shard = two cache lines");

/* A reservation made by reserve(): arena offset and size, in units. */
struct Reservation {
	u32 off;
	u32 units;
	bool held;
};

class StackMap {
public:
	/*
	 * create - validate @p, allocate and initialise a map.
	 * Context: task, may sleep (fsm_plat_alloc).
	 * Return: the map, or nullptr with *err = -22 (bad params) / -12 (ENOMEM).
	 */
	[[nodiscard]] static StackMap *create(const fsm_map_params &p, int *err);

	/* Context: task; no inserter or reader may still use the map. */
	void destroy();

	/*
	 * insert - insert-or-find @ips[0..nr).
	 * Context: any, NMI included. Lock-free, allocation-free, bounded:
	 * at most kProbeLimit slots examined; at most kReserveRetries
	 * reservation cmpxchgs, kProbeLimit * kClaimRetries slot cmpxchgs,
	 * kReserveRetries cmpxchgs plus one fetch_sub to give a reservation
	 * back, kPublishWaitLoops relax iterations waiting for an id,
	 * kEmitRetries epoch cmpxchgs, one hit-cache cmpxchg (CPU-local)
	 * and kHitTotalTries cmpxchgs on an eviction, and the per-CPU
	 * shard's counters (enters, exits, at most one outcome, lost_races).
	 * Kernel: with preemption off (see fsm_map_insert()).
	 * Return: 0 with *res filled, or -enum fsm_drop_reason.
	 */
	[[nodiscard]] int insert(const u64 *ips, u32 nr, u32 epoch,
				 fsm_insert_result *res);

	/*
	 * reset - start a new generation.
	 * Context: task, may sleep; serialised by the caller against other
	 * resets and against readers (lookup_id, nr_ids). Inserters drop with
	 * FSM_DROP_RESETTING only while it waits for the inserts in flight;
	 * the scrub of stale entries afterwards runs beside them.
	 * Return: the new generation number.
	 */
	u32 reset();

	/* Context: any. Return: ids handed out in the current generation. */
	u32 nr_ids() const;

	/*
	 * lookup_id - read the published record of @id.
	 * Context: any; serialised against reset() by the caller.
	 * Return: 0; -2 if @id is not (yet) published; -22 if @id >= capacity.
	 */
	[[nodiscard]] int lookup_id(u32 id, const u64 **ips, u32 *nr,
				    u64 *hits) const;

	/* Context: any. A snapshot, not atomic as a whole. */
	void stats(struct fsm_map_stats *st) const;

	/*
	 * def_claim - is a definition of @id (generation @gen) due in the
	 * trace of this CPU, the one whose write position is @now? Due when
	 * this CPU has no stamp of the id, or its stamp is @horizon or more
	 * behind @now (u32 arithmetic, modulo 2^32; @horizon 0: always due).
	 * When due, the stamp becomes @now.
	 * Context: any, NMI included; the caller stays on one CPU (the trace
	 * position is that CPU's). Lock-free, allocation-free, bounded: one
	 * 64-byte line read, at most one cmpxchg, written only when due.
	 * Return: true if the caller should write the definition.
	 */
	[[nodiscard]] bool def_claim(u32 id, u32 gen, u32 now, u32 horizon);

	/*
	 * def_unclaim - the definition that def_claim(@id, @gen, @now, ...)
	 * asked for was not written: forget the stamp it set, if it is still
	 * there. Context, bounds: as def_claim().
	 */
	void def_unclaim(u32 id, u32 gen, u32 now);

	/*
	 * def_sweep - have @fn write again, on this CPU, the definitions of
	 * ids used here since their last definition here, once that one is
	 * @horizon or more behind @now; the table is visited a few sets per
	 * call so that each set is seen every @horizon / 2 positions.
	 * Context: as def_claim(); inside the in-flight window of insert()
	 * (a reset waits for it), so records and ids stay valid while @fn
	 * runs. Bounded: kSweepMaxSets sets, kSweepMaxDefs calls of @fn.
	 * Return: the definitions @fn wrote.
	 */
	u32 def_sweep(u32 now, u32 horizon, fsm_def_fn fn, void *ctx);

	/*
	 * def_sweep_lag - how far behind this CPU's sweep is at @now, in
	 * 256ths of a round of its sets (at most 256). Context: any. Reads
	 * one word.
	 */
	u32 def_sweep_lag(u32 now, u32 horizon) const;

	/* Hash as used for slot selection (with the test degradation applied). */
	u64 hash(const u64 *ips, u32 nr) const
	{
		return (hash_stack(key_, ips, nr) & hash_and_) | hash_or_;
	}

	u32 capacity() const { return capacity_; }
	u32 nr_cpu_shards() const { return nr_shards_; }
	u32 hit_cache_entries() const { return hit_cache_mask_ + 1; }
	u32 def_stamp_entries() const { return def_stamp_mask_ + 1; }

	/*
	 * memory_bytes - what create() allocates for @p on @nr_cpus CPUs.
	 * Return: bytes, or 0 if @p is invalid.
	 */
	static u64 memory_bytes(const fsm_map_params &p, u32 nr_cpus);

	StackMap(const StackMap &) = delete;
	StackMap &operator=(const StackMap &) = delete;

private:
	StackMap() = default;

	u32 this_cpu() const;
	int insert_in_gen(u32 cpu, u32 gen, u64 h, const u64 *ips, u32 nr,
			  u32 epoch, fsm_insert_result *res);
	int insert_miss(u32 cpu, u32 gen, const u64 *ips, u32 nr, u32 epoch,
			u32 key, u32 idx, u32 probe, fsm_insert_result *res);
	Record *match(u64 s, u32 key, const u64 *ips, u32 nr);
	int reserve(u32 nr, Reservation &rsv);
	void unreserve(const Reservation &rsv);
	void publish_new(u32 cpu, Record *rec, const Reservation &rsv,
			 u32 gen, u32 epoch, fsm_insert_result *res);
	int finish_hit(u32 cpu, Record *rec, u32 gen, u32 epoch,
		       fsm_insert_result *res);
	void count_hit(u32 cpu, u32 gen, u32 id);
	void hit_cache_scan(Atomic<u64> *set, u32 gen, u32 id);
	Atomic<u64> *def_set(u32 cpu, u32 id);
	void add_hit_total(u32 id, u32 n);
	u64 hits_of(u32 gen, u32 id) const;
	template <typename T, typename Stale>
	void scrub(Atomic<T> *words, u64 n, Stale stale);

	Record *record_at(u32 off) { return reinterpret_cast<Record *>(arena_ + off); }
	const Record *record_at(u32 off) const
	{
		return reinterpret_cast<const Record *>(arena_ + off);
	}

	/* ---- configuration: written by create(), read-only afterwards ---- */
	u32 bits_ = 0;
	u32 capacity_ = 0;	/* 2^bits ids */
	u32 table_mask_ = 0;	/* 2^(bits+1) - 1 */
	u32 max_depth_ = 0;
	u32 arena_units_ = 0;	/* arena size in 8-byte units, < 2^32 - 1 */
	u32 nr_shards_ = 0;
	u32 hit_cache_mask_ = 0;	/* entries per CPU hit cache - 1 */
	u32 hit_set_mask_ = 0;		/* sets per CPU hit cache - 1 */
	u32 hit_set_bits_ = 0;		/* log2(sets per CPU hit cache) */
	u32 def_stamp_mask_ = 0;	/* entries per CPU stamp table - 1 */
	u32 def_set_mask_ = 0;		/* sets per CPU stamp table - 1 */
	u64 hash_and_ = 0;	/* test degradation of the hash */
	u64 hash_or_ = 0;
	HashKey key_{};
	CpuShard *shards_ = nullptr;
	Atomic<u64> *slots_ = nullptr;
	Atomic<u64> *index_ = nullptr;		/* gen << 32 | (offset + 1) */
	Atomic<u32> *hit_total_ = nullptr;	/* [capacity] */
	Atomic<u64> *hit_cache_ = nullptr;	/* [nr_shards][hit_cache_mask + 1] */
	Atomic<u64> *def_stamp_ = nullptr;	/* [nr_shards][def_stamp_mask + 1] */
	u64 *arena_ = nullptr;
	void *block_ = nullptr;		/* what fsm_plat_alloc returned */
	u64 memory_bytes_ = 0;

	/*
	 * gen << 1 | kResetting. Read by every insert, written only by
	 * reset(): on its own cache line so misses do not invalidate it.
	 */
	alignas(kCacheLine) Atomic<u32> gen_;

	/* ---- written on the miss path only ---- */
	alignas(kCacheLine) Atomic<u64> alloc_;	/* reserved << 32 | arena units */
	Atomic<u32> next_id_;			/* ids handed out (winners only) */
};

} /* namespace fsm */

#endif /* FSM_STACKMAP_H */
