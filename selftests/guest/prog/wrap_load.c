// SPDX-License-Identifier: GPL-2.0
/*
 * wrap_load.c - the workload of the flight-recorder tests
 * (stackmap_wrap.sh): many system calls from a few known user call chains,
 * enough kernel allocations and context switches to wrap a small ring
 * buffer many times, and a few short-lived children (a new address space
 * each: new user stack ids, used only for a moment).
 *
 *   wrap_load ROUNDS [CHILD_EVERY]
 *
 * Each round calls, from its own chain of frames (built with
 * -fno-omit-frame-pointer so that the user stacks are walkable): an open,
 * read and close of /proc/self/stat, a pipe written and read, an fstat, a
 * getppid and, every 8th round, a sched_yield (a context switch when
 * another task is runnable). Every CHILD_EVERY rounds (default 64; 0:
 * never) a child forks, does one round itself and exits, and the parent
 * waits for it. Raw syscall() throughout: libc caches nothing.
 * Prints "rounds=N children=M"; exit 0, or 1 when a call failed.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int failed;

static __attribute__((noinline)) void leaf_file(void)
{
	char buf[256];
	long fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/stat", O_RDONLY);

	if (fd < 0) {
		failed = 1;
		return;
	}
	if (syscall(SYS_read, fd, buf, sizeof(buf)) <= 0)
		failed = 1;
	syscall(SYS_close, fd);
}

static __attribute__((noinline)) void leaf_pipe(void)
{
	int p[2];
	char c = 'x';

	if (syscall(SYS_pipe2, p, 0)) {
		failed = 1;
		return;
	}
	if (syscall(SYS_write, p[1], &c, 1) != 1 || syscall(SYS_read, p[0], &c, 1) != 1)
		failed = 1;
	syscall(SYS_close, p[0]);
	syscall(SYS_close, p[1]);
}

static __attribute__((noinline)) void leaf_misc(long round)
{
	struct stat st;

	if (syscall(SYS_fstat, 0, &st))
		failed = 1;
	syscall(SYS_getppid);
	if (round % 8 == 0)
		syscall(SYS_sched_yield);
}

static __attribute__((noinline)) void mid_a(long round)
{
	leaf_file();
	leaf_misc(round);
}

static __attribute__((noinline)) void mid_b(long round)
{
	leaf_pipe();
	leaf_misc(round + 1);
}

static __attribute__((noinline)) void one_round(long round)
{
	mid_a(round);
	mid_b(round);
}

int main(int argc, char **argv)
{
	long rounds, every, i, children = 0;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s ROUNDS [CHILD_EVERY]\n", argv[0]);
		return 2;
	}
	rounds = strtol(argv[1], NULL, 10);
	every = argc == 3 ? strtol(argv[2], NULL, 10) : 64;
	for (i = 0; i < rounds; i++) {
		one_round(i);
		if (every > 0 && i % every == every - 1) {
			pid_t pid = fork();

			if (pid == 0) {
				one_round(i);
				_exit(failed);
			}
			if (pid < 0 || waitpid(pid, NULL, 0) != pid)
				failed = 1;
			children++;
		}
	}
	printf("rounds=%ld children=%ld\n", rounds, children);
	return failed;
}
