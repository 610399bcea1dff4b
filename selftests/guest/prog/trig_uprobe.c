// SPDX-License-Identifier: GPL-2.0
/*
 * trig_uprobe.c - a function for a uprobe event (stackmap_trigger.sh):
 * fsm_trig_target() is called N times (argv[1], default 200), each call
 * making one getppid() system call, so that a uprobe event on it fires N
 * times in user context (the uprobe's post triggers run with preemption
 * enabled, H1 of the trigger review).
 *
 *   trig_uprobe N                 call fsm_trig_target() N times
 *   trig_uprobe N CPU             the same, on CPU only
 *   trig_uprobe N CPU sleep US    on CPU only, SCHED_FIFO, sleep US
 *                                 microseconds N times instead: each
 *                                 wakeup preempts the
 *                                 task that runs there (a window between
 *                                 a uprobe event's companion and its post
 *                                 trigger, review comp4 item 1(a))
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) long fsm_trig_target(long i)
{
	return syscall(SYS_getppid) + i;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200, i, s = 0;

	if (argc > 2) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(atoi(argv[2]), &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			perror("sched_setaffinity");
			return 2;
		}
	}
	if (argc > 4 && !strcmp(argv[3], "sleep")) {
		struct timespec ts = { 0, atol(argv[4]) * 1000 };
		struct sched_param sp = { .sched_priority = 1 };

		/* real-time: each wakeup preempts the task running there */
		if (sched_setscheduler(0, SCHED_FIFO, &sp))
			perror("sched_setscheduler (a plain sleeper then)");

		for (i = 0; i < n; i++)
			nanosleep(&ts, NULL);
		return 0;
	}
	for (i = 0; i < n; i++)
		s += fsm_trig_target(i);
	return s == 0;	/* use s; never 0 in practice */
}
