// SPDX-License-Identifier: GPL-2.0
/*
 * eventfs (6.6): an event's tracefs directory is no longer a dentry that
 * lives as long as the event file (trace_event_file::dir is gone, the
 * file has an eventfs_inode, ->ei); events/SYS/EV dentries are made on
 * lookup and dropped at will, so neither the event file -> instance walk
 * nor the events/ listing nor the event file lock can use the dcache.
 * yes: event files are reached through the kernel's event list under event_mutex (compat.c)
 * no:  event files are reached through persistent events/SYS/EV dentries
 */
#include <linux/trace_events.h>

static void *__used fsm_probe(struct trace_event_file *file)
{
	return file->ei;
}
