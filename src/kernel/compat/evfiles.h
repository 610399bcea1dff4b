/* SPDX-License-Identifier: GPL-2.0 */
/*
 * evfiles.h - the trace event files of an instance (struct
 * trace_event_file), found by name without a reference on the instance
 * (part of the compat place, see compat.h).
 *
 * Two ways, chosen by the eventfs probe (FSM_HAVE_EVENTFS):
 *
 * Persistent event directories (6.1)
 *   Every instance has events/SYS/EV directories that live exactly as long
 *   as the event file, whose ->dir points at them: the instance of a file
 *   is three levels up, the events of an instance are the subdirectories
 *   of events/ (the dcache: tracefs pins its dentries), and a file is
 *   held valid by the shared inode lock of its events/SYS/EV directory,
 *   which the kernel takes to remove the directory before it drops the
 *   file (remove_event_file_dir()).
 *
 * eventfs (6.6+)
 *   events/SYS/EV dentries are made on lookup and dropped whenever the
 *   dcache likes (trace_event_file::dir is gone; the file has an
 *   eventfs_inode instead): the dcache lists only what someone looked up
 *   lately, and no inode lock guards the file. So the kernel's own lists
 *   are read, under the lock that guards them, event_mutex (not exported:
 *   fsm_ks.event_mutex, compat/ksyms.c):
 *   - the instance of a file: file->tr (public) and the instance's
 *     "options" directory, tr->options (a kernel-internal layout from the
 *     target kernel's BTF, scripts/kernel-layouts.list), whose parent is
 *     the instance directory: instances/NAME, or the tracefs root for the
 *     top level (whose tr->dir is not a tracefs dentry: the debugfs
 *     automount). The result is checked: its "trace" file must belong to
 *     the same trace_array (fsm_compat_instance_key()), or NULL;
 *   - the events of an instance: tr->events (the same layout), the list
 *     of its trace_event_files, walked under event_mutex;
 *   - a file held valid: event_mutex held from the lookup to the unlock.
 *     Every path that frees an event file (remove_event_file_dir(): rmdir
 *     of the instance, a dynamic event's removal, a module's unload) or
 *     the trace_array (__remove_instance()) runs under event_mutex, and so
 *     does instance creation, so with it held an instance is either whole
 *     or gone, and "gone" shows: its directory's "trace" file is unhashed.
 *     The instance's trace_array is taken from that file each time (the
 *     same opaque key as in 6.1); no trace_array reference is taken, so a
 *     concurrent rmdir waits for event_mutex instead of failing with
 *     -EBUSY, exactly as it waited for the inode lock in 6.1.
 *   A listing (fsm_compat_list_events()) pins each file it returns with
 *   the kernel's event_file_get() (the refcount that keeps a struct
 *   trace_event_file allocated after its removal sets
 *   EVENT_FILE_FL_FREED) and gives it as a hint to
 *   fsm_compat_event_file_lock(): under event_mutex a pinned file that is
 *   not FREED and belongs to the instance is the live file, found in O(1);
 *   otherwise (no hint, a stale one, event_file_get() not found) the
 *   instance's list is searched, O(events). Resolving "*" stays O(events)
 *   instead of O(events^2). The pins are dropped with event_file_put()
 *   by fsm_compat_free_events().
 *
 * Either way: nothing that takes event_mutex or trace_types_lock may be
 * called between fsm_compat_event_file_lock() and the unlock (the kernel's
 * removals hold them while they wait for this lock, and on eventfs it is
 * event_mutex itself), and the caller holds neither (nor fsm_mutex, which
 * nests inside event_mutex).
 */
#ifndef FSM_COMPAT_EVFILES_H
#define FSM_COMPAT_EVFILES_H

#include <linux/list.h>
#include <linux/types.h>

struct dentry;
struct trace_event_file;

/**
 * fsm_compat_evfiles_init - say whether event files can be found here.
 *
 * eventfs needs event_mutex and the trace_array layout; without either,
 * no instance or event can be found and the load fails with one dmesg
 * line (what is missing). The layout's two offsets are checked against
 * the running kernel first (the top level's trace_array, read without
 * following an unchecked pointer); where that cannot be done, the
 * layouts must come from this kernel (fsm_compat_layouts_why()). A wrong
 * or unchecked layout fails the load the same way. Without
 * event_file_get()/_put() listings are not pinned (slower wildcards,
 * said once).
 * Context: task (module init, after fsm_ksyms_init(); our trace events
 * registered).
 * Return: 0 or -ENODEV.
 */
int fsm_compat_evfiles_init(void);

/**
 * fsm_compat_event_file_instance_dir - instance directory of an event file.
 * @file: a trace_event_file of any instance (events/SYS/EVENT)
 *
 * Context: task; @file must stay valid (the caller holds event_mutex or a
 * reference from trace_get_event_file(), which also holds the instance).
 * Return: the instance's tracefs directory with a reference (dput() it):
 * the tracefs root for the top-level instance, instances/NAME otherwise;
 * NULL if the layout is not the expected one.
 */
struct dentry *fsm_compat_event_file_instance_dir(struct trace_event_file *file);

/* What fsm_compat_event_file_lock() holds, for the unlock. */
struct fsm_evlock {
	struct dentry *evdir;	/* 6.1: events/SYS/EV, its inode lock shared */
	bool mutex;		/* eventfs: event_mutex held */
	bool no_enable;		/* after NULL: the event exists, cannot be enabled */
};

/**
 * fsm_compat_event_file_lock - an event's trace_event_file in an instance,
 * held valid without a reference on the instance (see the file comment).
 * @inst_dir: the instance's tracefs directory
 * @sys:      event system
 * @ev:       event name
 * @hint:     the file a listing found (struct fsm_event_name::file), or
 *            NULL; only used on eventfs, and only if still valid
 * @lk:       filled in; pass it to fsm_compat_event_file_unlock()
 *
 * Context: task, may sleep; the caller holds no event_mutex,
 * trace_types_lock or fsm_mutex.
 * Return: the file (held valid until the unlock), or NULL: no such event,
 * or it cannot be enabled (no "enable" file: no ->reg, or ftrace's own
 * IGNORE_ENABLE events: then @lk->no_enable is set, so that the caller
 * does not call it unknown), or the instance or the event is being
 * removed. Nothing is held after NULL.
 */
struct trace_event_file *fsm_compat_event_file_lock(struct dentry *inst_dir,
						    const char *sys,
						    const char *ev,
						    struct trace_event_file *hint,
						    struct fsm_evlock *lk);
void fsm_compat_event_file_unlock(struct fsm_evlock *lk);

/* An event collected by fsm_compat_list_events(). */
struct fsm_event_name {
	struct list_head list;
	struct trace_event_file *file;	/* eventfs: pinned, a hint; or NULL */
	const char *ev;			/* in sys[], after the system's NUL */
	char sys[];			/* "SYS\0EV\0" */
};

/*
 * Which events to collect: @sys on each system name (NULL: all), then
 * @ev on each event of a system @sys accepted (NULL: all). Called with a
 * spinlock or event_mutex held: no sleeping, no allocation, no lock.
 */
struct fsm_event_filter {
	bool (*sys)(const char *sys, void *arg);
	bool (*ev)(const char *sys, const char *ev, void *arg);
	void *arg;
};

/**
 * fsm_compat_list_events - the events of an instance, by name.
 * @inst_dir: the instance's tracefs directory
 * @filter:   which ones (see struct fsm_event_filter)
 * @out:      struct fsm_event_name entries are appended (free them with
 *            fsm_compat_free_events(), also after an error)
 *
 * Every event directory of the instance on 6.1 (also those the lock will
 * refuse: no "enable"), every event file on eventfs (the same set).
 * Context: task, may sleep; the caller holds no event_mutex or fsm_mutex.
 * Return: 0, -ENODEV (the instance has no events directory, or is gone),
 * -ENOMEM (@out holds what was collected).
 */
int fsm_compat_list_events(struct dentry *inst_dir,
			   const struct fsm_event_filter *filter,
			   struct list_head *out);

/* Free a list filled by fsm_compat_list_events(). Context: task. */
void fsm_compat_free_events(struct list_head *events);

#endif /* FSM_COMPAT_EVFILES_H */
