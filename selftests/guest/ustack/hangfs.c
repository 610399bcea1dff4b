// SPDX-License-Identifier: GPL-2.0
/*
 * hangfs.c - a FUSE file system (libfuse3) with one read-only file whose
 * server can stop answering (ustack_fileid).
 *
 * Usage: hangfs SOURCE MOUNTPOINT [FUSE OPTIONS]
 *
 * Serves SOURCE's bytes as MOUNTPOINT/lib.so, single-threaded, attributes
 * and entries never cached (every use asks the server). SIGUSR1: from now
 * on every request blocks (the handler sleeps while the flag is set, and
 * with one thread nothing else is answered); SIGUSR2: answer again. Killing
 * the server aborts the connection: blocked requests then fail.
 */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fuse.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *data;
static size_t size;
static volatile sig_atomic_t hang;

static void on_usr(int sig)
{
	hang = sig == SIGUSR1;
}

/* SIGUSR2 interrupts the sleep: few syscalls (each one is traced) */
static void maybe_hang(void)
{
	while (hang)
		usleep(500000);
}

static void *hfs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->attr_timeout = 0;
	cfg->entry_timeout = 0;
	cfg->negative_timeout = 0;
	cfg->kernel_cache = 1;	/* keep pages across opens */
	return NULL;
}

static int hfs_getattr(const char *path, struct stat *st,
		       struct fuse_file_info *fi)
{
	(void)fi;
	maybe_hang();
	memset(st, 0, sizeof(*st));
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (strcmp(path, "/lib.so"))
		return -ENOENT;
	st->st_mode = S_IFREG | 0755;
	st->st_nlink = 1;
	st->st_size = size;
	st->st_ino = 2;
	return 0;
}

static int hfs_readdir(const char *path, void *buf, fuse_fill_dir_t fill,
		       off_t off, struct fuse_file_info *fi,
		       enum fuse_readdir_flags flags)
{
	(void)off, (void)fi, (void)flags;
	maybe_hang();
	if (strcmp(path, "/"))
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, "lib.so", NULL, 0, 0);
	return 0;
}

static int hfs_open(const char *path, struct fuse_file_info *fi)
{
	maybe_hang();
	if (strcmp(path, "/lib.so"))
		return -ENOENT;
	if ((fi->flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	fi->keep_cache = 1;
	return 0;
}

static int hfs_read(const char *path, char *buf, size_t n, off_t off,
		    struct fuse_file_info *fi)
{
	(void)path, (void)fi;
	maybe_hang();
	if (off < 0 || (size_t)off >= size)
		return 0;
	if (n > size - off)
		n = size - off;
	memcpy(buf, data + off, n);
	return n;
}

static const struct fuse_operations hfs_ops = {
	.init = hfs_init,
	.getattr = hfs_getattr,
	.readdir = hfs_readdir,
	.open = hfs_open,
	.read = hfs_read,
};

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr };
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: hangfs SOURCE MOUNTPOINT [FUSE OPTIONS]\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f || fseek(f, 0, SEEK_END) || (long)(size = ftell(f)) < 0) {
		perror(argv[1]);
		return 1;
	}
	data = malloc(size);
	rewind(f);
	if (!data || fread(data, 1, size, f) != size) {
		perror("read");
		return 1;
	}
	fclose(f);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	argv[1] = argv[0];
	return fuse_main(argc - 1, argv + 1, &hfs_ops, NULL);
}
