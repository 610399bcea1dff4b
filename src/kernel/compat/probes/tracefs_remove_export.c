// SPDX-License-Identifier: GPL-2.0
/*
 * tracefs_remove() is not exported in 6.1, 6.12 or 7.x: compat.c resolves
 * it by name through a kprobe. A kernel that exports it is called
 * through the export.
 * yes: tracefs_remove() is called through its export
 * no:  tracefs_remove() is resolved through a kprobe at load
 * exported: tracefs_remove
 */
#include <linux/tracefs.h>

static void __used fsm_probe(struct dentry *d)
{
	tracefs_remove(d);
}
