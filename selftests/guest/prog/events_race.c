// SPDX-License-Identifier: GPL-2.0
/*
 * events_race.c - parallel writes to ONE open file of stack_map_events.
 *
 *   events_race FILE NPROC SECONDS TEXT_A TEXT_B
 *
 * Opens FILE once (O_WRONLY, no O_TRUNC), forks NPROC processes that share
 * that open file, and each submits writes of it through its own io_uring
 * until SECONDS have passed: even-numbered ones write TEXT_A, odd ones
 * TEXT_B. write(2) would not do: from threads or processes sharing the
 * file it takes the file's f_pos_lock, which serialises the writes. An
 * io_uring write to a file without FMODE_NOWAIT runs in an io-wq worker
 * of the submitting task, without f_pos_lock; each task has its own io-wq,
 * so the writes of different processes run in parallel.
 *
 * Prints "writes N einval N" and exits 0 when every write completed with
 * its full length or -EINVAL; 1 on another result; 77 when io_uring is not
 * available (kernel without CONFIG_IO_URING).
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BATCH 8

struct counts {
	long writes;
	long einval;
	long other;
	int other_res;
	int setup_err;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void child(int fd, const char *text, double end, struct counts *c)
{
	size_t len = strlen(text);
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int i, ret;

	ret = io_uring_queue_init(BATCH, &ring, 0);
	if (ret) {
		c->setup_err = ret;
		return;
	}
	while (now() < end) {
		for (i = 0; i < BATCH; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			io_uring_prep_write(sqe, fd, text, len, 0);
		}
		ret = io_uring_submit_and_wait(&ring, BATCH);
		if (ret < 0) {
			c->other++;
			c->other_res = ret;
			break;
		}
		for (i = 0; i < BATCH; i++) {
			ret = io_uring_wait_cqe(&ring, &cqe);
			if (ret) {
				c->other++;
				c->other_res = ret;
				break;
			}
			c->writes++;
			if (cqe->res == -EINVAL) {
				c->einval++;
			} else if (cqe->res != (int)len) {
				c->other++;
				c->other_res = cqe->res;
			}
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	io_uring_queue_exit(&ring);
}

int main(int argc, char **argv)
{
	struct counts *c, sum = { 0 };
	int fd, i, n, status;
	double end;

	if (argc != 6) {
		fprintf(stderr, "usage: %s FILE NPROC SECONDS TEXT_A TEXT_B\n",
			argv[0]);
		return 2;
	}
	n = atoi(argv[2]);
	if (n < 2 || n > 64) {
		fprintf(stderr, "NPROC: 2..64\n");
		return 2;
	}
	c = mmap(NULL, n * sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(c, 0, n * sizeof(*c));
	fd = open(argv[1], O_WRONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	end = now() + atof(argv[3]);
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (!pid) {
			child(fd, i & 1 ? argv[5] : argv[4], end, &c[i]);
			_exit(0);
		}
	}
	for (i = 0; i < n; i++) {
		if (wait(&status) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			fprintf(stderr, "a child failed\n");
			return 1;
		}
	}
	close(fd);
	for (i = 0; i < n; i++) {
		if (c[i].setup_err) {
			fprintf(stderr, "io_uring_queue_init: %s\n",
				strerror(-c[i].setup_err));
			return c[i].setup_err == -ENOSYS ? 77 : 1;
		}
		sum.writes += c[i].writes;
		sum.einval += c[i].einval;
		sum.other += c[i].other;
		if (c[i].other)
			sum.other_res = c[i].other_res;
	}
	printf("writes %ld einval %ld\n", sum.writes, sum.einval);
	if (sum.other) {
		fprintf(stderr, "%ld writes with another result (last %d)\n",
			sum.other, sum.other_res);
		return 1;
	}
	return 0;
}
