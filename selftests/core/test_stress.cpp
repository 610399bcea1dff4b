// SPDX-License-Identifier: GPL-2.0
/*
 * test_stress.cpp - multi-threaded stress of the map, meant to run under
 * ThreadSanitizer too: twin inserts, overlapping sets, inserts racing
 * resets, readers racing inserts, first-emit elections.
 *
 * Sizes are chosen so that the whole file runs in a few seconds on 2 cores
 * even under TSan; FSM_STRESS_SCALE=<n> in the environment multiplies them.
 */
#include "test_util.h"

#include <algorithm>
#include <barrier>
#include <cstdlib>
#include <map>
#include <mutex>
#include <pthread.h>
#include <random>
#include <set>
#include <shared_mutex>
#include <thread>

namespace {

unsigned scale()
{
	const char *s = getenv("FSM_STRESS_SCALE");
	unsigned v = s ? (unsigned)atoi(s) : 1;
	return v ? v : 1;
}

/*
 * A spinning barrier whose threads leave at (nearly) the same instant: the
 * last one to arrive sets a start time a few microseconds ahead and
 * everyone spins on the clock until then (std::barrier wakes threads one by
 * one, microseconds apart). That is what makes twin inserts really collide.
 * Spinners yield now and then: there may be more threads than CPUs.
 */
class SpinBarrier {
public:
	explicit SpinBarrier(unsigned n) : n_(n) {}
	void wait()
	{
		using namespace std::chrono;
		unsigned gen = gen_.load(std::memory_order_acquire);
		if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
			arrived_.store(0, std::memory_order_relaxed);
			start_ns_.store(now_ns() + 20000, std::memory_order_relaxed);
			gen_.store(gen + 1, std::memory_order_release);
		} else {
			for (unsigned spin = 0; gen_.load(std::memory_order_acquire) == gen; spin++)
				if (spin % 1024 == 1023)
					std::this_thread::yield();
		}
		const long long start = start_ns_.load(std::memory_order_relaxed);
		while (now_ns() < start)
			;
	}

private:
	static long long now_ns()
	{
		return std::chrono::duration_cast<std::chrono::nanoseconds>(
			       std::chrono::steady_clock::now().time_since_epoch()).count();
	}

	const unsigned n_;
	std::atomic<unsigned> arrived_{0};
	std::atomic<unsigned> gen_{0};
	std::atomic<long long> start_ns_{0};
};

/* Threads that can really run at once: one per CPU, 2..4. */
unsigned parallel_threads()
{
	return std::clamp(std::thread::hardware_concurrency(), 2u, 4u);
}

/* Run f(t) in @n threads, thread t pinned to CPU t % nr_cpus. */
template <typename F>
void run_threads(unsigned n, F &&f)
{
	std::vector<std::thread> th;
	const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
	for (unsigned t = 0; t < n; t++)
		th.emplace_back([&f, t, cpus] {
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET(t % cpus, &set);
			pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
			f(t);
		});
	for (auto &x : th)
		x.join();
}

TEST(Stress, SameNewStackGetsOneId)
{
	const unsigned threads = parallel_threads(), rounds = 1000 * scale();
	auto m = make_map(make_params(14));
	std::vector<std::vector<int>> rc(rounds, std::vector<int>(threads));
	std::vector<std::vector<fsm_insert_result>> res(rounds, std::vector<fsm_insert_result>(threads));
	SpinBarrier sync(threads);

	run_threads(threads, [&](unsigned t) {
		for (unsigned i = 0; i < rounds; i++) {
			Stack s = make_stack(i, 4 + i % 29);
			sync.wait();
			rc[i][t] = insert(m.get(), s, &res[i][t], i + 1);
		}
	});

	unsigned busy = 0;
	for (unsigned i = 0; i < rounds; i++) {
		unsigned created = 0, emitted = 0, id = FSM_ID_NONE;
		for (unsigned t = 0; t < threads; t++) {
			if (rc[i][t] == -FSM_DROP_BUSY) {
				busy++;
				continue;
			}
			ASSERT_EQ(rc[i][t], 0);
			created += !!(res[i][t].flags & FSM_INSERT_NEW);
			emitted += !!(res[i][t].flags & FSM_INSERT_FIRST_EMIT);
			if (id == FSM_ID_NONE)
				id = res[i][t].id;
			EXPECT_EQ(res[i][t].id, id) << "round " << i;
		}
		EXPECT_EQ(created, 1u) << "round " << i;
		EXPECT_EQ(emitted, 1u) << "round " << i;
		/* Rounds are sequential: the ids are the round numbers. */
		EXPECT_EQ(id, i);
		EXPECT_TRUE(record_is(m.get(), i, make_stack(i, 4 + i % 29)));
	}
	auto st = stats_of(m.get());
	EXPECT_EQ(st.entries, rounds);
	EXPECT_EQ(st.inserts, rounds);
	EXPECT_EQ(st.drops[FSM_DROP_BUSY], busy);
	EXPECT_EQ(st.hits + st.inserts + total_drops(st), (u64)rounds * threads);
	EXPECT_LE(st.lost_races, (u64)rounds * (threads - 1));
	/* Every loser returned its entry; the arena holds the winners plus at
	 * most the losers' wasted bytes. */
	unsigned long long winners = 0;
	for (unsigned i = 0; i < rounds; i++)
		winners += 16 + 8 * (4 + i % 29);
	EXPECT_GE(st.arena_used, winners);
	EXPECT_LE(st.arena_used, winners + st.lost_races * (16 + 8 * 32));
	printf("threads %u, rounds %u, lost races %llu, busy %u\n", threads, rounds,
	       st.lost_races, busy);
}

TEST(Stress, OverlappingSetsConsistentIds)
{
	const unsigned threads = 4, nstacks = 3000, passes = 2 * scale();
	auto m = make_map(make_params(12));
	std::vector<Stack> stacks;
	for (unsigned i = 0; i < nstacks; i++)
		stacks.push_back(make_stack(i, 8 + (i * 7) % 25));
	/* per thread: stack index -> id seen (FSM_ID_NONE = not inserted) */
	std::vector<std::vector<unsigned>> seen(threads, std::vector<unsigned>(nstacks, FSM_ID_NONE));
	std::vector<char> inserted(nstacks, 0);

	std::vector<std::vector<unsigned>> order(threads);
	for (unsigned t = 0; t < threads; t++) {
		std::mt19937 rng(t + 1);
		for (unsigned i = 0; i < nstacks; i++)
			if (rng() % 4 != 0)	/* 75 % subsets, overlapping */
				order[t].push_back(i);
		std::shuffle(order[t].begin(), order[t].end(), rng);
		for (unsigned i : order[t])
			inserted[i] = 1;
	}

	run_threads(threads, [&](unsigned t) {
		for (unsigned pass = 0; pass < passes; pass++) {
			for (unsigned i : order[t]) {
				fsm_insert_result r{};
				int rc = insert(m.get(), stacks[i], &r);
				if (rc == -FSM_DROP_BUSY)
					continue;
				ASSERT_EQ(rc, 0);
				ASSERT_EQ(r.generation, 1u);
				if (seen[t][i] == FSM_ID_NONE)
					seen[t][i] = r.id;
				ASSERT_EQ(seen[t][i], r.id) << "id of a stack changed";
			}
		}
	});

	unsigned distinct = std::count(inserted.begin(), inserted.end(), 1);
	EXPECT_EQ(fsm_map_nr_ids(m.get()), distinct);
	std::map<unsigned, unsigned> id_to_stack;
	for (unsigned i = 0; i < nstacks; i++) {
		unsigned id = FSM_ID_NONE;
		for (unsigned t = 0; t < threads; t++) {
			if (seen[t][i] == FSM_ID_NONE)
				continue;
			if (id == FSM_ID_NONE)
				id = seen[t][i];
			EXPECT_EQ(seen[t][i], id) << "stack " << i << " has two ids";
		}
		if (id == FSM_ID_NONE)
			continue;
		EXPECT_LT(id, distinct);
		EXPECT_TRUE(id_to_stack.emplace(id, i).second) << "id " << id << " given twice";
		EXPECT_TRUE(record_is(m.get(), id, stacks[i]));
	}
	/* Dense: every id below nr_ids is published and is one of ours. */
	for (unsigned id = 0; id < distinct; id++) {
		const u64 *ips;
		unsigned nr;
		ASSERT_EQ(fsm_map_lookup_id(m.get(), id, &ips, &nr, nullptr), 0);
		EXPECT_TRUE(stack_consistent(ips, nr));
	}
	auto st = stats_of(m.get());
	EXPECT_EQ(st.entries, distinct);
	EXPECT_EQ(st.inserts, distinct);
	EXPECT_EQ(st.drops[FSM_DROP_PROBE_LIMIT], 0u);
}

TEST(Stress, InsertsRacingResets)
{
	const unsigned inserters = 3;
	const unsigned max_resets = 150 * scale();
	/* Each reset yields a few times; with more threads than CPUs a yield
	 * can cost a time slice, so bound the test by time too: stop after
	 * ~1 s once at least min_resets happened (hard stop after 20 s). */
	const unsigned min_resets = 10;
	const auto t0 = std::chrono::steady_clock::now();
	auto elapsed = [&] { return std::chrono::steady_clock::now() - t0; };
	std::atomic<unsigned> resets{0};
	auto m = make_map(make_params(8, 32));	/* 256 ids, pool of 400: fills up */
	std::shared_mutex readers_vs_reset;
	std::atomic<bool> stop{false};
	std::atomic<u64> checked{0}, stale{0}, resetting{0}, full{0};

	std::thread resetter([&] {
		unsigned last = 1;
		for (unsigned i = 0; i < max_resets; i++) {
			if (elapsed() > std::chrono::seconds(20) ||
			    (i >= min_resets && elapsed() > std::chrono::milliseconds(1000 * scale())))
				break;
			std::this_thread::sleep_for(std::chrono::microseconds(300));
			std::unique_lock lk(readers_vs_reset);
			unsigned g = fsm_map_reset(m.get());
			EXPECT_EQ(g, last + 1);
			last = g;
			resets++;
		}
		stop.store(true);
	});

	run_threads(inserters, [&](unsigned t) {
		std::mt19937 rng(t * 77 + 1);
		unsigned last_gen = 0;
		while (!stop.load(std::memory_order_relaxed)) {
			unsigned k = rng() % 400;
			Stack s = make_stack(k, 1 + k % 32);
			fsm_insert_result r{};
			int rc = insert(m.get(), s, &r, 1 + (rng() & 3));
			if (rc == -FSM_DROP_RESETTING) {
				resetting++;
				continue;
			}
			if (rc == -FSM_DROP_MAP_FULL || rc == -FSM_DROP_ARENA_FULL) {
				full++;
				continue;
			}
			if (rc == -FSM_DROP_BUSY)
				continue;
			ASSERT_EQ(rc, 0);
			ASSERT_LT(r.id, 256u);
			ASSERT_GE(r.generation, last_gen) << "generation went backwards";
			last_gen = r.generation;
			/* A reader, serialised against reset by the caller. */
			std::shared_lock lk(readers_vs_reset);
			if (stats_of(m.get()).generation != r.generation) {
				stale++;
				continue;
			}
			ASSERT_TRUE(record_is(m.get(), r.id, s)) << "gen " << r.generation;
			checked++;
		}
	});
	resetter.join();

	/* Quiescent: the last generation is fully consistent. */
	unsigned n = fsm_map_nr_ids(m.get());
	std::set<Stack> distinct;
	for (unsigned id = 0; id < n; id++) {
		const u64 *ips;
		unsigned nr;
		ASSERT_EQ(fsm_map_lookup_id(m.get(), id, &ips, &nr, nullptr), 0);
		ASSERT_TRUE(stack_consistent(ips, nr));
		EXPECT_TRUE(distinct.insert(Stack(ips, ips + nr)).second);
	}
	EXPECT_GT(checked.load(), 0u);
	EXPECT_GE(resets.load(), min_resets);
	auto st = stats_of(m.get());
	EXPECT_EQ(st.generation, resets.load() + 1);
	EXPECT_EQ(st.drops[FSM_DROP_RESETTING], resetting.load());
	printf("resets %u, checked %llu, stale %llu, resetting drops %llu, full %llu\n",
	       resets.load(), (unsigned long long)checked.load(), (unsigned long long)stale.load(),
	       (unsigned long long)resetting.load(), (unsigned long long)full.load());
}

TEST(Stress, ReadersSeeOnlyCompleteRecords)
{
	const unsigned writers = 2, readers = 2, per_writer = 1500 * scale();
	auto m = make_map(make_params(13));
	std::atomic<unsigned> done{0};
	std::atomic<u64> reads{0}, unpublished{0};
	std::barrier start(writers + readers);

	std::vector<std::thread> th;
	for (unsigned w = 0; w < writers; w++)
		th.emplace_back([&, w] {
			std::mt19937 rng(w);
			start.arrive_and_wait();
			for (unsigned i = 0; i < per_writer; i++) {
				/* Half the stacks shared between writers. */
				unsigned k = (i % 2) ? i : per_writer + w * per_writer + i;
				fsm_insert_result r{};
				int rc = insert(m.get(), make_stack(k, 1 + k % 64), &r);
				ASSERT_TRUE(rc == 0 || rc == -FSM_DROP_BUSY) << rc;
				/* Some hits on older stacks in between. */
				for (int j = 0; j < 4; j++) {
					unsigned old = rng() % (i + 1);
					old = (old % 2) ? old : per_writer + w * per_writer + old;
					rc = insert(m.get(), make_stack(old, 1 + old % 64), &r);
					ASSERT_TRUE(rc == 0 || rc == -FSM_DROP_BUSY) << rc;
				}
			}
			done++;
		});
	for (unsigned rd = 0; rd < readers; rd++)
		th.emplace_back([&] {
			std::map<unsigned, const u64 *> first_seen;
			start.arrive_and_wait();
			bool last_pass = false;
			do {
				last_pass = done.load() == writers;
				unsigned n = fsm_map_nr_ids(m.get());
				for (unsigned id = (n > 64 && !last_pass ? n - 64 : 0); id < n; id++) {
					const u64 *ips;
					unsigned nr;
					int rc = fsm_map_lookup_id(m.get(), id, &ips, &nr, nullptr);
					if (rc == -2) {
						unpublished++;
						continue;
					}
					ASSERT_EQ(rc, 0);
					ASSERT_TRUE(stack_consistent(ips, nr)) << "torn record " << id;
					auto it = first_seen.emplace(id, ips).first;
					ASSERT_EQ(it->second, ips) << "record of id " << id << " moved";
					reads++;
				}
			} while (!last_pass);
		});
	for (auto &x : th)
		x.join();
	EXPECT_GT(reads.load(), 0u);
	unsigned n = fsm_map_nr_ids(m.get());
	for (unsigned id = 0; id < n; id++)
		EXPECT_EQ(fsm_map_lookup_id(m.get(), id, nullptr, nullptr, nullptr), 0);
	printf("reads %llu, unpublished seen %llu, ids %u\n",
	       (unsigned long long)reads.load(), (unsigned long long)unpublished.load(), n);
}

TEST(Stress, FirstEmitOncePerEpochPerStack)
{
	const unsigned threads = parallel_threads(), nstacks = 64, epochs = 40 * scale();
	auto m = make_map(make_params(8));
	SpinBarrier sync(threads);
	std::vector<unsigned> epoch_emits(epochs * nstacks, 0);
	std::mutex mu;

	run_threads(threads, [&](unsigned t) {
		std::vector<unsigned> local(epochs * nstacks, 0);
		for (unsigned e = 0; e < epochs; e++) {
			sync.wait();
			for (unsigned j = 0; j < nstacks; j++) {
				unsigned k = (j + t * 17) % nstacks;	/* different orders */
				fsm_insert_result r{};
				int rc = insert(m.get(), make_stack(k, 10), &r, e + 1);
				if (rc == -FSM_DROP_BUSY)
					continue;
				ASSERT_EQ(rc, 0);
				if (r.flags & FSM_INSERT_FIRST_EMIT)
					local[e * nstacks + k]++;
			}
		}
		std::lock_guard lk(mu);
		for (size_t i = 0; i < local.size(); i++)
			epoch_emits[i] += local[i];
	});
	for (unsigned e = 0; e < epochs; e++)
		for (unsigned k = 0; k < nstacks; k++)
			EXPECT_EQ(epoch_emits[e * nstacks + k], 1u) << "epoch " << e + 1 << " stack " << k;
}

} // namespace
