// SPDX-License-Identifier: GPL-2.0
/*
 * A child found in the dcache only, with no lock taken: 7.x neither
 * declares nor exports d_hash_and_lookup(); try_lookup_noperm(qstr,
 * parent) does the same (hash the name, d_lookup()) and, in 7.x, needs
 * no lock ("only a counted reference to @base"; 6.12's try_lookup_one_len()
 * wanted the parent's inode lock: not a substitute there). It also refuses
 * ".", ".." and names with '/' (ERR_PTR(-EACCES)), which no caller passes.
 * yes: fsm_compat_child() calls try_lookup_noperm()
 * no:  fsm_compat_child() calls d_hash_and_lookup()
 * exported: try_lookup_noperm
 */
#include <linux/namei.h>
#include <linux/string.h>

static struct dentry *__used fsm_probe(struct dentry *parent, const char *name)
{
	struct qstr q = QSTR_INIT(name, strlen(name));

	return try_lookup_noperm(&q, parent);
}
