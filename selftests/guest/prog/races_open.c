// SPDX-License-Identifier: GPL-2.0
/*
 * races_open.c FILE - one task that opens /dev/null as fast as it can
 * (each open is a hit of a kprobe event on do_sys_openat2), pinned to the
 * last CPU, until FILE disappears (stackmap_races.sh).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long i;
	cpu_set_t set;

	if (argc != 2) {
		fprintf(stderr, "usage: races_open FILE\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(n > 1 ? n - 1 : 0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	for (i = 0;; i++) {
		int fd = open("/dev/null", O_RDONLY);

		if (fd >= 0)
			close(fd);
		if (!(i & 1023) && access(argv[1], F_OK))
			break;
	}
	printf("%lu\n", i);
	return 0;
}
