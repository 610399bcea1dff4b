// SPDX-License-Identifier: GPL-2.0
/*
 * entry.c - kernel entries with identical user registers but different
 * user stacks, for the "one user stack per kernel entry" test.
 *
 *   main -> entry_caller_a -> entry_sys   (raw getppid)
 *   main -> entry_caller_b -> entry_sys   (raw getppid)
 *
 * Both callers have the same frame size and are called from the same frame
 * of main, so both syscalls are made with the same ip, sp, bp and syscall
 * number: only the return address into entry_caller_a or entry_caller_b,
 * on the user stack, tells them apart.
 *
 * Built with -O1 -fno-omit-frame-pointer -fno-inline
 * -fno-optimize-sibling-calls (x86-64 or AArch64).
 * Usage: entry N - N times a then b; first prints "pid PID", its own
 * mappings (the lines of /proc/self/maps naming the executable) and
 * "ready", then waits for a line on stdin (the test sets its filters by
 * PID meanwhile, and may run it under perf record), answers "go" (one
 * write: an entry before the first getppid) and starts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NI __attribute__((noinline, noclone))

/* not a leaf: entry_sys keeps its frame (rbp) at the kernel entry */
NI void entry_nop(void)
{
	asm volatile("" ::: "memory");
}

NI long entry_sys(void)
{
	long ret;

	/* raw getppid: no libc wrapper (no frame pointers there) */
#if defined(__x86_64__)
	asm volatile("syscall" : "=a"(ret) : "0"(110L) : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x0 asm("x0");
	register long x8 asm("x8") = 173;	/* __NR_getppid, asm-generic */

	asm volatile("svc #0" : "=r"(x0) : "r"(x8) : "memory");
	ret = x0;
#else
#error "entry.c: add the raw getppid of this architecture"
#endif
	entry_nop();
	return ret;
}

NI void entry_caller_a(void)
{
	entry_sys();
	entry_nop();
}

NI void entry_caller_b(void)
{
	entry_sys();
	entry_nop();
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10;
	char exe[4096], line[8192];
	ssize_t len;
	FILE *f;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return 1;
	exe[len] = 0;
	printf("pid %d\n", (int)getpid());
	f = fopen("/proc/self/maps", "r");
	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, exe))
			fputs(line, stdout);
	fclose(f);
	puts("ready");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	/* an entry of its own before the first getppid (the FAILQ test's) */
	puts("go");
	fflush(stdout);
	for (long i = 0; i < n; i++) {
		entry_caller_a();
		entry_caller_b();
	}
	return 0;
}
