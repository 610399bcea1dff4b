// SPDX-License-Identifier: GPL-2.0
/*
 * threads.c - many live threads that have asked for a user stack, then
 * late threads whose requests must still get one
 * (selftests/guest/ustack_threads.sh, tools/bench/ustack-threads-guest.sh).
 * x86-64 or AArch64, built with -O1 -fno-omit-frame-pointer -fno-inline
 * -fno-optimize-sibling-calls -pthread. Known call chains:
 *
 *   early thread   thr_early_start -> thr_early -> thr_sys   (raw getppid)
 *                  then thr_wait: a futex wait until the end
 *   late thread    thr_late_start -> thr_late_a -> thr_late_b -> thr_sys
 *                  (raw getppid), then the thread ends
 *   timed thread   thr_timed_start -> thr_timed -> thr_sys, K times
 *
 * Usage: threads N L [K]
 * Talks with the test on stdin/stdout, one line each way:
 *   out "pid P", its /proc/self/maps lines, "ready"; waits for a line
 *   starts N early threads; when each has made its getppid and all are
 *     asleep in their futex wait (state S in /proc): out "asleep N";
 *     waits for a line
 *   starts L late threads, joins them: out "late TID" for each, then
 *     "late done"; waits for a line
 *   with K > 0, as long as that line is "time": one more thread makes K
 *     getppid calls, out "timed K NS" (the nanoseconds they took); waits
 *     for a line
 *   wakes the early threads, joins them, exits 0.
 * Threads run on 64 KiB stacks (or PTHREAD_STACK_MIN where that is more:
 * 128 KiB on AArch64), so that 10,000 of them fit a small guest.
 */
#include <dirent.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NI __attribute__((noinline, noclone))

static volatile long sink;
static int release_word;
static int early_done;

/* keeps the syscall function from being a leaf (see chain.c) */
NI void thr_nop(void)
{
	asm volatile("" ::: "memory");
}

NI long thr_sys(void)
{
	long ret;

#if defined(__x86_64__)
	asm volatile("syscall" : "=a"(ret) : "a"((long)SYS_getppid)
		     : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x0 asm("x0");
	register long x8 asm("x8") = SYS_getppid;

	asm volatile("svc #0" : "=r"(x0) : "r"(x8) : "memory");
	ret = x0;
#else
#error "threads.c: add the raw getppid of this architecture"
#endif
	thr_nop();
	return ret;
}

NI void thr_wait(void)
{
	while (!__atomic_load_n(&release_word, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &release_word, FUTEX_WAIT_PRIVATE, 0, NULL,
			NULL, 0);
}

NI void thr_early(void)
{
	sink += thr_sys();
	__atomic_add_fetch(&early_done, 1, __ATOMIC_RELEASE);
}

static void *thr_early_start(void *arg)
{
	(void)arg;
	thr_early();
	thr_wait();
	return NULL;
}

NI void thr_late_b(void) { sink += thr_sys(); thr_nop(); }
NI void thr_late_a(void) { thr_late_b(); thr_nop(); }

static void *thr_late_start(void *arg)
{
	*(long *)arg = syscall(SYS_gettid);
	thr_late_a();
	return NULL;
}

NI void thr_timed(long k)
{
	long i;

	for (i = 0; i < k; i++)
		sink += thr_sys();
}

static void *thr_timed_start(void *arg)
{
	thr_timed(*(long *)arg);
	return NULL;
}

static int wait_line(void)
{
	char buf[64];

	return fgets(buf, sizeof(buf), stdin) ? 0 : -1;
}

/* Threads of this process in state S (asleep), from /proc/self/task. */
static long asleep(void)
{
	char path[300], stat[512], *p;
	struct dirent *d;
	long n = 0;
	DIR *dir = opendir("/proc/self/task");
	FILE *f;

	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(stat, sizeof(stat), f)) {
			p = strrchr(stat, ')');
			if (p && p[1] == ' ' && p[2] == 'S')
				n++;
		}
		fclose(f);
	}
	closedir(dir);
	return n;
}

static long ns_since(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000000000L + (b.tv_nsec - a->tv_nsec);
}

int main(int argc, char **argv)
{
	long i, n = argc > 1 ? atol(argv[1]) : 10;
	long l = argc > 2 ? atol(argv[2]) : 10;
	long k = argc > 3 ? atol(argv[3]) : 0;
	struct timespec t0, nap = { 0, 2000000 };
	pthread_t *early, *late, timed;
	pthread_attr_t attr;
	long *tids, tries;
	char line[512];
	FILE *maps;

	setvbuf(stdout, NULL, _IOLBF, 0);
	early = calloc(n + 1, sizeof(*early));
	late = calloc(l + 1, sizeof(*late));
	tids = calloc(l + 1, sizeof(*tids));
	if (!early || !late || !tids)
		return 1;
	printf("pid %d\n", getpid());
	maps = fopen("/proc/self/maps", "r");
	if (!maps)
		return 1;
	while (fgets(line, sizeof(line), maps))
		fputs(line, stdout);
	fclose(maps);
	printf("ready\n");
	if (wait_line())
		return 1;

	pthread_attr_init(&attr);
	if (pthread_attr_setstacksize(&attr, 64 * 1024 > PTHREAD_STACK_MIN ?
					      64 * 1024 : PTHREAD_STACK_MIN)) {
		fprintf(stderr, "threads: pthread_attr_setstacksize failed\n");
		return 1;
	}
	for (i = 0; i < n; i++) {
		if (pthread_create(&early[i], &attr, thr_early_start, NULL)) {
			fprintf(stderr, "threads: early thread %ld: cannot create\n", i);
			return 1;
		}
	}
	while (__atomic_load_n(&early_done, __ATOMIC_ACQUIRE) < n)
		nanosleep(&nap, NULL);
	/* every early thread asleep in its futex wait (main itself runs) */
	for (tries = 0; asleep() < n && tries < 10000; tries++)
		nanosleep(&nap, NULL);
	printf("asleep %ld\n", asleep());
	if (wait_line())
		return 1;

	for (i = 0; i < l; i++)
		if (pthread_create(&late[i], &attr, thr_late_start, &tids[i]))
			return 1;
	for (i = 0; i < l; i++) {
		pthread_join(late[i], NULL);
		printf("late %ld\n", tids[i]);
	}
	printf("late done\n");
	while (fgets(line, sizeof(line), stdin) && k > 0 && !strncmp(line, "time", 4)) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (pthread_create(&timed, &attr, thr_timed_start, &k))
			return 1;
		pthread_join(timed, NULL);
		printf("timed %ld %ld\n", k, ns_since(&t0));
	}

	__atomic_store_n(&release_word, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &release_word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL,
		NULL, 0);
	for (i = 0; i < n; i++)
		pthread_join(early[i], NULL);
	return 0;
}
