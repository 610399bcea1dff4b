// SPDX-License-Identifier: GPL-2.0
/*
 * chain.c - a known user call chain for the user-stack tests.
 *
 *   main -> ustack_f1 -> ... -> ustack_f6 -> ustack_sys   (raw getppid)
 *                                         -> ustack_touch  (page fault)
 *
 * Built with -O1 -fno-omit-frame-pointer -fno-inline
 * -fno-optimize-sibling-calls: x86-64 and -m32 (ia32), AArch64, and
 * AArch32 -marm and -mthumb (cross-built on the host: scripts/build-module
 * arm64). The syscall is issued with inline asm: Debian's glibc has no
 * frame pointers.
 *
 * Usage: chain N [fork|thread|exec|signal|stdin|pac|move]
 *
 * move: before call i, move to CPU i % 2 (sched_setaffinity on itself,
 * which returns once the task runs there): every CPU's buffer sees the
 * same stacks.
 *
 * pac (AArch64): first print "pac: paca=B raw=0x.. stripped=0x.." on stdout:
 * B the HWCAP_PACA bit of AT_HWCAP, raw the return address that
 * ustack_pac_show()'s prologue saved in its frame record (signed when the
 * program is built with -mbranch-protection=pac-ret and the CPU and kernel
 * use pointer authentication), stripped the same with its PAC removed by
 * xpaclri (ustack_chain.sh, Documentation/ustack.rst).
 *
 * stdin: after the first N calls, N more for each line read from stdin
 * (the pages touched again),
 * each batch acknowledged with a "done" line on stdout (a test drives one
 * process, one address space, across several recordings).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define NI __attribute__((noinline, noclone))

static char *pages;
static long npages, next_page;

/*
 * GCC sets up no frame in leaf functions even with -fno-omit-frame-pointer:
 * the faulting/syscall functions call this after the kernel entry, so that
 * they are not leaves and rbp/ebp points to their own frame at the entry.
 */
NI void ustack_nop(void)
{
	asm volatile("" ::: "memory");
}

NI long ustack_sys(void)
{
	long ret;

#if defined(__x86_64__)
	asm volatile("syscall" : "=a"(ret) : "a"(110L) : "rcx", "r11", "memory");
#elif defined(__i386__)
	asm volatile("int $0x80" : "=a"(ret) : "a"(64L) : "memory");
#elif defined(__aarch64__)
	register long x0 asm("x0");
	register long x8 asm("x8") = 173;	/* __NR_getppid, asm-generic */

	asm volatile("svc #0" : "=r"(x0) : "r"(x8) : "memory");
	ret = x0;
#elif defined(__arm__) && defined(__thumb__)
	/*
	 * Thumb: r7 is the frame pointer and the EABI syscall number both;
	 * save it around the svc as glibc's inline wrappers do (the
	 * caller's r7 at [sp], the return address still in lr).
	 */
	register long r0 asm("r0");

	asm volatile("push {r7}\n\tmovs r7, #64\n\tsvc #0\n\tpop {r7}"
		     : "=r"(r0) : : "memory");
	ret = r0;
#elif defined(__arm__)
	/* A32: the frame pointer is r11, r7 is free for the syscall number */
	register long r0 asm("r0");
	register long r7 asm("r7") = 64;	/* __NR_getppid, EABI */

	asm volatile("svc #0" : "=r"(r0) : "r"(r7) : "memory");
	ret = r0;
#else
#error "chain.c: add the raw getppid of this architecture"
#endif
	ustack_nop();
	return ret;
}

NI void ustack_touch(void)
{
	if (next_page < npages)
		pages[next_page++ * 4096] = 1;
	ustack_nop();
}

NI long ustack_f6(long x) { long r = ustack_sys(); ustack_touch(); return r + x + 6; }
NI long ustack_f5(long x) { return ustack_f6(x + 1) + 5; }
NI long ustack_f4(long x) { return ustack_f5(x + 1) + 4; }
NI long ustack_f3(long x) { return ustack_f4(x + 1) + 3; }
NI long ustack_f2(long x) { return ustack_f3(x + 1) + 2; }
NI long ustack_f1(long x) { return ustack_f2(x + 1) + 1; }

static volatile long sink;

#if defined(__aarch64__)
#include <sys/auxv.h>
#ifndef HWCAP_PACA
#define HWCAP_PACA (1UL << 30)
#endif
/*
 * Our own frame record {x29, x30} holds the return address into main as
 * the prologue saved it: after paciasp, signed. xpaclri (hint #7, a NOP on
 * CPUs without pointer authentication) strips x30.
 */
NI static int ustack_pac_show(void)
{
	unsigned long raw = ((unsigned long *)__builtin_frame_address(0))[1];
	unsigned long stripped;

	/* xpaclri works on x30 only; x30 is saved by our prologue */
	asm volatile("mov x30, %1\n\thint #7\n\tmov %0, x30"
		     : "=r"(stripped) : "r"(raw) : "x30");
	return printf("pac: paca=%d raw=%#lx stripped=%#lx\n",
		      !!(getauxval(AT_HWCAP) & HWCAP_PACA), raw, stripped) < 0;
}
#else
static int ustack_pac_show(void)
{
	return printf("pac: paca=0 (not AArch64)\n") < 0;
}
#endif

static void *thread_fn(void *arg)
{
	long i, n = (long)arg;

	for (i = 0; i < n; i++)
		sink += ustack_f1(i);
	return NULL;
}

/* Run on @cpu from now on. Return: 0, or -1 (no such CPU). */
static int move_to(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return sched_setaffinity(0, sizeof(s), &s);
}

static void on_signal(int sig)
{
	sink += sig;
}

int main(int argc, char **argv)
{
	long i, n = argc > 1 ? atol(argv[1]) : 10;
	const char *mode = argc > 2 ? argv[2] : "";
	pthread_t th;

	npages = n + 16;
	pages = mmap(NULL, npages * 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED)
		return 1;
	if (!strcmp(mode, "pac") && (ustack_pac_show() || fflush(stdout)))
		return 1;
	if (!strcmp(mode, "fork")) {
		if (fork() == 0) {
			for (i = 0; i < n; i++)
				sink += ustack_f1(i);
			_exit(0);
		}
	} else if (!strcmp(mode, "thread")) {
		if (pthread_create(&th, NULL, thread_fn, (void *)n))
			return 1;
	} else if (!strcmp(mode, "signal")) {
		/*
		 * Every 10 ms: at 1 ms a slow guest (KASAN under TCG) spends
		 * more than the interval delivering each signal and walking
		 * the stack of each rt_sigreturn, and main never progresses.
		 */
		signal(SIGALRM, on_signal);
		ualarm(10000, 10000);
	}
	for (i = 0; i < n; i++) {
		if (!strcmp(mode, "move") && move_to(i % 2))
			return 1;
		sink += ustack_f1(i);
	}
	if (!strcmp(mode, "stdin")) {
		char c;

		if (write(1, "done\n", 5) != 5)
			return 1;
		while (read(0, &c, 1) == 1) {
			if (c != '\n')
				continue;
			/*
			 * Fault the pages in again: each syscall entry is then
			 * followed by a fault entry, so that two consecutive
			 * entries never have the same saved registers (the
			 * per-entry cache would take them for one entry).
			 */
			madvise(pages, npages * 4096, MADV_DONTNEED);
			next_page = 0;
			for (i = 0; i < n; i++)
				sink += ustack_f1(i);
			if (write(1, "done\n", 5) != 5)
				return 1;
		}
	}
	if (!strcmp(mode, "fork"))
		wait(NULL);
	else if (!strcmp(mode, "thread"))
		pthread_join(th, NULL);
	else if (!strcmp(mode, "exec") && argc > 3)
		execv(argv[3], argv + 3);
	return 0;
}
