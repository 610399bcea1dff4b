// SPDX-License-Identifier: GPL-2.0
/*
 * A dentry's children: the list d_subdirs linked through d_child became
 * the hlist d_children linked through d_sib (6.8).
 * yes: fsm_compat_list_subdirs() walks the hlist d_children / d_sib
 * no:  fsm_compat_list_subdirs() walks the list d_subdirs / d_child
 */
#include <linux/dcache.h>

static struct dentry *__used fsm_probe(struct dentry *parent)
{
	struct dentry *child;

	hlist_for_each_entry(child, &parent->d_children, d_sib)
		return child;
	return NULL;
}
