// SPDX-License-Identifier: GPL-2.0
/*
 * syscall_loop N [EVERY] - N getppid() system calls; with EVERY, one
 * getpid() after each EVERY-1 getppid() instead (a share of 1/EVERY of
 * the calls that a filter "id == __NR_getpid" keeps). Prints the mean
 * wall time per call in ns ("ns_per_call=X"). A bench workload
 * (tools/bench/filter-guest.sh): raw syscalls, so that libc cannot cache
 * or skip them. "syscall_loop --nr-getpid" prints __NR_getpid.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n, every, i;
	struct timespec a, b;
	double ns;

	if (argc == 2 && !strcmp(argv[1], "--nr-getpid")) {
		printf("%ld\n", (long)SYS_getpid);
		return 0;
	}
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s N [EVERY]\n", argv[0]);
		return 2;
	}
	n = strtol(argv[1], NULL, 10);
	every = argc == 3 ? strtol(argv[2], NULL, 10) : 0;
	if (n <= 0 || every < 0) {
		fprintf(stderr, "%s: N must be > 0 and EVERY >= 0\n", argv[0]);
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++) {
		if (every && i % every == every - 1)
			syscall(SYS_getpid);
		else
			syscall(SYS_getppid);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
	printf("ns_per_call=%.1f\n", ns / n);
	return 0;
}
