// SPDX-License-Identifier: GPL-2.0
/*
 * bench.cpp - user-space benchmark of the core stack map against a
 * re-implementation of the seed RFC's map (seed_map.h), same binary, same
 * inputs. Prints name=value lines; no thresholds.
 *
 * Inputs: a few thousand distinct kernel-like stacks (shared outer chains,
 * inner frames from a pool of return addresses), accessed with a Zipf(1.1)
 * hot distribution. Both maps are pre-populated, so the timed loops measure
 * the hit path, through the same kind of out-of-line call the kernel makes.
 *
 * The core is compiled as the module compiles it, with FSM_PLAT_CPU_LOCAL
 * (per-CPU counters and hit caches with RMWs atomic against this CPU only,
 * platform.h): every thread that inserts is pinned (pin_to_cpu()); and
 * with the kernel's code generation, -O2 and general registers only
 * (CMakeLists.txt), so no vectorised compare the module cannot have.
 *
 * Also cross-built for AArch64 (CMakeLists.txt, toolchain-aarch64.cmake)
 * and run under qemu-user by make bench (its arm64_* lines): see
 * cpu_source() for what differs there.
 *
 * Usage: fsm_core_bench [--quick] | --loop ours|seed PASSES
 */
#include "fsm_core.h"
#include "seed_map.h"
#include "test_platform.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <pthread.h>
#include <random>
#include <sched.h>
#include <set>
#include <sys/rseq.h>
#include <thread>
#include <vector>

namespace {

using u64 = unsigned long long;
using Clock = std::chrono::steady_clock;

bool g_quick = false;

struct StackSet {
	std::vector<u64> frames;
	std::vector<size_t> off;
	std::vector<unsigned> nr;

	size_t size() const { return nr.size(); }
	const u64 *ips(size_t i) const { return &frames[off[i]]; }
	double mean_depth() const
	{
		double s = 0;
		for (unsigned n : nr)
			s += n;
		return s / nr.size();
	}
};

/* @n distinct stacks of depth [dmin, dmax]. */
StackSet make_stacks(size_t n, unsigned dmin, unsigned dmax, uint64_t seed)
{
	std::mt19937_64 rng(seed);
	std::vector<u64> pool(6000);
	for (auto &a : pool)
		a = 0xffffffff81000000ull + ((rng() % 0xc00000) & ~0xfull) + 5 + rng() % 0x90;
	u64 chains[16][6];
	for (auto &c : chains)
		for (auto &a : c)
			a = pool[rng() % pool.size()];

	StackSet set;
	std::set<std::vector<u64>> seen;
	while (set.size() < n) {
		unsigned d = dmin + rng() % (dmax - dmin + 1);
		std::vector<u64> s(d);
		const u64 *chain = chains[rng() % 16];
		for (unsigned i = 0; i < d; i++)
			s[i] = i + 6 >= d ? chain[i + 6 - d] : pool[rng() % pool.size()];
		if (!seen.insert(s).second)
			continue;
		set.off.push_back(set.frames.size());
		set.nr.push_back(d);
		set.frames.insert(set.frames.end(), s.begin(), s.end());
	}
	return set;
}

/* Access sequence: Zipf(s) over the stacks, hottest ranks shuffled. */
std::vector<uint32_t> zipf_sequence(size_t nstacks, size_t len, double s, uint64_t seed)
{
	std::mt19937_64 rng(seed);
	std::vector<double> cdf(nstacks);
	double sum = 0;
	for (size_t k = 0; k < nstacks; k++)
		cdf[k] = (sum += 1.0 / std::pow(double(k + 1), s));
	std::vector<uint32_t> rank_to_stack(nstacks);
	for (size_t k = 0; k < nstacks; k++)
		rank_to_stack[k] = (uint32_t)k;
	std::shuffle(rank_to_stack.begin(), rank_to_stack.end(), rng);
	std::uniform_real_distribution<double> u(0, sum);
	std::vector<uint32_t> seq(len);
	for (auto &x : seq) {
		size_t k = std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin();
		x = rank_to_stack[std::min(k, nstacks - 1)];
	}
	return seq;
}

/*
 * Where fsm_plat_cpu() gets the CPU number from. In the kernel it is a
 * per-CPU load; in user space glibc's rseq area is the same kind of plain
 * load ("rseq"). qemu-user (the arm64 run, scripts/bench) has no rseq, and
 * fsm_plat_cpu() would then make a getcpu system call on every insert,
 * which neither the module nor the seed ever does. Each timed thread is
 * pinned to one CPU, so without rseq a thread whose pinning took (one
 * sched_getcpu() says so) gives its CPU to the platform once ("pinned").
 * Otherwise the system call stays, and the line says "getcpu".
 */
std::atomic<bool> g_cpu_getcpu{false};

void pin_to_cpu(unsigned cpu)
{
	const unsigned target = cpu % std::max(1u, std::thread::hardware_concurrency());
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(target, &set);
	const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	/*
	 * The core is built as the module runs it (FSM_PLAT_CPU_LOCAL,
	 * CMakeLists.txt): an inserting thread that migrates could lose an
	 * update of a CPU's exits counter, and a later reset would wait for
	 * it forever.
	 */
	if (rc != 0) {
		fprintf(stderr, "bench: cannot pin a thread to CPU %u (%d)\n", target, rc);
		exit(1);
	}
	if (__rseq_size > 0)
		return;
	if (sched_getcpu() == (int)target)
		test_platform_set_thread_cpu((int)target);
	else
		g_cpu_getcpu.store(true);
}

const char *cpu_source()
{
	if (__rseq_size > 0)
		return "rseq";
	return g_cpu_getcpu.load() ? "getcpu" : "pinned";
}

fsm_map *make_ours(unsigned bits)
{
	fsm_map_params p{};
	p.bits = bits;
	p.max_depth = FSM_MAX_KERNEL_DEPTH;
	fsm_plat_random(p.key, sizeof(p.key));
	int err = 0;
	fsm_map *m = fsm_map_create(&p, &err);
	if (!m) {
		fprintf(stderr, "fsm_map_create: %d\n", err);
		exit(1);
	}
	return m;
}

/* The seed's entry point is an exported function: keep it out of line. */
__attribute__((noinline)) int seed_get_id(seed::Map *m, const u64 *ips, unsigned nr)
{
	return m->get_id(reinterpret_cast<const unsigned long *>(ips), nr);
}

std::atomic<u64> g_sink{0};

/* One timed pass over @seq: ns per insert. */
template <typename F>
double time_pass(const std::vector<uint32_t> &seq, F &&op)
{
	u64 sink = 0;
	auto t0 = Clock::now();
	for (uint32_t i : seq)
		sink += op(i);
	auto t1 = Clock::now();
	g_sink += sink;
	return std::chrono::duration<double, std::nano>(t1 - t0).count() / seq.size();
}

/*
 * Best and median of @reps passes of two contenders, interleaved (A, B, A,
 * B, ...) so that both see the same background noise. The reference machine
 * is a shared 2-vCPU VM where other jobs steal time; the minimum is the most
 * reproducible estimate of the uncontended cost.
 */
struct Pair {
	double a_best, a_median, b_best, b_median;
};

template <typename FA, typename FB>
Pair time_pair(const std::vector<uint32_t> &seq, int reps, FA &&a, FB &&b)
{
	std::vector<double> ra, rb;
	for (int r = 0; r < reps; r++) {
		ra.push_back(time_pass(seq, a));
		rb.push_back(time_pass(seq, b));
	}
	std::sort(ra.begin(), ra.end());
	std::sort(rb.begin(), rb.end());
	return {ra[0], ra[ra.size() / 2], rb[0], rb[rb.size() / 2]};
}

struct HitResult {
	double ours, seed;
	double ours_median, seed_median;
};

HitResult bench_hits(const StackSet &set, const std::vector<uint32_t> &seq, int reps)
{
	fsm_map *m = make_ours(14);
	seed::Map sm(14);

	/* Populate, and check both maps agree on what they hold. */
	for (size_t i = 0; i < set.size(); i++) {
		fsm_insert_result r{};
		if (fsm_map_insert(m, set.ips(i), set.nr[i], 1, &r) || r.id != i ||
		    seed_get_id(&sm, set.ips(i), set.nr[i]) < 0) {
			fprintf(stderr, "populate failed at %zu\n", i);
			exit(1);
		}
	}

	Pair p = time_pair(seq, reps,
		[&](uint32_t i) -> u64 {
			fsm_insert_result r;
			if (__builtin_expect(fsm_map_insert(m, set.ips(i), set.nr[i], 1, &r), 0))
				abort();
			return r.id;
		},
		[&](uint32_t i) -> u64 {
			int id = seed_get_id(&sm, set.ips(i), set.nr[i]);
			if (__builtin_expect(id < 0, 0))
				abort();
			return (u64)id;
		});
	HitResult res{p.a_best, p.b_best, p.a_median, p.b_median};
	fsm_map_destroy(m);
	return res;
}

/*
 * The capture path's lookup as the kernel makes it for every id record: a
 * hit, then fsm_map_def_claim() for the id at the next buffer position
 * (a horizon of 1 << 30 positions, longer than the run: due only when
 * this CPU has no stamp of the id, i.e. first use or an evicted stamp),
 * against the hit alone, interleaved. Also the claims that were due per 1000 hits in the timed
 * passes, after a warm-up pass: the evictions that 4096 Zipf stacks cause
 * in the per-CPU stamp table (each would cost a stack_def in a trace).
 */
struct ClaimResult {
	double hit_ns, hit_claim_ns, due_per_1k;
};

ClaimResult bench_claims(const StackSet &set, const std::vector<uint32_t> &seq, int reps)
{
	fsm_map *m = make_ours(14);
	unsigned now = 0;
	u64 due = 0, calls = 0;

	for (size_t i = 0; i < set.size(); i++) {
		fsm_insert_result r{};
		if (fsm_map_insert(m, set.ips(i), set.nr[i], 1, &r)) {
			fprintf(stderr, "populate failed at %zu\n", i);
			exit(1);
		}
	}
	auto claim = [&](uint32_t i) -> u64 {
		fsm_insert_result r;
		if (__builtin_expect(fsm_map_insert(m, set.ips(i), set.nr[i], 1, &r), 0))
			abort();
		const int d = fsm_map_def_claim(m, r.id, r.generation, now += 2, 1u << 30);
		due += d;
		calls++;
		return r.id + d;
	};
	time_pass(seq, claim);	/* warm up: every id's first use */
	due = calls = 0;
	Pair p = time_pair(seq, reps,
		[&](uint32_t i) -> u64 {
			fsm_insert_result r;
			if (__builtin_expect(fsm_map_insert(m, set.ips(i), set.nr[i], 1, &r), 0))
				abort();
			return r.id;
		},
		claim);
	fsm_map_destroy(m);
	return {p.a_best, p.b_best, 1000.0 * double(due) / double(calls)};
}

/* Throughput of @threads threads hammering one hot stack, ops/ns. */
template <typename F>
double hot_throughput(unsigned threads, u64 ops_per_thread, F &&op)
{
	std::atomic<unsigned> ready{0};
	std::atomic<bool> go{false};
	std::vector<double> ns(threads);
	std::vector<std::thread> th;
	for (unsigned t = 0; t < threads; t++)
		th.emplace_back([&, t] {
			pin_to_cpu(t);
			ready++;
			while (!go.load())
				;
			u64 sink = 0;
			auto t0 = Clock::now();
			for (u64 i = 0; i < ops_per_thread; i++)
				sink += op();
			auto t1 = Clock::now();
			g_sink += sink;
			ns[t] = std::chrono::duration<double, std::nano>(t1 - t0).count();
		});
	while (ready.load() < threads)
		;
	go.store(true);
	for (auto &x : th)
		x.join();
	double worst = *std::max_element(ns.begin(), ns.end());
	return threads * ops_per_thread / worst;
}

/* A pure ALU loop, no shared memory: what "2 threads" buys on this machine
 * at best (a VM's two vCPUs may share a physical core). */
__attribute__((noinline)) u64 alu_work()
{
	u64 x = g_sink.load(std::memory_order_relaxed) | 1;
	for (int i = 0; i < 16; i++) {
		unsigned __int128 r = (unsigned __int128)(x ^ i) * 0x9e3779b97f4a7c15ull;
		x = (u64)r ^ (u64)(r >> 64);
	}
	return x;
}

struct Scaling {
	double ratio;		/* 2-thread throughput / 1-thread throughput */
	double ns_1t;		/* ns per op, 1 thread */
	double ns_2t;		/* ns per op per thread, 2 threads */
};

template <typename F>
Scaling scaling(u64 ops, F &&op)
{
	/* Best of 15 short runs for each, interleaved, to dampen VM noise. */
	double one = 0, two = 0;
	for (int r = 0; r < (g_quick ? 3 : 15); r++) {
		one = std::max(one, hot_throughput(1, ops, op));
		two = std::max(two, hot_throughput(2, ops, op));
	}
	return {two / one, 1 / one, 2 / two};
}

/*
 * Reset under load (issue 8, item 16). One inserter thread per other CPU
 * (at least one) inserts Zipf-distributed stacks of @set into a bits=@bits
 * map without pause, most of them hits; the main thread resets the map
 * @resets times. Each inserter records when inserts dropped with
 * FSM_DROP_RESETTING. Per reset, the drop window is the time from the first
 * to the last such drop (0 if none).
 */
struct ResetResult {
	double window_us_max;		/* worst drop window of all resets */
	double window_us_median;
	double drops_per_reset;		/* mean RESETTING drops per reset */
	double reset_call_us_median;	/* fsm_map_reset() call, scrub included */
};

ResetResult bench_reset(unsigned bits, const StackSet &set, const std::vector<unsigned> &seq,
			unsigned resets)
{
	fsm_map *m = make_ours(bits);
	const unsigned nthreads = std::max(1u, std::thread::hardware_concurrency() - 1);
	std::atomic<bool> stop{false};
	std::atomic<long long> first{-1}, last{-1};
	std::atomic<u64> drops{0};
	const auto t0 = Clock::now();
	auto now_ns = [&] {
		return (long long)std::chrono::duration_cast<std::chrono::nanoseconds>(
			Clock::now() - t0).count();
	};

	std::vector<std::thread> th;
	for (unsigned t = 0; t < nthreads; t++)
		th.emplace_back([&, t] {
			pin_to_cpu(t + 1);
			size_t i = t * 977;
			while (!stop.load(std::memory_order_relaxed)) {
				const unsigned k = seq[i++ % seq.size()];
				fsm_insert_result res;
				if (fsm_map_insert(m, set.ips(k), set.nr[k], 0, &res) ==
				    -FSM_DROP_RESETTING) {
					const long long ns = now_ns();
					long long f = -1;
					first.compare_exchange_strong(f, ns);
					last.store(ns);
					drops.fetch_add(1);
				}
			}
		});

	std::vector<double> windows, calls;
	std::this_thread::sleep_for(std::chrono::milliseconds(20));	/* warm */
	for (unsigned r = 0; r < resets; r++) {
		first.store(-1);
		last.store(-1);
		const auto c0 = Clock::now();
		fsm_map_reset(m);
		calls.push_back(std::chrono::duration<double, std::micro>(Clock::now() - c0).count());
		/* Let inserters that dropped report, and refill the map. */
		std::this_thread::sleep_for(std::chrono::milliseconds(5));
		const long long f = first.load(), l = last.load();
		windows.push_back(f < 0 ? 0.0 : (l - f) / 1000.0);
	}
	stop.store(true);
	for (auto &x : th)
		x.join();
	fsm_map_destroy(m);

	std::sort(windows.begin(), windows.end());
	std::sort(calls.begin(), calls.end());
	return {windows.back(), windows[windows.size() / 2], double(drops.load()) / resets,
		calls[calls.size() / 2]};
}

/*
 * --loop ours|seed PASSES: only the Zipf hit loop of hit_ns_16 (16-frame
 * stacks, populated first), one side, PASSES passes, for perf stat/record
 * on one contender at a time. Prints the best pass.
 */
int loop_one(const char *side, int passes)
{
	const bool ours = !strcmp(side, "ours");
	if (!ours && strcmp(side, "seed")) {
		fprintf(stderr, "bench: --loop ours|seed PASSES\n");
		return 2;
	}
	StackSet set = make_stacks(4096, 16, 16, 1);
	auto seq = zipf_sequence(4096, 1u << 16, 1.1, 2);
	fsm_map *m = make_ours(14);
	seed::Map sm(14);
	for (size_t i = 0; i < set.size(); i++) {
		fsm_insert_result r{};
		if (ours ? fsm_map_insert(m, set.ips(i), set.nr[i], 1, &r) || r.id != i
			 : seed_get_id(&sm, set.ips(i), set.nr[i]) < 0) {
			fprintf(stderr, "populate failed at %zu\n", i);
			return 1;
		}
	}
	double best = 1e30;
	for (int r = 0; r < passes; r++)
		best = std::min(best, ours ? time_pass(seq, [&](uint32_t i) -> u64 {
			fsm_insert_result res;
			if (__builtin_expect(fsm_map_insert(m, set.ips(i), set.nr[i], 1, &res), 0))
				abort();
			return res.id;
		}) : time_pass(seq, [&](uint32_t i) -> u64 {
			int id = seed_get_id(&sm, set.ips(i), set.nr[i]);
			if (__builtin_expect(id < 0, 0))
				abort();
			return (u64)id;
		}));
	printf("%s_hit_ns_16=%.1f\n", side, best);
	fsm_map_destroy(m);
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			g_quick = true;
		if (!strcmp(argv[i], "--loop") && i + 2 < argc) {
			pin_to_cpu(0);
			return loop_one(argv[i + 1], atoi(argv[i + 2]));
		}
	}
	const size_t nstacks = 4096;
	const size_t seq_len = g_quick ? (1u << 14) : (1u << 16);
	const int reps = g_quick ? 5 : 61;
	const u64 hot_ops = g_quick ? 100000 : 500000;

	pin_to_cpu(0);
	printf("cpus=%u\n", std::thread::hardware_concurrency());
	if (FILE *f = fopen("/proc/loadavg", "r")) {
		double l1 = 0;
		if (fscanf(f, "%lf", &l1) == 1)
			printf("loadavg_1min=%.2f\n", l1);
		fclose(f);
	}
	printf("stacks=%zu\n", nstacks);
	printf("zipf_s=1.1\n");

	/* 1. Hit path, 16-frame stacks. */
	StackSet s16 = make_stacks(nstacks, 16, 16, 1);
	auto seq = zipf_sequence(nstacks, seq_len, 1.1, 2);
	HitResult h16 = bench_hits(s16, seq, reps);
	printf("hit_ns_16=%.1f\n", h16.ours);
	printf("seed_hit_ns_16=%.1f\n", h16.seed);
	printf("speedup_vs_seed=%.2f\n", h16.seed / h16.ours);
	printf("hit_ns_16_median=%.1f\n", h16.ours_median);
	printf("seed_hit_ns_16_median=%.1f\n", h16.seed_median);

	/* 1b. The same hits, each with its definition claim (the kernel's). */
	ClaimResult cl = bench_claims(s16, seq, reps);
	printf("hit_ns_16_again=%.1f\n", cl.hit_ns);
	printf("hit_claim_ns_16=%.1f\n", cl.hit_claim_ns);
	printf("def_claim_cost_ratio=%.2f\n", cl.hit_claim_ns / cl.hit_ns);
	printf("def_claims_due_per_1k=%.1f\n", cl.due_per_1k);

	/* 2. Hit path, depths 8..32. */
	StackSet smix = make_stacks(nstacks, 8, 32, 3);
	HitResult hmix = bench_hits(smix, seq, reps);
	printf("mean_depth_mixed=%.1f\n", smix.mean_depth());
	printf("hit_ns_mixed=%.1f\n", hmix.ours);
	printf("seed_hit_ns_mixed=%.1f\n", hmix.seed);
	printf("speedup_vs_seed_mixed=%.2f\n", hmix.seed / hmix.ours);

	/* 2b. One hot 16-frame stack, single thread (the best case). */
	{
		std::vector<uint32_t> hot(seq.size(), 0);
		HitResult hh = bench_hits(s16, hot, reps);
		printf("hot_hit_ns_16=%.1f\n", hh.ours);
		printf("seed_hot_hit_ns_16=%.1f\n", hh.seed);
	}

	/* 3. Miss path: insert every stack into fresh maps. */
	{
		std::vector<uint32_t> all(smix.size());
		for (size_t i = 0; i < all.size(); i++)
			all[i] = (uint32_t)i;
		std::vector<double> ours, seeds;
		for (int r = 0; r < reps; r++) {
			fsm_map *m = make_ours(14);
			ours.push_back(time_pass(all, [&](uint32_t i) -> u64 {
				fsm_insert_result res;
				if (fsm_map_insert(m, smix.ips(i), smix.nr[i], 1, &res))
					abort();
				return res.id;
			}));
			fsm_map_destroy(m);
			seed::Map sm(14);
			seeds.push_back(time_pass(all, [&](uint32_t i) -> u64 {
				return (u64)seed_get_id(&sm, smix.ips(i), smix.nr[i]);
			}));
		}
		std::sort(ours.begin(), ours.end());
		std::sort(seeds.begin(), seeds.end());
		printf("insert_ns_mixed=%.1f\n", ours[0]);
		printf("seed_insert_ns_mixed=%.1f\n", seeds[0]);
	}

	/* 4. One hot stack, 1 vs 2 threads on different CPUs. */
	if (std::thread::hardware_concurrency() >= 2) {
		const u64 *hot = s16.ips(0);
		fsm_map *m = make_ours(14);
		seed::Map sm(14);
		fsm_insert_result r{};
		if (fsm_map_insert(m, hot, 16, 1, &r) || seed_get_id(&sm, hot, 16) < 0)
			abort();
		Scaling ours = scaling(hot_ops, [&]() -> u64 {
			fsm_insert_result res;
			if (fsm_map_insert(m, hot, 16, 1, &res))
				abort();
			return res.id;
		});
		Scaling seeds = scaling(hot_ops, [&]() -> u64 {
			return (u64)seed_get_id(&sm, hot, 16);
		});
		u64 hits = 0;
		fsm_map_lookup_id(m, r.id, nullptr, nullptr, &hits);
		if (hits < hot_ops)
			abort();
		printf("hot_2t_scaling=%.2f\n", ours.ratio);
		printf("seed_hot_2t_scaling=%.2f\n", seeds.ratio);
		printf("hot_ns_1t=%.1f\n", ours.ns_1t);
		printf("hot_ns_2t_per_thread=%.1f\n", ours.ns_2t);
		printf("seed_hot_ns_1t=%.1f\n", seeds.ns_1t);
		printf("seed_hot_ns_2t_per_thread=%.1f\n", seeds.ns_2t);
		/* Control: scaling of code that shares nothing. Below ~1.8 the
		 * machine itself does not give two threads two CPUs' worth. */
		printf("baseline_alu_2t_scaling=%.2f\n", scaling(hot_ops, alu_work).ratio);
		fsm_map_destroy(m);
	} else {
		printf("hot_2t_scaling=n/a\n");
		printf("seed_hot_2t_scaling=n/a\n");
	}

	/*
	 * 4b. Two hot stacks whose ids share a set of the per-CPU hit cache
	 * (ids 0 and 512: one 64-byte line of 4096-word caches with 512 sets;
	 * they would collide in a direct-mapped cache of 256 or 512 words,
	 * as ids 0 and 256 did in the 256-word caches before issue 21 §4),
	 * each thread alternating between them, 1 vs 2
	 * threads on different CPUs. A cache that cannot hold both evicts on
	 * every hit and writes the shared per-id totals: two threads then
	 * write the same lines. Compare with hot_2t_scaling.
	 */
	if (std::thread::hardware_concurrency() >= 2) {
		fsm_map *m = make_ours(14);
		for (size_t i = 0; i <= 512; i++) {
			fsm_insert_result r{};
			if (fsm_map_insert(m, s16.ips(i), s16.nr[i], 1, &r) || r.id != i)
				abort();
		}
		const u64 *a = s16.ips(0), *b = s16.ips(512);
		Scaling coll = scaling(hot_ops, [&]() -> u64 {
			static thread_local bool odd;
			fsm_insert_result res;
			odd = !odd;
			if (fsm_map_insert(m, odd ? a : b, 16, 1, &res))
				abort();
			return res.id;
		});
		printf("collide_2t_scaling=%.2f\n", coll.ratio);
		printf("collide_ns_1t=%.1f\n", coll.ns_1t);
		printf("collide_ns_2t_per_thread=%.1f\n", coll.ns_2t);
		fsm_map_destroy(m);
	} else {
		printf("collide_2t_scaling=n/a\n");
	}

	/* 5. Memory per stack. */
	{
		fsm_map *m = make_ours(14);
		for (size_t i = 0; i < smix.size(); i++) {
			fsm_insert_result res;
			if (fsm_map_insert(m, smix.ips(i), smix.nr[i], 0, &res))
				abort();
		}
		struct fsm_map_stats st{};
		fsm_map_stats(m, &st);
		double arena = double(st.arena_used) / smix.size();
		/* Everything but the arena (slots, index, hit counts, per-CPU
		 * shards and hit caches), amortised over a full map. */
		double table = double(st.memory_bytes - st.arena_size) / st.capacity;
		printf("bytes_per_stack=%.1f\n", arena);
		printf("bytes_per_stack_with_table=%.1f\n", arena + table);
		printf("memory_bytes_bits14=%llu\n", st.memory_bytes);
		printf("seed_bytes_per_stack=%zu\n", seed::Map::kEltBytes);
		seed::Map sm(14);
		printf("seed_bytes_per_stack_with_table=%.1f\n",
		       double(seed::Map::kEltSlabBytes) + double(sm.table_bytes()) / sm.capacity());
		printf("seed_memory_bytes_bits14=%zu\n",
		       sm.table_bytes() + size_t(sm.capacity()) * seed::Map::kEltSlabBytes);
		fsm_map_destroy(m);
	}

	/* 5. Reset under load: how long inserts drop with RESETTING. */
	for (unsigned bits : {14u, 20u}) {
		const unsigned resets = g_quick ? 5 : 30;
		ResetResult rr = bench_reset(bits, smix, seq, resets);
		printf("reset_drop_window_us_bits%u=%.1f\n", bits, rr.window_us_max);
		printf("reset_drop_window_us_median_bits%u=%.1f\n", bits, rr.window_us_median);
		printf("reset_drops_per_reset_bits%u=%.1f\n", bits, rr.drops_per_reset);
		printf("reset_call_us_bits%u=%.1f\n", bits, rr.reset_call_us_median);
	}
	printf("cpu_source=%s\n", cpu_source());
	return g_sink.load() == 42 ? 1 : 0;
}
