// SPDX-License-Identifier: GPL-2.0
/*
 * test_hash.cpp - properties of the keyed stack hash (src/core/hash.h) and
 * of the table it drives: key dependence, length dependence, bucket spread
 * on structured inputs, avalanche, and no probe-limit drops at full load.
 */
#include "test_util.h"

#include "hash.h"
#include "stackmap.h"

#include <algorithm>
#include <random>
#include <set>

namespace {

fsm::HashKey key_of(u64 a, u64 b) { return fsm::hash_key_expand(a, b); }

u64 h(const fsm::HashKey &k, const Stack &s)
{
	return fsm::hash_stack(k, s.data(), (unsigned)s.size());
}

TEST(Hash, DependsOnKey)
{
	auto k1 = key_of(1, 2), k2 = key_of(1, 3), k3 = key_of(2, 2);
	unsigned same12 = 0, same13 = 0;
	for (unsigned i = 0; i < 2000; i++) {
		Stack s = make_stack(i, 1 + i % 64);
		same12 += h(k1, s) == h(k2, s);
		same13 += h(k1, s) == h(k3, s);
		/* Low bits (bucket) and tag move too, not just some bits. */
	}
	EXPECT_EQ(same12, 0u);
	EXPECT_EQ(same13, 0u);
	/* Bucket of the same stack under two keys: agree ~1/4096 of the time. */
	unsigned same_bucket = 0;
	for (unsigned i = 0; i < 4096; i++) {
		Stack s = make_stack(i, 16);
		same_bucket += (h(k1, s) & 4095) == (h(k2, s) & 4095);
	}
	EXPECT_LT(same_bucket, 12u);
}

TEST(Hash, DependsOnLengthAndEveryFrame)
{
	auto k = key_of(0x1234, 0x5678);
	std::set<u64> seen;
	Stack base = make_stack(5, 64);
	/* Every prefix, including ones ending in zero frames. */
	Stack zeros(64, 0);
	for (unsigned n = 1; n <= 64; n++) {
		EXPECT_TRUE(seen.insert(h(k, Stack(base.begin(), base.begin() + n))).second) << n;
		EXPECT_TRUE(seen.insert(h(k, Stack(zeros.begin(), zeros.begin() + n))).second) << n;
	}
	/* Every single-frame change, at every position and depth class. */
	for (unsigned n : {1u, 2u, 3u, 4u, 5u, 7u, 16u, 33u, 64u}) {
		Stack s(base.begin(), base.begin() + n);
		u64 h0 = h(k, s);
		for (unsigned i = 0; i < n; i++) {
			Stack t = s;
			t[i] += 8;
			EXPECT_NE(h(k, t), h0) << "depth " << n << " frame " << i;
			t = s;
			t[i] ^= 1ull << 63;
			EXPECT_NE(h(k, t), h0) << "depth " << n << " frame " << i;
		}
		if (n >= 2) {	/* frame order matters */
			Stack t = s;
			std::swap(t[0], t[n - 1]);
			EXPECT_NE(h(k, t), h0);
		}
	}
}

TEST(Hash, Avalanche)
{
	auto k = key_of(99, 100);
	std::mt19937_64 rng(7);
	double total = 0;
	unsigned trials = 0, low_bucket_same = 0;
	for (unsigned t = 0; t < 3000; t++) {
		Stack s(16);
		for (auto &x : s)
			x = 0xffffffff81000000ull | (rng() & 0xfffff8);
		unsigned frame = rng() % 16, bit = rng() % 64;
		Stack u = s;
		u[frame] ^= 1ull << bit;
		u64 d = h(k, s) ^ h(k, u);
		total += __builtin_popcountll(d);
		low_bucket_same += (d & 0x3fff) == 0;
		trials++;
	}
	double mean = total / trials;
	EXPECT_GT(mean, 30.0);
	EXPECT_LT(mean, 34.0);
	EXPECT_LT(low_bucket_same, 3u);
}

TEST(Hash, BucketSpreadOnStructuredStacks)
{
	/* Stacks that differ only in one frame by small aligned steps: the
	 * worst case for a weak mix. 2^14 stacks into 2^12 buckets. */
	auto k = key_of(0, 0);
	std::vector<unsigned> load(4096, 0);
	Stack s = make_stack(3, 16);
	for (unsigned i = 0; i < 16384; i++) {
		s[7] = 0xffffffff81000000ull + 16ull * i;
		load[h(k, s) & 4095]++;
	}
	unsigned mx = *std::max_element(load.begin(), load.end());
	unsigned empty = std::count(load.begin(), load.end(), 0u);
	EXPECT_LT(mx, 20u);	/* Poisson(4): P(>=20) ~ 1e-8 per bucket */
	EXPECT_LT(empty, 130u);	/* expected 4096 * e^-4 = 75 */
}

TEST(Hash, FullTableWithoutProbeLimitDrops)
{
	/* Fill every id of a 2^14 map with kernel-like stacks sharing outer
	 * frames, for a few keys; linear probing at load 1/2 must stay far
	 * below the probe bound. */
	for (u64 key = 1; key <= 3; key++) {
		auto p = make_params(14, 32, (1ull << 14) * (16 + 8 * 32));
		p.key[0] = key * 0x9e3779b97f4a7c15ull;
		p.key[1] = ~key;
		auto m = make_map(p);
		std::mt19937_64 rng(key);
		const u64 outer[4] = {0xffffffff81e0009aull, 0xffffffff81d6b2c5ull,
				      0xffffffff8123f100ull, 0xffffffff8124a7e2ull};
		unsigned ok = 0;
		for (unsigned i = 0; i < (1u << 14); i++) {
			unsigned depth = 8 + rng() % 17;
			Stack s(depth);
			for (unsigned f = 0; f < depth; f++)
				s[f] = f >= depth - 4 ? outer[f - (depth - 4)]
						      : 0xffffffff81000000ull + ((rng() % 40000) << 4) + 3;
			fsm_insert_result r{};
			int rc = insert(m.get(), s, &r);
			ASSERT_NE(rc, -FSM_DROP_PROBE_LIMIT) << "after " << i;
			ok += rc == 0;
		}
		auto st = stats_of(m.get());
		EXPECT_EQ(st.drops[FSM_DROP_PROBE_LIMIT], 0u);
		EXPECT_GT(ok, (1u << 14) - 10);	/* rare duplicate random stacks */
	}
}

} // namespace
