// SPDX-License-Identifier: GPL-2.0
/*
 * tracefs_create_file() is exported (GPL) in 7.x, not in 6.1 or 6.12,
 * where compat.c resolves it by name through a kprobe.
 * yes: tracefs_create_file() is called through its export
 * no:  tracefs_create_file() is resolved through a kprobe at load
 * exported: tracefs_create_file
 */
#include <linux/tracefs.h>

static struct dentry *__used fsm_probe(struct dentry *parent, void *data,
				       const struct file_operations *fops)
{
	return tracefs_create_file("x", 0444, parent, data, fops);
}
