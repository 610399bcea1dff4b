// SPDX-License-Identifier: GPL-2.0
/*
 * frameless.c - a frameless syscall wrapper called from code that keeps a
 * data pointer in rbp (selftests/guest/ustack_frameless.sh; x86-64 only).
 *
 * What Debian's glibc and libpython do together (issue 21, 3.6): the
 * wrapper sets up no frame, and its caller, built without frame pointers,
 * holds the address of a struct stat of its own frame in rbp. A
 * frame-pointer walker takes [rbp] and [rbp + 8] for a frame record. At
 * the event, [rbp + 8] (st_ino) still holds a stale return address into
 * the program; fstat() then writes the inode number there, which the walk
 * on the way out to user space reads instead.
 *
 *   main -> fl_caller -> fl_fstat (rbp = &st, raw fstat)
 *
 * Built with -O1 -fno-omit-frame-pointer -fno-inline
 * -fno-optimize-sibling-calls. Usage: frameless N (N fstat calls of
 * argv[0]'s file descriptor). Prints "pid P", its maps, "ready", waits for
 * a line, prints "ino I" (the inode number fstat() returns), exits.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NI __attribute__((noinline, noclone))

static volatile long sink;

/* keeps fl_ret from being a leaf that the compiler could fold */
NI void fl_nop(void)
{
	asm volatile("" ::: "memory");
}

/* A genuine return address into the caller: right after its call. */
NI void *fl_ret(void)
{
	fl_nop();
	return __builtin_return_address(0);
}

/*
 * The wrapper: no frame of its own; rbp holds @st for the syscall, as a
 * caller built without frame pointers may leave it.
 */
NI long fl_fstat(int fd, struct stat *st)
{
	long ret;

	asm volatile("push %%rbp\n\t"
		     "mov %[st], %%rbp\n\t"
		     "syscall\n\t"
		     "pop %%rbp"
		     : "=a"(ret)
		     : "a"((long)SYS_fstat), "D"((long)fd), "S"(st), [st] "r"(st)
		     : "rcx", "r11", "memory");
	fl_nop();
	return ret;
}

NI long fl_caller(int fd)
{
	struct stat st;
	void *stale;

	memset(&st, 0, sizeof(st));
	/* what an earlier, deeper call left on the stack: a return address */
	stale = fl_ret();
	memcpy(&st.st_ino, &stale, sizeof(stale));
	if (fl_fstat(fd, &st))
		return -1;
	return (long)st.st_ino;
}

int main(int argc, char **argv)
{
	long i, n = argc > 1 ? atol(argv[1]) : 1, ino = 0;
	char line[512];
	FILE *maps;
	int fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = open(argv[0], O_RDONLY);
	if (fd < 0)
		return 1;
	printf("pid %d\n", getpid());
	maps = fopen("/proc/self/maps", "r");
	if (!maps)
		return 1;
	while (fgets(line, sizeof(line), maps))
		fputs(line, stdout);
	fclose(maps);
	printf("ready\n");
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (i = 0; i < n; i++)
		ino = fl_caller(fd);
	printf("ino %ld\n", ino);
	return ino > 0 ? 0 : 1;
}
