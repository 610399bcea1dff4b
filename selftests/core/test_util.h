/* SPDX-License-Identifier: GPL-2.0 */
/*
 * test_util.h - helpers shared by the core tests: map ownership, stack
 * generators, record checks, hook-driven pauses.
 */
#ifndef FSM_TEST_UTIL_H
#define FSM_TEST_UTIL_H

#include "fsm_core.h"
#include "fsm_test_hooks.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

using u64 = unsigned long long;
using Stack = std::vector<u64>;

/* Owns a map; destroys it at scope exit. */
struct MapDeleter {
	void operator()(fsm_map *m) const { fsm_map_destroy(m); }
};
using MapPtr = std::unique_ptr<fsm_map, MapDeleter>;

inline fsm_map_params make_params(unsigned bits, unsigned max_depth = 64,
				  unsigned long long arena = 0, unsigned flags = 0)
{
	fsm_map_params p{};
	p.bits = bits;
	p.max_depth = max_depth;
	p.arena_bytes = arena;
	p.key[0] = 0x243f6a8885a308d3ull;
	p.key[1] = 0x13198a2e03707344ull;
	p.test_flags = flags;
	return p;
}

inline MapPtr make_map(const fsm_map_params &p)
{
	int err = 1;
	fsm_map *m = fsm_map_create(&p, &err);
	EXPECT_NE(m, nullptr) << "fsm_map_create err " << err;
	if (m) {
		EXPECT_EQ(err, 0);
	}
	return MapPtr(m);
}

inline u64 splitmix(u64 x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/*
 * A self-describing stack: frame 0 encodes (seed, depth), every other frame
 * is a function of frame 0 and its position. Distinct (seed, depth) give
 * distinct stacks; stack_consistent() tells whether a record could only
 * have been written completely. Frames look like kernel text addresses.
 */
inline Stack make_stack(uint32_t seed, uint32_t depth)
{
	Stack s(depth);
	s[0] = 0xffffffff80000000ull | ((u64)seed << 8) | depth;
	for (uint32_t i = 1; i < depth; i++)
		s[i] = 0xffffffff81000000ull | (splitmix(s[0] * 64 + i) & 0xffffffull);
	return s;
}

inline bool stack_consistent(const u64 *ips, unsigned nr)
{
	if (nr == 0 || (ips[0] & 0xff) != nr)
		return false;
	for (unsigned i = 1; i < nr; i++)
		if (ips[i] != (0xffffffff81000000ull | (splitmix(ips[0] * 64 + i) & 0xffffffull)))
			return false;
	return true;
}

inline int insert(fsm_map *m, const Stack &s, fsm_insert_result *r, unsigned epoch = 0)
{
	return fsm_map_insert(m, s.data(), (unsigned)s.size(), epoch, r);
}

/* The record of @id equals @s. */
inline ::testing::AssertionResult record_is(const fsm_map *m, unsigned id, const Stack &s)
{
	const u64 *ips = nullptr;
	unsigned nr = 0;
	u64 hits = 0;
	int rc = fsm_map_lookup_id(m, id, &ips, &nr, &hits);
	if (rc)
		return ::testing::AssertionFailure() << "lookup_id(" << id << ") = " << rc;
	if (Stack(ips, ips + nr) != s)
		return ::testing::AssertionFailure() << "record of id " << id << " differs";
	return ::testing::AssertionSuccess();
}

inline struct fsm_map_stats stats_of(const fsm_map *m)
{
	struct fsm_map_stats st{};
	fsm_map_stats(m, &st);
	return st;
}

inline u64 total_drops(const struct fsm_map_stats &st)
{
	u64 d = 0;
	for (int i = 1; i < FSM_DROP_NR_REASONS; i++)
		d += st.drops[i];
	return d;
}

/*
 * HookPause: makes the thread that armed it stop the first time it reaches
 * @point inside fsm_map_insert(), until release(). Only the arming thread
 * is affected (thread-local), so other threads run the normal path.
 */
class HookPause {
public:
	explicit HookPause(unsigned point) : point_(point) {}
	/* Called by the thread that will be paused, before its insert. */
	void arm();
	/* Wait (bounded, fails the test) until the armed thread is paused. */
	bool wait_reached(int timeout_ms = 10000);
	void release() { released_.store(true); }
	bool reached() const { return reached_.load(); }

	/* Used by the hook. */
	void on_hook(unsigned point);

private:
	unsigned point_;
	std::atomic<bool> reached_{false};
	std::atomic<bool> released_{false};
	bool fired_ = false;	/* touched by the armed thread only */
};

/* Call @fn(point) at every hook point reached by the calling thread
 * (empty function: none). */
void set_thread_hook(std::function<void(unsigned point)> fn);

#endif /* FSM_TEST_UTIL_H */
