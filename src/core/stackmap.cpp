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
 *   (S)  scrub cmpxchg, relaxed      stale word -> 0, after (B3)
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

/*
 * Slot word: key << 32 | (offset + 1), key = tag24 << 8 | gen8 (stackmap.h).
 * slot_key() is the whole high half: one compare checks tag and generation.
 */
constexpr u32 gen8(u32 gen) { return gen & 0xffu; }
constexpr u32 slot_key_make(u32 tag, u32 gen) { return tag << 8 | gen8(gen); }
constexpr u64 slot_make(u32 key, u32 off) { return (u64)key << 32 | ((u64)off + 1); }
constexpr u32 slot_key(u64 s) { return (u32)(s >> 32); }
constexpr u32 slot_off(u64 s) { return (u32)s - 1; }
/* Empty in generation @gen: never written (0) or written by another one. */
constexpr bool slot_free(u64 s, u32 gen) { return s == 0 || (slot_key(s) & 0xffu) != gen8(gen); }

/* Index word: gen << 32 | (offset + 1); 0 = unpublished. */
constexpr u64 index_make(u32 gen, u32 off) { return (u64)gen << 32 | ((u64)off + 1); }

/*
 * Hit-cache word: gen8 << 56 | id << 32 | count; 0 = unused (a used word
 * has count >= 1). Ids are < 2^FSM_BITS_MAX <= 2^24.
 */
static_assert(FSM_BITS_MAX <= 24, "ids must fit the 24-bit id field of a hit-cache word");
constexpr u64 hc_key(u32 gen, u32 id) { return ((u64)gen8(gen) << 24 | id) << 32; }
constexpr u64 hc_key_of(u64 w) { return w & ~0xffffffffull; }
constexpr u32 hc_id(u64 w) { return (u32)(w >> 32) & 0xffffffu; }
constexpr u32 hc_gen8(u64 w) { return (u32)(w >> 56); }
constexpr u32 hc_count(u64 w) { return (u32)w; }
/*
 * The home way of @id in its set (of 2^@set_bits sets): the bits of the id
 * above the set number, so that the ids of a set spread over its ways and an id that
 * stays resident is found with one load (count_hit()).
 */
constexpr u32 hc_home(u32 id, u32 set_bits) { return (id >> set_bits) & (kHitCacheWays - 1); }

/*
 * Definition-stamp word (def_claim()): hc_key(gen, id) | position, plus
 * kDefDirty, a bit of the id field that no id uses: the id was used on
 * this CPU since the definition the stamp stands for.
 */
static_assert(FSM_BITS_MAX <= 23, "ids must leave the dirty bit of a stamp free");
constexpr u64 kDefDirty = 1ull << 55;
constexpr u64 ds_key_of(u64 w) { return w & ~(kDefDirty | 0xffffffffull); }
constexpr u32 ds_id(u64 w) { return hc_id(w) & ((1u << FSM_BITS_MAX) - 1); }

constexpr u32 alloc_count(u64 w) { return (u32)(w >> 32); }
constexpr u32 alloc_units(u64 w) { return (u32)w; }
constexpr u64 kAllocOneEntry = 1ull << 32;

/* The tag is the top 24 bits of the hash, never 0 (an occupied slot's high
 * half is non-zero, which makes a torn or stray word easy to spot). */
constexpr u32 hash_tag(u64 h)
{
	u32 t = (u32)(h >> 40);

	return t ? t : 1;
}

/* Byte offsets of the parts of the block (create() and memory_bytes()). */
struct Layout {
	u64 shards, slots, index, hit_total, hit_cache, def_stamp, arena, total;
	u64 arena_bytes;
	u32 nr_shards, hc_entries, ds_entries;
};

/* Return: false if @p is invalid. */
bool layout_of(const fsm_map_params &p, u32 nr_cpus, Layout &l)
{
	constexpr u32 kKnownTestFlags = FSM_TEST_HASH_SAME_BUCKET | FSM_TEST_HASH_SAME_TAG;

	if (p.bits < FSM_BITS_MIN || p.bits > FSM_BITS_MAX ||
	    p.max_depth < 1 || p.max_depth > FSM_MAX_MAP_DEPTH ||
	    (p.test_flags & ~kKnownTestFlags))
		return false;

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
	if (arena_bytes < max_record || arena_bytes > capacity * max_record)
		return false;
	static_assert(((4ull << FSM_BITS_MIN) % kCacheLine) == 0,
		      "per-id arrays must end on a cache line");
	static_assert((1ull << FSM_BITS_MAX) * (kRecordHeaderBytes + 8 * FSM_MAX_MAP_DEPTH) / 8
		      < 0xffffffffull, "arena offsets must fit in 32 bits");

	l.nr_shards = nr_cpus ? nr_cpus : 1;
	l.hc_entries = (u32)min<u64>(capacity, kHitCacheEntries);
	l.ds_entries = (u32)min<u64>(capacity, kDefStampEntries);
	l.arena_bytes = arena_bytes;
	/*
	 * Layout of the single block; every part starts on a cache line,
	 * the shards and each CPU's hit cache on a kShardAlign boundary
	 * (hc_entries * 8 >= 512 is a multiple of it).
	 */
	static_assert(((8ull << FSM_BITS_MIN) % kShardAlign) == 0,
		      "each CPU's hit cache must fill whole 128-byte pairs");
	static_assert(kHitCacheWays * 8 == kCacheLine &&
		      (1u << FSM_BITS_MIN) % kHitCacheWays == 0,
		      "a hit-cache set is one whole cache line");
	static_assert(kDefStampWays * 8 == kCacheLine &&
		      (1u << FSM_BITS_MIN) % kDefStampWays == 0 &&
		      ((8ull << FSM_BITS_MIN) % kShardAlign) == 0,
		      "a stamp set is one whole cache line, each CPU's table whole 128-byte pairs");
	u64 off = align_up(sizeof(StackMap), kShardAlign);
	l.shards = off;
	off += (u64)l.nr_shards * sizeof(CpuShard);
	l.hit_cache = off;
	off += (u64)l.nr_shards * l.hc_entries * 8;
	l.def_stamp = off;
	off += (u64)l.nr_shards * l.ds_entries * 8;
	l.slots = off;
	off += align_up(table_slots * 8, kCacheLine);
	l.index = off;
	off += align_up(capacity * 8, kCacheLine);
	l.hit_total = off;
	off += align_up(capacity * 4, kCacheLine);
	l.arena = off;
	off += align_up(arena_bytes, kCacheLine);
	/* fsm_plat_alloc guarantees 8-byte alignment only: over-allocate. */
	l.total = off + kShardAlign;
	return true;
}

/*
 * Compare two stacks of @nr frames, every one of them (a hit must never
 * return another stack's id): two frames per iteration, a branch for each
 * frame. On a hit no branch is taken, so all are predicted; a match of the
 * 24-bit tag (and the generation) on a different stack, about a 1-in-2^24
 * event per compared slot, leaves at the first difference. The kernel
 * compiles this without vector registers (-O2, general registers only), and
 * there a load and a fused compare-and-branch per frame is fewer
 * instructions than the branch-free accumulation (load, xor, or, and a
 * loop step per frame) it replaces; fewer instructions per hit let the
 * cache misses of consecutive hits overlap more: the user-space bench's
 * Zipf hit, built as the module is, went from 24.5 to 22.9 ns (seed 51).
 * An accumulation in four registers was slower (25.5 ns).
 */
FSM_ALWAYS_INLINE bool frames_equal(const u64 *a, const u64 *b, u32 nr)
{
	u32 i = 0;

	for (; i + 2 <= nr; i += 2)
		if (a[i] != b[i] || a[i + 1] != b[i + 1])
			return false;
	return i == nr || a[i] == b[i];
}

} /* namespace */

u64 StackMap::memory_bytes(const fsm_map_params &p, u32 nr_cpus)
{
	Layout l;

	return layout_of(p, nr_cpus, l) ? l.total : 0;
}

StackMap *StackMap::create(const fsm_map_params &p, int *err)
{
	Layout l;

	if (!layout_of(p, fsm_plat_nr_cpus(), l)) {
		*err = -22;
		return nullptr;
	}
	void *block = fsm_plat_alloc(l.total);
	if (!block) {
		*err = -12;
		return nullptr;
	}
	u8 *base = reinterpret_cast<u8 *>(align_up(reinterpret_cast<uptr>(block), kShardAlign));
	const u64 capacity = 1ull << p.bits;

	StackMap *m = new (base, place) StackMap();
	m->bits_ = p.bits;
	m->capacity_ = (u32)capacity;
	m->table_mask_ = (u32)(capacity * 2 - 1);
	m->max_depth_ = p.max_depth;
	m->arena_units_ = (u32)(l.arena_bytes / 8);
	m->nr_shards_ = l.nr_shards;
	m->hit_cache_mask_ = l.hc_entries - 1;
	m->hit_set_mask_ = l.hc_entries / kHitCacheWays - 1;
	m->hit_set_bits_ = (u32)__builtin_ctz(l.hc_entries / kHitCacheWays);
	m->def_stamp_mask_ = l.ds_entries - 1;
	m->def_set_mask_ = l.ds_entries / kDefStampWays - 1;
	m->key_ = hash_key_expand(p.key[0], p.key[1]);
	m->hash_and_ = ~0ull;
	m->hash_or_ = 0;
	if (p.test_flags & FSM_TEST_HASH_SAME_BUCKET)
		m->hash_and_ &= ~0ull << 32;	/* bucket bits 0, tag kept */
	if (p.test_flags & FSM_TEST_HASH_SAME_TAG) {
		m->hash_and_ = 0;
		m->hash_or_ = 0x5eed000000000000ull;
	}
	m->shards_ = reinterpret_cast<CpuShard *>(base + l.shards);
	m->hit_cache_ = reinterpret_cast<Atomic<u64> *>(base + l.hit_cache);
	m->def_stamp_ = reinterpret_cast<Atomic<u64> *>(base + l.def_stamp);
	m->slots_ = reinterpret_cast<Atomic<u64> *>(base + l.slots);
	m->index_ = reinterpret_cast<Atomic<u64> *>(base + l.index);
	m->hit_total_ = reinterpret_cast<Atomic<u32> *>(base + l.hit_total);
	m->arena_ = reinterpret_cast<u64 *>(base + l.arena);
	m->block_ = block;
	m->memory_bytes_ = l.total;

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

/* Shard and hit cache of this insert. fsm::plat_cpu() is inline. */
FSM_ALWAYS_INLINE u32 StackMap::this_cpu() const
{
	u32 cpu = plat_cpu();

	if (unlikely(cpu >= nr_shards_))
		cpu %= nr_shards_;
	return cpu;
}

/*
 * count_hit - count one hit of @id (generation @gen) on CPU @cpu.
 *
 * Each CPU has its own cache of per-stack hit counts, 8-way set
 * associative: set id & hit_set_mask_ of hit_cache_[cpu] is one 64-byte
 * line of kHitCacheWays words, each (gen8, id, count) or 0. A hit on a
 * resident id adds 1 with a CPU-local cmpxchg on its word (cpu_cmpxchg(),
 * platform.h): a line only this CPU writes (each CPU's cache is 128-byte
 * aligned, whole lines per set; reset()'s scrub, from any CPU, only turns
 * words of an older generation into 0, and a word an insert in flight
 * writes is of the current one), so in
 * steady state, whatever the number of CPUs, the hit path writes no line
 * that another CPU writes, as long as no more than kHitCacheWays hot ids of
 * this CPU share a set (a direct-mapped cache failed that for two: ids
 * that collide evicted each other on every hit).
 *
 * Home way: each id has one way of its set where it is looked for first,
 * the bits of the id above the set number (hc_home()), so that with no
 * more ids than the cache has words (kHitCacheEntries: 4096 a CPU) every
 * id has a way of its own. A hit there is one load, one compare that
 * predicts well and the cmpxchg; only an id found elsewhere pays for the
 * scan of the set (hit_cache_scan(), out of line). Scanning all eight ways
 * on every hit, as this cache first did, cost a hit of 4096 Zipf stacks
 * about 9 ns even with every branch predicted (a chain of eight dependent
 * compares after the id's load), plus a mispredicted exit when the way
 * varies: 40 ns against 21 for the same hit without a hit count
 * (user-space bench, x86-64), the seed's being 51.
 *
 * A miss (the id is not in its set, or its count is full) takes a way:
 * its home way if that is empty, stale (older generation) or held by a
 * guest (an id away from its own home), so that ids at home stay; else
 * an empty or stale way if the set has one, else a pseudo-random victim,
 * (id + sum of the set's counts) mod kHitCacheWays (the full way itself
 * when the count is full): no replacement state to write, and
 * the sum changes with every hit in the set, so a victim choice is not
 * repeated and a cold id with a large count is evicted in time too (unlike
 * least-frequently-used). The way becomes (gen8, id, 1) first and the
 * evicted count of the current generation is then added to
 * hit_total_[old id] (a shared line, only on misses).
 *
 * The lookup reads the set's words with relaxed loads, one line. Two
 * contexts of this CPU (an NMI nested on an insert) may both miss on the
 * same id and put it into two ways: counts stay disjoint, hits_of() adds
 * every way that holds the id, the lookup uses the home way if it holds
 * the id, else the first one.
 *
 * Why cmpxchg and not load + store: an NMI or interrupt on this CPU (or,
 * in user space, a thread that shares the CPU number) may run count_hit()
 * on the same word between our load and our write. With a plain store we
 * could write back a count the nested call already flushed, counting it
 * twice. With cmpxchg the loser's increment is simply lost: counts stay a
 * lower bound, never inflated. One attempt, no retry (bounded: at most
 * kHitCacheWays + 3 loads and one cmpxchg). The cmpxchg need not be
 * atomic against other CPUs, only against contexts nested on this one,
 * hence cpu_cmpxchg(): without the lock prefix on x86-64 in the kernel
 * (every caller of insert() runs with preemption off, so the CPU cannot
 * change under it), an ordinary atomic elsewhere.
 *
 * Ordering: these are statistics and publish nothing, but a reader
 * (hits_of()) must not count an evicted count twice: once in hit_total_
 * and once more in the cache word it was evicted from. The eviction
 * replaces the word (cmpxchg) and then adds to hit_total_ with a release
 * fetch_add; hits_of() loads hit_total_ with acquire before it loads the
 * words. If the reader's acquire load sees the added count (or any later
 * value: later fetch_adds are RMWs and continue the release sequence), it
 * synchronizes with the release, so the word replacement happens before
 * its word loads and the evicted count is no longer there. A reader that
 * does not see the add may miss the count for a moment, never see it
 * twice. With relaxed on both sides a weakly ordered CPU (arm64) could let
 * the reader see the new total and the old word. The hit path itself stays
 * relaxed. hit_total_[id] was zeroed by the publisher before (P2)/(P3), i.e. before
 * any inserter could learn @id, so no flush of this generation precedes it.
 */
FSM_ALWAYS_INLINE void StackMap::count_hit(u32 cpu, u32 gen, u32 id)
{
	Atomic<u64> *set = &hit_cache_[(u64)cpu * (hit_cache_mask_ + 1) +
				       (u64)(id & hit_set_mask_) * kHitCacheWays];
	Atomic<u64> &home = set[hc_home(id, hit_set_bits_)];
	u64 cur = home.load(relaxed);

	if (likely(hc_key_of(cur) == hc_key(gen, id) && hc_count(cur) != 0xffffffffu)) {
		(void)home.cpu_cmpxchg(cur, cur + 1);
		return;
	}
	hit_cache_scan(set, gen, id);
}

/*
 * hit_cache_scan - count_hit() for an id not counted in its home way: look
 * for it in the whole set, else take a way for it (see count_hit()).
 */
FSM_NOINLINE void StackMap::hit_cache_scan(Atomic<u64> *set, u32 gen, u32 id)
{
	const u64 key = hc_key(gen, id);
	const u32 home = hc_home(id, hit_set_bits_);
	u32 victim = kHitCacheWays, free = kHitCacheWays, sum = id;
	u64 cur;

	for (u32 i = 0; i < kHitCacheWays; i++) {
		cur = set[i].load(relaxed);
		if (hc_key_of(cur) == key) {
			if (likely(hc_count(cur) != 0xffffffffu)) {
				(void)set[i].cpu_cmpxchg(cur, cur + 1);
				return;
			}
			victim = i;	/* full: flush it, start again at 1 */
			break;
		}
		if (free == kHitCacheWays && (!cur || hc_gen8(cur) != gen8(gen)))
			free = i;	/* empty or stale */
		sum += hc_count(cur);
	}
	if (victim == kHitCacheWays) {
		/* a new id: home if not held by an id at home, else see count_hit() */
		cur = set[home].load(relaxed);
		if (!cur || hc_gen8(cur) != gen8(gen) ||
		    hc_home(hc_id(cur), hit_set_bits_) != home)
			victim = home;
		else if (free != kHitCacheWays)
			victim = free;
		else
			victim = sum & (kHitCacheWays - 1);
	}
	cur = set[victim].load(relaxed);
	if (set[victim].cpu_cmpxchg(cur, key | 1) && cur &&
	    hc_gen8(cur) == gen8(gen))
		add_hit_total(hc_id(cur), hc_count(cur));
}

/*
 * Add an evicted way's count to hit_total_[id], saturating at 2^32 - 1: a
 * u32 total that wrapped (one stack, 2^32 hits in one generation: hours at
 * high event rates) would turn the lower bound into a small number. A
 * bounded number of cmpxchg attempts; if every one loses against other
 * CPUs' flushes, the count is dropped (still a lower bound, never
 * inflated). A successful cmpxchg is an RMW with release order, so it
 * continues the release sequence that hits_of()'s acquire load relies on,
 * exactly as the fetch_add it replaces (see count_hit()).
 */
void StackMap::add_hit_total(u32 id, u32 n)
{
	u32 old = hit_total_[id].load(relaxed);

	for (u32 tries = 0; tries < kHitTotalTries; tries++) {
		const u32 sum = hit_sat_add(old, n);

		if (sum == old || hit_total_[id].cmpxchg(old, sum, release, relaxed))
			return;
	}
}

/* Hits of @id in generation @gen: flushed total plus every CPU's cache. */
u64 StackMap::hits_of(u32 gen, u32 id) const
{
	const u64 key = hc_key(gen, id);
	/* acquire: pairs with count_hit()'s release fetch_add (see there) */
	u64 sum = hit_total_[id].load(acquire);

	for (u32 c = 0; c < nr_shards_; c++) {
		const Atomic<u64> *set =
			&hit_cache_[(u64)c * (hit_cache_mask_ + 1) +
				    (u64)(id & hit_set_mask_) * kHitCacheWays];

		for (u32 i = 0; i < kHitCacheWays; i++) {
			const u64 w = set[i].load(relaxed);

			if (hc_key_of(w) == key)
				sum += hc_count(w);
		}
	}
	return sum;
}

/*
 * Definition stamps (def_claim(), def_unclaim()).
 *
 * The trace carries an id's stack once per stretch of trace (the caller
 * writes it, a stack_def record after the id record), not once per use.
 * A ring buffer in overwrite mode drops its oldest pages, definitions
 * among them, and keeps the ids that used them. So the caller asks, at
 * each use, whether the last definition of the id in *this CPU's* buffer
 * is still recent enough to outlive the use, and writes another one when
 * it is not. Each CPU's buffer wraps on its own (a busy CPU a hundred
 * times while an idle one keeps the whole run), so each CPU keeps its own
 * stamps and defines its own ids in its own buffer: a definition that only
 * another CPU's buffer holds may be gone from there while this one's uses
 * are still kept.
 *
 * A stamp word is hc_key(gen, id) | position, the position (low 32 bits)
 * being the caller's write position in this CPU's buffer when it asked
 * (@now, a count of the buffer's records, say). 0 is an empty way (a word
 * of generation 0 mod 256, id 0 and position 0 reads as empty too: one
 * extra definition). The set of an id is id & def_set_mask_ of the CPU's
 * table, one 64-byte line of kDefStampWays words, like the hit cache.
 *
 * Concurrency: only contexts on the CPU whose table it is write it (a task,
 * an interrupt or NMI nested on it; in user space, threads that share a
 * CPU number). Relaxed throughout: a stamp publishes nothing, it only
 * suppresses definitions, and a stamp is only ever written by the context
 * that is about to write the definition it stands for. The word is
 * replaced with a cmpxchg against the value the scan read, not a store: a
 * claim nested on this CPU between our scan and our write keeps the way
 * it wrote (its stamp is as true as ours), and ours is simply not kept:
 * the next use on this CPU writes one definition more than needed. A
 * stamp never claims more than its writer did: the caller passes a
 * position read before it writes the definition (so the definition is at
 * or after it), and calls def_unclaim() when that write failed. Every
 * race therefore costs at most a definition too many.
 *
 * Generations: a word of another generation never matches (gen8 differs)
 * and is free for the taking; reset() scrubs those words as it scrubs the
 * hit caches. A claim racing the scrub may leave one word of an older
 * generation behind, free as well; aliasing would take 256 resets without
 * a scrub reaching it, and each reset scrubs every table.
 */
FSM_ALWAYS_INLINE Atomic<u64> *StackMap::def_set(u32 cpu, u32 id)
{
	return &def_stamp_[(u64)cpu * (def_stamp_mask_ + 1) +
			   (u64)(id & def_set_mask_) * kDefStampWays];
}

bool StackMap::def_claim(u32 id, u32 gen, u32 now, u32 horizon)
{
	const u32 cpu = this_cpu();
	Atomic<u64> *set = def_set(cpu, id);
	const u64 key = hc_key(gen, id);
	u32 victim = kDefStampWays, victim_age = 0, victim_rank = 0;
	bool victim_free = false, known = false;
	u64 cur, seen = 0;

	for (u32 i = 0; i < kDefStampWays; i++) {
		cur = set[i].load(relaxed);
		/*
		 * Unsigned ages: a stamp "ahead" of @now (the caller's count
		 * restarted) is very old, hence due.
		 */
		const u32 age = now - (u32)cur;

		if (ds_key_of(cur) == key) {
			if (age < horizon) {
				/*
				 * Defined recently: write nothing, but mark
				 * the use once, so that def_sweep() defines
				 * the id again after it if no later use does.
				 */
				if (!(cur & kDefDirty))
					(void)set[i].cmpxchg(cur, cur | kDefDirty,
							     relaxed, relaxed);
				return false;
			}
			victim = i;
			seen = cur;
			known = true;
			break;
		}
		/*
		 * The way to take if the id has none: an empty or stale one
		 * (another generation); else a clean one (its id not used
		 * here since its definition: cold, and nothing for the sweep
		 * to do), the one furthest behind; else the dirty one
		 * furthest behind (its pending sweep is lost: one of the
		 * cases eviction costs, see def_sweep()).
		 */
		if (victim_free)
			continue;
		const u32 rank = !cur || hc_gen8(cur) != gen8(gen) ? 2 :
				 !(cur & kDefDirty) ? 1 : 0;
		if (rank == 2) {
			victim = i;
			seen = cur;
			victim_free = true;
		} else if (victim == kDefStampWays || rank > victim_rank ||
			   (rank == victim_rank && age > victim_age)) {
			victim = i;
			seen = cur;
			victim_rank = rank;
			victim_age = age;
		}
	}
	(void)set[victim].cmpxchg(seen, key | now, relaxed, relaxed);
	/* statistics of the claims that ask for a definition */
	if (known)
		shards_[cpu].defs_aged.fetch_add(1, relaxed);
	else
		shards_[cpu].defs_new.fetch_add(1, relaxed);
	return true;
}

void StackMap::def_unclaim(u32 id, u32 gen, u32 now)
{
	Atomic<u64> *set = def_set(this_cpu(), id);
	const u64 mine = hc_key(gen, id) | now;

	for (u32 i = 0; i < kDefStampWays; i++) {
		u64 cur = set[i].load(relaxed);

		if ((cur & ~kDefDirty) == mine) {
			(void)set[i].cmpxchg(cur, 0, relaxed, relaxed);
			return;
		}
	}
}

/*
 * def_sweep - the definitions after an id's last use (see def_claim()).
 *
 * def_claim() redefines an id at a use whose last definition on this CPU
 * is a horizon behind. That leaves the uses of an id that are not
 * followed by another use: they rely on a definition written before them,
 * which the buffer drops first. So the stamps of ids used since their
 * definition carry kDefDirty, and this sweep, called as records are
 * written, walks this CPU's stamp table and has the definition of each
 * dirty id whose stamp is @horizon or more behind written once more, after
 * those uses, and the stamp cleaned. If the id is used later, def_claim()
 * marks it again. A use u whose last definition is d (u - d < horizon)
 * then has a definition after it by d + horizon + (a visit of its set),
 * or was the last use of its id before a later use that redefined it.
 *
 * Pace: the sets are visited in order, a round of all of them per
 * @horizon / 2 positions: sweep_pos is where the sweep stands (the
 * positions it has covered, remainder included); a call visits the sets
 * due by @now, at most kSweepMaxSets, and writes at most kSweepMaxDefs
 * definitions (a set left half done is visited again next time). A CPU
 * that fell behind by more than a round starts a new round from where it
 * is. The cap is what a small buffer meets first: with 512 sets, a
 * horizon of 640 positions (a 64 KiB buffer of 100-byte records at 50%)
 * needs 1.6 sets a position; 16 a call keep up with one call every 10
 * positions; a buffer of a few pages, or one whose records are mostly
 * not the module's, may see the sweep fall behind (then uses of ids not
 * used again can outlive their definitions, as without it).
 *
 * Safety: the sweep enters the insert window (A1)/(A2) as an insert does,
 * so no reset runs while it reads index[] and a record and while @fn copies
 * the frames; it reads index[id] with (R2) acquire (pairs with (P2)): the
 * record is complete, and of the generation the stamp names (gen8 and the
 * full generation in the index word). The stamp is cleaned with a cmpxchg
 * against the dirty word seen: a use nested on this CPU that re-marked or
 * redefined it in between keeps its word, and this id is skipped (its
 * definition is that use's business). If @fn fails (the buffer refused
 * the record) the dirty word is put back the same way.
 *
 * Aliasing: positions are compared modulo 2^32, so a stamp whose id is
 * not used for k * 2^32 + [0, horizon) positions would read fresh. The
 * sweep empties every clean stamp it finds a horizon old (a dirty one it
 * cleans at @now): a stamp is at most a horizon and a round (1.5 horizons)
 * old while the sweep keeps pace. Left: a CPU whose sweep does not run
 * (the module writes nothing there) for 2^32 positions of other records.
 */
u32 StackMap::def_sweep(u32 now, u32 horizon, fsm_def_fn fn, void *ctx)
{
	const u32 cpu = this_cpu();
	CpuShard &sh = shards_[cpu];
	const u32 nsets = def_set_mask_ + 1;
	u32 wrote = 0;

	if (!horizon)
		return 0;
	/*
	 * Sets due: a round of nsets per horizon / 2 positions, i.e.
	 * elapsed * 2 * nsets / horizon (64-bit: no overflow); the
	 * remainder stays in sweep_pos for the next call.
	 */
	u32 pos = sh.sweep_pos.load(relaxed);
	u64 due = (u64)(now - pos) * 2 * nsets / horizon;

	if (due == 0)
		return 0;
	if (due > nsets) {
		/*
		 * More than a round behind (or @now behind sweep_pos: a
		 * nested call moved it on, or the caller's count jumped):
		 * one round from here.
		 */
		due = nsets;
		pos = now - horizon / 2;
	}
	due = min<u64>(due, kSweepMaxSets);
	sh.enters.fetch_add(1, seq_cst);		/* (A1), see insert() */
	const u32 g = gen_.load(seq_cst);		/* (A2) */
	u32 set_no = sh.sweep_set.load(relaxed), visited = 0;
	bool stop = false;

	if (!(g & kResetting)) {
		const u32 gen = g >> 1;

		for (; visited < due && !stop; visited++) {
			Atomic<u64> *set = def_set(cpu, set_no);

			for (u32 i = 0; i < kDefStampWays && !stop; i++) {
				u64 w = set[i].load(relaxed);

				if (!w || hc_gen8(w) != gen8(gen) ||
				    now - (u32)w < horizon)
					continue;
				if (!(w & kDefDirty)) {
					/*
					 * A clean stamp a horizon old says
					 * "due", as an empty way does; left
					 * alone, its age would read fresh
					 * again once positions wrap (2^32).
					 * A nested claim that changed it
					 * keeps its word.
					 */
					(void)set[i].cmpxchg(w, 0, relaxed, relaxed);
					continue;
				}
				const u32 id = ds_id(w);
				if (id >= capacity_)
					continue;
				/* (R2) acquire, pairs with (P2) */
				const u64 o = index_[id].load(acquire);
				if ((u32)o == 0 || (u32)(o >> 32) != gen)
					continue;
				const u64 dirty = w;
				u64 clean = ds_key_of(w) | now;
				if (!set[i].cmpxchg(w, clean, relaxed, relaxed))
					continue;	/* a nested use changed it */
				const Record *rec = record_at((u32)o - 1);
				if (fn(ctx, id, gen, rec->ips(), rec->nr)) {
					stop = ++wrote == kSweepMaxDefs;
				} else {
					/* the buffer refuses: try later */
					(void)set[i].cmpxchg(clean, dirty, relaxed, relaxed);
					stop = true;
				}
			}
			if (stop)
				break;	/* this set again next time */
			set_no = (set_no + 1) & def_set_mask_;
		}
		sh.sweep_set.store(set_no, relaxed);
		sh.sweep_pos.store(pos + (u32)((u64)visited * horizon / (2 * nsets)), relaxed);
		if (wrote)
			sh.defs_swept.fetch_add(wrote, relaxed);	/* statistic */
	}
	/*
	 * Before (A3), as an insert counts its outcome: stats() derives the
	 * hits from exits, and a sweep is no lookup.
	 */
	sh.sweeps.fetch_add(1, relaxed);
	sh.exits.fetch_add(1, release);			/* (A3) */
	return wrote;
}

u32 StackMap::def_sweep_lag(u32 now, u32 horizon) const
{
	if (!horizon)
		return 0;
	/* a round per horizon / 2 positions: 512ths of a horizon */
	const u32 pos = shards_[this_cpu()].sweep_pos.load(relaxed);
	const u64 lag = (u64)(now - pos) * 512 / horizon;

	return (u32)min<u64>(lag, 256);
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
void StackMap::publish_new(u32 cpu, Record *rec, const Reservation &rsv,
			   u32 gen, u32 epoch, fsm_insert_result *res)
{
	const u32 id = next_id_.fetch_add(1, relaxed);

	FSM_ASSERT(id < capacity_);
	FSM_HOOK(this, FSM_HOOK_ID_TAKEN);
	/*
	 * The flushed hit count of @id may hold a count of an older
	 * generation: zero it before anyone can learn @id. Ordered before
	 * every flush of this generation by (P2)/(P3) (see count_hit()).
	 */
	hit_total_[id].store(0, relaxed);
	/*
	 * (P2) release: the record (written by us) is complete before a
	 * reader that finds index[id] with (R2) in lookup_id() looks at it.
	 * The generation in the word tells lookup_id() an entry of an older
	 * generation (not scrubbed yet) from ours.
	 */
	index_[id].store(index_make(gen, rsv.off), release);
	FSM_HOOK(this, FSM_HOOK_INDEX_PUBLISHED);
	/*
	 * (P3) release, after (P2): an inserter that reads the id with (R3)
	 * may return it, and whoever learns the id from it (a trace reader)
	 * must find index[id] already set. Pairs with (R3) in finish_hit().
	 */
	rec->id.store(id, release);

	count_hit(cpu, gen, id);
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
FSM_ALWAYS_INLINE int StackMap::finish_hit(u32 cpu, Record *rec, u32 gen,
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

	count_hit(cpu, gen, id);
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
 * match - does slot word @s hold the stack @ips/@nr (with slot key @key:
 * hash tag and generation)? The key is compared first, frames only on a
 * key match: a stale slot (another generation) never matches, and its
 * record, which may be reused by now, is never read. The record is
 * complete because @s was read with (R1) or a failed cmpxchg (acquire).
 */
FSM_ALWAYS_INLINE Record *StackMap::match(u64 s, u32 key, const u64 *ips, u32 nr)
{
	if (slot_key(s) != key)
		return nullptr;
	Record *rec = record_at(slot_off(s));
	if (rec->nr != nr || !frames_equal(rec->ips(), ips, nr))
		return nullptr;
	return rec;
}

/*
 * insert_in_gen - the body of insert() once we are known to be inside
 * generation @gen (counted in enters: no reset can open a new generation
 * until we leave). @h is the stack's hash. This is the hit path; the first
 * empty slot (0 or stale) hands over to insert_miss().
 */
FSM_ALWAYS_INLINE int StackMap::insert_in_gen(u32 cpu, u32 gen, u64 h, const u64 *ips,
					      u32 nr, u32 epoch, fsm_insert_result *res)
{
	const u32 key = slot_key_make(hash_tag(h), gen);
	u32 idx = (u32)h & table_mask_;

	for (u32 probe = 0; probe < kProbeLimit; probe++, idx = (idx + 1) & table_mask_) {
		/*
		 * (R1) acquire, pairs with (P1): if the slot is occupied, the
		 * record it points to is completely written.
		 */
		const u64 s = slots_[idx].load(acquire);

		if (Record *rec = match(s, key, ips, nr))
			return finish_hit(cpu, rec, gen, epoch, res);
		if (unlikely(slot_free(s, gen)))
			return insert_miss(cpu, gen, ips, nr, epoch, key, idx, probe, res);
	}
	return -FSM_DROP_PROBE_LIMIT;
}

/*
 * insert_miss - the stack was not found before the empty slot @idx (the
 * @probe-th of its sequence): it is not in the map, because within a
 * generation a slot never becomes empty again (the scrub only turns a
 * stale word, empty already, into 0). Reserve and write a record, then
 * claim the first empty slot from @idx on; keep the same record while
 * probing on.
 * Context: any, inside the in-flight window of insert().
 */
FSM_NOINLINE int StackMap::insert_miss(u32 cpu, u32 gen, const u64 *ips, u32 nr,
				       u32 epoch, u32 key, u32 idx, u32 probe,
				       fsm_insert_result *res)
{
	Reservation rsv{0, 0, false};
	Record *found = nullptr;
	int ret = -FSM_DROP_PROBE_LIMIT;

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

		/*
		 * An empty slot (0 or stale) can change only twice in this
		 * generation: stale -> 0 by the scrub, and empty -> occupied
		 * by one winner. So a failed claim is retried on the same
		 * slot at most kClaimRetries times; skipping a slot that is
		 * still empty would break the first-empty-slot rule above.
		 */
		for (u32 again = 0; slot_free(s, gen); again++) {
			if (again == kClaimRetries) {
				ret = -FSM_DROP_BUSY;	/* unreachable by the argument */
				goto give_back;
			}
			FSM_HOOK(this, FSM_HOOK_RECORD_WRITTEN);
			/*
			 * (c) (P1) release on success: publishes the record
			 * written above to every (R1). Acquire on failure: @s
			 * becomes the word seen and we read its record right
			 * below, like (R1).
			 */
			if (slots_[idx].cmpxchg(s, slot_make(key, rsv.off), release, acquire)) {
				FSM_HOOK(this, FSM_HOOK_SLOT_CLAIMED);
				/* (d) only the winner takes an id. */
				publish_new(cpu, mine, rsv, gen, epoch, res);
				return 0;
			}
		}
		/* Lost the slot, or it was taken: look at it like any other. */
		found = match(s, key, ips, nr);
		if (found)
			break;
	}

give_back:
	/* Our record never became visible: give it back. */
	unreserve(rsv);
	if (!found)
		return ret;
	/* A twin inserted the same stack concurrently and won. */
	shards_[cpu].lost_races.fetch_add(1, relaxed);	/* statistic */
	return finish_hit(cpu, found, gen, epoch, res);
}

int StackMap::insert(const u64 *ips, u32 nr, u32 epoch, fsm_insert_result *res)
{
	const u32 cpu = this_cpu();
	CpuShard &sh = shards_[cpu];
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
	 *
	 * The hash needs nothing from the map's mutable state: it is computed
	 * before (A1), so a reset waits for as little as possible.
	 */
	const u64 h = hash(ips, nr);

	sh.enters.fetch_add(1, seq_cst);		/* (A1) */
	{
		const u32 g = gen_.load(seq_cst);	/* (A2), also pairs with (B3) */

		if (unlikely(g & kResetting))
			ret = -FSM_DROP_RESETTING;
		else
			ret = insert_in_gen(cpu, g >> 1, h, ips, nr, epoch, res);
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
	 * (A3) release: every access we made to slots, records, index, alloc
	 * word and hit counters happens before reset's (B2) acquire load that
	 * counts this exit, hence before reset reuses the arena, the ids and
	 * the allocation word for the next generation. CPU-local (cpu_add()):
	 * only contexts of this CPU write this shard's exits (in the kernel;
	 * elsewhere it is an ordinary atomic), and reset() only reads it. On
	 * x86-64 the kernel's add without lock prefix is a release by TSO
	 * (and a compiler barrier); arm64 keeps an atomic add with release.
	 */
	sh.exits.cpu_add(1, release);
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
	/* Stable: the caller serialises us against reset(). */
	const u32 gen = gen_.load(relaxed) >> 1;
	/* (R2) acquire, pairs with (P2): the record is complete. */
	const u64 o = index_[id].load(acquire);
	if ((u32)o == 0 || (u32)(o >> 32) != gen)
		return -2;	/* unpublished, or stale from an older generation */

	const Record *rec = record_at((u32)o - 1);
	FSM_ASSERT(rec->nr >= 1 && rec->nr <= max_depth_);
	if (ips)
		*ips = rec->ips();
	if (nr)
		*nr = rec->nr;
	if (hits)
		*hits = hits_of(gen, id);	/* approximate while inserts run */
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
		st->defs_new += sh.defs_new.load(relaxed);
		st->defs_aged += sh.defs_aged.load(relaxed);
		st->defs_swept += sh.defs_swept.load(relaxed);
		outcomes += sh.sweeps.load(relaxed);	/* exits that were no lookup */
		for (u32 r = 1; r < FSM_DROP_NR_REASONS; r++) {
			const u64 d = sh.drops[r].load(relaxed);

			st->drops[r] += d;
			if (r != FSM_DROP_INVALID)
				outcomes += d;
		}
	}
	st->hits = exits > outcomes ? exits - outcomes : 0;
}

/*
 * scrub - (S): turn every word of @words[0..n) for which @stale(word) holds
 * into 0, letting others run between chunks (task context).
 *
 * Runs after (B3), beside inserters of the new generation. For them a stale
 * word and 0 mean the same thing (empty / unused), so replacing one by the
 * other changes nothing they can observe; a cmpxchg, not a store, because
 * an inserter may claim the word at the same moment: then our cmpxchg fails
 * and the new word stays. Relaxed: 0 publishes nothing.
 */
template <typename T, typename Stale>
void StackMap::scrub(Atomic<T> *words, u64 n, Stale stale)
{
	for (u64 i = 0; i < n; i++) {
		T w = words[i].load(relaxed);

		if (w && stale(w))
			(void)words[i].cmpxchg(w, (T)0, relaxed, relaxed);	/* (S) */
		if ((i + 1) % kScrubChunkWords == 0)
			fsm_plat_yield();
	}
}

/*
 * reset - start a new generation; inserters never block on it.
 *
 * Statistics in the CPU shards (hits, inserts, drops, lost_races) are
 * cumulative across generations; ids, records and per-stack hit counts
 * belong to one generation. Nothing is cleared while inserters drop: the
 * stop-the-world part is the handshake (B1)..(B3), run with preemption
 * off, whose length is the longest insert in flight plus one pass over the
 * CPU shards. The
 * generation carried by slots (8 bits), index words (32 bits), hit-cache
 * and definition-stamp words (8 bits) makes every entry of the old generation stale (empty for
 * inserters, unpublished for readers), and the scrub after (B3) turns them
 * into 0 while the new generation already runs. Because the scrub finishes
 * before reset() returns and resets are serialised, the table never holds
 * words of more than two generations, the current and the previous one,
 * so 8 bits of generation cannot alias. The arena is not cleared: records
 * are fully rewritten before they are published.
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
	/*
	 * From (B1) to (B3) every new insert drops: keep that window short.
	 * No preemption in it (kernel), so the window is the longest insert
	 * in flight plus one pass over the shards, not a time slice.
	 */
	fsm_plat_nopreempt_begin();
	gen_.store(g | kResetting, seq_cst);		/* (B1) */
	for (u32 c = 0; c < nr_shards_; c++) {
		CpuShard &sh = shards_[c];

		for (u32 spin = 0;; spin++) {
			/*
			 * (B2) Read exits, then enters. Acquire on exits pairs
			 * with (A3): the accesses of every insert counted here
			 * happen before our reuse of the arena, ids and
			 * allocation word, and so does its (A1), which the
			 * later read of enters must therefore see (coherence):
			 * enters >= exits. Equal means every insert counted in
			 * enters has left. The seq_cst read of enters is the
			 * Dekker half that pairs with (A1)/(A2): an insert that
			 * read the old generation is counted in it. Seeing
			 * them equal once is enough: later arrivals see
			 * kResetting. The wait ends because inserts are
			 * bounded; it is long only if an inserter is preempted
			 * inside insert(), which kernel callers prevent
			 * (tracepoint probes run with preemption off).
			 */
			const u64 x = sh.exits.load(acquire);		/* (B2) */
			const u64 e = sh.enters.load(seq_cst);		/* (B2) */

			FSM_ASSERT(e >= x);
			if (e == x)
				break;
			if (spin < kResetSpinLoops) {
				cpu_relax();
				continue;
			}
			/* An inserter is held up: let others run, re-check. */
			fsm_plat_nopreempt_end();
			fsm_plat_yield();
			fsm_plat_nopreempt_begin();
			spin = 0;
		}
	}

	/* No inserter is inside the old generation: reuse ids and arena. */
	alloc_.init(0);
	next_id_.init(0);

	u32 ng = ((g >> 1) + 1) & 0x7fffffffu;
	if (ng == 0)
		ng = 1;		/* generation 0 is never used */
	/*
	 * (B3) release: the reset alloc word and id counter happen before any
	 * inserter that reads the new word at (A2), and before readers the
	 * caller orders after us. From here on inserts succeed again.
	 */
	gen_.store(ng << 1, release);
	fsm_plat_nopreempt_end();

	/*
	 * Scrub, beside the new generation's inserters (see scrub()). Only
	 * words of other generations are touched; ng's words never are.
	 */
	scrub(slots_, (u64)table_mask_ + 1,
	      [ng](u64 w) { return (slot_key(w) & 0xffu) != gen8(ng); });
	scrub(index_, capacity_, [ng](u64 w) { return (u32)(w >> 32) != ng; });
	scrub(hit_cache_, (u64)nr_shards_ * (hit_cache_mask_ + 1),
	      [ng](u64 w) { return hc_gen8(w) != gen8(ng); });
	scrub(def_stamp_, (u64)nr_shards_ * (def_stamp_mask_ + 1),
	      [ng](u64 w) { return hc_gen8(w) != gen8(ng); });
	fsm_plat_yield();	/* reset always may sleep, even for tiny maps */
	return ng;
}

} /* namespace fsm */
