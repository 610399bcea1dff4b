// SPDX-License-Identifier: GPL-2.0
/*
 * A child looked up by name, the parent's inode lock taken inside when
 * the filesystem must be asked: lookup_one_len_unlocked(name, parent, len)
 * is gone in 7.x, replaced by lookup_noperm_unlocked(qstr, parent). The
 * same locking (called without the parent's lock held, may sleep); the
 * new one does not check the caller's MAY_EXEC permission on the parent,
 * which a lookup of tracefs's own directories on the module's behalf
 * should not depend on anyway.
 * yes: fsm_compat_lookup() calls lookup_noperm_unlocked()
 * no:  fsm_compat_lookup() calls lookup_one_len_unlocked()
 * exported: lookup_noperm_unlocked
 */
#include <linux/namei.h>
#include <linux/string.h>

static struct dentry *__used fsm_probe(struct dentry *parent, const char *name)
{
	struct qstr q = QSTR_INIT(name, strlen(name));

	return lookup_noperm_unlocked(&q, parent);
}
