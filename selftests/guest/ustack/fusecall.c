// SPDX-License-Identifier: GPL-2.0
/*
 * fusecall.c - run code from a file without reading its first page
 * (ustack_fileid).
 *
 * Usage: fusecall FILE FN_OFFSET
 *
 * Maps the page of FILE that holds file offset FN_OFFSET (hex; a text
 * segment whose file offsets equal its addresses, as in a -z separate-code
 * shared object) with PROT_EXEC and MADV_RANDOM (no read-around: the fault
 * reads that page only), calls the function there once (warm-up), prints
 * "ready" and then, for each line read from stdin:
 *   "call N"  calls it N times (a raw getppid each), prints "done"
 *   "read"    reads FILE's first page (pread: the page cache gets it),
 *             prints "done"
 * and exits at the end of stdin. Every output line is flushed at once.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef long (*fn_t)(long);

static __attribute__((noinline)) void call(fn_t fn, long n)
{
	for (long i = 0; i < n; i++)
		fn(SYS_getppid);
	asm volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	char line[64], page[4096];
	unsigned long off, base;
	char *map;
	int fd;

	if (argc != 3)
		return 2;
	off = strtoul(argv[2], NULL, 16);
	base = off & ~4095UL;
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror("open");
		return 1;
	}
	map = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, base);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	madvise(map, 4096, MADV_RANDOM);
	fn_t fn = (fn_t)(map + (off - base));
	call(fn, 1);
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		if (!strncmp(line, "call ", 5))
			call(fn, atol(line + 5));
		else if (!strncmp(line, "read", 4) &&
			 pread(fd, page, sizeof(page), 0) != sizeof(page))
			perror("pread");
		printf("done\n");
	}
	return 0;
}
