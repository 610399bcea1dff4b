// SPDX-License-Identifier: GPL-2.0
/*
 * no_llseek(), the .llseek of a file that cannot seek, removed in 6.12
 * (a NULL .llseek means the same there: FMODE_LSEEK is not set).
 * yes: FSM_NO_LLSEEK is no_llseek
 * no:  FSM_NO_LLSEEK is NULL (the kernel's "cannot seek")
 */
#include <linux/fs.h>

static const struct file_operations fsm_probe_fops __used = {
	.llseek = no_llseek,
};
