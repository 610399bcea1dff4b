// SPDX-License-Identifier: GPL-2.0
/*
 * sameregs.c - kernel entries with exactly the same user registers, one
 * after the other, for the "same registers" loop bound of the user-stack
 * unwinder (selftests/guest/ustack_sameregs.sh, Documentation/ustack.rst).
 *
 *   main -> sr_loop   N raw getppid calls from one syscall instruction
 *   main -> sr_tail   one more getppid, from another instruction
 *
 * In sr_loop's "same" loop every register is the same at each return to
 * user space: the counter lives in memory, the scratch registers and the
 * flags are set to constants before each syscall, and what the syscall
 * itself writes is constant too (x86-64: rax = the parent's pid, rcx = the
 * return address, r11 = the flags; AArch64: x0 = the parent's pid, and the
 * loop enters with x0 already that value, asked before the traced part, so
 * orig_x0 is too). The "vary" loop is the same with one register counting
 * up (x86-64 r8, AArch64 x11). Run without glibc's rseq area (see the
 * suite).
 *
 * Built with -O1 -fno-omit-frame-pointer -fno-inline
 * -fno-optimize-sibling-calls (x86-64 or AArch64).
 * Usage: sameregs N same|vary - prints "pid PID rseq SIZE" (SIZE: glibc's
 * __rseq_size, 0 when it registered no rseq area), its own mappings (the
 * lines of /proc/self/maps naming the executable) and "ready", waits for a
 * line on stdin (the test sets its filters by PID meanwhile), answers "go"
 * and makes its N + 1 getppid calls.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NI __attribute__((noinline, noclone))

/* glibc 2.35 on: the size of the rseq area it registered, 0 for none */
extern const unsigned int __rseq_size __attribute__((weak));

/* the loop counter: in memory, so that no register holds it */
static volatile int sr_cnt;
/* getppid's result, asked before the traced part (AArch64's first x0) */
static long sr_ppid;

/* not leaves: sr_loop and sr_tail keep their frames at the kernel entry */
NI void sr_nop(void)
{
	asm volatile("" ::: "memory");
}

#if defined(__x86_64__)
/* xor sets the flags to constants (ZF, PF set; CF, OF, SF, AF clear) */
#define SR_LOOP(VARY)							\
	asm volatile("1:\n\t"						\
		     VARY						\
		     "xor %%edx, %%edx\n\t"				\
		     "mov $110, %%eax\n\t"	/* __NR_getppid */	\
		     "syscall\n\t"					\
		     "decl %0\n\t"					\
		     "jnz 1b"						\
		     : "+m"(sr_cnt)					\
		     :							\
		     : "rax", "rcx", "rdx", "r8", "r11", "memory", "cc")
#define SR_VARY "inc %%r8\n\t"
#elif defined(__aarch64__)
/*
 * x9 is 0 at each svc and cmp sets the flags to constants (nZCv); x0 is
 * the previous call's result (the loop starts with it).
 */
#define SR_LOOP(VARY)							\
	do {								\
		register long x0 asm("x0") = sr_ppid;			\
		asm volatile("1:\n\t"					\
			     VARY					\
			     "mov x8, #173\n\t"	/* __NR_getppid */	\
			     "mov x9, #0\n\t"				\
			     "cmp x9, #0\n\t"				\
			     "svc #0\n\t"				\
			     "ldr w9, [%1]\n\t"				\
			     "subs w9, w9, #1\n\t"			\
			     "str w9, [%1]\n\t"				\
			     "b.ne 1b"					\
			     : "+r"(x0)					\
			     : "r"(&sr_cnt)				\
			     : "x8", "x9", "x11", "memory", "cc");	\
	} while (0)
#define SR_VARY "add x11, x11, #1\n\t"
#else
#error "sameregs.c: add the getppid loop of this architecture"
#endif

NI void sr_loop(int n, int vary)
{
	sr_cnt = n;
	if (vary)
		SR_LOOP(SR_VARY);
	else
		SR_LOOP("");
	sr_nop();
}

/* other registers (another ip): not refused after the loop */
NI long sr_tail(void)
{
	long ret;

#if defined(__x86_64__)
	asm volatile("syscall" : "=a"(ret) : "0"(110L) : "rcx", "r11", "memory");
#else
	register long x0 asm("x0");
	register long x8 asm("x8") = 173;

	asm volatile("svc #0" : "=r"(x0) : "r"(x8) : "memory");
	ret = x0;
#endif
	sr_nop();
	return ret;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	int vary = argc > 2 && !strcmp(argv[2], "vary");
	char exe[4096], line[8192];
	ssize_t len;
	FILE *f;

	if (n < 1)
		return 2;
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return 1;
	exe[len] = 0;
	printf("pid %d rseq %u\n", (int)getpid(), &__rseq_size ? __rseq_size : 0);
	f = fopen("/proc/self/maps", "r");
	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, exe))
			fputs(line, stdout);
	fclose(f);
	sr_ppid = getppid();
	puts("ready");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	puts("go");
	fflush(stdout);
	sr_loop(n, vary);
	sr_tail();
	return 0;
}
