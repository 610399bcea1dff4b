// SPDX-License-Identifier: GPL-2.0
/*
 * stress.c - workloads for the user-stack stress tests and benchmark
 * (selftests/guest/ustack_stress.sh, tools/bench/ustack-guest.sh).
 * x86-64 or AArch64, built with -O1 -fno-omit-frame-pointer -fno-inline
 * -fno-optimize-sibling-calls -pthread. Known call chains:
 *
 *   spin MS       main -> st_spin1 -> st_spin2 -> st_spin_loop: a busy
 *                 user loop (no syscall but the vDSO clock) for MS ms, so
 *                 that timer interrupts hit user mode
 *   burst N       main -> st_burst1 -> st_burst2 -> st_sys3: N rounds of
 *                 raw openat/read/close of /proc/self/stat (many kernel
 *                 events per syscall: allocations, frees)
 *   exitpend N    N children, each: one raw getppid, then _exit at once
 *                 (the exit_group entry leaves a walk pending at exit)
 *   threxit N     N threads, each: raw getppid, then returns (thread exit
 *                 with a pending walk)
 *   execrace N    N children, each: raw getppid, then execv(self, "quit")
 *                 (exec between the request and the walk)
 *   forkload N    N children one after the other, each: 3 burst rounds,
 *                 then _exit
 *   quit          exit 0
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NI __attribute__((noinline, noclone))

static volatile long sink;
static char buf[4096];

/* keeps the syscall functions from being leaves (see chain.c) */
NI void st_nop(void)
{
	asm volatile("" ::: "memory");
}

NI long st_sys3(long nr, long a, long b, long c)
{
	long ret;

#if defined(__x86_64__)
	asm volatile("syscall"
		     : "=a"(ret)
		     : "a"(nr), "D"(a), "S"(b), "d"(c)
		     : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x8 asm("x8") = nr;
	register long x0 asm("x0") = a;
	register long x1 asm("x1") = b;
	register long x2 asm("x2") = c;

	asm volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
	ret = x0;
#else
#error "stress.c: add the raw syscall of this architecture"
#endif
	st_nop();
	return ret;
}

NI long st_burst2(void)
{
	long fd = st_sys3(SYS_openat, -100 /* AT_FDCWD */,
			  (long)"/proc/self/stat", 0);
	long r = -1;

	if (fd >= 0) {
		r = st_sys3(SYS_read, fd, (long)buf, sizeof(buf));
		st_sys3(SYS_close, fd, 0, 0);
	}
	return r;
}

NI long st_burst1(long n)
{
	long i, r = 0;

	for (i = 0; i < n; i++)
		r += st_burst2();
	return r;
}

/*
 * Inline (also under -fno-inline): an interrupt at the first instructions
 * of a function of its own would be walked from the caller's frame, which
 * skips st_spin_loop (Documentation/ustack.rst: a function's first
 * instruction), a chain the irq check would have to accept as well.
 */
static inline __attribute__((always_inline)) long ms_since(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000 + (b.tv_nsec - a->tv_nsec) / 1000000;
}

NI void st_spin_loop(long ms)
{
	struct timespec a;
	long i;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (i = 0; i < (1L << 18); i++)
			sink += i ^ (i >> 3);
	} while (ms_since(&a) < ms);
}

NI void st_spin2(long ms) { st_spin_loop(ms); sink++; }
NI void st_spin1(long ms) { st_spin2(ms); sink++; }

static void *thread_fn(void *arg)
{
	(void)arg;
	sink += st_sys3(SYS_getppid, 0, 0, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "quit";
	long i, n = argc > 2 ? atol(argv[2]) : 1;
	pthread_t th[64];

	if (!strcmp(mode, "spin")) {
		st_spin1(n);
	} else if (!strcmp(mode, "burst")) {
		sink += st_burst1(n);
	} else if (!strcmp(mode, "exitpend") || !strcmp(mode, "execrace") ||
		   !strcmp(mode, "forkload")) {
		for (i = 0; i < n; i++) {
			pid_t p = fork();

			if (p < 0)
				return 1;
			if (p)
				continue;
			if (mode[0] == 'f') {
				st_burst1(3);
				_exit(0);
			}
			st_sys3(SYS_getppid, 0, 0, 0);
			if (mode[1] == 'x' && mode[2] == 'e') {	/* execrace */
				char *av[] = { argv[0], "quit", NULL };

				execv(argv[0], av);
				_exit(2);
			}
			_exit(0);
		}
		while (wait(NULL) > 0)
			;
	} else if (!strcmp(mode, "threxit")) {
		if (n > 64)
			n = 64;
		for (i = 0; i < n; i++)
			if (pthread_create(&th[i], NULL, thread_fn, NULL))
				return 1;
		for (i = 0; i < n; i++)
			pthread_join(th[i], NULL);
	} else if (strcmp(mode, "quit")) {
		return 2;
	}
	return 0;
}
