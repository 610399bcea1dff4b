// SPDX-License-Identifier: GPL-2.0
/*
 * events_uffd.c - a write of stack_map_events whose buffer cannot be read
 * yet must not block the other writers of the same open file.
 *
 *   events_uffd FILE TEXT_A TEXT_B
 *
 * Opens FILE once (O_WRONLY, no O_TRUNC). Thread A pwrite()s TEXT_A from
 * a page registered with userfaultfd and never filled: the module's copy
 * from user faults and waits for this program. Once the fault is seen, a
 * thread B pwrite()s TEXT_B to the same open file (pwrite: no f_pos_lock,
 * so only the module can serialise the two) and the program waits up to
 * 5 seconds for B. Then it fills the page with TEXT_A, which lets A go on.
 *
 * Prints "b_in_time N a=RES b=RES"; exits 0 when B returned within the 5
 * seconds and both writes returned their length, 1 otherwise, 77 when the
 * kernel has no userfaultfd.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct wr {
	int fd;
	const void *buf;
	size_t len;
	ssize_t res;
	int err;
};

static void *writer(void *arg)
{
	struct wr *w = arg;

	w->res = pwrite(w->fd, w->buf, w->len, 0);
	w->err = w->res < 0 ? errno : 0;
	return NULL;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

int main(int argc, char **argv)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {};
	struct uffdio_copy copy = {};
	struct wr a = {}, b = {};
	struct uffd_msg msg;
	struct pollfd pfd;
	struct timespec ts;
	pthread_t ta, tb;
	int fd, uffd, b_in_time;
	char *page, *src;

	if (argc != 4 || strlen(argv[2]) >= (size_t)pg) {
		fprintf(stderr, "usage: events_uffd FILE TEXT_A TEXT_B\n");
		return 1;
	}
	fd = open(argv[1], O_WRONLY);
	if (fd < 0)
		die("open");
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC);
	if (uffd < 0 && errno == ENOSYS) {
		fprintf(stderr, "no userfaultfd\n");
		return 77;
	}
	if (uffd < 0)
		die("userfaultfd");
	if (ioctl(uffd, UFFDIO_API, &api))
		die("UFFDIO_API");
	page = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	src = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED || src == MAP_FAILED)
		die("mmap");
	reg.range.start = (unsigned long)page;
	reg.range.len = pg;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		die("UFFDIO_REGISTER");

	a.fd = fd;
	a.buf = page;
	a.len = strlen(argv[2]);
	if (pthread_create(&ta, NULL, writer, &a))
		die("pthread_create");
	pfd.fd = uffd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 10000) != 1)
		die("poll: no page fault from the write");
	if (read(uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT)
		die("read uffd");

	/* A waits inside its copy from user: now B */
	b.fd = fd;
	b.buf = argv[3];
	b.len = strlen(argv[3]);
	if (pthread_create(&tb, NULL, writer, &b))
		die("pthread_create");
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 5;
	b_in_time = pthread_timedjoin_np(tb, NULL, &ts) == 0;

	/* let A go on: its page holds TEXT_A */
	memcpy(src, argv[2], a.len);
	copy.dst = (unsigned long)page;
	copy.src = (unsigned long)src;
	copy.len = pg;
	if (ioctl(uffd, UFFDIO_COPY, &copy))
		die("UFFDIO_COPY");
	pthread_join(ta, NULL);
	if (!b_in_time)
		pthread_join(tb, NULL);
	printf("b_in_time %d a=%zd b=%zd\n", b_in_time, a.res, b.res);
	if (a.err)
		fprintf(stderr, "write A: %s\n", strerror(a.err));
	if (b.err)
		fprintf(stderr, "write B: %s\n", strerror(b.err));
	close(fd);
	return b_in_time && a.res == (ssize_t)a.len &&
	       b.res == (ssize_t)b.len ? 0 : 1;
}
