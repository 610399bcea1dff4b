// SPDX-License-Identifier: GPL-2.0
/*
 * trig_uprobe.c - a function for a uprobe event (stackmap_trigger.sh):
 * fsm_trig_target() is called N times (argv[1], default 200), each call
 * making one getppid() system call, so that a uprobe event on it fires N
 * times in user context (the uprobe's post triggers run with preemption
 * enabled, H1 of the trigger review).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noinline)) long fsm_trig_target(long i)
{
	return syscall(SYS_getppid) + i;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200, i, s = 0;

	for (i = 0; i < n; i++)
		s += fsm_trig_target(i);
	return s == 0;	/* use s; never 0 in practice */
}
