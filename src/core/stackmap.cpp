// SPDX-License-Identifier: GPL-2.0
/*
 * stackmap.cpp - insert-or-find, publication, reset of the stack map.
 *
 * Read stackmap.h first: it describes the data structures. This file holds
 * the concurrency arguments; every atomic access below says what it
 * publishes or observes and which access on the other side it pairs with.
 * The labels used in those comments:
 *
 *   (P1) slot cmpxchg, release       publishes a fully written record
 *   (P2) index[id] store, release    publishes the record to lookup_id()
 *   (P3) record->id store, release   publishes the id to other inserters
 *   (R1) slot load, acquire          pairs with (P1)
 *   (R2) index[id] load, acquire     pairs with (P2)
 *   (R3) record->id load, acquire    pairs with (P3)
 *   (A1)/(A2)/(A3)                   inserter side of the reset handshake
 *   (B1)/(B2)/(B3)                   reset side of the reset handshake
 */
#include "stackmap.h"

#include "fsm_test_hooks.h"

#ifdef FSM_TEST_HOOKS
#define FSM_HOOK(map, point) \
	fsm_test_hook(reinterpret_cast<const struct fsm_map *>(map), (point))
#else
#define FSM_HOOK(map, point) do { } while (0)
#endif

namespace fsm {

namespace {

constexpr u64 slot_make(u32 tag, u32 off) { return (u64)tag << 32 | ((u64)off + 1); }
constexpr u32 slot_tag(u64 s) { return (u32)(s >> 32); }
constexpr u32 slot_off(u64 s) { return (u32)s - 1; }

constexpr u32 alloc_count(u64 w) { return (u32)(w >> 32); }
constexpr u32 alloc_units(u64 w) { return (u32)w; }
constexpr u64 kAllocOneEntry = 1ull << 32;

/* The tag is the high half of the hash, never 0 (an occupied slot's high
 * half is non-zero, which makes a torn or stray word easy to spot). */
constexpr u32 hash_tag(u64 h)
{
	u32 t = (u32)(h >> 32);

	return t ? t : 1;
}

/*
 * Compare two stacks of @nr frames. Branch-free accumulation: a hit
 * compares every frame anyway, and a tag match on different stacks is a
 * 1-in-2^32 event.
 */
FSM_ALWAYS_INLINE bool frames_equal(const u64 *a, const u64 *b, u32 nr)
{
	u64 diff = 0;

	for (u32 i = 0; i < nr; i++)
		diff |= a[i] ^ b[i];
	return diff == 0;
}

} /* namespace */

StackMap *StackMap::create(const fsm_map_params &p, int *err)
{
	constexpr u32 kKnownTestFlags = FSM_TEST_HASH_SAME_BUCKET | FSM_TEST_HASH_SAME_TAG;

	if (p.bits < FSM_BITS_MIN || p.bits > FSM_BITS_MAX ||
	    p.max_depth < 1 || p.max_depth > FSM_MAX_MAP_DEPTH ||
	    (p.test_flags & ~kKnownTestFlags)) {
		*err = -22;
		return nullptr;
	}

	const u64 capacity = 1ull << p.bits;
	const u64 table_slots = capacity * 2;
	const u64 max_record = (u64)record_units(p.max_depth) * 8;
	/* Default: sized for a mean depth of 16 frames (or max_depth if less). */
	const u64 default_arena = capacity * record_units(min(16u, p.max_depth)) * 8;
	const u64 arena_bytes = p.arena_bytes ? p.arena_bytes : default_arena;

	/*
	 * Sane arena: room for at least one deepest record, and no more than
	 * every id at max_depth can use (more would be memory nobody can
	 * reach). With bits <= 20 that is < 2^30 bytes, so offsets in 8-byte
	 * units fit the 32-bit slot and allocation fields with room to spare.
	 */
	if (arena_bytes < max_record || arena_bytes > capacity * max_record) {
		*err = -22;
		return nullptr;
	}
	static_assert(((4ull << FSM_BITS_MIN) % kCacheLine) == 0,
		      "hit shard arrays must start on their own cache lines");
	static_assert((1ull << FSM_BITS_MAX) * (kRecordHeaderBytes + 8 * FSM_MAX_MAP_DEPTH) / 8
		      < 0xffffffffull, "arena offsets must fit in 32 bits");

	u32 nr_cpus = fsm_plat_nr_cpus();
	if (nr_cpus == 0)
		nr_cpus = 1;
	const u32 nr_shards = min(nr_cpus, kMaxCpuShards);
	const u32 nr_hit_shards = min(nr_cpus, kMaxHitShards);

	/* Layout of the single block; every part starts on a cache line,
	 * the shards on a kShardAlign boundary. */
	u64 off = align_up(sizeof(StackMap), kShardAlign);
	const u64 off_shards = off;
	off += align_up((u64)nr_shards * sizeof(CpuShard), kCacheLine);
	const u64 off_slots = off;
	off += align_up(table_slots * 8, kCacheLine);
	const u64 off_index = off;
	off += align_up(capacity * 4, kCacheLine);
	const u64 off_hits = off;
	const u64 hit_shard_bytes = capacity * 4;	/* multiple of 64 */
	off += hit_shard_bytes * nr_hit_shards;
	const u64 off_arena = off;
	off += align_up(arena_bytes, kCacheLine);
	/* fsm_plat_alloc guarantees 8-byte alignment only: over-allocate. */
	const u64 total = off + kShardAlign;

	void *block = fsm_plat_alloc(total);
	if (!block) {
		*err = -12;
		return nullptr;
	}
	u8 *base = reinterpret_cast<u8 *>(align_up(reinterpret_cast<uptr>(block), kShardAlign));

	StackMap *m = new (base, place) StackMap();
	m->bits_ = p.bits;
	m->capacity_ = (u32)capacity;
	m->table_mask_ = (u32)(table_slots - 1);
	m->max_depth_ = p.max_depth;
	m->arena_units_ = (u32)(arena_bytes / 8);
	m->nr_shards_ = nr_shards;
	m->nr_hit_shards_ = nr_hit_shards;
	m->key_ = hash_key_expand(p.key[0], p.key[1]);
	m->hash_and_ = ~0ull;
	m->hash_or_ = 0;
	if (p.test_flags & FSM_TEST_HASH_SAME_BUCKET)
		m->hash_and_ &= ~0ull << 32;	/* bucket bits 0, tag kept */
	if (p.test_flags & FSM_TEST_HASH_SAME_TAG) {
		m->hash_and_ = 0;
		m->hash_or_ = 0x5eed000000000000ull;
	}
	m->shards_ = reinterpret_cast<CpuShard *>(base + off_shards);
	m->slots_ = reinterpret_cast<Atomic<u64> *>(base + off_slots);
	m->index_ = reinterpret_cast<Atomic<u32> *>(base + off_index);
	m->hit_counts_ = reinterpret_cast<Atomic<u32> *>(base + off_hits);
	m->arena_ = reinterpret_cast<u64 *>(base + off_arena);
	m->block_ = block;
	m->memory_bytes_ = total;

	for (u32 c = 0; c < nr_shards; c++)
		m->shards_[c].hit_shard = c % nr_hit_shards;

	/* The block is zeroed: slots empty, index unpublished, counters 0. */
	m->gen_.init(1u << 1);	/* generation 1: 0 is never a generation */
	m->alloc_.init(0);
	m->next_id_.init(0);
	return m;
}

void StackMap::destroy()
{
	void *block = block_;

	this->~StackMap();
	fsm_plat_free(block);
}

CpuShard &StackMap::this_cpu_shard()
{
	u32 cpu = fsm_plat_cpu();

	if (unlikely(cpu >= nr_shards_))
		cpu %= nr_shards_;
	return shards_[cpu];
}

/*
 * The hit counter of @id in the caller's shard. Relaxed: a statistic that
 * publishes nothing. It must still be an atomic RMW: an NMI can nest on this
 * CPU, and a migrated task can share the shard. Only CPUs mapped to the same
 * hit shard ever write this line.
 */
/*
 * count_hit - bump the per-stack hit counter of this CPU's hit shard.
 *
 * A relaxed load and a relaxed store, not a read-modify-write: no locked
 * instruction on the hit path for a statistic. The shard belongs to this
 * CPU (cpu % kMaxHitShards: distinct for up to kMaxHitShards CPUs), so the
 * only way to lose an increment is another insert of the same stack on the
 * same shard between our load and our store: an NMI or interrupt nesting
 * in here, more than kMaxHitShards CPUs sharing a shard, or (user space) a
 * thread migrating. Per-stack hits are therefore a lower bound, exact in
 * the common case; the map-wide hit count in stats() is derived from
 * enters/exits and is exact. No ordering: nothing is published.
 */
FSM_ALWAYS_INLINE void StackMap::count_hit(CpuShard &sh, u32 id)
{
	Atomic<u32> &c = hit_counts_[(u64)sh.hit_shard * capacity_ + id];

	c.store(c.load(relaxed) + 1, relaxed);
}

/*
 * reserve - reserve one entry and the bytes of a record of @nr frames.
 *
 * Both live in alloc_ and move together with one cmpxchg, checked against
 * their limits before the increment: the word can never pass capacity or
 * the arena size, so it cannot wrap however many inserters fail.
 * Context: any. Bounded by kReserveRetries attempts.
 * Return: 0 with @rsv held, -FSM_DROP_MAP_FULL, -FSM_DROP_ARENA_FULL, or
 * -FSM_DROP_BUSY when kReserveRetries attempts all lost (each loss means
 * another inserter progressed).
 */
int StackMap::reserve(u32 nr, Reservation &rsv)
{
	const u32 need = record_units(nr);
	u64 cur = alloc_.load(relaxed);

	for (u32 attempt = 0; attempt < kReserveRetries; attempt++) {
		if (alloc_count(cur) >= capacity_)
			return -FSM_DROP_MAP_FULL;
		if ((u64)alloc_units(cur) + need > arena_units_)
			return -FSM_DROP_ARENA_FULL;
		/*
		 * Acquire on success: pairs with the release in unreserve().
		 * When a loser gave bytes back and we now get them, its writes
		 * to those bytes happen before ours. On failure @cur is
		 * reloaded; relaxed is enough, we only retry with it.
		 */
		if (alloc_.cmpxchg(cur, cur + kAllocOneEntry + need, acquire, relaxed)) {
			rsv.off = alloc_units(cur);
			rsv.units = need;
			rsv.held = true;
			return 0;
		}
	}
	return -FSM_DROP_BUSY;
}

/*
 * unreserve - give back a reservation that did not become a record of the
 * map (twin lost the race, or probe limit after reserving). The entry is
 * always returned; the bytes only if they are still the top of the arena
 * (otherwise they stay wasted until the next reset). Returning the top is
 * safe: nobody but us has seen our record, and anything reserved after it
 * and still live would have moved the top.
 * Context: any. Bounded: kReserveRetries cmpxchg attempts, then one fetch_sub.
 */
void StackMap::unreserve(const Reservation &rsv)
{
	u64 cur = alloc_.load(relaxed);

	for (u32 attempt = 0; attempt < kReserveRetries; attempt++) {
		u64 next = cur - kAllocOneEntry;

		if (alloc_units(cur) == rsv.off + rsv.units)
			next -= rsv.units;
		/*
		 * Release: our writes into the record happen before the
		 * accesses of whoever reserves these bytes next (its acquire
		 * in reserve()).
		 */
		if (alloc_.cmpxchg(cur, next, release, relaxed))
			return;
	}
	/* Contended: return the entry only, the bytes stay wasted. */
	alloc_.fetch_sub(kAllocOneEntry, release);
}

/*
 * publish_new - the slot winner takes the next id and publishes it.
 *
 * next_id_ cannot exceed capacity: only winners increment it, each winner
 * holds a reservation it never returns in this generation, and reserve()
 * keeps reservations <= capacity. Relaxed: the counter itself publishes
 * nothing (lookup_id() relies on (P2), not on nr_ids()).
 * Context: any, inside the in-flight window of insert().
 */
void StackMap::publish_new(CpuShard &sh, Record *rec, const Reservation &rsv,
			   u32 gen, u32 epoch, fsm_insert_result *res)
{
	const u32 id = next_id_.fetch_add(1, relaxed);

	FSM_ASSERT(id < capacity_);
	FSM_HOOK(this, FSM_HOOK_ID_TAKEN);
	/*
	 * (P2) release: the record (written by us) is complete before a
	 * reader that finds index[id] with (R2) in lookup_id() looks at it.
	 */
	index_[id].store(rsv.off + 1, release);
	FSM_HOOK(this, FSM_HOOK_INDEX_PUBLISHED);
	/*
	 * (P3) release, after (P2): an inserter that reads the id with (R3)
	 * may return it, and whoever learns the id from it (a trace reader)
	 * must find index[id] already set. Pairs with (R3) in finish_hit().
	 */
	rec->id.store(id, release);

	count_hit(sh, id);
	res->id = id;
	res->generation = gen;
	/* The creator stored @epoch in the record: it is the first emitter. */
	res->flags = FSM_INSERT_NEW | (epoch ? FSM_INSERT_FIRST_EMIT : 0);
}

/*
 * finish_hit - the stack is @rec (found through a published slot): wait,
 * bounded, for its id, count the hit, elect the first emitter of @epoch.
 * Context: any, inside the in-flight window of insert().
 * Return: 0 with *res filled, or -FSM_DROP_BUSY when the id is still not
 * published after kPublishWaitLoops iterations: the publisher may be the
 * context we interrupted on this very CPU (we may be an NMI), so waiting
 * longer could wait forever.
 */
FSM_ALWAYS_INLINE int StackMap::finish_hit(CpuShard &sh, Record *rec, u32 gen,
					   u32 epoch, fsm_insert_result *res)
{
	/* (R3) acquire, pairs with (P3): index[id] is published too. */
	u32 id = rec->id.load(acquire);

	for (u32 spin = 0; unlikely(id == FSM_ID_NONE); spin++) {
		if (spin >= kPublishWaitLoops)
			return -FSM_DROP_BUSY;
		FSM_HOOK(this, FSM_HOOK_ID_WAIT);
		cpu_relax();
		id = rec->id.load(acquire);		/* (R3) */
	}
	FSM_ASSERT(id < capacity_ && rec->gen == gen);

	count_hit(sh, id);
	res->id = id;
	res->generation = gen;
	res->flags = 0;

	/*
	 * First emitter of @epoch: move the record's epoch to ours; the one
	 * whose cmpxchg succeeds owns FSM_INSERT_FIRST_EMIT. Relaxed: the
	 * election publishes no data (the frames the winner writes inline
	 * are its own @ips). A failure reloads @cur; if it now equals @epoch
	 * someone else won. Bounded: each failure means a different epoch
	 * was stored concurrently, so after kEmitRetries we give up (no
	 * flag; another caller emitted recently).
	 */
	if (epoch) {
		u32 cur = rec->emit_epoch.load(relaxed);

		for (u32 attempt = 0; cur != epoch && attempt < kEmitRetries; attempt++) {
			if (rec->emit_epoch.cmpxchg(cur, epoch, relaxed, relaxed)) {
				res->flags = FSM_INSERT_FIRST_EMIT;
				break;
			}
		}
	}
	return 0;
}

/*
 * match - does slot word @s hold the stack @ips/@nr (with hash tag @tag)?
 * The tag is compared first; frames only on a tag match. The record is
 * complete because @s was read with (R1) or a failed cmpxchg (acquire).
 */
FSM_ALWAYS_INLINE Record *StackMap::match(u64 s, u32 tag, const u64 *ips, u32 nr)
{
	if (slot_tag(s) != tag)
		return nullptr;
	Record *rec = record_at(slot_off(s));
	if (rec->nr != nr || !frames_equal(rec->ips(), ips, nr))
		return nullptr;
	return rec;
}

/*
 * insert_in_gen - the body of insert() once we are known to be inside
 * generation @gen (counted in enters: no reset can clear anything until we
 * leave). This is the hit path; the first empty slot hands over to
 * insert_miss().
 */
FSM_ALWAYS_INLINE int StackMap::insert_in_gen(CpuShard &sh, u32 gen, const u64 *ips,
					      u32 nr, u32 epoch, fsm_insert_result *res)
{
	const u64 h = hash(ips, nr);
	const u32 tag = hash_tag(h);
	u32 idx = (u32)h & table_mask_;

	for (u32 probe = 0; probe < kProbeLimit; probe++, idx = (idx + 1) & table_mask_) {
		/*
		 * (R1) acquire, pairs with (P1): if the slot is occupied, the
		 * record it points to is completely written.
		 */
		const u64 s = slots_[idx].load(acquire);

		if (unlikely(s == 0))
			return insert_miss(sh, gen, ips, nr, epoch, tag, idx, probe, res);
		if (Record *rec = match(s, tag, ips, nr))
			return finish_hit(sh, rec, gen, epoch, res);
	}
	return -FSM_DROP_PROBE_LIMIT;
}

/*
 * insert_miss - the stack was not found before the empty slot @idx (the
 * @probe-th of its sequence): it is not in the map, because slots are never
 * emptied within a generation. Reserve and write a record, then claim the
 * first empty slot from @idx on; keep the same record while probing on.
 * Context: any, inside the in-flight window of insert().
 */
FSM_NOINLINE int StackMap::insert_miss(CpuShard &sh, u32 gen, const u64 *ips, u32 nr,
				       u32 epoch, u32 tag, u32 idx, u32 probe,
				       fsm_insert_result *res)
{
	Reservation rsv{0, 0, false};
	Record *found = nullptr;

	/* (a) storage first: no slot is ever claimed without a record. */
	const int err = reserve(nr, rsv);
	if (err)
		return err;
	/* (b) the record, private to us until (P1). */
	Record *mine = record_at(rsv.off);
	mine->id.init(FSM_ID_NONE);
	mine->emit_epoch.init(epoch);
	mine->nr = nr;
	mine->gen = gen;
	copy_bytes(mine->ips(), ips, (usize)nr * 8);

	for (; probe < kProbeLimit; probe++, idx = (idx + 1) & table_mask_) {
		u64 s = slots_[idx].load(acquire);		/* (R1) */

		if (s == 0) {
			FSM_HOOK(this, FSM_HOOK_RECORD_WRITTEN);
			/*
			 * (c) (P1) release on success: publishes the record
			 * written above to every (R1). Acquire on failure: @s
			 * becomes the winner's word and we read its record
			 * right below, like (R1).
			 */
			if (slots_[idx].cmpxchg(s, slot_make(tag, rsv.off), release, acquire)) {
				FSM_HOOK(this, FSM_HOOK_SLOT_CLAIMED);
				/* (d) only the winner takes an id. */
				publish_new(sh, mine, rsv, gen, epoch, res);
				return 0;
			}
			/* Lost the slot: look at the winner like any other. */
		}
		found = match(s, tag, ips, nr);
		if (found)
			break;
	}

	/* Our record never became visible: give it back. */
	unreserve(rsv);
	if (!found)
		return -FSM_DROP_PROBE_LIMIT;
	/* A twin inserted the same stack concurrently and won. */
	sh.lost_races.fetch_add(1, relaxed);	/* statistic */
	return finish_hit(sh, found, gen, epoch, res);
}

int StackMap::insert(const u64 *ips, u32 nr, u32 epoch, fsm_insert_result *res)
{
	CpuShard &sh = this_cpu_shard();
	int ret;

	if (unlikely(!ips || !res || nr == 0 || nr > max_depth_)) {
		/* Refused before entering: not part of enters/exits. */
		sh.drops[FSM_DROP_INVALID].fetch_add(1, relaxed);	/* statistic */
		return -FSM_DROP_INVALID;
	}

	/*
	 * Reset handshake, inserter side (Dekker). (A1) announces us in this
	 * shard's enters, (A2) then reads the generation word. reset() does
	 * the mirror image: (B1) sets kResetting, (B2) then reads every
	 * shard's enters. All four are seq_cst, so in the single total order
	 * of seq_cst operations either (A2) comes after (B1) and we see
	 * kResetting and leave without touching the table, or (A2) comes
	 * before (B1), hence (A1) before (B2), and reset counts us in flight
	 * and waits for our (A3). With a weaker order on either side both
	 * could miss each other (store->load reordering: x86 store buffer,
	 * arm64 too) and reset would clear the table under our feet. On x86
	 * (A1) is one locked add and (A2) a plain load; on arm64 ldaddal and
	 * ldar.
	 */
	sh.enters.fetch_add(1, seq_cst);		/* (A1) */
	{
		const u32 g = gen_.load(seq_cst);	/* (A2), also pairs with (B3) */

		if (unlikely(g & kResetting))
			ret = -FSM_DROP_RESETTING;
		else
			ret = insert_in_gen(sh, g >> 1, ips, nr, epoch, res);
	}
	/*
	 * Statistics before (A3), so that a stats() snapshot, which reads
	 * exits first, never counts a call in exits without its outcome
	 * (hits are derived and would be over-estimated). Relaxed: they
	 * publish nothing. A hit costs no counter here at all.
	 */
	if (ret) {
		sh.drops[-ret].fetch_add(1, relaxed);
	} else if (res->flags & FSM_INSERT_NEW) {
		sh.inserts.fetch_add(1, relaxed);
	}
	/*
	 * (A3) release: every access we made to slots, records, index and hit
	 * counters happens before reset's (B2) acquire load that counts this
	 * exit, hence before reset clears them.
	 */
	sh.exits.fetch_add(1, release);
	return ret;
}

u32 StackMap::nr_ids() const
{
	return next_id_.load(acquire);
}

int StackMap::lookup_id(u32 id, const u64 **ips, u32 *nr, u64 *hits) const
{
	if (id >= capacity_)
		return -22;
	/* (R2) acquire, pairs with (P2): the record is complete. */
	const u32 o = index_[id].load(acquire);
	if (!o)
		return -2;

	const Record *rec = record_at(o - 1);
	FSM_ASSERT(rec->nr >= 1 && rec->nr <= max_depth_);
	if (ips)
		*ips = rec->ips();
	if (nr)
		*nr = rec->nr;
	if (hits) {
		u64 sum = 0;

		/* Relaxed: approximate while inserts run. */
		for (u32 s = 0; s < nr_hit_shards_; s++)
			sum += hit_counts_[(u64)s * capacity_ + id].load(relaxed);
		*hits = sum;
	}
	return 0;
}

void StackMap::stats(struct fsm_map_stats *st) const
{
	const u64 a = alloc_.load(relaxed);

	zero_bytes(st, sizeof(*st));
	st->bits = bits_;
	st->generation = gen_.load(relaxed) >> 1;
	st->entries = next_id_.load(relaxed);
	st->capacity = capacity_;
	st->table_slots = table_mask_ + 1;
	st->max_depth = max_depth_;
	st->arena_used = (u64)alloc_units(a) * 8;
	st->arena_size = (u64)arena_units_ * 8;
	st->memory_bytes = memory_bytes_;
	/*
	 * Relaxed sums of the per-CPU shards: statistics only. exits is read
	 * before the outcomes of each shard; outcomes are counted before the
	 * exit (see insert()), so while inserts run the derived hit count
	 * can only be under-estimated (clamped at 0), never inflated.
	 */
	u64 exits = 0, outcomes = 0;
	for (u32 c = 0; c < nr_shards_; c++) {
		CpuShard &sh = shards_[c];

		exits += sh.exits.load(acquire);
		const u64 inserts = sh.inserts.load(relaxed);
		st->inserts += inserts;
		outcomes += inserts;
		st->lost_races += sh.lost_races.load(relaxed);
		for (u32 r = 1; r < FSM_DROP_NR_REASONS; r++) {
			const u64 d = sh.drops[r].load(relaxed);

			st->drops[r] += d;
			if (r != FSM_DROP_INVALID)
				outcomes += d;
		}
	}
	st->hits = exits > outcomes ? exits - outcomes : 0;
}

/* Clear @bytes at @p, letting others run between chunks (task context). */
void StackMap::clear_chunked(void *p, u64 bytes)
{
	u8 *b = static_cast<u8 *>(p);

	while (bytes) {
		const u64 n = min(bytes, kResetClearChunk);

		zero_bytes(b, n);
		b += n;
		bytes -= n;
		fsm_plat_yield();
	}
}

/*
 * reset - start a new generation; inserters never block on it.
 *
 * Statistics in the CPU shards (hits, inserts, drops, lost_races) are
 * cumulative across generations; ids, records and per-stack hit counters
 * belong to one generation and are cleared. The arena is not cleared:
 * records are fully rewritten before they are published.
 */
u32 StackMap::reset()
{
	const u32 g = gen_.load(relaxed);	/* only reset() writes it */

	FSM_ASSERT(!(g & kResetting));
	/*
	 * (B1) seq_cst, then (B2) seq_cst: the reset side of the Dekker
	 * handshake explained at (A1)/(A2) in insert(). After (B1) every
	 * inserter that reaches (A2) drops with FSM_DROP_RESETTING; any
	 * inserter that read the old generation is counted in its shard's
	 * enters at (B2).
	 */
	gen_.store(g | kResetting, seq_cst);		/* (B1) */
	for (u32 c = 0; c < nr_shards_; c++) {
		CpuShard &sh = shards_[c];

		for (;;) {
			/*
			 * (B2) Read exits, then enters. Acquire on exits pairs
			 * with (A3): the table accesses of every insert
			 * counted here happen before our clearing, and so
			 * does its (A1), which the later read of enters must
			 * therefore see (coherence): enters >= exits. Equal
			 * means every insert counted in enters has left. The
			 * seq_cst read of enters is the Dekker half that pairs
			 * with (A1)/(A2): an insert that read the old
			 * generation is counted in it. Seeing them equal once
			 * is enough: later arrivals see kResetting.
			 * The wait ends because inserts are bounded; it is
			 * long only if an inserter is preempted inside
			 * insert(), which kernel callers prevent (tracepoint
			 * probes run with preemption off).
			 */
			const u64 x = sh.exits.load(acquire);		/* (B2) */
			const u64 e = sh.enters.load(seq_cst);		/* (B2) */

			FSM_ASSERT(e >= x);
			if (e == x)
				break;
			fsm_plat_yield();
		}
	}

	/* No inserter is inside the old generation: plain clearing is safe. */
	clear_chunked(slots_, ((u64)table_mask_ + 1) * 8);
	clear_chunked(index_, (u64)capacity_ * 4);
	clear_chunked(hit_counts_, (u64)capacity_ * 4 * nr_hit_shards_);
	alloc_.init(0);
	next_id_.init(0);
	fsm_plat_yield();	/* reset always may sleep, even for tiny maps */

	u32 ng = ((g >> 1) + 1) & 0x7fffffffu;
	if (ng == 0)
		ng = 1;		/* generation 0 is never used */
	/*
	 * (B3) release: the cleared table, index, counters and alloc word
	 * happen before any inserter that reads the new word at (A2), and
	 * before readers the caller orders after us.
	 */
	gen_.store(ng << 1, release);
	return ng;
}

} /* namespace fsm */
