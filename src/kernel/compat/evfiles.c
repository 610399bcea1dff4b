// SPDX-License-Identifier: GPL-2.0
/*
 * evfiles.c - the trace event files of an instance (see evfiles.h for the
 * two ways and why each one is safe).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/lockdep.h>
#include <linux/magic.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/trace_events.h>
#include <linux/uaccess.h>

#include "compat.h"
#include "evfiles.h"
#include "ksyms.h"
#include "layouts.h"

/* A new entry of a listing: "SYS\0EV\0". Context: task. */
static struct fsm_event_name *fsm_evname_new(const char *sys, const char *ev)
{
	size_t ls = strlen(sys), le = strlen(ev);
	struct fsm_event_name *e;

	e = kmalloc(struct_size(e, sys, ls + le + 2), GFP_KERNEL);
	if (!e)
		return NULL;
	memcpy(e->sys, sys, ls + 1);
	memcpy(e->sys + ls + 1, ev, le + 1);
	e->ev = e->sys + ls + 1;
	e->file = NULL;
	return e;
}

#if FSM_HAVE_EVENTFS

#if !FSM_HAVE_KL_TRACE_ARRAY
/* Every function below finds nothing; fsm_compat_evfiles_init() says why. */
#define fsm_tr_options(tr)	((struct dentry **)NULL)
#define fsm_tr_events(tr)	((struct list_head *)NULL)
#else
#define fsm_tr_options(tr)	fsm_kl_tr_options(tr)
#define fsm_tr_events(tr)	fsm_kl_tr_events(tr)
#endif /* !FSM_HAVE_KL_TRACE_ARRAY */

/* No pins without event_file_get()/_put() (both or neither). */
static bool fsm_evf_pins;

/* The most list nodes fsm_evf_check_events() follows (events of a kernel: ~3000) */
#define FSM_EVF_WALK_MAX	65536

#if FSM_HAVE_KL_TRACE_ARRAY
/*
 * Is the word at tr->options (@tr: global_trace, @size bytes) the tracefs
 * root's "options" directory? The word and what it points to are read
 * with copy_from_kernel_nofault() until they are known to be a tracefs
 * dentry named "options" whose parent is a root: a wrong offset reads
 * some other member, which fails one of these tests without a fault (and
 * without a KASAN report: the offset was first checked against the
 * object's size). Then the parent is the tracefs root, whose "trace" file
 * belongs to @tr, and its child "options" must be the word itself.
 * Context: task. Return: NULL, or what is wrong.
 */
static const char *fsm_evf_check_options(struct trace_array *tr,
					 unsigned long size)
{
	struct dentry *opts, *parent, *pp, *child;
	char name[sizeof("options")];
	struct super_block *sb;
	const unsigned char *np;
	unsigned long magic;
	void *key;

	if (FSM_KL_trace_array__options + sizeof(opts) > size)
		return "trace_array::options is past the end of global_trace";
	if (copy_from_kernel_nofault(&opts, fsm_tr_options(tr), sizeof(opts)) ||
	    !opts)
		return "no dentry at trace_array::options";
	if (copy_from_kernel_nofault(&np, &opts->d_name.name, sizeof(np)) ||
	    copy_from_kernel_nofault(name, np, sizeof(name)) ||
	    memcmp(name, "options", sizeof(name)))
		return "trace_array::options is not named options";
	if (copy_from_kernel_nofault(&sb, &opts->d_sb, sizeof(sb)) ||
	    copy_from_kernel_nofault(&magic, &sb->s_magic, sizeof(magic)) ||
	    magic != TRACEFS_MAGIC)
		return "trace_array::options is not in tracefs";
	if (copy_from_kernel_nofault(&parent, &opts->d_parent, sizeof(parent)) ||
	    copy_from_kernel_nofault(&pp, &parent->d_parent, sizeof(pp)) ||
	    pp != parent)
		return "trace_array::options is not at the tracefs root";
	/* a tracefs dentry now: tracefs pins its dentries (not eventfs') */
	key = fsm_compat_instance_key(parent);
	child = fsm_compat_child(parent, "options");
	dput(child);
	if (key != tr || child != opts)
		return "trace_array::options is not the top level's options directory";
	return NULL;
}

/*
 * Is tr->events (@tr: global_trace, @size bytes) the head of the list
 * that holds @file, an event file of @tr? From @file, the first node of
 * the list that lies inside @tr must be the head. Only list nodes that
 * the kernel links are followed, under the lock that guards them.
 * Context: task, event_mutex not held. Return: NULL, or what is wrong.
 */
static const char *fsm_evf_check_events(struct trace_event_file *file,
					struct trace_array *tr,
					unsigned long size)
{
	struct list_head *n;
	unsigned int i = 0;

	if (FSM_KL_trace_array__events + sizeof(*n) > size)
		return "trace_array::events is past the end of global_trace";
	mutex_lock(fsm_ks.event_mutex);
	for (n = file->list.next; n != &file->list && i < FSM_EVF_WALK_MAX;
	     n = n->next, i++) {
		if ((char *)n >= (char *)tr && (char *)n < (char *)tr + size)
			break;
	}
	mutex_unlock(fsm_ks.event_mutex);
	if (n != fsm_tr_events(tr))
		return "trace_array::events is not the head of the event files' list";
	return NULL;
}

/*
 * The trace_array offsets against the running kernel, at load: on the
 * top level (global_trace, the trace_array of our stackmap:stack_id file)
 * whose size kallsyms knows. Where that cannot be done, the layouts must
 * have been read from this very kernel (fsm_compat_layouts_why()).
 * Context: task (module init). Return: NULL, or why the layout is not used.
 */
static const char *fsm_evf_check_layout(void)
{
	static char why[160];
	struct trace_event_file *file;
	unsigned long size, start = 0;
	struct trace_array *tr;
	const char *bad;

	file = trace_get_event_file(NULL, "stackmap", "stack_id");
	if (IS_ERR(file))
		return "stackmap:stack_id not found to check the trace_array layout";
	tr = file->tr;
	size = fsm_compat_symbol_size((unsigned long)tr, &start);
	if (!size || start != (unsigned long)tr) {
		trace_put_event_file(file);
		return fsm_compat_layouts_why();
	}
	/* kallsyms' size reaches the next symbol: never below the object's */
	if (FSM_KL_trace_array____SIZE > size)
		bad = "struct trace_array is larger than global_trace";
	else
		bad = fsm_evf_check_options(tr, size);
	if (!bad)
		bad = fsm_evf_check_events(file, tr, size);
	trace_put_event_file(file);
	if (!bad)
		return NULL;
	snprintf(why, sizeof(why), "%s (offsets %u, %u; the layouts of %s)",
		 bad, (unsigned int)FSM_KL_trace_array__options,
		 (unsigned int)FSM_KL_trace_array__events, FSM_KL_RELEASE);
	return why;
}
#endif /* FSM_HAVE_KL_TRACE_ARRAY */

int fsm_compat_evfiles_init(void)
{
	const char *why;

	if (!FSM_HAVE_KL_TRACE_ARRAY) {
		pr_err("eventfs kernel without the trace_array layout (%s): no instance can be found\n",
		       FSM_KL_TRACE_ARRAY_WHY);
		return -ENODEV;
	}
	if (!fsm_ks.event_mutex) {
		pr_err("eventfs kernel and event_mutex not found (CONFIG_KALLSYMS_ALL?): no event file can be found\n");
		return -ENODEV;
	}
#if FSM_HAVE_KL_TRACE_ARRAY
	why = fsm_evf_check_layout();
	if (why) {
		pr_err("eventfs kernel: %s: no instance can be found\n", why);
		return -ENODEV;
	}
#endif /* FSM_HAVE_KL_TRACE_ARRAY */
	fsm_evf_pins = fsm_ks.event_file_get && fsm_ks.event_file_put;
	if (!fsm_evf_pins)
		pr_warn("event_file_get/event_file_put not found: each event of a wildcard is looked up in the instance's whole list\n");
	return 0;
}

struct dentry *fsm_compat_event_file_instance_dir(struct trace_event_file *file)
{
	struct trace_array *tr = file->tr;
	struct dentry *opts, *dir;

	if (!FSM_HAVE_KL_TRACE_ARRAY || !tr)
		return NULL;
	/*
	 * tr->options, made with the instance by init_tracer_tracefs(), is
	 * never changed after; it lives as long as tr, which the caller keeps
	 * (event_mutex, or a trace_get_event_file() reference).
	 */
	opts = READ_ONCE(*fsm_tr_options(tr));
	if (!opts)
		return NULL;
	dir = dget_parent(opts);
	if (fsm_compat_instance_key(dir) != tr) {
		pr_warn_once("%pd: not the directory of its instance (trace_array layout?)\n",
			     dir);
		dput(dir);
		return NULL;
	}
	return dir;
}

/*
 * The trace_array of @inst_dir if the instance is whole: the key of its
 * "trace" file, which __remove_instance() unhashes (under event_mutex)
 * before it frees the trace_array. Context: event_mutex held.
 */
static struct trace_array *fsm_evf_tr(struct dentry *inst_dir)
{
	lockdep_assert_held(fsm_ks.event_mutex);
	return fsm_compat_instance_key(inst_dir);
}

/*
 * The event's name and system, or false for a file the kernel's own
 * lookups skip (__find_event_file()). Context: event_mutex held.
 */
static bool fsm_evf_names(struct trace_event_file *file, const char **sys,
			  const char **ev)
{
	struct trace_event_call *call = file->event_call;

	if (!call->class)
		return false;
	*ev = trace_event_name(call);
	*sys = call->class->system;
	return *ev && *sys;
}

/* find_event_file()'s rule: what has an "enable" file. */
static bool fsm_evf_enableable(struct trace_event_file *file)
{
	struct trace_event_call *call = file->event_call;

	return call->class->reg && !(call->flags & TRACE_EVENT_FL_IGNORE_ENABLE);
}

struct trace_event_file *fsm_compat_event_file_lock(struct dentry *inst_dir,
						    const char *sys,
						    const char *ev,
						    struct trace_event_file *hint,
						    struct fsm_evlock *lk)
{
	struct trace_event_file *file, *found = NULL;
	struct trace_array *tr;
	const char *s, *e;

	lk->evdir = NULL;
	lk->mutex = false;
	lk->no_enable = false;
	if (!FSM_HAVE_KL_TRACE_ARRAY || !fsm_ks.event_mutex)
		return NULL;
	lockdep_assert_not_held(fsm_ks.event_mutex);
	mutex_lock(fsm_ks.event_mutex);
	tr = fsm_evf_tr(inst_dir);
	if (!tr)
		goto out;
	/*
	 * A pinned file (its memory stays) that the kernel has not removed
	 * (FREED is set under event_mutex, held here) and that is this
	 * instance's: the live file, without a search.
	 */
	if (hint && !(READ_ONCE(hint->flags) & EVENT_FILE_FL_FREED) &&
	    hint->tr == tr && fsm_evf_names(hint, &s, &e) &&
	    !strcmp(s, sys) && !strcmp(e, ev)) {
		found = hint;
	} else {
		list_for_each_entry(file, fsm_tr_events(tr), list) {
			if (fsm_evf_names(file, &s, &e) && !strcmp(e, ev) &&
			    !strcmp(s, sys)) {
				found = file;
				break;
			}
		}
	}
	if (found && !fsm_evf_enableable(found)) {
		lk->no_enable = true;
		found = NULL;
	}
out:
	if (!found) {
		mutex_unlock(fsm_ks.event_mutex);
		return NULL;
	}
	lk->mutex = true;
	return found;
}

void fsm_compat_event_file_unlock(struct fsm_evlock *lk)
{
	if (lk->mutex)
		mutex_unlock(fsm_ks.event_mutex);
	lk->mutex = false;
}

int fsm_compat_list_events(struct dentry *inst_dir,
			   const struct fsm_event_filter *filter,
			   struct list_head *out)
{
	struct trace_event_file *file;
	struct fsm_event_name *n;
	struct trace_array *tr;
	const char *sys, *ev;
	int ret = 0;

	if (!FSM_HAVE_KL_TRACE_ARRAY || !fsm_ks.event_mutex)
		return -ENODEV;
	lockdep_assert_not_held(fsm_ks.event_mutex);
	mutex_lock(fsm_ks.event_mutex);
	tr = fsm_evf_tr(inst_dir);
	if (!tr) {
		ret = -ENODEV;
		goto out;
	}
	/* newest first, as the kernel adds them (list_add() to tr->events) */
	list_for_each_entry(file, fsm_tr_events(tr), list) {
		if (!fsm_evf_names(file, &sys, &ev))
			continue;
		if (filter->sys && !filter->sys(sys, filter->arg))
			continue;
		if (filter->ev && !filter->ev(sys, ev, filter->arg))
			continue;
		n = fsm_evname_new(sys, ev);
		if (!n) {
			ret = -ENOMEM;
			break;
		}
		if (fsm_evf_pins) {
			fsm_kcall(event_file_get)(file);
			n->file = file;
		}
		list_add_tail(&n->list, out);
	}
out:
	mutex_unlock(fsm_ks.event_mutex);
	return ret;
}

void fsm_compat_free_events(struct list_head *events)
{
	struct fsm_event_name *n, *tmp;

	list_for_each_entry_safe(n, tmp, events, list) {
		list_del(&n->list);
		/* the last put of a removed file frees it (EVENT_FILE_FL_FREED) */
		if (n->file)
			fsm_kcall(event_file_put)(n->file);
		kfree(n);
	}
}

#else /* !FSM_HAVE_EVENTFS */

static_assert(__same_type(((struct trace_event_file *)NULL)->dir,
			  struct dentry *),
	      "trace_event_file::dir is gone (eventfs?): the eventfs probe is wrong");

int fsm_compat_evfiles_init(void)
{
	return 0;
}

struct dentry *fsm_compat_event_file_instance_dir(struct trace_event_file *file)
{
	struct dentry *d, *p;
	int up;

	/* events/SYSTEM/EVENT: three levels up is the instance directory */
	d = dget(file->dir);
	for (up = 0; d && up < 3; up++) {
		if (IS_ROOT(d)) {
			dput(d);
			return NULL;
		}
		p = dget_parent(d);
		dput(d);
		d = p;
	}
	return d;
}

struct trace_event_file *fsm_compat_event_file_lock(struct dentry *inst_dir,
						    const char *sys,
						    const char *ev,
						    struct trace_event_file *hint,
						    struct fsm_evlock *lk)
{
	struct dentry *events, *sysdir, *d, *enable;
	struct trace_event_file *file = NULL;

	lk->evdir = NULL;
	lk->mutex = false;
	lk->no_enable = false;
	events = fsm_compat_lookup(inst_dir, "events");
	sysdir = events ? fsm_compat_lookup(events, sys) : NULL;
	d = sysdir ? fsm_compat_lookup(sysdir, ev) : NULL;
	dput(sysdir);
	dput(events);
	if (!d)
		return NULL;
	/*
	 * remove_event_file_dir() removes the event's directory (which takes
	 * this inode lock) before it drops the file's last reference: while
	 * we hold the lock and the directory is not dead, the file lives.
	 */
	inode_lock_shared(d_inode(d));
	if (IS_DEADDIR(d_inode(d)) || d_unhashed(d))
		goto out;
	enable = fsm_compat_child(d, "enable");
	if (!enable) {
		/* an event that cannot be enabled (not SYS's own enable file) */
		lk->no_enable = d_is_dir(d);
		goto out;
	}
	file = d_inode(enable)->i_private;
	dput(enable);
out:
	if (!file) {
		inode_unlock_shared(d_inode(d));
		dput(d);
		return NULL;
	}
	lk->evdir = d;
	return file;
}

void fsm_compat_event_file_unlock(struct fsm_evlock *lk)
{
	if (!lk->evdir)
		return;
	inode_unlock_shared(d_inode(lk->evdir));
	dput(lk->evdir);
	lk->evdir = NULL;
}

struct fsm_evf_walk {
	const struct fsm_event_filter *filter;
	const char *sys;
};

static bool fsm_evf_sys(const char *name, void *arg)
{
	const struct fsm_evf_walk *w = arg;

	return !w->filter->sys || w->filter->sys(name, w->filter->arg);
}

static bool fsm_evf_ev(const char *name, void *arg)
{
	const struct fsm_evf_walk *w = arg;

	return !w->filter->ev || w->filter->ev(w->sys, name, w->filter->arg);
}

int fsm_compat_list_events(struct dentry *inst_dir,
			   const struct fsm_event_filter *filter,
			   struct list_head *out)
{
	struct fsm_evf_walk w = { .filter = filter };
	struct dentry *events, *sysdir;
	struct fsm_event_name *n;
	struct fsm_name *s, *e;
	LIST_HEAD(systems);
	int ret;

	events = fsm_compat_lookup(inst_dir, "events");
	if (!events)
		return -ENODEV;
	ret = fsm_compat_list_subdirs(events, fsm_evf_sys, &w, &systems);
	list_for_each_entry(s, &systems, list) {
		LIST_HEAD(evs);

		if (ret)
			break;
		sysdir = fsm_compat_lookup(events, s->name);
		if (!sysdir)
			continue;	/* removed meanwhile */
		w.sys = s->name;
		ret = fsm_compat_list_subdirs(sysdir, fsm_evf_ev, &w, &evs);
		dput(sysdir);
		list_for_each_entry(e, &evs, list) {
			if (ret)
				break;
			n = fsm_evname_new(s->name, e->name);
			if (!n)
				ret = -ENOMEM;
			else
				list_add_tail(&n->list, out);
		}
		fsm_free_names(&evs);
	}
	fsm_free_names(&systems);
	dput(events);
	return ret;
}

void fsm_compat_free_events(struct list_head *events)
{
	struct fsm_event_name *n, *tmp;

	list_for_each_entry_safe(n, tmp, events, list) {
		list_del(&n->list);
		kfree(n);
	}
}

#endif /* FSM_HAVE_EVENTFS */
