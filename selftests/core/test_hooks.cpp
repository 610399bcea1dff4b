// SPDX-License-Identifier: GPL-2.0
/*
 * test_hooks.cpp - deterministic interleavings of concurrent inserts and
 * resets, driven by the FSM_TEST_HOOKS stop points (fsm_test_hooks.h):
 * twin inserts, losing a slot to another stack, waiting on an unpublished
 * id, reading an unpublished id, a reset waiting for an inserter.
 */
#include "test_util.h"

#include "stackmap.h"

#include <chrono>
#include <future>
#include <thread>

namespace {

constexpr unsigned long long rec_bytes(unsigned nr) { return fsm::kRecordHeaderBytes + 8ull * nr; }

struct InsertOutcome {
	int rc = 1;
	fsm_insert_result res{};
};

/*
 * An insert of @s running in its own thread that stops at hook @point.
 * The destructor releases it and joins, so a failed assertion never leaves
 * a thread blocked (which would hang the test binary).
 */
class PausedInsert {
public:
	PausedInsert(fsm_map *m, const Stack &s, unsigned point, unsigned epoch = 0)
		: pause_(point)
	{
		fut_ = std::async(std::launch::async, [this, m, s, epoch] {
			InsertOutcome o;
			pause_.arm();
			o.rc = insert(m, s, &o.res, epoch);
			return o;
		});
	}
	~PausedInsert()
	{
		pause_.release();
		if (fut_.valid())
			fut_.wait();
	}
	bool wait_reached() { return pause_.wait_reached(); }
	void release() { pause_.release(); }
	/* Release and wait for the result. */
	InsertOutcome get()
	{
		pause_.release();
		return fut_.get();
	}

private:
	HookPause pause_;
	std::future<InsertOutcome> fut_;
};

TEST(Hooks, TwinLosesRaceNoGiveBackWhenNotTop)
{
	auto m = make_map(make_params(8));
	Stack s = make_stack(1, 12);
	PausedInsert pa(m.get(), s, FSM_HOOK_RECORD_WRITTEN);
	ASSERT_TRUE(pa.wait_reached());
	/* A has reserved and written its record, but not claimed a slot. */
	auto st = stats_of(m.get());
	EXPECT_EQ(st.arena_used, rec_bytes(12));
	EXPECT_EQ(st.entries, 0u);

	fsm_insert_result r{};
	ASSERT_EQ(insert(m.get(), s, &r), 0);
	EXPECT_EQ(r.id, 0u);
	EXPECT_EQ(r.flags, unsigned(FSM_INSERT_NEW));

	InsertOutcome a = pa.get();
	ASSERT_EQ(a.rc, 0);
	EXPECT_EQ(a.res.id, 0u);
	EXPECT_EQ(a.res.flags, 0u);	/* not the creator */
	st = stats_of(m.get());
	EXPECT_EQ(st.lost_races, 1u);
	EXPECT_EQ(st.entries, 1u);
	EXPECT_EQ(st.inserts, 1u);
	EXPECT_EQ(st.hits, 1u);
	/* A's bytes sit below the winner's: wasted until reset. */
	EXPECT_EQ(st.arena_used, 2 * rec_bytes(12));
	EXPECT_TRUE(record_is(m.get(), 0, s));
	u64 hits = 0;
	ASSERT_EQ(fsm_map_lookup_id(m.get(), 0, nullptr, nullptr, &hits), 0);
	EXPECT_EQ(hits, 2u);
}

TEST(Hooks, TwinLosesRaceGivesBackTopBytesAndEntry)
{
	/* Capacity 64: if the loser's entry were not returned, the 64th stack
	 * below would fail with MAP_FULL. */
	auto m = make_map(make_params(FSM_BITS_MIN));
	Stack s = make_stack(1, 12);
	PausedInsert pb(m.get(), s, FSM_HOOK_RECORD_WRITTEN);	/* reserves first: bottom */
	ASSERT_TRUE(pb.wait_reached());
	PausedInsert pa(m.get(), s, FSM_HOOK_RECORD_WRITTEN);	/* reserves second: top */
	ASSERT_TRUE(pa.wait_reached());
	EXPECT_EQ(stats_of(m.get()).arena_used, 2 * rec_bytes(12));

	InsertOutcome b = pb.get();
	ASSERT_EQ(b.rc, 0);
	EXPECT_EQ(b.res.flags, unsigned(FSM_INSERT_NEW));
	InsertOutcome a = pa.get();
	ASSERT_EQ(a.rc, 0);
	EXPECT_EQ(a.res.id, b.res.id);
	EXPECT_EQ(a.res.flags, 0u);

	auto st = stats_of(m.get());
	EXPECT_EQ(st.lost_races, 1u);
	EXPECT_EQ(st.arena_used, rec_bytes(12));	/* given back */
	fsm_insert_result r{};
	for (unsigned i = 0; i < 63; i++)
		ASSERT_EQ(insert(m.get(), make_stack(100 + i, 2), &r), 0) << i;
	EXPECT_EQ(r.id, 63u);
	EXPECT_EQ(insert(m.get(), make_stack(999, 2), &r), -FSM_DROP_MAP_FULL);
}

class HooksCollide : public ::testing::TestWithParam<unsigned> {};

TEST_P(HooksCollide, LosingSlotToOtherStackKeepsReservation)
{
	auto m = make_map(make_params(8, 64, 0, GetParam()));
	Stack s1 = make_stack(1, 6), s2 = make_stack(2, 6);
	PausedInsert pa(m.get(), s1, FSM_HOOK_RECORD_WRITTEN);
	ASSERT_TRUE(pa.wait_reached());

	fsm_insert_result r{};
	ASSERT_EQ(insert(m.get(), s2, &r), 0);	/* takes slot 0 */
	EXPECT_EQ(r.id, 0u);
	InsertOutcome a = pa.get();
	ASSERT_EQ(a.rc, 0);
	EXPECT_EQ(a.res.id, 1u);
	EXPECT_EQ(a.res.flags, unsigned(FSM_INSERT_NEW));

	auto st = stats_of(m.get());
	EXPECT_EQ(st.arena_used, 2 * rec_bytes(6));	/* no second reservation */
	EXPECT_EQ(st.entries, 2u);
	EXPECT_EQ(st.lost_races, 0u);
	EXPECT_TRUE(record_is(m.get(), 0, s2));
	EXPECT_TRUE(record_is(m.get(), 1, s1));
	ASSERT_EQ(insert(m.get(), s1, &r), 0);
	EXPECT_EQ(r.id, 1u);
}

TEST_P(HooksCollide, ProbeLimitAfterReservingReturnsEntry)
{
	/* bits 7: capacity 128 > probe window, so MAP_FULL cannot interfere. */
	auto m = make_map(make_params(7, 64, 0, GetParam()));
	const unsigned n = fsm::kProbeLimit - 1;
	fsm_insert_result r{};
	for (unsigned i = 0; i < n; i++)
		ASSERT_EQ(insert(m.get(), make_stack(i, 3), &r), 0);
	/* A reaches the last slot of the window, reserves, stops. */
	PausedInsert pa(m.get(), make_stack(500, 3), FSM_HOOK_RECORD_WRITTEN);
	ASSERT_TRUE(pa.wait_reached());
	ASSERT_EQ(insert(m.get(), make_stack(501, 3), &r), 0);	/* takes that slot */
	InsertOutcome a = pa.get();
	EXPECT_EQ(a.rc, -FSM_DROP_PROBE_LIMIT);

	auto st = stats_of(m.get());
	EXPECT_EQ(st.drops[FSM_DROP_PROBE_LIMIT], 1u);
	EXPECT_EQ(st.entries, n + 1);
	/* A's bytes are below the winner's: wasted. */
	EXPECT_EQ(st.arena_used, (n + 2) * rec_bytes(3));
}

INSTANTIATE_TEST_SUITE_P(Flags, HooksCollide,
			 ::testing::Values(unsigned(FSM_TEST_HASH_SAME_BUCKET),
					   unsigned(FSM_TEST_HASH_SAME_TAG)),
			 [](const auto &info) {
				 return std::string(info.param == FSM_TEST_HASH_SAME_TAG ?
						    "SameTag" : "SameBucket");
			 });

TEST(Hooks, BusyWhileIdUnpublished)
{
	for (unsigned point : {unsigned(FSM_HOOK_SLOT_CLAIMED), unsigned(FSM_HOOK_ID_TAKEN),
			       unsigned(FSM_HOOK_INDEX_PUBLISHED)}) {
		SCOPED_TRACE(point);
		auto m = make_map(make_params(8));
		Stack s = make_stack(1, 12);
		PausedInsert pa(m.get(), s, point, 3);
		ASSERT_TRUE(pa.wait_reached());

		fsm_insert_result r{};
		/* The matching record is visible but its id is not: bounded wait. */
		EXPECT_EQ(insert(m.get(), s, &r, 3), -FSM_DROP_BUSY);
		EXPECT_EQ(stats_of(m.get()).drops[FSM_DROP_BUSY], 1u);
		/* Other stacks are unaffected. */
		ASSERT_EQ(insert(m.get(), make_stack(2, 12), &r), 0);
		EXPECT_EQ(r.flags, unsigned(FSM_INSERT_NEW));

		InsertOutcome a = pa.get();
		ASSERT_EQ(a.rc, 0);
		EXPECT_EQ(a.res.flags, unsigned(FSM_INSERT_NEW | FSM_INSERT_FIRST_EMIT));
		ASSERT_EQ(insert(m.get(), s, &r, 3), 0);
		EXPECT_EQ(r.id, a.res.id);
		EXPECT_EQ(r.flags, 0u);
		EXPECT_TRUE(record_is(m.get(), a.res.id, s));
	}
}

TEST(Hooks, WaitForUnpublishedIdSucceedsWhenPublisherFinishes)
{
	for (unsigned point : {unsigned(FSM_HOOK_SLOT_CLAIMED), unsigned(FSM_HOOK_INDEX_PUBLISHED)}) {
		SCOPED_TRACE(point);
		auto m = make_map(make_params(8));
		Stack s = make_stack(1, 12);
		PausedInsert pa(m.get(), s, point);
		ASSERT_TRUE(pa.wait_reached());

		/* The first time we wait on the id, let the publisher finish. */
		unsigned waits = 0;
		InsertOutcome a;
		set_thread_hook([&](unsigned p) {
			if (p != FSM_HOOK_ID_WAIT || waits++)
				return;
			a = pa.get();
		});
		fsm_insert_result r{};
		int rc = insert(m.get(), s, &r);
		set_thread_hook(nullptr);
		EXPECT_EQ(waits, 1u);
		ASSERT_EQ(rc, 0);
		ASSERT_EQ(a.rc, 0);
		EXPECT_EQ(r.id, a.res.id);
		EXPECT_EQ(r.flags, 0u);
		EXPECT_EQ(a.res.flags, unsigned(FSM_INSERT_NEW));
		EXPECT_EQ(stats_of(m.get()).drops[FSM_DROP_BUSY], 0u);
	}
}

TEST(Hooks, LookupOfTakenButUnpublishedId)
{
	auto m = make_map(make_params(8));
	Stack s = make_stack(1, 12);
	PausedInsert pa(m.get(), s, FSM_HOOK_ID_TAKEN);
	ASSERT_TRUE(pa.wait_reached());
	EXPECT_EQ(fsm_map_nr_ids(m.get()), 1u);
	const u64 *ips = nullptr;
	unsigned nr = 0;
	EXPECT_EQ(fsm_map_lookup_id(m.get(), 0, &ips, &nr, nullptr), -2);
	ASSERT_EQ(pa.get().rc, 0);
	EXPECT_TRUE(record_is(m.get(), 0, s));

	/* Index published, record->id not yet: readers see it complete. */
	Stack t = make_stack(2, 30);
	PausedInsert pb(m.get(), t, FSM_HOOK_INDEX_PUBLISHED);
	ASSERT_TRUE(pb.wait_reached());
	EXPECT_TRUE(record_is(m.get(), 1, t));
	ASSERT_EQ(pb.get().rc, 0);
}

TEST(Hooks, ResetWaitsForInflightInserterAndDropsNewOnes)
{
	auto m = make_map(make_params(8));
	fsm_insert_result r{};
	ASSERT_EQ(insert(m.get(), make_stack(7, 3), &r), 0);
	Stack s = make_stack(1, 12);
	PausedInsert pa(m.get(), s, FSM_HOOK_SLOT_CLAIMED);
	ASSERT_TRUE(pa.wait_reached());

	std::atomic<bool> reset_done{false};
	auto fr = std::async(std::launch::async, [&] {
		unsigned g = fsm_map_reset(m.get());
		reset_done.store(true);
		return g;
	});
	/* New inserters see RESETTING (wait until the reset has started). */
	int rc = 0;
	for (int i = 0; i < 10000 && rc != -FSM_DROP_RESETTING; i++) {
		rc = insert(m.get(), make_stack(7, 3), &r);
		if (rc != -FSM_DROP_RESETTING)
			std::this_thread::sleep_for(std::chrono::microseconds(200));
	}
	EXPECT_EQ(rc, -FSM_DROP_RESETTING);
	std::this_thread::sleep_for(std::chrono::milliseconds(30));
	EXPECT_FALSE(reset_done.load()) << "reset did not wait for the in-flight insert";

	InsertOutcome a = pa.get();
	ASSERT_EQ(a.rc, 0);
	EXPECT_EQ(a.res.generation, 1u);
	EXPECT_EQ(a.res.id, 1u);
	EXPECT_EQ(fr.get(), 2u);
	EXPECT_EQ(fsm_map_nr_ids(m.get()), 0u);
	EXPECT_EQ(fsm_map_lookup_id(m.get(), 1, nullptr, nullptr, nullptr), -2);
	ASSERT_EQ(insert(m.get(), s, &r), 0);
	EXPECT_EQ(r.generation, 2u);
	EXPECT_EQ(r.id, 0u);
	EXPECT_GE(stats_of(m.get()).drops[FSM_DROP_RESETTING], 1u);
}

} // namespace
