// SPDX-License-Identifier: GPL-2.0
/*
 * file_user_path() (6.8): a file that overlayfs maps is a backing file
 * whose f_path is the real file's (the upper or lower layer's path); the
 * path users see (/proc/PID/maps) is file_user_path(). In 6.1 overlayfs
 * opened the real file with the overlay path as f_path.
 * yes: file_map paths are file_user_path() (fsm_compat_file_path())
 * no:  file_map paths are f_path (fsm_compat_file_path())
 */
#include <linux/fs.h>

static const struct path *__used fsm_probe(const struct file *file)
{
	return file_user_path(file);
}
