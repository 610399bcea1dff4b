// SPDX-License-Identifier: GPL-2.0
/*
 * events_slowbuf.c - a write of stack_map_events whose buffer cannot be
 * read for a long time must not block the other writers of the same open
 * file (the glue-write review's L1: the user's bytes are copied before the
 * write lock is taken).
 *
 *   events_slowbuf FILE SLOWFILE SERVERPID TEXT_B
 *
 * SLOWFILE is a file on a FUSE mount whose server (SERVERPID, hangfs.c)
 * stops answering on SIGUSR1 and answers again on SIGUSR2; its first page
 * must not be in the page cache yet. Opens FILE once (O_WRONLY, no
 * O_TRUNC) and maps SLOWFILE's first page. After SIGUSR1, thread A writes
 * the first strlen(TEXT_B) bytes of SLOWFILE straight from the mapping
 * through io_uring: the write runs in an io-wq worker, without the file's
 * f_pos_lock (see events_race.c), and the module's copy from user faults
 * and waits for the hung server. Once A has been stuck for a second,
 * thread B write()s TEXT_B to the same open file (write(2) takes
 * f_pos_lock, which A does not hold: only the module can make B wait) and
 * the program waits up to 5 seconds for B. Then SIGUSR2 lets A go on; A
 * must return within 20 seconds.
 *
 * Prints "b_in_time N a=RES b=RES"; exits 0 when B returned within the 5
 * seconds and both writes returned their length, 1 otherwise, 2 when A
 * was not stuck (the page was cached: the test proves nothing), 77 when
 * io_uring is not available.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct wr {
	int fd;
	const char *buf;
	size_t len;
	ssize_t res;
	int err;
	atomic_int done;
};

/* B: write(2). */
static void *writer(void *arg)
{
	struct wr *w = arg;

	w->res = write(w->fd, w->buf, w->len);
	w->err = w->res < 0 ? errno : 0;
	atomic_store(&w->done, 1);
	return NULL;
}

/* A: one io_uring write (ring set up by the caller). */
static struct io_uring ring;

static void *uring_writer(void *arg)
{
	struct wr *w = arg;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	struct io_uring_cqe *cqe;
	int ret;

	io_uring_prep_write(sqe, w->fd, w->buf, w->len, 0);
	ret = io_uring_submit_and_wait(&ring, 1);
	if (ret >= 0)
		ret = io_uring_wait_cqe(&ring, &cqe);
	if (ret < 0) {
		w->res = -1;
		w->err = -ret;
	} else {
		w->res = cqe->res < 0 ? -1 : cqe->res;
		w->err = cqe->res < 0 ? -cqe->res : 0;
		io_uring_cqe_seen(&ring, cqe);
	}
	atomic_store(&w->done, 1);
	return NULL;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* Wait up to @ms for @w to return. */
static int wait_done(struct wr *w, int ms)
{
	for (; ms > 0 && !atomic_load(&w->done); ms -= 10)
		usleep(10000);
	return atomic_load(&w->done);
}

int main(int argc, char **argv)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct wr a = { .done = 0 }, b = { .done = 0 };
	pthread_t ta, tb;
	int fd, sfd, b_in_time, ret;
	pid_t server;
	char *map;
	size_t len;

	if (argc != 5) {
		fprintf(stderr, "usage: events_slowbuf FILE SLOWFILE SERVERPID TEXT_B\n");
		return 1;
	}
	server = (pid_t)atoi(argv[3]);
	ret = io_uring_queue_init(4, &ring, 0);
	if (ret) {
		fprintf(stderr, "io_uring_queue_init: %s\n", strerror(-ret));
		return ret == -ENOSYS ? 77 : 1;
	}
	fd = open(argv[1], O_WRONLY);
	if (fd < 0)
		die("open FILE");
	sfd = open(argv[2], O_RDONLY);
	if (sfd < 0)
		die("open SLOWFILE");
	map = mmap(NULL, pg, PROT_READ, MAP_SHARED, sfd, 0);
	if (map == MAP_FAILED)
		die("mmap SLOWFILE");
	/* A's length: the mapping cannot be looked at without faulting it in */
	len = strlen(argv[4]);
	if (kill(server, SIGUSR1))
		die("kill SIGUSR1");
	usleep(300000);		/* the server sees the flag before A's read */

	a.fd = fd;
	a.buf = map;
	a.len = len;
	if (pthread_create(&ta, NULL, uring_writer, &a))
		die("pthread_create A");
	if (wait_done(&a, 1000)) {
		kill(server, SIGUSR2);
		fprintf(stderr, "A was not stuck (a=%zd %s): SLOWFILE's page was cached?\n",
			a.res, a.res < 0 ? strerror(a.err) : "");
		return 2;
	}

	b.fd = fd;
	b.buf = argv[4];
	b.len = len;
	if (pthread_create(&tb, NULL, writer, &b))
		die("pthread_create B");
	b_in_time = wait_done(&b, 5000);

	if (kill(server, SIGUSR2))
		die("kill SIGUSR2");
	if (!wait_done(&a, 20000)) {
		fprintf(stderr, "A still stuck 20 s after the server answers again\n");
		return 1;
	}
	if (!wait_done(&b, 20000)) {
		fprintf(stderr, "B still stuck 20 s after A returned\n");
		return 1;
	}
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	printf("b_in_time %d a=%zd b=%zd\n", b_in_time, a.res, b.res);
	if (a.res < 0)
		fprintf(stderr, "A: %s\n", strerror(a.err));
	if (b.res < 0)
		fprintf(stderr, "B: %s\n", strerror(b.err));
	return b_in_time && a.res == (ssize_t)len && b.res == (ssize_t)len ? 0 : 1;
}
