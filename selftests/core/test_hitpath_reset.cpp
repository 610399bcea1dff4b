// SPDX-License-Identifier: GPL-2.0
/*
 * test_hitpath_reset.cpp - the stack map's hit path and its reset:
 *
 *   HitPath.*   in steady state a hit writes no cache line that
 *               another CPU writes, for any CPU count, also with
 *               its definition stamp asked for (fsm_map_def_claim());
 *               per-stack hit counts stay exact through evictions and
 *               resets.
 *   DefClaim.*  definition stamps: per CPU, due again after the
 *               horizon, never aliased across generations (resets
 *               scrub them), evicted ones are due again, nested
 *               claims on one CPU never lose a due definition.
 *   DefSweep.*  the sweep defines again, once, the ids used since
 *               their last definition, with their own frames, at its
 *               pace and bounds; never ids not used since, nor ids of
 *               another generation; a refused write is retried.
 *   Reset.*     reset is O(1) for inserters: inserts made while a
 *               reset scrubs the old generation succeed (no
 *               FSM_DROP_RESETTING), stale entries are never
 *               matched, and the 8-bit generation in slots and hit
 *               caches never aliases across many resets.
 *
 * The line test diffs the map's memory around the hits of one CPU: every
 * 64-byte line whose bytes changed was written by that CPU.
 */
#include "test_util.h"
#include "test_platform.h"

#include "stackmap.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

namespace {

/* The map's bytes from its object on (memory_bytes minus the alignment slack). */
std::vector<unsigned char> snapshot(const fsm_map *m)
{
	const auto *p = reinterpret_cast<const unsigned char *>(m);
	const u64 n = stats_of(m).memory_bytes - fsm::kShardAlign;

	return std::vector<unsigned char>(p, p + n);
}

std::set<u64> lines_changed(const std::vector<unsigned char> &a,
			    const std::vector<unsigned char> &b)
{
	std::set<u64> lines;

	for (u64 i = 0; i < a.size(); i++)
		if (a[i] != b[i])
			lines.insert(i / fsm::kCacheLine);
	return lines;
}

u64 hits_of(const fsm_map *m, unsigned id)
{
	u64 hits = ~0ull;

	EXPECT_EQ(fsm_map_lookup_id(m, id, nullptr, nullptr, &hits), 0);
	return hits;
}

/* Restores the platform overrides whatever the test does. */
struct CpuOverride {
	explicit CpuOverride(unsigned nr_cpus) { test_platform_set_nr_cpus(nr_cpus); }
	~CpuOverride()
	{
		test_platform_set_thread_cpu(-1);
		test_platform_set_nr_cpus(0);
	}
	void on(unsigned cpu) { test_platform_set_thread_cpu((int)cpu); }
};

/* Item 17: 64 CPUs (main shared a hit line between CPUs c and c + 8). */
TEST(HitPath, SteadyStateWritesNoLineOfAnotherCpu)
{
	constexpr unsigned kCpus = 64, kStacks = 32, kRounds = 10;
	CpuOverride cpus(kCpus);
	auto m = make_map(make_params(10));
	ASSERT_TRUE(m);

	std::vector<Stack> stacks;
	fsm_insert_result r{};
	cpus.on(0);
	for (unsigned i = 0; i < kStacks; i++) {
		stacks.push_back(make_stack(100 + i, 4 + i % 20));
		ASSERT_EQ(insert(m.get(), stacks.back(), &r), 0);
		ASSERT_EQ(r.id, i);
	}

	std::vector<std::set<u64>> written(kCpus);
	for (unsigned c = 0; c < kCpus; c++) {
		cpus.on(c);
		/* Warm up: this CPU's hit cache takes the stacks. */
		for (const Stack &s : stacks)
			ASSERT_EQ(insert(m.get(), s, &r), 0);
		auto before = snapshot(m.get());
		for (unsigned k = 0; k < kRounds; k++)
			for (const Stack &s : stacks)
				ASSERT_EQ(insert(m.get(), s, &r), 0);
		written[c] = lines_changed(before, snapshot(m.get()));
		ASSERT_FALSE(written[c].empty());
	}
	for (unsigned a = 0; a < kCpus; a++)
		for (unsigned b = a + 1; b < kCpus; b++)
			for (u64 line : written[a])
				ASSERT_EQ(written[b].count(line), 0u)
					<< "CPUs " << a << " and " << b << " both write line " << line;

	/* And the hits are all there: 1 insert + per CPU 1 warm-up + kRounds. */
	for (unsigned i = 0; i < kStacks; i++)
		EXPECT_EQ(hits_of(m.get(), i), 1u + kCpus * (1 + kRounds)) << "id " << i;
}

/*
 * Review of item 17: two hot ids that collide in the hit cache (ids 3 and
 * 259: one word of a direct-mapped 256-word cache, one set of today's)
 * alternate on one CPU.
 * Once both are resident, hits must not write any line that another CPU
 * doing the same writes: a cache that evicts one for the other writes the
 * shared per-id totals (hit_total_) on every hit.
 */
TEST(HitPath, CollidingHotIdsWriteNoSharedLine)
{
	constexpr unsigned kCpus = 2, kRounds = 50;
	CpuOverride cpus(kCpus);
	auto m = make_map(make_params(10));
	ASSERT_TRUE(m);

	std::vector<Stack> stacks;
	fsm_insert_result r{};
	cpus.on(0);
	for (unsigned i = 0; i < 260; i++) {
		stacks.push_back(make_stack(7000 + i, 5));
		ASSERT_EQ(insert(m.get(), stacks.back(), &r), 0);
		ASSERT_EQ(r.id, i);
	}
	const Stack &a = stacks[3], &b = stacks[259];
	std::vector<std::set<u64>> written(kCpus);
	for (unsigned c = 0; c < kCpus; c++) {
		cpus.on(c);
		for (unsigned k = 0; k < 4; k++) {	/* warm up */
			ASSERT_EQ(insert(m.get(), a, &r), 0);
			ASSERT_EQ(insert(m.get(), b, &r), 0);
		}
		auto before = snapshot(m.get());
		for (unsigned k = 0; k < kRounds; k++) {
			ASSERT_EQ(insert(m.get(), a, &r), 0);
			ASSERT_EQ(insert(m.get(), b, &r), 0);
		}
		written[c] = lines_changed(before, snapshot(m.get()));
		ASSERT_FALSE(written[c].empty());
	}
	for (u64 line : written[0])
		EXPECT_EQ(written[1].count(line), 0u)
			<< "CPUs 0 and 1 both write line " << line;
	/* 1 insert, then per CPU 4 warm-up + kRounds hits each. */
	EXPECT_EQ(hits_of(m.get(), 3), 1u + kCpus * (4 + kRounds));
	EXPECT_EQ(hits_of(m.get(), 259), 1u + kCpus * (4 + kRounds));
}

/* More colliding ids than a set holds: evictions keep counts exact. */
TEST(HitPath, OverfullSetKeepsExactCounts)
{
	CpuOverride cpus(2);
	auto m = make_map(make_params(14));	/* 4096-word caches: 512 sets */
	ASSERT_TRUE(m);
	std::vector<Stack> stacks;
	fsm_insert_result r{};
	cpus.on(0);
	for (unsigned i = 0; i < 5 + 512 * 20; i++) {
		stacks.push_back(make_stack(9000 + i, 3));
		ASSERT_EQ(insert(m.get(), stacks.back(), &r), 0);
		ASSERT_EQ(r.id, i);
	}
	/*
	 * ids 5 + 512k share a set, and those with the same k mod 8 a home
	 * way: more ids than ways, and homes taken by other ids at home.
	 */
	std::vector<unsigned> ids;
	for (unsigned k = 0; k < 20; k++)
		ids.push_back(5 + 512 * k);
	for (unsigned round = 0; round < 9; round++)
		for (unsigned c = 0; c < 2; c++) {
			cpus.on(c);
			for (unsigned id : ids)
				ASSERT_EQ(insert(m.get(), stacks[id], &r), 0);
		}
	for (unsigned id : ids)
		EXPECT_EQ(hits_of(m.get(), id), 1u + 9 * 2) << "id " << id;
	EXPECT_EQ(hits_of(m.get(), 6), 1u);
}

/*
 * Item 15/17: the memory of a map is the documented formula (tracing.rst),
 * fsm_map_memory_bytes() predicts it exactly, and the per-CPU part is
 * bounded by 65664 bytes per CPU whatever bits is (shard, hit cache,
 * definition stamps).
 */
TEST(HitPath, MemoryFormula)
{
	for (unsigned ncpu : {1u, 2u, 64u, 1000u})
		for (unsigned bits : {6u, 10u, 14u, 17u}) {
			CpuOverride cpus(ncpu);
			fsm_map_params p = make_params(bits);
			const u64 c = 1ull << bits;
			const u64 arena = c * (16 + 8 * 16);
			const u64 want = 512 + ncpu * (128 + 8 * std::min<u64>(c, 4096) +
							 8 * std::min<u64>(c, 4096)) +
					 16 * c + 8 * c + 4 * c + arena;
			EXPECT_EQ(fsm_map_memory_bytes(&p), want) << ncpu << " cpus, bits " << bits;
			auto m = make_map(p);
			ASSERT_TRUE(m);
			EXPECT_EQ(stats_of(m.get()).memory_bytes, want);
		}
}

/* Evictions from a CPU's hit cache lose nothing (single-threaded: exact). */
TEST(HitPath, EvictionsKeepExactCounts)
{
	CpuOverride cpus(4);
	auto m = make_map(make_params(14));	/* 16384 ids, 4096-word hit caches */
	ASSERT_TRUE(m);
	const unsigned per_cpu = 4096;	/* fsm::kHitCacheEntries */
	std::vector<Stack> stacks;
	fsm_insert_result r{};
	/* ids 0, 4096, 8192, 12288 share one home way on every CPU. */
	for (unsigned i = 0; i < 4 * per_cpu; i++) {
		stacks.push_back(make_stack(5000 + i, 3));
		ASSERT_EQ(insert(m.get(), stacks.back(), &r), 0);
		ASSERT_EQ(r.id, i);
	}
	for (unsigned round = 0; round < 7; round++)
		for (unsigned c = 0; c < 4; c++) {
			cpus.on(c);
			for (unsigned j = 0; j < 4; j++)
				ASSERT_EQ(insert(m.get(), stacks[j * per_cpu + 3], &r), 0);
		}
	for (unsigned j = 0; j < 4; j++)
		EXPECT_EQ(hits_of(m.get(), j * per_cpu + 3), 1u + 7 * 4);
	EXPECT_EQ(hits_of(m.get(), 4), 1u);
}

/* Per-stack hits of an older generation never show up in a newer one. */
TEST(HitPath, ResetStartsCountsAtZero)
{
	auto m = make_map(make_params(8));
	fsm_insert_result r{};
	Stack a = make_stack(1, 5), b = make_stack(2, 6);
	for (int i = 0; i < 50; i++)
		ASSERT_EQ(insert(m.get(), a, &r), 0);
	ASSERT_EQ(insert(m.get(), b, &r), 0);
	EXPECT_EQ(hits_of(m.get(), 0), 50u);
	EXPECT_EQ(fsm_map_reset(m.get()), 2u);
	ASSERT_EQ(insert(m.get(), b, &r), 0);	/* b takes id 0 now */
	ASSERT_EQ(r.id, 0u);
	EXPECT_EQ(hits_of(m.get(), 0), 1u);
	ASSERT_EQ(insert(m.get(), a, &r), 0);
	EXPECT_EQ(r.id, 1u);
	EXPECT_EQ(hits_of(m.get(), 1), 1u);
}

/* What the yield hook does during a reset: insert and remember the outcome. */
struct DuringReset {
	fsm_map *map = nullptr;
	std::vector<Stack> *stacks = nullptr;
	unsigned next = 0;
	std::vector<int> rcs;
	std::vector<fsm_insert_result> res;
};

void insert_during_reset(void *arg)
{
	auto *d = static_cast<DuringReset *>(arg);
	fsm_insert_result r{};

	if (d->next >= d->stacks->size())
		return;
	d->rcs.push_back(insert(d->map, (*d->stacks)[d->next++], &r));
	d->res.push_back(r);
}

/*
 * Item 16: every point where a reset lets others run (fsm_plat_yield()) is
 * outside the stop-the-world window. On main the reset cleared 1.7 MiB
 * there with kResetting set, and these inserts dropped with RESETTING.
 * Run with both an ordinary hash and one where every stack has the same
 * bucket and tag (so the stale slots are exactly where the new stacks go).
 */
void inserts_while_reset_scrubs(unsigned flags)
{
	auto m = make_map(make_params(16, 64, 0, flags));
	ASSERT_TRUE(m);
	std::vector<Stack> old_stacks, during;
	fsm_insert_result r{};
	const unsigned n_old = flags ? 60 : 3000;	/* same-tag: within the probe limit */
	for (unsigned i = 0; i < n_old; i++) {
		old_stacks.push_back(make_stack(i, 1 + i % 40));
		ASSERT_EQ(insert(m.get(), old_stacks.back(), &r), 0);
	}
	/* Half new stacks, half stacks of the old generation. */
	for (unsigned i = 0; i < 8; i++)
		during.push_back(i % 2 ? old_stacks[i * 7] : make_stack(90000 + i, 9));

	DuringReset d;
	d.map = m.get();
	d.stacks = &during;
	const auto yields = test_platform_yields();
	test_platform_set_yield_hook(insert_during_reset, &d);
	const unsigned g = fsm_map_reset(m.get());
	test_platform_set_yield_hook(nullptr, nullptr);
	ASSERT_EQ(g, 2u);
	ASSERT_GT(test_platform_yields(), yields);
	ASSERT_FALSE(d.rcs.empty());

	for (unsigned i = 0; i < d.rcs.size(); i++) {
		EXPECT_EQ(d.rcs[i], 0) << "insert " << i << " during the reset: "
				       << fsm_drop_reason_name(-d.rcs[i]);
		EXPECT_EQ(d.res[i].generation, 2u);
		EXPECT_EQ(d.res[i].id, i);
		EXPECT_TRUE(d.res[i].flags & FSM_INSERT_NEW);
		EXPECT_TRUE(record_is(m.get(), i, during[i]));
	}
	EXPECT_EQ(stats_of(m.get()).drops[FSM_DROP_RESETTING], 0u);
	EXPECT_EQ(fsm_map_nr_ids(m.get()), (unsigned)d.rcs.size());
	/* Ids of the old generation beyond the new ones are gone. */
	EXPECT_EQ(fsm_map_lookup_id(m.get(), (unsigned)d.rcs.size(), nullptr, nullptr,
				    nullptr), -2);
	/* Found again, not inserted twice. */
	for (unsigned i = 0; i < d.rcs.size(); i++) {
		ASSERT_EQ(insert(m.get(), during[i], &r), 0);
		EXPECT_EQ(r.id, i);
		EXPECT_FALSE(r.flags & FSM_INSERT_NEW);
	}
}

TEST(Reset, InsertsWhileResetScrubsSucceed)
{
	inserts_while_reset_scrubs(0);
}

TEST(Reset, InsertsWhileResetScrubsSucceedSameTag)
{
	inserts_while_reset_scrubs(FSM_TEST_HASH_SAME_TAG);
}

/*
 * The slot and hit-cache words keep 8 bits of the generation: 600 resets
 * (more than two wraps) with stacks that always land in the same slots
 * never find an entry of an older generation.
 */
TEST(Reset, GenerationBitsNeverAlias)
{
	auto m = make_map(make_params(6));
	fsm_insert_result r{};
	for (unsigned round = 0; round < 600; round++) {
		/* A different stack first each round: ids would differ if stale. */
		Stack first = make_stack(round % 3, 7), second = make_stack(77, 5);
		ASSERT_EQ(insert(m.get(), first, &r), 0);
		ASSERT_EQ(r.id, 0u);
		ASSERT_TRUE(r.flags & FSM_INSERT_NEW) << "round " << round;
		ASSERT_EQ(insert(m.get(), second, &r), 0);
		ASSERT_EQ(r.id, 1u);
		ASSERT_TRUE(r.flags & FSM_INSERT_NEW) << "round " << round;
		ASSERT_EQ(insert(m.get(), second, &r), 0);
		EXPECT_EQ(hits_of(m.get(), 1), 2u) << "round " << round;
		EXPECT_EQ(hits_of(m.get(), 0), 1u) << "round " << round;
		ASSERT_EQ(fsm_map_reset(m.get()), round + 2);
	}
}

} // namespace

/*
 * Review of item 17: a hit total is a u32 that evictions add to; it
 * saturates instead of wrapping (a wrapped total turns the lower bound
 * into a small number). 2^32 real hits take too long for a unit test: the
 * add itself is checked here, and the map uses exactly this function.
 */
TEST(HitPath, HitTotalsSaturate)
{
	EXPECT_EQ(fsm::hit_sat_add(1, 2), 3u);
	EXPECT_EQ(fsm::hit_sat_add(0xfffffff0u, 0xf), 0xffffffffu);
	EXPECT_EQ(fsm::hit_sat_add(0xfffffff0u, 0x10), 0xffffffffu);
	EXPECT_EQ(fsm::hit_sat_add(0xffffffffu, 0xffffffffu), 0xffffffffu);
	EXPECT_EQ(fsm::hit_sat_add(0x80000000u, 0x7fffffffu), 0xffffffffu);
	EXPECT_EQ(fsm::hit_sat_add(0, 0), 0u);
}

/*
 * A hit followed by its definition claim, as the kernel's capture path does
 * for every id record: once each CPU has defined its stacks, neither the
 * hits nor the claims (not due) write a line another CPU writes, and the
 * claims that are due (the horizon passed) write only this CPU's lines.
 */
TEST(HitPath, DefClaimsWriteNoLineOfAnotherCpu)
{
	constexpr unsigned kCpus = 8, kStacks = 32, kRounds = 10;
	CpuOverride cpus(kCpus);
	auto m = make_map(make_params(10));
	ASSERT_TRUE(m);

	std::vector<Stack> stacks;
	fsm_insert_result r{};
	cpus.on(0);
	for (unsigned i = 0; i < kStacks; i++) {
		stacks.push_back(make_stack(300 + i, 6));
		ASSERT_EQ(insert(m.get(), stacks.back(), &r), 0);
	}
	std::vector<std::set<u64>> written(kCpus), due(kCpus);
	for (unsigned c = 0; c < kCpus; c++) {
		cpus.on(c);
		unsigned now = 1000 * c;
		for (const Stack &s : stacks) {	/* warm up and define */
			ASSERT_EQ(insert(m.get(), s, &r), 0);
			EXPECT_EQ(fsm_map_def_claim(m.get(), r.id, r.generation, now++, 500), 1);
		}
		auto before = snapshot(m.get());
		for (unsigned k = 0; k < kRounds; k++)
			for (const Stack &s : stacks) {
				ASSERT_EQ(insert(m.get(), s, &r), 0);
				EXPECT_EQ(fsm_map_def_claim(m.get(), r.id, r.generation,
							    now++, 500), 0);
			}
		written[c] = lines_changed(before, snapshot(m.get()));
		before = snapshot(m.get());
		for (const Stack &s : stacks) {	/* all due again */
			ASSERT_EQ(insert(m.get(), s, &r), 0);
			EXPECT_EQ(fsm_map_def_claim(m.get(), r.id, r.generation,
						    now + 500, 500), 1);
		}
		/* used once more, then swept: the sweep's lines are this CPU's */
		for (const Stack &s : stacks) {
			ASSERT_EQ(insert(m.get(), s, &r), 0);
			EXPECT_EQ(fsm_map_def_claim(m.get(), r.id, r.generation,
						    now + 501, 500), 0);
		}
		unsigned swept = 0;
		for (unsigned k = 0; k < 200; k++)
			swept += fsm_map_def_sweep(m.get(), now + 1001 + 4 * k, 500,
						   [](void *, unsigned, unsigned,
						      const unsigned long long *, unsigned) {
							   return 1;
						   }, nullptr);
		EXPECT_EQ(swept, kStacks);
		due[c] = lines_changed(before, snapshot(m.get()));
	}
	for (unsigned a = 0; a < kCpus; a++)
		for (unsigned b = 0; b < kCpus; b++)
			for (u64 line : written[a]) {
				if (b == a)
					continue;
				ASSERT_EQ(written[b].count(line), 0u)
					<< "CPUs " << a << " and " << b << " both write line " << line;
				ASSERT_EQ(due[b].count(line), 0u)
					<< "CPU " << b << "'s due claims write CPU " << a
					<< "'s line " << line;
			}
	auto st = stats_of(m.get());
	EXPECT_EQ(st.defs_new, u64(kCpus * kStacks));
	EXPECT_EQ(st.defs_aged, u64(kCpus * kStacks));
	EXPECT_EQ(st.defs_swept, u64(kCpus * kStacks));
}

/* Due on first use, not again before the horizon, then due again. */
TEST(DefClaim, HorizonPerCpu)
{
	CpuOverride cpus(2);
	auto m = make_map(make_params(8));
	ASSERT_TRUE(m);
	fsm_map *p = m.get();

	cpus.on(0);
	EXPECT_EQ(fsm_map_def_claim(p, 3, 1, 10, 100), 1);
	EXPECT_EQ(fsm_map_def_claim(p, 3, 1, 109, 100), 0);
	cpus.on(1);	/* another CPU's buffer: its own stamps */
	EXPECT_EQ(fsm_map_def_claim(p, 3, 1, 50, 100), 1);
	EXPECT_EQ(fsm_map_def_claim(p, 3, 1, 60, 100), 0);
	cpus.on(0);
	EXPECT_EQ(fsm_map_def_claim(p, 3, 1, 110, 100), 1);
	EXPECT_EQ(fsm_map_def_claim(p, 3, 1, 111, 100), 0);
	/* positions modulo 2^32: across the wrap of the count */
	EXPECT_EQ(fsm_map_def_claim(p, 4, 1, 0xfffffff0u, 100), 1);
	EXPECT_EQ(fsm_map_def_claim(p, 4, 1, 0x10u, 100), 0);	/* 32 behind */
	EXPECT_EQ(fsm_map_def_claim(p, 4, 1, 0x54u, 100), 1);	/* 100 behind */
	/* a count that restarted below the stamp: due */
	EXPECT_EQ(fsm_map_def_claim(p, 3, 1, 5, 100), 1);
	/* horizon 0: always due (the first use in a recording) */
	EXPECT_EQ(fsm_map_def_claim(p, 3, 1, 6, 0), 1);
	/* unclaim: the stamp is gone, so the next use is due */
	fsm_map_def_unclaim(p, 3, 1, 6);
	EXPECT_EQ(fsm_map_def_claim(p, 3, 1, 7, 100), 1);
	/* unclaim of a stamp that is not (or no longer) there: nothing */
	fsm_map_def_unclaim(p, 3, 1, 6);
	EXPECT_EQ(fsm_map_def_claim(p, 3, 1, 8, 100), 0);
	auto st = stats_of(p);
	EXPECT_EQ(st.defs_new, 4u);	/* 3@0, 3@1, 4@0, 3@0 after unclaim */
	EXPECT_EQ(st.defs_aged, 4u);	/* 3@0 at 110, 4 at 0x54, 3 at 5 and 6 */
}

/*
 * A stamp of generation G never counts for G + 1, also 256 generations on
 * (the 8-bit generation of the word): reset() scrubs the old words.
 */
TEST(DefClaim, GenerationsNeverAlias)
{
	CpuOverride cpus(1);
	auto m = make_map(make_params(6));
	ASSERT_TRUE(m);
	Stack a = make_stack(1, 4);
	fsm_insert_result r{};

	cpus.on(0);
	ASSERT_EQ(insert(m.get(), a, &r), 0);
	EXPECT_EQ(fsm_map_def_claim(m.get(), r.id, r.generation, 1, 1000), 1);
	EXPECT_EQ(fsm_map_def_claim(m.get(), r.id, r.generation, 2, 1000), 0);
	for (unsigned g = 0; g < 256; g++)
		fsm_map_reset(m.get());
	ASSERT_EQ(insert(m.get(), a, &r), 0);
	EXPECT_EQ(r.generation, 257u);	/* the same 8 low bits as 1 */
	EXPECT_EQ(fsm_map_def_claim(m.get(), r.id, r.generation, 3, 1000), 1);
	EXPECT_EQ(fsm_map_def_claim(m.get(), r.id, r.generation, 4, 1000), 0);
}

/*
 * More ids than a set has ways: the way taken is the one furthest behind;
 * an evicted id is due again (one definition too many, never one too few).
 */
TEST(DefClaim, EvictionOnlyAddsDefinitions)
{
	CpuOverride cpus(1);
	auto m = make_map(make_params(14));	/* 4096 stamps: 512 sets */
	ASSERT_TRUE(m);
	cpus.on(0);
	/* ids 5 + 512 k share a set; 9 of them: one must go */
	for (unsigned k = 0; k < 9; k++)
		EXPECT_EQ(fsm_map_def_claim(m.get(), 5 + 512 * k, 1, 100 + k, 1000), 1);
	/* the oldest (k = 0, position 100) was taken for k = 8 */
	EXPECT_EQ(fsm_map_def_claim(m.get(), 5, 1, 200, 1000), 1);
	for (unsigned k = 2; k < 9; k++)
		EXPECT_EQ(fsm_map_def_claim(m.get(), 5 + 512 * k, 1, 201, 1000), 0) << k;
	/*
	 * k = 2..8 were just used (their stamps are dirty now): k = 1 comes
	 * back and takes the only clean way, id 5's, though the dirty ones
	 * are older; so does a newcomer (k = 9), taking k = 1's. The dirty
	 * stamps, whose ids wait for the sweep, stay.
	 */
	EXPECT_EQ(fsm_map_def_claim(m.get(), 5 + 512, 1, 202, 1000), 1);
	EXPECT_EQ(fsm_map_def_claim(m.get(), 5 + 512 * 9, 1, 203, 1000), 1);
	for (unsigned k = 2; k < 9; k++)
		EXPECT_EQ(fsm_map_def_claim(m.get(), 5 + 512 * k, 1, 204, 1000), 0) << k;
}

/*
 * Threads that share one CPU number stand for a task and the interrupts
 * nested on it: they claim the same ids with the same growing position.
 * Whatever the interleaving, every id whose stamp is older than the
 * horizon gets a definition from someone in each window of positions:
 * no claim returns 0 unless some claim for the id returned 1 at a
 * position at most the horizon behind (checked afterwards from a log).
 */
TEST(DefClaim, NestedClaimsNeverMissADefinition)
{
	constexpr unsigned kThreads = 4, kIds = 40, kSteps = 20000, kHorizon = 64;
	CpuOverride cpus(1);
	auto m = make_map(make_params(6));
	ASSERT_TRUE(m);
	std::atomic<unsigned> pos{0};
	struct Ev {
		unsigned id, now;
		bool due;
	};
	std::vector<std::vector<Ev>> logs(kThreads);
	std::vector<std::thread> ts;
	for (unsigned t = 0; t < kThreads; t++)
		ts.emplace_back([&, t] {
			test_platform_set_thread_cpu(0);
			u64 x = t + 1;
			for (unsigned i = 0; i < kSteps; i++) {
				x = splitmix(x);
				const unsigned id = unsigned(x % kIds);
				const unsigned now = pos.fetch_add(1);
				const bool due = fsm_map_def_claim(m.get(), id, 1, now, kHorizon);
				logs[t].push_back({id, now, due});
			}
			test_platform_set_thread_cpu(-1);
		});
	for (auto &th : ts)
		th.join();
	std::vector<std::vector<unsigned>> defs(kIds);
	for (const auto &l : logs)
		for (const Ev &e : l)
			if (e.due)
				defs[e.id].push_back(e.now);
	for (auto &d : defs)
		std::sort(d.begin(), d.end());
	for (const auto &l : logs)
		for (const Ev &e : l) {
			if (e.due)
				continue;
			const auto &d = defs[e.id];
			auto it = std::upper_bound(d.begin(), d.end(), e.now);
			ASSERT_NE(it, d.begin()) << "id " << e.id << " at " << e.now
						 << ": not due, never defined before";
			EXPECT_LT(e.now - *std::prev(it), kHorizon + kThreads)
				<< "id " << e.id << " at " << e.now;
		}
}

namespace {

/* What a sweep asked to write. */
struct SweepLog {
	struct Def {
		unsigned id, gen;
		Stack ips;
	};
	std::vector<Def> defs;
	bool refuse = false;

	static int fn(void *ctx, unsigned id, unsigned gen, const unsigned long long *ips,
		      unsigned nr)
	{
		auto *l = static_cast<SweepLog *>(ctx);
		if (l->refuse)
			return 0;
		l->defs.push_back({id, gen, Stack(ips, ips + nr)});
		return 1;
	}
	/* sweep at every position of [from, to) */
	unsigned run(fsm_map *m, unsigned from, unsigned to, unsigned horizon)
	{
		unsigned n = 0;
		for (unsigned p = from; p < to; p++)
			n += fsm_map_def_sweep(m, p, horizon, fn, this);
		return n;
	}
};

} /* namespace */

/*
 * A clean stamp (defined, not used since) is emptied by the sweep once a
 * horizon old: 2^32 positions later (the position wraps) the id is due,
 * where the stamp's age modulo 2^32 would read 5, fresh.
 */
TEST(DefSweep, EmptiesOldCleanStamps)
{
	CpuOverride cpus(1);
	auto m = make_map(make_params(8));
	ASSERT_TRUE(m);
	cpus.on(0);
	Stack a = make_stack(21, 5);
	fsm_insert_result ra{};
	ASSERT_EQ(insert(m.get(), a, &ra), 0);
	EXPECT_EQ(fsm_map_def_claim(m.get(), ra.id, ra.generation, 0, 640), 1);

	SweepLog log;
	EXPECT_EQ(log.run(m.get(), 1, 640 + 330, 640), 0u);	/* nothing to write */
	/* (u32)(2^32 + 5): a stamp left at 0 would be 5 behind */
	EXPECT_EQ(fsm_map_def_claim(m.get(), ra.id, ra.generation, 5, 640), 1);
	/* a stamp younger than the horizon is kept: not due again */
	EXPECT_EQ(log.run(m.get(), 6, 300, 640), 0u);
	EXPECT_EQ(fsm_map_def_claim(m.get(), ra.id, ra.generation, 300, 640), 0);
}

/*
 * An id defined at 0 and used at 10 (not due): the sweep writes its
 * definition once its stamp is a horizon behind, with the id's frames,
 * and not again unless it is used again; an id defined and not used since
 * is never swept.
 */
TEST(DefSweep, DefinesAfterTheLastUseOnce)
{
	CpuOverride cpus(1);
	auto m = make_map(make_params(8));	/* 256 stamps: 32 sets */
	ASSERT_TRUE(m);
	cpus.on(0);
	Stack a = make_stack(11, 7), b = make_stack(12, 9);
	fsm_insert_result ra{}, rb{};
	ASSERT_EQ(insert(m.get(), a, &ra), 0);
	ASSERT_EQ(insert(m.get(), b, &rb), 0);
	EXPECT_EQ(fsm_map_def_claim(m.get(), ra.id, ra.generation, 0, 640), 1);
	EXPECT_EQ(fsm_map_def_claim(m.get(), rb.id, rb.generation, 0, 640), 1);
	EXPECT_EQ(fsm_map_def_claim(m.get(), ra.id, ra.generation, 10, 640), 0);

	SweepLog log;
	/* a round per 320 positions: lag in 256ths of a round */
	EXPECT_EQ(fsm_map_def_sweep_lag(m.get(), 0, 640), 0u);
	EXPECT_EQ(fsm_map_def_sweep_lag(m.get(), 160, 640), 128u);	/* half */
	EXPECT_EQ(fsm_map_def_sweep_lag(m.get(), 5000, 640), 256u);	/* a round at most */
	EXPECT_EQ(fsm_map_def_sweep_lag(m.get(), 5000, 0), 0u);
	EXPECT_EQ(log.run(m.get(), 1, 640, 640), 0u);	/* not a horizon behind yet */
	EXPECT_LE(fsm_map_def_sweep_lag(m.get(), 640, 640), 8u);	/* on time: < a set */
	/* every set is visited once per horizon / 2 = 320 positions */
	EXPECT_EQ(log.run(m.get(), 640, 640 + 330, 640), 1u);
	ASSERT_EQ(log.defs.size(), 1u);
	EXPECT_EQ(log.defs[0].id, ra.id);
	EXPECT_EQ(log.defs[0].gen, ra.generation);
	EXPECT_EQ(log.defs[0].ips, a);
	/* clean now: a round later, nothing */
	EXPECT_EQ(log.run(m.get(), 970, 3000, 640), 0u);
	/* the sweep stamped its position: a use soon after is not due */
	EXPECT_LT(log.defs.size(), 2u);
	EXPECT_EQ(stats_of(m.get()).defs_swept, 1u);
}

/* At most 4 definitions and 16 sets a call; the rest follow. */
TEST(DefSweep, BoundedPerCall)
{
	CpuOverride cpus(1);
	auto m = make_map(make_params(8));
	ASSERT_TRUE(m);
	cpus.on(0);
	std::vector<fsm_insert_result> rs(40);
	for (unsigned i = 0; i < 40; i++) {
		ASSERT_EQ(insert(m.get(), make_stack(100 + i, 3), &rs[i]), 0);
		EXPECT_EQ(fsm_map_def_claim(m.get(), rs[i].id, rs[i].generation, 0, 100), 1);
		EXPECT_EQ(fsm_map_def_claim(m.get(), rs[i].id, rs[i].generation, 1, 100), 0);
	}
	SweepLog log;
	/* a whole round due at once: one call visits at most 16 sets */
	unsigned n = fsm_map_def_sweep(m.get(), 100000, 100, SweepLog::fn, &log);
	EXPECT_LE(n, 4u);
	EXPECT_EQ(n, log.defs.size());
	for (unsigned p = 100001; log.defs.size() < 40 && p < 101000; p++) {
		unsigned k = fsm_map_def_sweep(m.get(), p, 100, SweepLog::fn, &log);
		EXPECT_LE(k, 4u);
	}
	EXPECT_EQ(log.defs.size(), 40u);
	std::set<unsigned> ids;
	for (const auto &d : log.defs)
		ids.insert(d.id);
	EXPECT_EQ(ids.size(), 40u);
	/* sweeps are no lookups: hits + inserts are the 80 inserts made */
	auto st = stats_of(m.get());
	EXPECT_EQ(st.inserts, 40u);
	EXPECT_EQ(st.hits, 0u);
}

/* A refused write leaves the id to the next visit; another generation's
 * stamps are never swept. */
TEST(DefSweep, RefusedRetriedOtherGenerationSkipped)
{
	CpuOverride cpus(1);
	auto m = make_map(make_params(6));	/* 64 stamps: 8 sets */
	ASSERT_TRUE(m);
	cpus.on(0);
	fsm_insert_result r{};
	ASSERT_EQ(insert(m.get(), make_stack(5, 5), &r), 0);
	EXPECT_EQ(fsm_map_def_claim(m.get(), r.id, r.generation, 0, 50), 1);
	EXPECT_EQ(fsm_map_def_claim(m.get(), r.id, r.generation, 1, 50), 0);
	SweepLog log;
	log.refuse = true;
	EXPECT_EQ(log.run(m.get(), 2, 200, 50), 0u);
	log.refuse = false;
	EXPECT_EQ(log.run(m.get(), 200, 300, 50), 1u);
	EXPECT_EQ(log.defs.size(), 1u);

	/* dirty in generation 1, then a reset: nothing to sweep */
	EXPECT_EQ(fsm_map_def_claim(m.get(), r.id, r.generation, 301, 0), 1);
	EXPECT_EQ(fsm_map_def_claim(m.get(), r.id, r.generation, 302, 50), 0);
	fsm_map_reset(m.get());
	ASSERT_EQ(insert(m.get(), make_stack(6, 5), &r), 0);	/* id 0 again, gen 2 */
	EXPECT_EQ(log.run(m.get(), 400, 600, 50), 0u);
	EXPECT_EQ(log.defs.size(), 1u);
}
