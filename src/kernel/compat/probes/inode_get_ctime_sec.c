// SPDX-License-Identifier: GPL-2.0
/*
 * struct inode's change time behind accessors: i_ctime became private
 * (__i_ctime, 6.6) and then two fields read through
 * inode_get_ctime_sec()/inode_get_ctime_nsec() (6.7+); fileid.c reads it
 * to tell a file's versions apart (fsm_compat_inode_ctime()).
 * yes: fsm_compat_inode_ctime() reads inode_get_ctime_sec()/_nsec()
 * no:  fsm_compat_inode_ctime() reads struct inode::i_ctime
 */
#include <linux/fs.h>

static void __used fsm_probe(const struct inode *inode, s64 *sec, u32 *nsec)
{
	*sec = inode_get_ctime_sec(inode);
	*nsec = inode_get_ctime_nsec(inode);
}
