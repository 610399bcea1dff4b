// SPDX-License-Identifier: GPL-2.0
/*
 * platform_user.cpp - the fsm_plat_* hooks of fsm_core.h for user space
 * (tests and benchmark). Lives outside src/core so that nothing using libc
 * can reach the kernel build.
 */
#include "fsm_core.h"
#include "test_platform.h"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <sched.h>
#include <sys/rseq.h>
#include <sys/random.h>
#include <unistd.h>

namespace {
std::atomic<unsigned int> g_nr_cpus_override{0};
std::atomic<bool> g_fail_next_alloc{false};
std::atomic<unsigned long long> g_yields{0};
thread_local int t_cpu_override = -1;
std::atomic<void (*)(void *)> g_yield_fn{nullptr};
std::atomic<void *> g_yield_arg{nullptr};
} // namespace

void test_platform_set_nr_cpus(unsigned int n) { g_nr_cpus_override.store(n); }
void test_platform_set_thread_cpu(int cpu) { t_cpu_override = cpu; }
void test_platform_fail_next_alloc() { g_fail_next_alloc.store(true); }
unsigned long long test_platform_yields() { return g_yields.load(); }
void test_platform_set_yield_hook(void (*fn)(void *), void *arg)
{
	g_yield_arg.store(arg);
	g_yield_fn.store(fn);
}

extern "C" {

void *fsm_plat_alloc(unsigned long long size)
{
	if (g_fail_next_alloc.exchange(false))
		return nullptr;
	return calloc(1, size);
}

void fsm_plat_free(void *p) { free(p); }

/*
 * The CPU number from the thread's rseq area when glibc registered one (a
 * plain load, like raw_smp_processor_id() in the kernel), else
 * sched_getcpu() (a vDSO call, ~8 ns on the reference VM).
 */
unsigned int fsm_plat_cpu(void)
{
	if (__builtin_expect(t_cpu_override >= 0, 0))
		return (unsigned int)t_cpu_override;
	if (__rseq_size > 0) {
		const struct rseq *rs = reinterpret_cast<const struct rseq *>(
			static_cast<char *>(__builtin_thread_pointer()) + __rseq_offset);
		int cpu = (int)__atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);
		if (cpu >= 0)
			return (unsigned int)cpu;
	}
	int cpu = sched_getcpu();
	return cpu < 0 ? 0 : (unsigned int)cpu;
}

unsigned int fsm_plat_nr_cpus(void)
{
	unsigned int n = g_nr_cpus_override.load();
	if (n)
		return n;
	long c = sysconf(_SC_NPROCESSORS_CONF);
	return c > 0 ? (unsigned int)c : 1;
}

void fsm_plat_yield(void)
{
	g_yields.fetch_add(1, std::memory_order_relaxed);
	if (void (*fn)(void *) = g_yield_fn.load())
		fn(g_yield_arg.load());
	sched_yield();
}

/* User space cannot keep the scheduler away: nothing to do. */
void fsm_plat_nopreempt_begin(void) {}
void fsm_plat_nopreempt_end(void) {}

void fsm_plat_random(void *buf, unsigned long long len)
{
	unsigned char *p = static_cast<unsigned char *>(buf);

	while (len) {
		ssize_t n = getrandom(p, len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			abort();
		}
		p += n;
		len -= (unsigned long long)n;
	}
}

} // extern "C"
