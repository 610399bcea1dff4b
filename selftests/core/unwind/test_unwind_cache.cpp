// SPDX-License-Identifier: GPL-2.0
/*
 * Per-entry unwind cache: cookies, the state machine (one cookie and one
 * walk per entry, no requeue after delivery, a new entry gets a new cookie),
 * exactly-once service per instance, and a two-thread race (task vs "NMI")
 * meant to run under ThreadSanitizer too.
 */
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include <unistd.h>

#include "unwind_cache.h"

namespace {

using u64 = unsigned long long;
using u32 = unsigned int;
namespace uw = fsm::unwind;

constexpr u64 kCpuBits = FSM_UWC_COOKIE_CPU_BITS;

/* A walk that writes a recognisable stack and counts its calls. */
struct FakeWalk {
	u64 tag = 0;
	u32 nr = 3;
	u32 stop = FSM_UW_STOP_END;
	int calls = 0;

	u32 operator()(u64 *e, u32 max, fsm_uw_result &res)
	{
		calls++;
		u32 n = nr < max ? nr : max;
		for (u32 i = 0; i < n; i++)
			e[i] = tag + i;
		res.nr = n;
		res.stop = stop;
		res.flags = 0;
		res.mode = FSM_UW_MODE_X86_64;
		return n;
	}
};

struct Cache : ::testing::Test {
	fsm_uwc_task t{};
	fsm_uwc_result r{};	/* the completer's result buffer */
	u64 counter[4] = {};	/* per-"CPU" cookie counters */

	int req(u64 sig, u32 inst, u64 *cookie, u32 cpu = 0)
	{
		return fsm_uwc_request(&t, sig, inst, &counter[cpu], cpu, cookie);
	}
	int complete(u64 exit_sig, FakeWalk &w, fsm_uwc_delivery &d)
	{
		return uw::cache_complete(t, &r, exit_sig, w, d);
	}
	u32 state(u64 *cookie = nullptr) { return fsm_uwc_state(&t, cookie); }
};

} /* namespace */

/* ---- cookies and signatures --------------------------------------------- */

TEST(UnwindCookie, LayoutAndNeverZero)
{
	u64 ctr = 0;
	EXPECT_EQ(fsm_uwc_cookie_next(&ctr, 5), (1ull << kCpuBits) | 5);
	EXPECT_EQ(fsm_uwc_cookie_next(&ctr, 5), (2ull << kCpuBits) | 5);
	/* Same counter value on another CPU: a different cookie. */
	u64 ctr2 = 0;
	EXPECT_EQ(fsm_uwc_cookie_next(&ctr2, 8191), (1ull << kCpuBits) | 8191);
	/* CPU numbers that do not fit, NULL counter. */
	EXPECT_EQ(fsm_uwc_cookie_next(&ctr2, 8192), 0ull);
	EXPECT_EQ(fsm_uwc_cookie_next(nullptr, 0), 0ull);
	/* The 48-bit sequence wraps to 1, never 0; bits 61..63 stay clear. */
	u64 ctr3 = (1ull << FSM_UWC_COOKIE_SEQ_BITS) - 2;
	u64 c1 = fsm_uwc_cookie_next(&ctr3, 3);
	EXPECT_EQ(c1, (((1ull << FSM_UWC_COOKIE_SEQ_BITS) - 1) << kCpuBits) | 3);
	EXPECT_EQ(c1 >> 61, 0ull);
	EXPECT_EQ(fsm_uwc_cookie_next(&ctr3, 3), (1ull << kCpuBits) | 3);
}

TEST(UnwindCookie, EntrySignature)
{
	fsm_uw_regs a{};
	a.ip = 0x401000;
	a.sp = 0x7ffd0000;
	a.fp = 0x7ffd0040;
	a.mode = FSM_UW_MODE_X86_64;
	fsm_uw_regs b = a;
	EXPECT_EQ(fsm_uwc_entry_sig(&a, 7), fsm_uwc_entry_sig(&b, 7));
	EXPECT_NE(fsm_uwc_entry_sig(&a, 7), fsm_uwc_entry_sig(&a, 8));
	b.ip++;
	EXPECT_NE(fsm_uwc_entry_sig(&a, 7), fsm_uwc_entry_sig(&b, 7));
	b = a;
	b.sp += 8;
	EXPECT_NE(fsm_uwc_entry_sig(&a, 7), fsm_uwc_entry_sig(&b, 7));
	b = a;
	b.fp += 16;
	EXPECT_NE(fsm_uwc_entry_sig(&a, 7), fsm_uwc_entry_sig(&b, 7));
	b = a;
	b.mode = FSM_UW_MODE_IA32;
	EXPECT_NE(fsm_uwc_entry_sig(&a, 7), fsm_uwc_entry_sig(&b, 7));
}

/* ---- state machine --------------------------------------------------------- */

TEST_F(Cache, IdleWhenZeroed)
{
	u64 c = 99;
	EXPECT_EQ(state(&c), FSM_UWC_STATE_IDLE);
	EXPECT_EQ(c, 0ull);
	FakeWalk w;
	fsm_uwc_delivery d;
	EXPECT_EQ(complete(1, w, d), FSM_UWC_ENOENT);
	EXPECT_EQ(w.calls, 0);
}

TEST_F(Cache, OneCookiePerEntryRegardlessOfRequests)
{
	u64 c0 = 0, c;
	ASSERT_EQ(req(42, 0, &c0), FSM_UWC_QUEUE);
	EXPECT_NE(c0, 0ull);
	EXPECT_EQ(state(), FSM_UWC_STATE_PENDING);
	for (int i = 0; i < 100; i++) {
		c = 0;
		ASSERT_EQ(req(42, i % 3, &c, i % 4), FSM_UWC_PENDING) << i;
		ASSERT_EQ(c, c0);
	}
	/* Only the first request allocated a cookie. */
	EXPECT_EQ(counter[0], 1ull);
	EXPECT_EQ(counter[1] + counter[2] + counter[3], 0ull);
}

TEST_F(Cache, PendingJoinsWhateverTheSignature)
{
	/* The walk has not run, so the task is still in the same entry. */
	u64 c0, c;
	ASSERT_EQ(req(1, 0, &c0), FSM_UWC_QUEUE);
	ASSERT_EQ(req(2, 1, &c), FSM_UWC_PENDING);
	EXPECT_EQ(c, c0);
}

TEST_F(Cache, CompleteDeliversOnceToAllRequesters)
{
	u64 c0, c;
	ASSERT_EQ(req(42, 0, &c0), FSM_UWC_QUEUE);
	ASSERT_EQ(req(42, 5, &c), FSM_UWC_PENDING);
	ASSERT_EQ(req(42, 62, &c), FSM_UWC_PENDING);

	FakeWalk w;
	w.tag = 0x1000;
	w.nr = 4;
	fsm_uwc_delivery d;
	ASSERT_EQ(complete(42, w, d), 0);
	EXPECT_EQ(w.calls, 1);
	EXPECT_EQ(d.cookie, c0);
	EXPECT_EQ(d.mask, (1ull << 0) | (1ull << 5) | (1ull << 62));
	ASSERT_EQ(d.res->nr, 4u);
	EXPECT_EQ(d.res->stop, (u32)FSM_UW_STOP_END);
	EXPECT_EQ(d.res->flags & FSM_UW_RES_LATE, 0u);
	for (u32 i = 0; i < 4; i++)
		EXPECT_EQ(d.entries[i], 0x1000 + i);
	EXPECT_EQ(state(&c), FSM_UWC_STATE_DONE);
	EXPECT_EQ(c, c0);

	/* A second task work has nothing to do. */
	EXPECT_EQ(complete(42, w, d), FSM_UWC_ENOENT);
	EXPECT_EQ(w.calls, 1);
}

TEST_F(Cache, RequestsAfterDeliveryReuseWithoutRequeue)
{
	u64 c0, c;
	ASSERT_EQ(req(42, 0, &c0), FSM_UWC_QUEUE);
	FakeWalk w;
	w.tag = 0x5000;
	fsm_uwc_delivery d;
	ASSERT_EQ(complete(42, w, d), 0);

	/* Served instance: DELIVERED, as often as it asks. */
	for (int i = 0; i < 10; i++) {
		ASSERT_EQ(req(42, 0, &c), FSM_UWC_DELIVERED);
		EXPECT_EQ(c, c0);
	}
	/* A late instance: CACHED exactly once, then DELIVERED. */
	EXPECT_EQ(fsm_uwc_late(&t, &d), 0ull);
	ASSERT_EQ(req(42, 7, &c), FSM_UWC_CACHED);
	EXPECT_EQ(c, c0);
	/* The completer learns it, with the stack still in its buffer. */
	EXPECT_EQ(fsm_uwc_late(&t, &d), 1ull << 7);
	EXPECT_EQ(d.entries, r.entries);
	EXPECT_EQ(d.entries[2], 0x5002u);

	for (int i = 0; i < 10; i++)
		ASSERT_EQ(req(42, 7, &c), FSM_UWC_DELIVERED);
	EXPECT_EQ(fsm_uwc_late(&t, &d), 1ull << 7) << "once per instance";
	/* Never queued again, never walked again. */
	EXPECT_EQ(complete(42, w, d), FSM_UWC_ENOENT);
	EXPECT_EQ(w.calls, 1);
	EXPECT_EQ(counter[0], 1ull);
}

TEST_F(Cache, NewEntryGetsNewCookieAndCleanMask)
{
	u64 c0, c1, c;
	FakeWalk w;
	fsm_uwc_delivery d;
	ASSERT_EQ(req(42, 0, &c0), FSM_UWC_QUEUE);
	ASSERT_EQ(req(42, 1, &c), FSM_UWC_PENDING);
	ASSERT_EQ(complete(42, w, d), 0);
	ASSERT_EQ(d.mask, 3ull);

	/* Different registers: a new entry. */
	ASSERT_EQ(req(43, 1, &c1, 2), FSM_UWC_QUEUE);
	EXPECT_NE(c1, c0);
	EXPECT_EQ(c1 & ((1ull << kCpuBits) - 1), 2ull) << "made on cpu 2";
	/* Instance 0 was served in the old entry, not in this one. */
	ASSERT_EQ(req(43, 0, &c), FSM_UWC_PENDING);
	EXPECT_EQ(c, c1);
	/* The old entry is over: ending it changes nothing, nobody was late. */
	EXPECT_EQ(fsm_uwc_entry_end(&t, &d), 0ull);
	EXPECT_EQ(state(), FSM_UWC_STATE_PENDING);

	w.tag = 0x9000;
	ASSERT_EQ(complete(43, w, d), 0);
	EXPECT_EQ(d.cookie, c1);
	EXPECT_EQ(d.mask, 3ull);
	EXPECT_EQ(d.entries[0], 0x9000u);
	EXPECT_EQ(w.calls, 2);
}

TEST_F(Cache, ManyEntriesAlternateBuffersCorrectly)
{
	/*
	 * 500 entries with random requesters before, during (simulated by
	 * ordering) and after the walk: every instance that asked is served
	 * exactly once per entry, by the delivery mask or by its one CACHED.
	 */
	std::mt19937_64 rng(7);
	u64 prev_cookie = 0;
	for (u64 entry = 1; entry <= 500; entry++) {
		const u64 sig = entry * 0x9e3779b97f4a7c15ull;
		u64 before = rng() & ((1ull << 63) - 1), after = rng() & ((1ull << 63) - 1);
		if (!before)
			before = 1;
		u64 cookie = 0, c;
		bool first = true;
		int served[63] = {};

		for (u32 i = 0; i < 63; i++) {
			if (!(before >> i & 1))
				continue;
			int r = req(sig, i, &c, entry % 4);
			ASSERT_EQ(r, first ? FSM_UWC_QUEUE : FSM_UWC_PENDING);
			if (first)
				cookie = c;
			first = false;
			ASSERT_EQ(c, cookie);
		}
		ASSERT_NE(cookie, prev_cookie);
		FakeWalk w;
		w.tag = entry << 8;
		fsm_uwc_delivery d;
		ASSERT_EQ(complete(sig, w, d), 0);
		ASSERT_EQ(d.cookie, cookie);
		ASSERT_EQ(d.mask, before) << "entry " << entry;
		for (u32 i = 0; i < 63; i++)
			served[i] += (int)(d.mask >> i & 1);
		for (int round = 0; round < 2; round++) {
			for (u32 i = 0; i < 63; i++) {
				if (!(after >> i & 1))
					continue;
				int r = req(sig, i, &c);
				ASSERT_EQ(c, cookie);
				if (r == FSM_UWC_CACHED) {
					served[i]++;
				} else {
					ASSERT_EQ(r, FSM_UWC_DELIVERED);
				}
			}
		}
		for (u32 i = 0; i < 63; i++)
			ASSERT_EQ(served[i], (int)((before | after) >> i & 1)) << i;
		prev_cookie = cookie;
	}
}

TEST_F(Cache, LateWalkTakesExitSignature)
{
	/*
	 * The walked registers differ from the first requester's (e.g. the
	 * request came from an NMI in user mode and the work ran at a later
	 * entry): flagged, and the exit signature becomes the entry's.
	 */
	u64 c0, c;
	ASSERT_EQ(req(1, 0, &c0), FSM_UWC_QUEUE);
	FakeWalk w;
	fsm_uwc_delivery d;
	ASSERT_EQ(complete(2, w, d), 0);
	EXPECT_EQ(d.res->flags & FSM_UW_RES_LATE, FSM_UW_RES_LATE);
	ASSERT_EQ(req(2, 0, &c), FSM_UWC_DELIVERED);
	EXPECT_EQ(c, c0);
	ASSERT_EQ(req(1, 0, &c), FSM_UWC_QUEUE);
	EXPECT_NE(c, c0);
}

TEST_F(Cache, AbortedWalkStillDelivers)
{
	u64 c0;
	ASSERT_EQ(req(5, 3, &c0), FSM_UWC_QUEUE);
	FakeWalk w;
	w.nr = 0;
	w.stop = FSM_UW_STOP_ABORTED;
	fsm_uwc_delivery d;
	ASSERT_EQ(complete(5, w, d), 0);
	EXPECT_EQ(d.mask, 1ull << 3);
	EXPECT_EQ(d.res->nr, 0u);
	EXPECT_EQ(d.res->stop, (u32)FSM_UW_STOP_ABORTED);
}

TEST_F(Cache, WalkCannotOverrunTheCache)
{
	u64 c0;
	ASSERT_EQ(req(5, 3, &c0), FSM_UWC_QUEUE);
	fsm_uwc_delivery d;
	auto liar = [](u64 *, u32, fsm_uw_result &res) -> u32 {
		res.nr = 1000;
		return 1000;
	};
	ASSERT_EQ(uw::cache_complete(t, &r, 5, liar, d), 0);
	EXPECT_EQ(d.res->nr, (u32)FSM_MAX_USER_DEPTH);
}

TEST_F(Cache, NoMemoryStillCompletes)
{
	/* No result buffer: an empty stack for every requester, no walk. */
	u64 c0, c;
	ASSERT_EQ(req(5, 3, &c0), FSM_UWC_QUEUE);
	ASSERT_EQ(req(5, 4, &c), FSM_UWC_PENDING);
	FakeWalk w;
	fsm_uwc_delivery d;
	ASSERT_EQ(uw::cache_complete(t, nullptr, 5, w, d), 0);
	EXPECT_EQ(w.calls, 0);
	EXPECT_EQ(d.cookie, c0);
	EXPECT_EQ(d.mask, (1ull << 3) | (1ull << 4));
	EXPECT_EQ(d.res->nr, 0u);
	EXPECT_EQ(d.res->stop, (u32)FSM_UW_STOP_ABORTED);
	EXPECT_NE(d.entries, nullptr);
	ASSERT_EQ(req(5, 8, &c), FSM_UWC_CACHED);
	EXPECT_EQ(fsm_uwc_entry_end(&t, &d), 1ull << 8);
	EXPECT_EQ(state(), FSM_UWC_STATE_IDLE);
}

TEST_F(Cache, LateRequestersAreServedBeforeTheEntryEnds)
{
	/*
	 * Requests after the harvest (the delivery's own records, an
	 * interrupt) are CACHED: the completer serves them in rounds while the
	 * entry is DONE (each instance at most once), then ends the entry,
	 * which returns those that came after its last round. After that a
	 * request starts a new entry.
	 */
	u64 c0, c;
	ASSERT_EQ(req(42, 1, &c0), FSM_UWC_QUEUE);
	FakeWalk w;
	fsm_uwc_delivery d;
	ASSERT_EQ(complete(42, w, d), 0);
	ASSERT_EQ(d.mask, 1ull << 1);
	u64 served = d.mask;
	ASSERT_EQ(req(42, 7, &c), FSM_UWC_CACHED);
	ASSERT_EQ(req(42, 9, &c), FSM_UWC_CACHED);
	EXPECT_EQ(c, c0);
	u64 late = fsm_uwc_late(&t, &d) & ~served;
	EXPECT_EQ(late, (1ull << 7) | (1ull << 9));
	served |= late;
	/* Serving them made another instance ask. */
	ASSERT_EQ(req(42, 11, &c), FSM_UWC_CACHED);
	ASSERT_EQ(req(42, 7, &c), FSM_UWC_DELIVERED);
	late = fsm_uwc_late(&t, &d) & ~served;
	EXPECT_EQ(late, 1ull << 11);
	served |= late;
	EXPECT_EQ(fsm_uwc_late(&t, &d) & ~served, 0ull) << "no more rounds";
	/* One more just before the end: the end reports it. */
	ASSERT_EQ(req(42, 12, &c), FSM_UWC_CACHED);
	EXPECT_EQ(fsm_uwc_entry_end(&t, &d) & ~served, 1ull << 12);
	EXPECT_EQ(state(), FSM_UWC_STATE_IDLE);
	ASSERT_EQ(req(42, 7, &c), FSM_UWC_QUEUE) << "after the end: a new entry";
	EXPECT_NE(c, c0);
}

TEST_F(Cache, CApiComplete)
{
	u64 c0;
	ASSERT_EQ(req(9, 1, &c0), FSM_UWC_QUEUE);
	fsm_uwc_delivery d;
	auto walk = [](void *ctx, unsigned long long *e, unsigned int max,
		       fsm_uw_result *res) -> unsigned int {
		(void)max;
		*static_cast<int *>(ctx) += 1;
		e[0] = 0xabc;
		res->nr = 1;
		res->stop = FSM_UW_STOP_ZERO_FP;
		res->flags = 0;
		res->mode = FSM_UW_MODE_IA32;
		return 1;
	};
	int calls = 0;
	ASSERT_EQ(fsm_uwc_complete(&t, &r, 9, walk, &calls, &d), 0);
	EXPECT_EQ(calls, 1);
	EXPECT_EQ(d.cookie, c0);
	EXPECT_EQ(d.entries[0], 0xabcu);
	EXPECT_EQ(d.res->stop, (u32)FSM_UW_STOP_ZERO_FP);
	EXPECT_EQ(fsm_uwc_complete(&t, &r, 9, walk, &calls, &d), FSM_UWC_ENOENT);
	EXPECT_EQ(fsm_uwc_complete(&t, &r, 9, nullptr, &calls, &d), FSM_UWC_EINVAL);
	EXPECT_EQ(calls, 1);
	EXPECT_EQ(fsm_uwc_late(nullptr, &d), 0ull);
	EXPECT_EQ(fsm_uwc_entry_end(&t, nullptr), 0ull);
}

TEST_F(Cache, EntryEndForgetsDoneEntry)
{
	u64 c0, c1, c;
	FakeWalk w;
	fsm_uwc_delivery d{};
	ASSERT_EQ(req(42, 0, &c0), FSM_UWC_QUEUE);
	/* A pending walk is not forgotten (d is no completed entry). */
	EXPECT_EQ(fsm_uwc_entry_end(&t, &d), 0ull);
	EXPECT_EQ(state(), FSM_UWC_STATE_PENDING);
	ASSERT_EQ(complete(42, w, d), 0);
	EXPECT_EQ(fsm_uwc_entry_end(&t, &d), 0ull);
	EXPECT_EQ(state(), FSM_UWC_STATE_IDLE);
	/* Same registers, but the caller knows it is a new entry. */
	ASSERT_EQ(req(42, 0, &c1), FSM_UWC_QUEUE);
	EXPECT_NE(c1, c0);
	ASSERT_EQ(req(42, 1, &c), FSM_UWC_PENDING);
	ASSERT_EQ(complete(42, w, d), 0);
	EXPECT_EQ(d.mask, 3ull);
	/* ...and buffers keep alternating through IDLE. */
	fsm_uwc_entry_end(&t, &d);
	ASSERT_EQ(req(42, 1, &c), FSM_UWC_QUEUE);
	ASSERT_EQ(complete(42, w, d), 0);
	EXPECT_EQ(d.mask, 2ull);
}

TEST_F(Cache, AbortEndsAPendingEntryForGood)
{
	/* The walk could not be queued: the entry must not stay PENDING. */
	u64 c0, c1, c;
	FakeWalk w;
	fsm_uwc_delivery d;
	ASSERT_EQ(req(42, 0, &c0), FSM_UWC_QUEUE);
	ASSERT_EQ(req(42, 3, &c), FSM_UWC_PENDING);	/* a nested joiner */
	EXPECT_EQ(fsm_uwc_abort(&t, c0 + 1), FSM_UWC_ENOENT) << "other cookie";
	ASSERT_EQ(fsm_uwc_abort(&t, c0), 0);
	EXPECT_EQ(state(), FSM_UWC_STATE_IDLE);
	EXPECT_EQ(fsm_uwc_abort(&t, c0), FSM_UWC_ENOENT) << "only once";
	/* A stale task work of the aborted entry finds nothing to walk. */
	EXPECT_EQ(complete(42, w, d), FSM_UWC_ENOENT);
	EXPECT_EQ(w.calls, 0);
	/* The next request, same registers, queues a new entry... */
	ASSERT_EQ(req(42, 1, &c1), FSM_UWC_QUEUE);
	EXPECT_NE(c1, c0);
	/* ...whose mask holds only its own requesters, not the aborted ones. */
	ASSERT_EQ(complete(42, w, d), 0);
	EXPECT_EQ(d.cookie, c1);
	EXPECT_EQ(d.mask, 2ull);
	/* Buffers keep alternating cleanly after an abort. */
	fsm_uwc_entry_end(&t, &d);
	ASSERT_EQ(req(42, 0, &c), FSM_UWC_QUEUE);
	ASSERT_EQ(fsm_uwc_abort(&t, c), 0);
	ASSERT_EQ(req(42, 4, &c), FSM_UWC_QUEUE);
	ASSERT_EQ(complete(42, w, d), 0);
	EXPECT_EQ(d.mask, 1ull << 4);
}

/*
 * Instance-id reuse (issue 8, item 10): the kernel glue gives a retired
 * instance number to a new instance only when no entry of any task can
 * still deliver to it. fsm_uwc_live_mask() is that test, per task.
 */
TEST_F(Cache, LiveMaskFollowsTheEntry)
{
	u64 c0, c;
	FakeWalk w;
	fsm_uwc_delivery d;

	EXPECT_EQ(fsm_uwc_live_mask(&t), 0ull) << "zeroed: idle";
	ASSERT_EQ(req(42, 3, &c0), FSM_UWC_QUEUE);
	ASSERT_EQ(req(42, 9, &c), FSM_UWC_PENDING);
	EXPECT_EQ(fsm_uwc_live_mask(&t), (1ull << 3) | (1ull << 9)) << "pending";
	/* During the walk and after it, until the entry ends: still live. */
	u64 during = 0;
	auto walk = [&](u64 *e, u32, fsm_uw_result &res) -> u32 {
		during = fsm_uwc_live_mask(&t);
		e[0] = 1;
		res.nr = 1;
		res.stop = FSM_UW_STOP_END;
		return 1;
	};
	ASSERT_EQ(uw::cache_complete(t, &r, 42, walk, d), 0);
	EXPECT_EQ(during, (1ull << 3) | (1ull << 9)) << "walking";
	EXPECT_EQ(d.mask, (1ull << 3) | (1ull << 9));
	EXPECT_EQ(fsm_uwc_live_mask(&t), (1ull << 3) | (1ull << 9))
		<< "done: the delivery of this mask may be running";
	/* A late requester of the done entry is reported too (conservative). */
	ASSERT_EQ(req(42, 20, &c), FSM_UWC_CACHED);
	EXPECT_TRUE(fsm_uwc_live_mask(&t) & (1ull << 20));
	EXPECT_EQ(fsm_uwc_live_mask(&t) >> 63, 0ull) << "never the harvest marker";
	EXPECT_EQ(fsm_uwc_entry_end(&t, &d), 1ull << 20) << "its completer serves it";
	EXPECT_EQ(fsm_uwc_live_mask(&t), 0ull) << "entry ended";
	/* The bits stay in req[] (cleared by a later entry), not in the mask. */
	ASSERT_EQ(req(42, 5, &c), FSM_UWC_QUEUE);
	EXPECT_EQ(fsm_uwc_live_mask(&t), 1ull << 5) << "a new entry: only its own";
	ASSERT_EQ(fsm_uwc_abort(&t, c), 0);
	EXPECT_EQ(fsm_uwc_live_mask(&t), 0ull) << "aborted: nothing delivered";
	/* The next entry uses the aborted entry's other buffer: clean. */
	ASSERT_EQ(req(42, 6, &c), FSM_UWC_QUEUE);
	EXPECT_EQ(fsm_uwc_live_mask(&t), 1ull << 6);
	ASSERT_EQ(complete(42, w, d), 0);
	fsm_uwc_entry_end(&t, &d);
	ASSERT_EQ(req(42, 7, &c), FSM_UWC_QUEUE);
	EXPECT_EQ(fsm_uwc_live_mask(&t), 1ull << 7) << "buffers alternate";
}

TEST_F(Cache, AbortLosesToAWalkThatStarted)
{
	u64 c0;
	ASSERT_EQ(req(42, 0, &c0), FSM_UWC_QUEUE);
	int abort_ret = 99;
	fsm_uwc_delivery d;
	auto walk = [&](u64 *e, u32, fsm_uw_result &res) -> u32 {
		abort_ret = fsm_uwc_abort(&t, c0);
		e[0] = 1;
		res.nr = 1;
		res.stop = FSM_UW_STOP_END;
		return 1;
	};
	ASSERT_EQ(uw::cache_complete(t, &r, 42, walk, d), 0);
	EXPECT_EQ(abort_ret, FSM_UWC_ENOENT) << "BUSY walking: not pending";
	EXPECT_EQ(d.mask, 1ull);
	EXPECT_EQ(state(), FSM_UWC_STATE_DONE);
}

TEST_F(Cache, InvalidArguments)
{
	u64 c = 77;
	EXPECT_EQ(req(1, 63, &c), FSM_UWC_EINVAL);
	EXPECT_EQ(req(1, 1000, &c), FSM_UWC_EINVAL);
	EXPECT_EQ(fsm_uwc_request(&t, 1, 0, &counter[0], 8192, &c), FSM_UWC_EINVAL);
	EXPECT_EQ(fsm_uwc_request(&t, 1, 0, nullptr, 0, &c), FSM_UWC_EINVAL);
	EXPECT_EQ(fsm_uwc_request(nullptr, 1, 0, &counter[0], 0, &c), FSM_UWC_EINVAL);
	EXPECT_EQ(fsm_uwc_request(&t, 1, 0, &counter[0], 0, nullptr), FSM_UWC_EINVAL);
	EXPECT_EQ(c, 77ull) << "cookie untouched on error";
	EXPECT_EQ(state(), FSM_UWC_STATE_IDLE) << "failed requests leave no trace";
	/* A bad cookie source only matters when a new entry starts. */
	ASSERT_EQ(req(1, 0, &c), FSM_UWC_QUEUE);
	EXPECT_EQ(fsm_uwc_request(&t, 1, 1, nullptr, 9999, &c), FSM_UWC_PENDING);
}

/*
 * "NMI" tests: fsm::unwind::test_hook runs a nested request at the exact
 * point where an NMI could interrupt the outer operation (the core is built
 * with FSM_UNWIND_TEST_HOOKS for these tests only).
 */
namespace {

struct Nested {
	static inline Nested *cur;
	u32 point;
	std::function<void(fsm_uwc_task *)> fn;
	int fired = 0;

	Nested(u32 p, std::function<void(fsm_uwc_task *)> f) : point(p), fn(std::move(f))
	{
		cur = this;
		uw::test_hook = hook;
	}
	~Nested()
	{
		uw::test_hook = nullptr;
		cur = nullptr;
	}
	static void hook(fsm_uwc_task *t, u32 p)
	{
		Nested *n = cur;
		if (!n || p != n->point || n->fired)
			return;
		n->fired++;	/* once, and not recursively */
		n->fn(t);
	}
};

} /* namespace */

TEST_F(Cache, NmiBetweenClaimAndPendingJoins)
{
	/*
	 * The claimer has won the cmpxchg (state BUSY, new cookie) but not yet
	 * set sig, its bit or PENDING. The NMI joins the new entry, and the
	 * claimer's own bit must not erase the NMI's.
	 */
	int nested_ret = -100;
	u64 nested_cookie = 0;
	u64 c0;
	{
		Nested n(uw::kHookClaimed, [&](fsm_uwc_task *) {
			EXPECT_EQ(state(), FSM_UWC_STATE_BUSY);
			nested_ret = req(7, 4, &nested_cookie, 1);
		});
		ASSERT_EQ(req(7, 0, &c0), FSM_UWC_QUEUE);
		ASSERT_EQ(n.fired, 1);
	}
	EXPECT_EQ(nested_ret, FSM_UWC_PENDING);
	EXPECT_EQ(nested_cookie, c0);
	EXPECT_EQ(counter[1], 0ull) << "the NMI made no cookie";
	FakeWalk w;
	fsm_uwc_delivery d;
	ASSERT_EQ(complete(7, w, d), 0);
	EXPECT_EQ(d.mask, (1ull << 0) | (1ull << 4));
}

TEST_F(Cache, NmiBetweenDoneAndHarvestIsServed)
{
	/* DONE is visible, the mask not yet taken: a request now is PENDING
	 * and must be in the delivery mask (not lost, not CACHED later). */
	u64 c0, c;
	ASSERT_EQ(req(7, 0, &c0), FSM_UWC_QUEUE);
	int r_new = -100, r_old = -100;
	FakeWalk w;
	fsm_uwc_delivery d;
	{
		Nested n(uw::kHookDonePublished, [&](fsm_uwc_task *) {
			EXPECT_EQ(state(), FSM_UWC_STATE_DONE);
			r_new = req(7, 5, &c);
			r_old = req(7, 0, &c);
		});
		ASSERT_EQ(complete(7, w, d), 0);
		ASSERT_EQ(n.fired, 1);
	}
	EXPECT_EQ(r_new, FSM_UWC_PENDING);
	EXPECT_EQ(r_old, FSM_UWC_PENDING);
	EXPECT_EQ(d.mask, (1ull << 0) | (1ull << 5));
	EXPECT_EQ(req(7, 5, &c), FSM_UWC_DELIVERED);
}

TEST_F(Cache, StateChangeDuringSignatureCheckRetries)
{
	/*
	 * A requester reads DONE(c0) and sig; before it re-checks, a nested
	 * context starts a new entry c1. The requester must not act on the
	 * stale DONE(c0) (it would answer with c0's stack): it retries and
	 * joins c1.
	 */
	u64 c0, c1 = 0, c;
	FakeWalk w;
	fsm_uwc_delivery d;
	ASSERT_EQ(req(7, 0, &c0), FSM_UWC_QUEUE);
	ASSERT_EQ(complete(7, w, d), 0);
	int r = -100;
	{
		Nested n(uw::kHookDoneSigRead, [&](fsm_uwc_task *) {
			ASSERT_EQ(req(8, 1, &c1), FSM_UWC_QUEUE);
		});
		r = req(7, 2, &c);
		ASSERT_EQ(n.fired, 1);
	}
	EXPECT_EQ(r, FSM_UWC_PENDING);
	EXPECT_EQ(c, c1);
	EXPECT_NE(c1, c0);
	ASSERT_EQ(complete(8, w, d), 0);
	EXPECT_EQ(d.mask, (1ull << 1) | (1ull << 2));
}

TEST_F(Cache, ContractViolationIsCaught)
{
	/*
	 * Outside the contract (unwind_cache.h): a requester has checked the
	 * DONE word of entry c0 and is about to OR its bit into req[b]; an
	 * unrelated thread (not a context nested on the task) ends c0, runs a
	 * whole entry c1 (whose end clears req[b] for the next entry) and ends
	 * it. The requester's bit would land in the cleared word and leak into
	 * the next entry: the debug assertion must stop it, never a silent
	 * PENDING for a finished entry.
	 */
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	u64 c0, c;
	FakeWalk w;
	fsm_uwc_delivery d;
	ASSERT_EQ(req(7, 0, &c0), FSM_UWC_QUEUE);
	ASSERT_EQ(complete(7, w, d), 0);
	auto violate = [&] {
		Nested n(uw::kHookJoining, [&](fsm_uwc_task *) {
			u64 c1;
			FakeWalk w1;
			fsm_uwc_delivery d1;
			fsm_uwc_entry_end(&t, &d);
			if (req(8, 1, &c1) != FSM_UWC_QUEUE || complete(8, w1, d1))
				_exit(3);	/* setup failed: not the death tested */
			fsm_uwc_entry_end(&t, &d1);
		});
		int r = req(7, 2, &c);
		/* Reached only without the assertion: say what went wrong. */
		fprintf(stderr, "request returned %d for cookie %s\n", r,
			c == c0 ? "c0 (finished)" : "other");
		exit(0);
	};
	/* FSM_ASSERT traps: ud2 on x86 (SIGILL), brk on arm64 (SIGTRAP). */
#if defined(__x86_64__) || defined(__i386__)
	EXPECT_EXIT(violate(), testing::KilledBySignal(SIGILL), "");
#else
	EXPECT_EXIT(violate(), testing::KilledBySignal(SIGTRAP), "");
#endif
}

TEST_F(Cache, RequestDuringWalkIsServed)
{
	/* An NMI request while the task work walks (state BUSY) is delivered. */
	u64 c0, c;
	ASSERT_EQ(req(42, 0, &c0), FSM_UWC_QUEUE);
	fsm_uwc_delivery d;
	int inner = -1;
	auto walk = [&](u64 *e, u32, fsm_uw_result &res) -> u32 {
		EXPECT_EQ(state(), FSM_UWC_STATE_BUSY);
		inner = req(42, 9, &c);
		/* A nested completion attempt is refused. */
		FakeWalk w2;
		fsm_uwc_delivery d2;
		fsm_uwc_result r2;
		EXPECT_EQ(uw::cache_complete(t, &r2, 42, w2, d2), FSM_UWC_EBUSY);
		EXPECT_EQ(w2.calls, 0);
		e[0] = 1;
		res.nr = 1;
		res.stop = FSM_UW_STOP_END;
		return 1;
	};
	ASSERT_EQ(uw::cache_complete(t, &r, 42, walk, d), 0);
	EXPECT_EQ(inner, FSM_UWC_PENDING);
	EXPECT_EQ(c, c0);
	EXPECT_EQ(d.mask, (1ull << 0) | (1ull << 9));
	ASSERT_EQ(req(42, 9, &c), FSM_UWC_DELIVERED);
}

/* ---- two threads: the task and an "NMI" on the same task state --------------- */

namespace {

struct RoundLog {
	/* Results of each request, per thread, in order. */
	std::vector<int> a, b;
	u64 cookie_a = 0, cookie_b = 0;
	bool mismatch_a = false, mismatch_b = false;	/* one writer each */
	u64 mask = 0;
	u64 late = 0;		/* fsm_uwc_late() once both threads are done */
	u64 delivered_cookie = 0;
	bool entries_bad = false;
	int complete_ret = 1;
};

/* Random delay: nothing, a short or long spin, or a yield (spreads the
 * requests of one thread over the other's request/complete/late phases,
 * also under TSan, which serialises threads a lot). */
void jitter(std::mt19937 &rng)
{
	switch (rng() % 4) {
	case 0:
		break;
	case 1:
		for (int spin = rng() % 300; spin > 0; spin--)
			asm volatile("" ::: "memory");
		break;
	case 2:
		std::this_thread::yield();
		break;
	default:
		for (int spin = rng() % 3000; spin > 0; spin--)
			asm volatile("" ::: "memory");
		break;
	}
}

/*
 * Checks one thread's results for its instance: in the delivery mask, or
 * late (CACHED once, reported by fsm_uwc_late()), never both.
 */
void check_instance(const std::vector<int> &rs, bool in_mask, bool late, int round,
		    const char *who)
{
	int cached = 0;
	for (size_t i = 0; i < rs.size(); i++) {
		int r = rs[i];
		ASSERT_GE(r, 0) << who << " round " << round;
		if (r == FSM_UWC_PENDING) {
			ASSERT_TRUE(in_mask) << who << " PENDING but not delivered, round " << round;
		}
		if (r == FSM_UWC_CACHED)
			cached++;
		if (r == FSM_UWC_DELIVERED) {
			ASSERT_TRUE(in_mask || cached) << who << " DELIVERED but never served, round "
						       << round;
		}
	}
	if (!rs.empty()) {
		ASSERT_EQ((int)in_mask + cached, 1) << who << " served " << (int)in_mask + cached
						    << " times, round " << round;
	}
	ASSERT_EQ(late, cached == 1) << who << " late bit vs CACHED, round " << round;
}

} /* namespace */

TEST(UnwindCacheRace, TaskVsNmiSameEntry)
{
#if defined(__SANITIZE_THREAD__)
	constexpr int kRounds = 3000;
#else
	constexpr int kRounds = 20000;
#endif
	fsm_uwc_task t{};
	fsm_uwc_result res_buf{};
	u64 counters[2] = {};
	std::vector<RoundLog> log(kRounds);
	std::barrier sync(2);
	std::atomic<bool> broken{ false };	/* stop both threads after a failed round */

	auto walk_for = [](int round) {
		return [round](u64 *e, u32 max, fsm_uw_result &res) -> u32 {
			u32 n = 1 + round % 5;
			n = n < max ? n : max;
			for (u32 i = 0; i < n; i++)
				e[i] = (u64)round << 16 | i;
			res.nr = n;
			res.stop = FSM_UW_STOP_END;
			res.flags = 0;
			res.mode = FSM_UW_MODE_X86_64;
			return n;
		};
	};

	/* Thread A: the task. Requests, runs its task work, requests again. */
	std::thread ta([&] {
		std::mt19937 rng(1);
		for (int r = 0; r < kRounds; r++) {
			RoundLog &L = log[r];
			const u64 sig = 1000 + r;
			sync.arrive_and_wait();
			int n1 = 1 + rng() % 3, n2 = rng() % 3;
			for (int i = 0; i < n1; i++) {
				jitter(rng);
				u64 c = 0;
				L.a.push_back(fsm_uwc_request(&t, sig, 0, &counters[0], 0, &c));
				if (L.cookie_a && c != L.cookie_a)
					L.mismatch_a = true;
				L.cookie_a = c;
			}
			fsm_uwc_delivery d{};
			int ret = FSM_UWC_EBUSY;
			jitter(rng);
			/* B may be between its claim and PENDING: only then EBUSY
			 * (bounded, so a broken state machine fails, not hangs). */
			for (int spin = 0; spin < 1000000; spin++) {
				ret = uw::cache_complete(t, &res_buf, sig, walk_for(r), d);
				if (ret != FSM_UWC_EBUSY)
					break;
				std::this_thread::yield();
			}
			L.complete_ret = ret;
			if (ret != 0)
				broken = true;
			L.mask = d.mask;
			L.delivered_cookie = d.cookie;
			for (int i = 0; i < n2; i++) {
				jitter(rng);
				u64 c = 0;
				L.a.push_back(fsm_uwc_request(&t, sig, 0, &counters[0], 0, &c));
				if (c != L.cookie_a)
					L.mismatch_a = true;
			}
			sync.arrive_and_wait();
			/* B is done with this entry: who came late, and the stack kept */
			L.late = fsm_uwc_late(&t, &d);
			if (ret == 0 && (d.res->nr != (u32)(1 + r % 5) || d.entries[0] != ((u64)r << 16)))
				L.entries_bad = true;
			if (broken)
				break;
		}
	});

	/* Thread B: "NMI" requests at random moments of the same entry. */
	std::thread tb([&] {
		std::mt19937 rng(2);
		for (int r = 0; r < kRounds; r++) {
			RoundLog &L = log[r];
			const u64 sig = 1000 + r;
			sync.arrive_and_wait();
			int n = rng() % 5;
			for (int i = 0; i < n; i++) {
				jitter(rng);
				u64 c = 0;
				int ret = fsm_uwc_request(&t, sig, 1, &counters[1], 1, &c);
				L.b.push_back(ret);
				if (L.cookie_b && c != L.cookie_b)
					L.mismatch_b = true;
				L.cookie_b = c;
			}
			sync.arrive_and_wait();
			if (broken)
				break;
		}
	});
	ta.join();
	tb.join();

	u64 prev = 0;
	int saw[4] = {};	/* how often B saw each status: the race was real */
	for (int r = 0; r < kRounds; r++) {
		const RoundLog &L = log[r];
		int queued = 0;
		for (int x : L.a)
			queued += x == FSM_UWC_QUEUE;
		for (int x : L.b) {
			queued += x == FSM_UWC_QUEUE;
			if (x >= 0 && x < 4)
				saw[x]++;
		}
		ASSERT_EQ(queued, 1) << "round " << r;
		ASSERT_FALSE(L.mismatch_a || L.mismatch_b) << "round " << r;
		ASSERT_EQ(L.complete_ret, 0) << "round " << r;
		ASSERT_EQ(L.delivered_cookie, L.cookie_a) << "round " << r;
		if (!L.b.empty()) {
			ASSERT_EQ(L.cookie_b, L.cookie_a) << "round " << r;
		}
		ASSERT_NE(L.cookie_a, prev) << "round " << r;
		ASSERT_FALSE(L.entries_bad) << "round " << r;
		ASSERT_EQ(L.mask & ~3ull, 0ull);
		ASSERT_EQ(L.late & L.mask, 0ull) << "round " << r;
		check_instance(L.a, L.mask & 1, L.late & 1, r, "task");
		check_instance(L.b, L.mask & 2, L.late & 2, r, "nmi");
		if (HasFatalFailure())
			return;
		prev = L.cookie_a;
	}
	/* Not an assertion on timing, just visibility into the interleavings. */
	printf("nmi outcomes: queue %d pending %d delivered %d cached %d\n", saw[0], saw[1],
	       saw[2], saw[3]);
}
