// SPDX-License-Identifier: GPL-2.0
/*
 * test_semantics.cpp - single-threaded behaviour of the map through the C
 * ABI: ids, dedup, collisions, limits, reset, statistics, FIRST_EMIT.
 */
#include "test_util.h"
#include "test_platform.h"

#include "stackmap.h"	/* internal limits: kProbeLimit, ... */

#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>

namespace {

constexpr unsigned kRecHdr = fsm::kRecordHeaderBytes;

unsigned long long rec_bytes(unsigned nr) { return kRecHdr + 8ull * nr; }

TEST(Create, RejectsBadParams)
{
	struct Case {
		const char *what;
		fsm_map_params p;
	} cases[] = {
		{"bits below min", make_params(FSM_BITS_MIN - 1)},
		{"bits above max", make_params(FSM_BITS_MAX + 1)},
		{"depth 0", make_params(8, 0)},
		{"depth 257", make_params(8, FSM_MAX_MAP_DEPTH + 1)},
		{"arena below one record", make_params(8, 64, rec_bytes(64) - 8)},
		{"arena above capacity*max record", make_params(8, 64, 256 * rec_bytes(64) + 8)},
		{"unknown test flag", make_params(8, 64, 0, 0x80)},
	};
	for (auto &c : cases) {
		int err = 0;
		fsm_map *m = fsm_map_create(&c.p, &err);
		EXPECT_EQ(m, nullptr) << c.what;
		EXPECT_EQ(err, -22) << c.what;
		fsm_map_destroy(m);
	}
	int err = 0;
	EXPECT_EQ(fsm_map_create(nullptr, &err), nullptr);
	EXPECT_EQ(err, -22);
}

TEST(Create, AcceptsLimitsAndReportsSizes)
{
	for (unsigned bits : {unsigned(FSM_BITS_MIN), 10u, unsigned(FSM_BITS_MAX)}) {
		auto m = make_map(make_params(bits));
		ASSERT_TRUE(m);
		auto st = stats_of(m.get());
		EXPECT_EQ(st.bits, bits);
		EXPECT_EQ(st.capacity, 1u << bits);
		EXPECT_EQ(st.table_slots, 2u << bits);
		EXPECT_EQ(st.max_depth, 64u);
		EXPECT_EQ(st.generation, 1u);
		EXPECT_EQ(st.entries, 0u);
		/* Default arena: capacity * (header + 16 frames). */
		EXPECT_EQ(st.arena_size, (1ull << bits) * rec_bytes(16));
		EXPECT_EQ(st.arena_used, 0u);
		/* Everything allocated: at least arena + slots + index + hit shards. */
		unsigned long long parts = st.arena_size + 8ull * st.table_slots +
					   4ull * st.capacity * 2;
		EXPECT_GE(st.memory_bytes, parts);
		EXPECT_LE(st.memory_bytes, parts + (1u << 20) + 4ull * st.capacity * 8);
	}
	/* Small depth: default arena sized for max_depth frames. */
	auto m = make_map(make_params(6, 4));
	EXPECT_EQ(stats_of(m.get()).arena_size, 64 * rec_bytes(4));
	/* Explicit arena of exactly one deepest record and of the maximum. */
	auto a = make_map(make_params(6, 64, rec_bytes(64)));
	auto b = make_map(make_params(6, 64, 64 * rec_bytes(64)));
	EXPECT_TRUE(a && b);
}

/*
 * Wide keys (the user stack map: two header words + a pair per frame): up
 * to FSM_MAX_MAP_DEPTH words; stacks differing only in their last word or
 * in a header word are distinct, identical ones share an id.
 */
TEST(Create, WideKeysUpToMapDepth)
{
	auto m = make_map(make_params(6, FSM_MAX_MAP_DEPTH));
	ASSERT_TRUE(m);
	EXPECT_EQ(stats_of(m.get()).max_depth, unsigned(FSM_MAX_MAP_DEPTH));
	Stack a(FSM_MAX_MAP_DEPTH), b;
	for (unsigned i = 0; i < a.size(); i++)
		a[i] = splitmix(i);
	b = a;
	b.back() ^= 1;
	Stack c = a;
	c[0] ^= 1;	/* another address space, same frames */
	fsm_insert_result ra{}, rb{}, rc{}, ra2{};
	ASSERT_EQ(fsm_map_insert(m.get(), a.data(), a.size(), 1, &ra), 0);
	ASSERT_EQ(fsm_map_insert(m.get(), b.data(), b.size(), 1, &rb), 0);
	ASSERT_EQ(fsm_map_insert(m.get(), c.data(), c.size(), 1, &rc), 0);
	ASSERT_EQ(fsm_map_insert(m.get(), a.data(), a.size(), 1, &ra2), 0);
	EXPECT_NE(ra.id, rb.id);
	EXPECT_NE(ra.id, rc.id);
	EXPECT_EQ(ra.id, ra2.id);
	EXPECT_TRUE(ra.flags & FSM_INSERT_FIRST_EMIT);
	EXPECT_FALSE(ra2.flags & FSM_INSERT_FIRST_EMIT);
	const unsigned long long *ips;
	unsigned int nr;
	ASSERT_EQ(fsm_map_lookup_id(m.get(), rb.id, &ips, &nr, nullptr), 0);
	ASSERT_EQ(nr, unsigned(FSM_MAX_MAP_DEPTH));
	EXPECT_EQ(Stack(ips, ips + nr), b);
	Stack d(FSM_MAX_MAP_DEPTH + 1, 7);
	EXPECT_EQ(fsm_map_insert(m.get(), d.data(), d.size(), 1, &ra2), -FSM_DROP_INVALID);
}

TEST(Create, NoMemory)
{
	test_platform_fail_next_alloc();
	auto p = make_params(8);
	int err = 0;
	EXPECT_EQ(fsm_map_create(&p, &err), nullptr);
	EXPECT_EQ(err, -12);
}

TEST(Insert, SameStackSameIdAndLookup)
{
	auto m = make_map(make_params(8));
	Stack s = make_stack(1, 16);
	fsm_insert_result r{}, r2{};

	ASSERT_EQ(insert(m.get(), s, &r), 0);
	EXPECT_EQ(r.id, 0u);
	EXPECT_EQ(r.generation, 1u);
	EXPECT_EQ(r.flags, unsigned(FSM_INSERT_NEW));
	ASSERT_EQ(insert(m.get(), s, &r2), 0);
	EXPECT_EQ(r2.id, r.id);
	EXPECT_EQ(r2.generation, 1u);
	EXPECT_EQ(r2.flags, 0u);
	EXPECT_TRUE(record_is(m.get(), r.id, s));
	EXPECT_EQ(fsm_map_nr_ids(m.get()), 1u);
	auto st = stats_of(m.get());
	EXPECT_EQ(st.entries, 1u);
	EXPECT_EQ(st.inserts, 1u);
	EXPECT_EQ(st.hits, 1u);
	EXPECT_EQ(st.arena_used, rec_bytes(16));
}

TEST(Insert, DenseIdsInCreationOrder)
{
	auto m = make_map(make_params(10));
	std::vector<Stack> stacks;
	for (unsigned i = 0; i < 500; i++)
		stacks.push_back(make_stack(i, 1 + i % 64));
	for (unsigned i = 0; i < stacks.size(); i++) {
		fsm_insert_result r{};
		ASSERT_EQ(insert(m.get(), stacks[i], &r), 0);
		EXPECT_EQ(r.id, i);
		EXPECT_TRUE(r.flags & FSM_INSERT_NEW);
	}
	/* Second pass in reverse: all hits with the same ids. */
	for (unsigned i = stacks.size(); i-- > 0;) {
		fsm_insert_result r{};
		ASSERT_EQ(insert(m.get(), stacks[i], &r), 0);
		EXPECT_EQ(r.id, i);
		EXPECT_EQ(r.flags, 0u);
	}
	for (unsigned i = 0; i < stacks.size(); i++)
		EXPECT_TRUE(record_is(m.get(), i, stacks[i]));
	EXPECT_EQ(fsm_map_nr_ids(m.get()), 500u);
	unsigned long long bytes = 0;
	for (auto &s : stacks)
		bytes += rec_bytes(s.size());
	EXPECT_EQ(stats_of(m.get()).arena_used, bytes);
}

TEST(Insert, PrefixesAndNearStacksAreDistinct)
{
	auto m = make_map(make_params(8));
	Stack a = make_stack(7, 10);
	Stack prefix(a.begin(), a.begin() + 9);
	Stack longer = a;
	longer.push_back(0);
	Stack one_bit = a;
	one_bit[5] ^= 1;
	Stack swapped = a;
	std::swap(swapped[2], swapped[3]);
	std::vector<Stack> all = {a, prefix, longer, one_bit, swapped, Stack{0}, Stack{0, 0}};
	std::set<unsigned> ids;
	for (auto &s : all) {
		fsm_insert_result r{};
		ASSERT_EQ(insert(m.get(), s, &r), 0);
		ids.insert(r.id);
		EXPECT_TRUE(record_is(m.get(), r.id, s));
	}
	EXPECT_EQ(ids.size(), all.size());
}

class ForcedCollision : public ::testing::TestWithParam<unsigned> {};

TEST_P(ForcedCollision, DistinctIdsAndCorrectLookups)
{
	auto m = make_map(make_params(8, 64, 0, GetParam()));
	const unsigned n = fsm::kProbeLimit;	/* all in one probe run */
	std::vector<Stack> stacks;
	for (unsigned i = 0; i < n; i++)
		stacks.push_back(make_stack(100 + i, 4 + i % 8));
	for (unsigned i = 0; i < n; i++) {
		fsm_insert_result r{};
		ASSERT_EQ(insert(m.get(), stacks[i], &r), 0) << i;
		EXPECT_EQ(r.id, i);
		EXPECT_EQ(r.flags, unsigned(FSM_INSERT_NEW));
	}
	for (unsigned i = 0; i < n; i++) {
		fsm_insert_result r{};
		ASSERT_EQ(insert(m.get(), stacks[i], &r), 0);
		EXPECT_EQ(r.id, i);
		EXPECT_EQ(r.flags, 0u);
		EXPECT_TRUE(record_is(m.get(), i, stacks[i]));
	}
	/* One more distinct stack does not fit in the probe window. */
	fsm_insert_result r{};
	auto before = stats_of(m.get());
	EXPECT_EQ(insert(m.get(), make_stack(999, 5), &r), -FSM_DROP_PROBE_LIMIT);
	auto after = stats_of(m.get());
	EXPECT_EQ(after.drops[FSM_DROP_PROBE_LIMIT], before.drops[FSM_DROP_PROBE_LIMIT] + 1);
	/* Nothing was reserved for it. */
	EXPECT_EQ(after.arena_used, before.arena_used);
	EXPECT_EQ(after.entries, before.entries);
	/* The map still works for the others. */
	ASSERT_EQ(insert(m.get(), stacks[n - 1], &r), 0);
	EXPECT_EQ(r.id, n - 1);
}

INSTANTIATE_TEST_SUITE_P(Flags, ForcedCollision,
			 ::testing::Values(unsigned(FSM_TEST_HASH_SAME_BUCKET),
					   unsigned(FSM_TEST_HASH_SAME_TAG)),
			 [](const auto &info) {
				 return std::string(info.param == FSM_TEST_HASH_SAME_TAG ?
						    "SameTag" : "SameBucket");
			 });

/*
 * Every frame is compared, whatever the depth's parity (frames_equal()
 * takes them two at a time, the last one of an odd depth alone): with one
 * hash for every stack, a stack that differs from a resident one in one
 * frame only, or only in its length, gets an id of its own, and each keeps
 * hitting its own id.
 */
TEST(Compare, EveryFrameCompared)
{
	for (unsigned nr = 1; nr <= 19; nr++) {
		auto m = make_map(make_params(8, 64, 0, FSM_TEST_HASH_SAME_TAG));
		std::vector<Stack> stacks = {make_stack(500 + nr, nr)};
		for (unsigned p = 0; p < nr; p++) {
			Stack s = stacks[0];
			s[p] ^= 1ull << (p % 64);
			stacks.push_back(s);
		}
		stacks.emplace_back(stacks[0].begin(), stacks[0].end() - 1);
		if (stacks.back().empty())
			stacks.pop_back();
		for (unsigned i = 0; i < stacks.size(); i++) {
			fsm_insert_result r{};
			ASSERT_EQ(insert(m.get(), stacks[i], &r), 0) << nr << "/" << i;
			EXPECT_EQ(r.id, i) << "nr " << nr << ", stack " << i;
			EXPECT_EQ(r.flags, unsigned(FSM_INSERT_NEW)) << nr << "/" << i;
		}
		for (unsigned i = 0; i < stacks.size(); i++) {
			fsm_insert_result r{};
			ASSERT_EQ(insert(m.get(), stacks[i], &r), 0);
			EXPECT_EQ(r.id, i) << "nr " << nr << ", stack " << i;
			EXPECT_TRUE(record_is(m.get(), i, stacks[i]));
		}
	}
}

TEST(Limits, MapFull)
{
	auto m = make_map(make_params(FSM_BITS_MIN, 64));
	const unsigned cap = 1u << FSM_BITS_MIN;
	fsm_insert_result r{};
	for (unsigned i = 0; i < cap; i++)
		ASSERT_EQ(insert(m.get(), make_stack(i, 8), &r), 0) << i;
	EXPECT_EQ(insert(m.get(), make_stack(cap, 8), &r), -FSM_DROP_MAP_FULL);
	EXPECT_EQ(insert(m.get(), make_stack(cap + 1, 2), &r), -FSM_DROP_MAP_FULL);
	/* Known stacks are still found. */
	ASSERT_EQ(insert(m.get(), make_stack(3, 8), &r), 0);
	EXPECT_EQ(r.id, 3u);
	auto st = stats_of(m.get());
	EXPECT_EQ(st.drops[FSM_DROP_MAP_FULL], 2u);
	EXPECT_EQ(st.entries, cap);
	EXPECT_EQ(st.arena_used, cap * rec_bytes(8));
	EXPECT_EQ(fsm_map_lookup_id(m.get(), cap, nullptr, nullptr, nullptr), -22);
}

TEST(Limits, ArenaFull)
{
	/* Room for 3 records of 10 frames and one of 1 frame. */
	auto m = make_map(make_params(8, 16, 3 * rec_bytes(10) + rec_bytes(1)));
	fsm_insert_result r{};
	for (unsigned i = 0; i < 3; i++)
		ASSERT_EQ(insert(m.get(), make_stack(i, 10), &r), 0);
	EXPECT_EQ(insert(m.get(), make_stack(10, 2), &r), -FSM_DROP_ARENA_FULL);
	EXPECT_EQ(insert(m.get(), make_stack(11, 1), &r), 0);	/* exactly fits */
	EXPECT_EQ(insert(m.get(), make_stack(12, 1), &r), -FSM_DROP_ARENA_FULL);
	ASSERT_EQ(insert(m.get(), make_stack(1, 10), &r), 0);
	EXPECT_EQ(r.id, 1u);
	auto st = stats_of(m.get());
	EXPECT_EQ(st.drops[FSM_DROP_ARENA_FULL], 2u);
	EXPECT_EQ(st.arena_used, st.arena_size);
	EXPECT_EQ(st.entries, 4u);
}

TEST(Limits, InvalidArguments)
{
	auto m = make_map(make_params(8, 32));
	fsm_insert_result r{};
	Stack deep = make_stack(1, 33);
	EXPECT_EQ(fsm_map_insert(m.get(), deep.data(), 0, 0, &r), -FSM_DROP_INVALID);
	EXPECT_EQ(fsm_map_insert(m.get(), deep.data(), 33, 0, &r), -FSM_DROP_INVALID);
	EXPECT_EQ(fsm_map_insert(m.get(), nullptr, 3, 0, &r), -FSM_DROP_INVALID);
	EXPECT_EQ(fsm_map_insert(m.get(), deep.data(), 3, 0, nullptr), -FSM_DROP_INVALID);
	EXPECT_EQ(fsm_map_insert(nullptr, deep.data(), 3, 0, &r), -FSM_DROP_INVALID);
	EXPECT_EQ(fsm_map_insert(m.get(), deep.data(), 32, 0, &r), 0);
	auto st = stats_of(m.get());
	EXPECT_EQ(st.drops[FSM_DROP_INVALID], 4u);	/* the NULL map is not counted */
	EXPECT_EQ(st.entries, 1u);
}

TEST(Lookup, UnknownAndOutOfRangeIds)
{
	auto m = make_map(make_params(6));
	const u64 *ips = nullptr;
	unsigned nr = 0;
	u64 hits = 0;
	EXPECT_EQ(fsm_map_lookup_id(m.get(), 0, &ips, &nr, &hits), -2);
	EXPECT_EQ(fsm_map_lookup_id(m.get(), 63, &ips, &nr, &hits), -2);
	EXPECT_EQ(fsm_map_lookup_id(m.get(), 64, &ips, &nr, &hits), -22);
	EXPECT_EQ(fsm_map_lookup_id(m.get(), FSM_ID_NONE, &ips, &nr, &hits), -22);
	EXPECT_EQ(fsm_map_lookup_id(nullptr, 0, &ips, &nr, &hits), -22);
}

TEST(Reset, NewGenerationIdsRestart)
{
	auto m = make_map(make_params(8));
	fsm_insert_result r{};
	for (unsigned i = 0; i < 20; i++)
		ASSERT_EQ(insert(m.get(), make_stack(i, 12), &r), 0);
	auto before = stats_of(m.get());

	EXPECT_EQ(fsm_map_reset(m.get()), 2u);
	auto st = stats_of(m.get());
	EXPECT_EQ(st.generation, 2u);
	EXPECT_EQ(st.entries, 0u);
	EXPECT_EQ(st.arena_used, 0u);
	EXPECT_EQ(fsm_map_nr_ids(m.get()), 0u);
	for (unsigned id = 0; id < 20; id++)
		EXPECT_EQ(fsm_map_lookup_id(m.get(), id, nullptr, nullptr, nullptr), -2);
	/* Cumulative statistics survive. */
	EXPECT_EQ(st.inserts, before.inserts);
	EXPECT_EQ(st.hits, before.hits);

	/* Old stacks come back as new stacks with new ids, in the new order. */
	ASSERT_EQ(insert(m.get(), make_stack(15, 12), &r), 0);
	EXPECT_EQ(r.id, 0u);
	EXPECT_EQ(r.generation, 2u);
	EXPECT_EQ(r.flags, unsigned(FSM_INSERT_NEW));
	ASSERT_EQ(insert(m.get(), make_stack(3, 12), &r), 0);
	EXPECT_EQ(r.id, 1u);
	EXPECT_TRUE(record_is(m.get(), 0, make_stack(15, 12)));
	EXPECT_TRUE(record_is(m.get(), 1, make_stack(3, 12)));
	u64 hits = 99;
	ASSERT_EQ(fsm_map_lookup_id(m.get(), 0, nullptr, nullptr, &hits), 0);
	EXPECT_EQ(hits, 1u);	/* per-stack hits belong to the generation */

	EXPECT_EQ(fsm_map_reset(m.get()), 3u);
	EXPECT_EQ(fsm_map_reset(m.get()), 4u);
	ASSERT_EQ(insert(m.get(), make_stack(3, 12), &r), 0);
	EXPECT_EQ(r.generation, 4u);
	EXPECT_EQ(r.id, 0u);
}

TEST(Reset, FullMapBecomesUsableAgain)
{
	auto m = make_map(make_params(FSM_BITS_MIN, 8, 64 * rec_bytes(4)));
	fsm_insert_result r{};
	unsigned i = 0;
	while (insert(m.get(), make_stack(i, 8), &r) == 0)
		i++;
	EXPECT_EQ(i, 38u);	/* arena: 64 * 48 bytes = 38 records of 80 */
	fsm_map_reset(m.get());
	for (unsigned j = 0; j < 64; j++)
		ASSERT_EQ(insert(m.get(), make_stack(1000 + j, 4), &r), 0);
	EXPECT_EQ(r.id, 63u);
}

TEST(Stats, EveryCallCountedOnce)
{
	auto m = make_map(make_params(FSM_BITS_MIN, 16, 40 * rec_bytes(8)));
	std::mt19937_64 rng(42);
	u64 calls = 0, ok = 0, created = 0;
	std::map<int, u64> drops;
	for (unsigned i = 0; i < 5000; i++) {
		fsm_insert_result r{};
		unsigned kind = rng() % 10;
		int rc;
		if (kind == 0) {
			Stack s = make_stack(1, 17);	/* too deep */
			rc = insert(m.get(), s, &r);
		} else {
			rc = insert(m.get(), make_stack(rng() % 100, 1 + rng() % 16), &r);
		}
		calls++;
		if (rc == 0) {
			ok++;
			created += !!(r.flags & FSM_INSERT_NEW);
		} else {
			drops[-rc]++;
		}
		if (i == 2500)
			fsm_map_reset(m.get());
	}
	auto st = stats_of(m.get());
	EXPECT_EQ(st.hits + st.inserts + total_drops(st), calls);
	EXPECT_EQ(st.inserts, created);
	EXPECT_EQ(st.hits, ok - created);
	for (int reason = 1; reason < FSM_DROP_NR_REASONS; reason++)
		EXPECT_EQ(st.drops[reason], drops[reason]) << fsm_drop_reason_name(reason);
	EXPECT_GT(drops[FSM_DROP_INVALID], 0u);
	EXPECT_GT(drops[FSM_DROP_ARENA_FULL] + drops[FSM_DROP_MAP_FULL], 0u);
	EXPECT_EQ(st.lost_races, 0u);
}

TEST(Stats, PerStackHitsAcrossCpuShards)
{
	/* 13 CPUs: 13 stat shards, 8 hit shards, CPU numbers out of range too. */
	test_platform_set_nr_cpus(13);
	auto m = make_map(make_params(8));
	test_platform_set_nr_cpus(0);
	Stack a = make_stack(1, 9), b = make_stack(2, 9);
	fsm_insert_result r{};
	for (int i = 0; i < 200; i++) {
		test_platform_set_thread_cpu(i % 20);
		ASSERT_EQ(insert(m.get(), i % 3 ? a : b, &r), 0);
	}
	test_platform_set_thread_cpu(-1);
	u64 ha = 0, hb = 0;
	ASSERT_EQ(fsm_map_lookup_id(m.get(), 0, nullptr, nullptr, &hb), 0);
	ASSERT_EQ(fsm_map_lookup_id(m.get(), 1, nullptr, nullptr, &ha), 0);
	EXPECT_EQ(hb, 67u);	/* i % 3 == 0: i = 0, 3, ..., 198; b was created first */
	EXPECT_EQ(ha, 133u);
	auto st = stats_of(m.get());
	EXPECT_EQ(st.hits, 198u);
	EXPECT_EQ(st.inserts, 2u);
}

TEST(FirstEmit, OncePerEpochPerId)
{
	auto m = make_map(make_params(8));
	Stack a = make_stack(1, 8), b = make_stack(2, 8);
	fsm_insert_result r{};

	/* Creator with epoch 0: no FIRST_EMIT; later epochs elect one caller. */
	ASSERT_EQ(insert(m.get(), a, &r, 0), 0);
	EXPECT_EQ(r.flags, unsigned(FSM_INSERT_NEW));
	ASSERT_EQ(insert(m.get(), a, &r, 0), 0);
	EXPECT_EQ(r.flags, 0u);
	ASSERT_EQ(insert(m.get(), a, &r, 5), 0);
	EXPECT_EQ(r.flags, unsigned(FSM_INSERT_FIRST_EMIT));
	ASSERT_EQ(insert(m.get(), a, &r, 5), 0);
	EXPECT_EQ(r.flags, 0u);
	ASSERT_EQ(insert(m.get(), a, &r, 0), 0);	/* 0 never asks */
	EXPECT_EQ(r.flags, 0u);
	ASSERT_EQ(insert(m.get(), a, &r, 6), 0);
	EXPECT_EQ(r.flags, unsigned(FSM_INSERT_FIRST_EMIT));
	ASSERT_EQ(insert(m.get(), a, &r, 5), 0);	/* going back is a change too */
	EXPECT_EQ(r.flags, unsigned(FSM_INSERT_FIRST_EMIT));

	/* Creator with an epoch is the first emitter. */
	ASSERT_EQ(insert(m.get(), b, &r, 6), 0);
	EXPECT_EQ(r.flags, unsigned(FSM_INSERT_NEW | FSM_INSERT_FIRST_EMIT));
	ASSERT_EQ(insert(m.get(), b, &r, 6), 0);
	EXPECT_EQ(r.flags, 0u);

	/* A new generation starts with fresh records. */
	fsm_map_reset(m.get());
	ASSERT_EQ(insert(m.get(), a, &r, 5), 0);
	EXPECT_EQ(r.flags, unsigned(FSM_INSERT_NEW | FSM_INSERT_FIRST_EMIT));
}

TEST(Names, DropReasons)
{
	EXPECT_STREQ(fsm_drop_reason_name(FSM_DROP_MAP_FULL), "map_full");
	EXPECT_STREQ(fsm_drop_reason_name(FSM_DROP_ARENA_FULL), "arena_full");
	EXPECT_STREQ(fsm_drop_reason_name(FSM_DROP_PROBE_LIMIT), "probe_limit");
	EXPECT_STREQ(fsm_drop_reason_name(FSM_DROP_BUSY), "busy");
	EXPECT_STREQ(fsm_drop_reason_name(FSM_DROP_RESETTING), "resetting");
	EXPECT_STREQ(fsm_drop_reason_name(FSM_DROP_INVALID), "invalid");
	EXPECT_STREQ(fsm_drop_reason_name(FSM_DROP_NR_REASONS), "unknown");
	EXPECT_STREQ(fsm_drop_reason_name(12345), "unknown");
}

TEST(SelfCheck, Passes)
{
	EXPECT_EQ(fsm_core_selfcheck(), 0);
}

} // namespace
