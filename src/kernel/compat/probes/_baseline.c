// SPDX-License-Identifier: GPL-2.0
/*
 * The baseline: must compile against every kernel. If it does not, the
 * kernel's headers, flags or compiler do not work here, and every other
 * probe's "no" would be a lie: scripts/kernel-probes stops the build.
 */
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/trace_events.h>

static int __used fsm_probe(const struct inode *inode)
{
	return inode->i_mode & S_IFMT;
}
