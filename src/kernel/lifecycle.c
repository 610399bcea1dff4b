// SPDX-License-Identifier: GPL-2.0
/*
 * lifecycle.c - instances come and go: each one gets its struct fsm_inst
 * (the registry, instances.c), its nodes (nodes.c) and its default source
 * events (sources.c) when it is made, and loses them when it is removed.
 * Module init and exit (main.c) start and stop this.
 *
 * There is no notifier for instance mkdir/rmdir. An fsnotify mark on the
 * tracefs "instances" directory (compat: fsm_compat_watch_dir()) sees its
 * subdirectories come and go. A "mkdir instances/NAME" is reported twice
 * (6.1, fs/tracefs/inode.c and fs/namei.c):
 *
 *  1. FSM_DIR_NEW, from tracefs_create_dir() inside instance_mkdir(), with
 *     event_mutex, trace_types_lock and the "instances" inode lock held,
 *     before the instance has any file: we only queue fsm_sync_work;
 *  2. FSM_DIR_MADE, from vfs_mkdir() once instance_mkdir() returned, in
 *     the mkdir caller's context, before mkdir returns. The instance is
 *     complete. This is still inside fsnotify's mark SRCU read side, and
 *     setting the instance up is long (default sources: events='*' are
 *     some 2,000 events, each through its directory lock and event_mutex),
 *     which would hold up every synchronize_srcu() on it in the system
 *     (the mark reaper, the close of any inotify fd). So the handler only
 *     queues a task work on the mkdir caller (TWA_RESUME): it runs in the
 *     same task once the syscall is done, before mkdir returns to user
 *     space, outside every lock (fsm_mkdir_workfn()). The struct
 *     fsm_inst, its nodes and its default source events are then set up
 *     (fsm_instance_created()): all there when mkdir returns. A task that
 *     never returns to user space (a kernel thread) or is exiting gets it
 *     done inline, as before.
 *
 * Why case 2 cannot deadlock (the inline case; the task work holds no lock
 * at all). The VFS holds the "instances" inode lock
 * there; compat drops it around our callback and takes it back after, as
 * tracefs_syscall_mkdir() itself does around instance_mkdir(). So the
 * callback holds no lock of tracefs or tracing (only the mkdir's
 * sb_writers and fsnotify's SRCU read side), the same as a write to one
 * of our nodes. What it takes, in order and never nested the other way:
 *   fsm_mutex (alone: learning the instance, claiming its defaults);
 *   fsm_nodes_mutex -> inode locks of instances/NAME and NAME/options
 *     (tracefs_create_file());
 *   inode lock of NAME/events/SYS/EV, shared, alone (sources.c resolves
 *     the defaults through it; on eventfs kernels event_mutex instead,
 *     alone: compat/evfiles.h), then fsm_mutex alone to install them.
 * Nobody takes fsm_mutex or fsm_nodes_mutex while holding a tracefs inode
 * lock, event_mutex or trace_types_lock is never taken inside them (the
 * .reg callback takes fsm_mutex inside event_mutex: the only order of
 * those two), and the kernel's holders of those inode locks (mkdir,
 * rmdir, event directory creation and removal under event_mutex) never
 * wait for our mutexes. fsnotify's SRCU: the only synchronize_srcu() on it
 * that concerns us is fsm_compat_unwatch_dir() at module exit, called
 * with no lock held. Holding the "instances" lock instead would nest two
 * tracefs inode locks of one lockdep class and order "instances" before
 * fsm_nodes_mutex against module init's fsm_nodes_mutex -> tracefs: the
 * circular dependency lockdep reported on the debug kernel (an instance's
 * nodes made at load, then a mkdir) before compat dropped the lock.
 * Nothing is attached in case 2 (the new instance does not record yet).
 *
 * Removal (FS_DELETE, under the tracing locks) only marks the instance
 * dead; fsm_sync_work reaps it. fsm_sync_work is the only other actor: it
 * reaps, discovers instances made by the kernel itself
 * (trace_array_get_by_name(): no case 2), creates missing nodes and
 * installs default sources. It runs on system_wq (one work item: never
 * twice at once); module init queues and flushes it, never runs it
 * inline. A kernel without fsnotify gets a poll every second instead.
 *
 * Nothing here holds a trace_array reference (trace_get_event_file())
 * except module init for the top level, so instance rmdir never fails with
 * -EBUSY because of this module's own work.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dcache.h>
#include <linux/err.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/task_work.h>
#include <linux/trace_events.h>
#include <linux/tracepoint.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>

#include "compat/compat.h"
#include "param.h"
#include "tracing.h"
#include "ustack.h"

char *fsm_default_events;
module_param_named(events, fsm_default_events, charp, 0444);
MODULE_PARM_DESC(events,
		 "Default source events of every instance, set_event syntax separated by commas, e.g. \"sched:sched_switch,irq:*\"; unknown events fail the load");

/*
 * Tests only: sleep this long before installing a new instance's default
 * sources, whoever installs them (the mkdir's task work or the sync work;
 * stackmap_lifecycle, part mkrace: the setup runs outside fsnotify's SRCU
 * read side, so an inotify close made meanwhile does not wait for it).
 */
static unsigned int fsm_test_setup_delay_ms;
static struct fsm_param_range fsm_test_setup_delay_range = {
	.val = &fsm_test_setup_delay_ms, .min = 0, .max = 10000,
};
module_param_cb(test_setup_delay_ms, &fsm_param_range_ops,
		&fsm_test_setup_delay_range, 0600);
MODULE_PARM_DESC(test_setup_delay_ms,
		 "Tests only: delay between a new instance's nodes and its default sources, ms, accepted 0..10000 (default 0)");

/* fsm_sync_work may be queued (false before init is done, during exit) */
static bool fsm_worker_on;

static void fsm_sync_workfn(struct work_struct *work);
static DECLARE_WORK(fsm_sync_work, fsm_sync_workfn);
/* an instance was seen half made (kernel-made, populating): look again */
static void fsm_retry_workfn(struct work_struct *work);
static DECLARE_DELAYED_WORK(fsm_retry_work, fsm_retry_workfn);

/**
 * fsm_inst_kick_worker - have fsm_sync_work look at the instances.
 * Context: any but NMI.
 */
void fsm_inst_kick_worker(void)
{
	if (READ_ONCE(fsm_worker_on))
		schedule_work(&fsm_sync_work);
}

/*
 * Serializes fsm_reap_dead() as a whole: when it returns, the nodes of
 * every instance marked dead before the call are removed, even those a
 * concurrent caller took off the table (debugfs mode: the old
 * instances/NAME directory is gone before a new NAME makes its own).
 * Taken alone, before event_mutex (fsm_event_lock()), fsm_mutex,
 * fsm_ust_opt_mutex (the option bit of a reaped id) and fsm_nodes_mutex,
 * never inside them. The reaper may wait
 * for a grace period under it (a source still attached, the last put).
 */
static DEFINE_MUTEX(fsm_reap_mutex);

/*
 * Reap instances marked dead: take them off the registry, detach and free
 * their sources, turn their user-stack option off, remove their nodes and
 * drop the registry's reference. Context: task, no fsm lock held.
 */
static void fsm_reap_dead(void)
{
	struct fsm_inst *inst, *tmp;
	unsigned long idx;
	bool attached = false, elocked;
	LIST_HEAD(reap);
	LIST_HEAD(srcs);

	mutex_lock(&fsm_reap_mutex);
	elocked = fsm_event_lock();	/* a trigger-path source may be linked, below */
	mutex_lock(&fsm_mutex);
	xa_for_each(&fsm_insts, idx, inst) {
		if (fsm_inst_alive(inst))
			continue;
		WRITE_ONCE(inst->tr, NULL);
		WRITE_ONCE(inst->dead, true);
		xa_erase(&fsm_insts, idx);
		list_add_tail(&inst->reap, &reap);
	}
	/*
	 * The kernel disabled our event before the rmdir; be sure anyway.
	 * Trigger-path sources of a removed instance were unlinked by the
	 * clear_event_triggers() hook (src_trig.c) before its files went, or
	 * taken off by the kernel itself (kprobes disarmed). One still linked
	 * (on a dynamic event's file removed while kprobes were disarmed, if
	 * the instance's UNREGISTER did not detach it) is taken off here, and
	 * its counts of buffered events given back: under event_mutex, as
	 * every change of a trigger list and trace_buffered_event_disable()
	 * want. A dead instance takes no new source
	 * (fsm_sources_update() checks fsm_inst_alive() under fsm_mutex).
	 */
	list_for_each_entry(inst, &reap, reap) {
		struct fsm_src *src;

		list_for_each_entry(src, &inst->sources, list) {
			attached |= src->attached;
			fsm_src_detach_locked(src);
		}
		list_splice_init(&inst->sources, &srcs);
		WRITE_ONCE(inst->file, NULL);
	}
	mutex_unlock(&fsm_mutex);
	fsm_event_unlock(elocked);

	/*
	 * The kernel's rmdir detached them (our event's UNREGISTER) and then
	 * waited for tracepoint callers (event_trace_del_tracer()) before
	 * the directory went: a grace period of our own only for a source
	 * that was still attached here.
	 */
	if (attached)
		tracepoint_synchronize_unregister();
	fsm_sources_free(&srcs);
	list_for_each_entry_safe(inst, tmp, &reap, reap) {
		list_del_init(&inst->reap);
		/* a later owner of the id starts without user stacks */
		if (inst->id)
			fsm_ustack_id_retire(inst->id);
		fsm_nodes_remove(inst);
		fsm_inst_put(inst);
	}
	mutex_unlock(&fsm_reap_mutex);
}

static bool fsm_not_known(const char *name, void *arg)
{
	return true;
}

/*
 * Learn the instance of directory @dir (a reference held by the caller)
 * from its key; no trace_array reference is taken.
 * Context: task, no fsm lock held.
 * Return: the instance with a reference, or NULL (*@err: -EAGAIN when it
 * is half made, another -errno, or 0 during exit).
 */
static struct fsm_inst *fsm_inst_learn(struct dentry *dir, int *err)
{
	struct trace_array *tr = fsm_compat_instance_key(dir);
	struct fsm_inst *inst = NULL;

	*err = 0;
	if (!tr) {
		*err = -EAGAIN;		/* instance_mkdir() still populating */
		return NULL;
	}
	mutex_lock(&fsm_mutex);
	if (!fsm_shutting_down) {
		inst = fsm_inst_find_or_create_dir_locked(dir, tr);
		if (IS_ERR(inst)) {
			*err = PTR_ERR(inst);
			inst = NULL;
		} else {
			kref_get(&inst->ref);
		}
	}
	mutex_unlock(&fsm_mutex);
	if (*err && *err != -ENOENT)
		pr_warn_ratelimited("instance %pd: not tracked (%d)\n", dir, *err);
	return inst;
}

/*
 * Learn the instances that exist but are not known. Context: task.
 * Return: true if one was seen half made (look again later).
 */
static bool fsm_discover(void)
{
	struct fsm_inst *inst;
	struct dentry *dir;
	struct fsm_name *n;
	LIST_HEAD(names);
	bool known, again = false;
	int err;

	if (fsm_compat_list_subdirs(fsm_instances_dir, fsm_not_known, NULL,
				    &names))
		pr_warn_ratelimited("out of memory listing instances\n");
	list_for_each_entry(n, &names, list) {
		mutex_lock(&fsm_mutex);
		known = fsm_inst_find_name_locked(n->name) != NULL;
		mutex_unlock(&fsm_mutex);
		if (known)
			continue;
		dir = fsm_compat_child(fsm_instances_dir, n->name);
		if (!dir)
			continue;	/* removed meanwhile */
		inst = fsm_inst_learn(dir, &err);
		dput(dir);
		again |= err == -EAGAIN;
		if (inst)
			fsm_inst_put(inst);
	}
	fsm_free_names(&names);
	return again;
}

/*
 * Next live instance, from index *@idx on, without nodes (@defaults false)
 * or whose default sources were not handled yet (true: claimed here,
 * FSM_DFLT_RUNNING; the caller installs them and calls
 * fsm_inst_defaults_finish()), with a reference. *@idx is left past it,
 * so an instance that is skipped for now (-EAGAIN) does not stop the
 * scan.
 */
static struct fsm_inst *fsm_next_todo(bool defaults, unsigned long *idx)
{
	struct fsm_inst *inst, *found = NULL;

	mutex_lock(&fsm_mutex);
	xa_for_each_start(&fsm_insts, *idx, inst, *idx) {
		if (!fsm_inst_alive(inst))
			continue;
		if (defaults) {
			if (inst->defaults_state != FSM_DFLT_TODO)
				continue;
			inst->defaults_state = FSM_DFLT_RUNNING;
		} else if (READ_ONCE(inst->nodes_done) ||
			   READ_ONCE(inst->nodes_gone)) {
			continue;
		}
		kref_get(&inst->ref);
		found = inst;
		(*idx)++;
		break;
	}
	mutex_unlock(&fsm_mutex);
	return found;
}

/*
 * The claimed (FSM_DFLT_RUNNING) defaults of @inst are installed (or
 * failed): wake whoever waits for them in fsm_instance_created(). The full
 * barrier orders the store before wake_up_var()'s check for waiters
 * (waitqueue_active(), see its comment); the waiter's
 * prepare_to_wait_event() pairs with it.
 */
static void fsm_inst_defaults_finish(struct fsm_inst *inst)
{
	mutex_lock(&fsm_mutex);
	WRITE_ONCE(inst->defaults_state, FSM_DFLT_DONE);
	mutex_unlock(&fsm_mutex);
	smp_mb();	/* the store above before the waiter check below */
	wake_up_var(&inst->defaults_state);
}

/* Default sources of an instance. Context: task. */
static int fsm_inst_defaults(struct fsm_inst *inst, bool strict)
{
	int ret;

	if (!fsm_default_events || !*fsm_default_events)
		return 0;
	if (!strict && READ_ONCE(fsm_test_setup_delay_ms))
		msleep(READ_ONCE(fsm_test_setup_delay_ms));
	ret = fsm_sources_update(inst, fsm_default_events,
				 strict ? FSM_SRC_REPLACE | FSM_SRC_PARAM :
				 FSM_SRC_REPLACE | FSM_SRC_DEFAULTS);
	if (ret && !strict && ret != -ENODEV)
		pr_warn("%s: default events not installed (%d)\n",
			fsm_inst_label(inst), ret);
	return ret;
}

/*
 * Nodes of an instance; a failure is said once and not retried (the
 * instance is marked nodes_gone by fsm_nodes_create()), except -EAGAIN
 * (half made: silent, the caller tries again later).
 * Context: task. Return: 0 or -errno (0 when the instance went meanwhile).
 */
static int fsm_inst_nodes(struct fsm_inst *inst)
{
	int ret = fsm_nodes_create(inst);

	if (ret && ret != -ENOENT && ret != -EAGAIN)
		pr_warn("%s: cannot create the nodes (%d)\n",
			fsm_inst_label(inst), ret);
	return ret == -ENOENT ? 0 : ret;	/* -ENOENT: removed meanwhile */
}

static void fsm_sync_workfn(struct work_struct *work)
{
	struct fsm_inst *inst;
	unsigned long idx;
	bool again;

	if (READ_ONCE(fsm_shutting_down))
		return;
	fsm_reap_dead();
	again = fsm_discover();
	/* nodes first (quick, no tracing lock), then default sources */
	idx = 0;
	while ((inst = fsm_next_todo(false, &idx))) {
		/* half made: FSM_DIR_MADE or the retry will do it */
		again |= fsm_inst_nodes(inst) == -EAGAIN;
		fsm_inst_put(inst);
		if (READ_ONCE(fsm_shutting_down))
			return;
	}
	if (again && READ_ONCE(fsm_worker_on))
		schedule_delayed_work(&fsm_retry_work, HZ / 10);
	idx = 0;
	while ((inst = fsm_next_todo(true, &idx))) {
		fsm_inst_defaults(inst, false);
		fsm_inst_defaults_finish(inst);
		fsm_inst_put(inst);
		if (READ_ONCE(fsm_shutting_down))
			return;
	}
}

static void fsm_retry_workfn(struct work_struct *work)
{
	fsm_inst_kick_worker();
}

/*
 * FSM_DIR_MADE (see the file comment): the mkdir caller's context, before
 * mkdir returns to user space (its task work, or inline in the callback),
 * no lock of tracefs or tracing held. Create the instance, its nodes and
 * its default sources now.
 *
 * The sync work may have learnt the instance while it was half made
 * (kicked by FSM_DIR_NEW, polling every HZ / 10 while the ~2,000 event
 * directories are made). Then:
 *  - its nodes may be missing (-EAGAIN in fsm_nodes_create(), never
 *    nodes_gone for a live instance): made here, the instance is complete;
 *  - its defaults may be claimed by the work and still being installed:
 *    wait for them, so that they are all there when mkdir returns. The
 *    wait is safe: we hold no lock of tracefs, tracing or ours (see the
 *    file comment); the work installing them takes the event directory
 *    inode locks, event_mutex and fsm_mutex, none of which waits for this
 *    mkdir; and module exit unwatches (waiting for this callback) before
 *    it cancels the work, which finishes its claim first.
 * Reaping first (the work may not have run since an rmdir of the same
 * name): in debugfs mode the old instance's ftrace_stackmap/instances/NAME
 * must be gone before the new one's is made.
 */
static void fsm_instance_created(const char *name)
{
	struct fsm_inst *inst;
	struct dentry *dir;
	bool defaults = false;
	int err;

	if (!READ_ONCE(fsm_worker_on))
		return;		/* during init (its own sync follows) or exit */
	fsm_reap_dead();
	dir = fsm_compat_child(fsm_instances_dir, name);
	if (!dir)
		return;		/* removed meanwhile */
	inst = fsm_inst_learn(dir, &err);
	dput(dir);
	if (!inst)
		return;
	fsm_inst_nodes(inst);
	mutex_lock(&fsm_mutex);
	if (inst->defaults_state == FSM_DFLT_TODO) {
		inst->defaults_state = FSM_DFLT_RUNNING;
		defaults = true;
	}
	mutex_unlock(&fsm_mutex);
	if (defaults) {
		fsm_inst_defaults(inst, false);
		fsm_inst_defaults_finish(inst);
	} else {
		wait_var_event(&inst->defaults_state,
			       READ_ONCE(inst->defaults_state) == FSM_DFLT_DONE);
	}
	fsm_inst_put(inst);	/* the table keeps its reference */
}

/*
 * Task works of FSM_DIR_MADE (see the file comment): one per mkdir, owned
 * by the task it is queued on. Module exit cannot cancel them
 * (task_work_cancel is not exported) and never waits for a task to return
 * to user space: fsm_mkdir_works_stop() disarms the queued ones instead,
 * pointing them at kfree(), core kernel code (the callback_head is first:
 * kfree() of it frees the work), and waits for the ones running now.
 */
struct fsm_mkdir_work {
	struct callback_head head;	/* first: see above */
	struct list_head node;		/* fsm_mkdir_works, fsm_mkdir_lock */
	char name[];
};

static DEFINE_SPINLOCK(fsm_mkdir_lock);
static LIST_HEAD(fsm_mkdir_works);	/* queued, not yet run */
static bool fsm_mkdir_stopped;		/* fsm_mkdir_lock */
/* works between taking themselves off the list and their last access */
static atomic_t fsm_mkdir_running = ATOMIC_INIT(0);

static void fsm_mkdir_workfn(struct callback_head *head)
{
	struct fsm_mkdir_work *w = container_of(head, struct fsm_mkdir_work,
						head);

	spin_lock(&fsm_mkdir_lock);
	list_del(&w->node);
	atomic_inc(&fsm_mkdir_running);
	spin_unlock(&fsm_mkdir_lock);
	/*
	 * The point of running here: the syscall is done, so nothing is
	 * held, fsnotify's SRCU read side least of all (checked where
	 * lockdep tracks it).
	 */
#ifdef CONFIG_LOCKDEP
	WARN_ON_ONCE(current->lockdep_depth);
#endif
	fsm_instance_created(w->name);
	kfree(w);
	if (atomic_dec_and_test(&fsm_mkdir_running))
		wake_up_var(&fsm_mkdir_running);
}

/*
 * Queue fsm_instance_created(@name) on the mkdir caller. Context: the
 * FSM_DIR_MADE callback (task, may sleep). Return: false when it must be
 * done inline (a kernel thread or an exiting task, no memory), true when
 * queued or when the module is on its way out (nothing to do).
 */
static bool fsm_mkdir_defer(const struct qstr *name)
{
	struct fsm_mkdir_work *w;
	bool queued = true;

	/* io_uring's workers complete the mkdir themselves: inline there too */
	if (current->flags & (PF_KTHREAD | PF_IO_WORKER | PF_EXITING))
		return false;
	w = kmalloc(struct_size(w, name, name->len + 1), GFP_KERNEL);
	if (!w)
		return false;
	memcpy(w->name, name->name, name->len);
	w->name[name->len] = '\0';
	init_task_work(&w->head, fsm_mkdir_workfn);
	/*
	 * Under the lock, so that fsm_mkdir_works_stop() sees the work on
	 * the list (and disarms it) or runs after we gave up: task_work_add()
	 * takes no lock and does not sleep (TWA_RESUME).
	 */
	spin_lock(&fsm_mkdir_lock);
	/* module exit (fsm_mkdir_stopped): nothing to do, w is freed below */
	if (!fsm_mkdir_stopped) {
		if (task_work_add(current, &w->head, TWA_RESUME)) {
			queued = false;		/* exiting meanwhile: inline */
		} else {
			list_add_tail(&w->node, &fsm_mkdir_works);
			w = NULL;
		}
	}
	spin_unlock(&fsm_mkdir_lock);
	kfree(w);
	return queued;
}

/*
 * No fsm_mkdir_workfn() runs after this returns; queued ones free
 * themselves, with no module code, when their task runs them.
 * Context: task (module exit), after the watch is gone (no new work).
 */
static void fsm_mkdir_works_stop(void)
{
	struct fsm_mkdir_work *w, *tmp;

	spin_lock(&fsm_mkdir_lock);
	fsm_mkdir_stopped = true;
	list_for_each_entry_safe(w, tmp, &fsm_mkdir_works, node) {
		list_del_init(&w->node);
		/* read by task_work_run() when it gets there */
		WRITE_ONCE(w->head.func, (task_work_func_t)kfree);
	}
	spin_unlock(&fsm_mkdir_lock);
	/*
	 * A task that read the old func before the store above runs
	 * fsm_mkdir_workfn(): from its call until it is counted in
	 * fsm_mkdir_running it does not sleep (a spinlock), so an RCU-tasks
	 * grace period, which waits for every task to switch voluntarily or
	 * run in user space, ends only after it is counted or gone. Then the
	 * count (its middle part sleeps), then once more RCU-tasks for the
	 * instructions after its decrement, which do not sleep either.
	 */
	synchronize_rcu_tasks();
	wait_var_event(&fsm_mkdir_running, !atomic_read(&fsm_mkdir_running));
	synchronize_rcu_tasks();
}

/*
 * A subdirectory of "instances" came or went (compat watch). FSM_DIR_NEW
 * and FSM_DIR_GONE run under the kernel's tracing locks and the
 * "instances" inode lock: no sleeping lock, no allocation, only mark and
 * queue. fsm_insts is read under RCU (entries are freed after a grace
 * period, see fsm_inst_release()). FSM_DIR_MADE: fsm_instance_created().
 */
static void fsm_instances_event(const struct qstr *name, enum fsm_dir_event ev)
{
	struct fsm_inst *inst;
	unsigned long idx;

	if (ev == FSM_DIR_MADE && !fsm_mkdir_defer(name))
		fsm_instance_created((const char *)name->name);
	if (ev != FSM_DIR_GONE) {
		fsm_inst_kick_worker();
		return;
	}
	rcu_read_lock();
	xa_for_each(&fsm_insts, idx, inst) {
		if (!inst->name || READ_ONCE(inst->dead) ||
		    strlen(inst->name) != name->len ||
		    memcmp(inst->name, name->name, name->len))
			continue;
		/*
		 * The kernel frees the trace_array after this returns:
		 * forget the key now (see also fsm_inst_alive()). The
		 * readers that matter, the .reg callback's lookups, run
		 * under event_mutex like this handler (for a removal); the
		 * others use READ_ONCE() and tolerate either value.
		 */
		WRITE_ONCE(inst->tr, NULL);
		WRITE_ONCE(inst->dead, true);
		break;
	}
	rcu_read_unlock();
	fsm_inst_kick_worker();
}

/* Without notifications (no CONFIG_FSNOTIFY): look every second. */
static void fsm_poll_workfn(struct work_struct *work);
static DECLARE_DELAYED_WORK(fsm_poll_work, fsm_poll_workfn);
static bool fsm_polling;

static void fsm_poll_workfn(struct work_struct *work)
{
	fsm_inst_kick_worker();
	if (READ_ONCE(fsm_worker_on))
		schedule_delayed_work(&fsm_poll_work, HZ);
}

static int fsm_watch_instances(void)
{
	int ret = fsm_compat_watch_dir(fsm_instances_dir, fsm_instances_event);

	if (ret != -EOPNOTSUPP)
		return ret;
	pr_info("kernel without fsnotify: instances are looked for every second\n");
	fsm_polling = true;
	return 0;
}

static void fsm_unwatch_instances(void)
{
	if (fsm_polling)
		cancel_delayed_work_sync(&fsm_poll_work);
	else
		fsm_compat_unwatch_dir();
	fsm_polling = false;
}

/* Create the top-level instance. Context: task (module init). */
static struct fsm_inst *fsm_top_init(void)
{
	struct trace_event_file *file;
	struct fsm_inst *inst;

	file = trace_get_event_file(NULL, "stackmap", "stack_id");
	if (IS_ERR(file)) {
		pr_err("stackmap:stack_id event not found (%ld)\n", PTR_ERR(file));
		return ERR_CAST(file);
	}
	mutex_lock(&fsm_mutex);
	inst = fsm_inst_find_or_create_locked(file);
	mutex_unlock(&fsm_mutex);
	trace_put_event_file(file);
	if (IS_ERR(inst))
		pr_err("the top level's tracefs directory not found (%ld)\n",
		       PTR_ERR(inst));
	if (!IS_ERR(inst) && inst->id != 0) {
		pr_err("top level instance got id %u\n", inst->id);
		return ERR_PTR(-EINVAL);
	}
	return inst;
}

/* The top level, made at init; reaped by fsm_lifecycle_exit() only. */
static struct fsm_inst *fsm_top;
/* Every instance, taken off the registry by fsm_lifecycle_stop(). */
static LIST_HEAD(fsm_exit_reap);

/**
 * fsm_lifecycle_init - the top level instance and tracefs "instances".
 *
 * Context: task (module init), after fsm_compat_init() and
 * fsm_nodes_init(). Return: 0 or -errno (main.c then calls the exit
 * functions, fsm_lifecycle_stop() and fsm_lifecycle_exit() included).
 */
int fsm_lifecycle_init(void)
{
	struct fsm_inst *top = fsm_top_init();

	if (IS_ERR(top))
		return PTR_ERR(top);
	fsm_top = top;
	fsm_instances_dir = fsm_compat_lookup(top->dir, "instances");
	if (!fsm_instances_dir) {
		pr_err("no tracefs instances directory\n");
		return -ENODEV;
	}
	return 0;
}

/**
 * fsm_lifecycle_start - instances are followed from now on.
 *
 * The top level's default sources (the events= parameter: every event
 * must resolve, or the load fails) and nodes, then the watch on
 * "instances", and one sync for the instances that exist (and any made
 * meanwhile).
 * Context: task (module init), after fsm_events_init() and
 * fsm_sources_init(). Return: 0 or -errno.
 */
int fsm_lifecycle_start(void)
{
	int ret;

	mutex_lock(&fsm_mutex);
	fsm_top->defaults_state = FSM_DFLT_DONE;
	mutex_unlock(&fsm_mutex);
	ret = fsm_inst_defaults(fsm_top, true);
	if (ret)
		return ret;
	ret = fsm_inst_nodes(fsm_top);
	if (ret)
		return ret;

	ret = fsm_watch_instances();
	if (ret) {
		pr_err("cannot watch the tracefs instances directory (%d)\n", ret);
		return ret;
	}
	/* Recording may start; instances that exist (and any made meanwhile). */
	mutex_lock(&fsm_mutex);
	WRITE_ONCE(fsm_ready, true);
	mutex_unlock(&fsm_mutex);
	WRITE_ONCE(fsm_worker_on, true);
	/* never inline: the work is the only one that sets instances up */
	fsm_inst_kick_worker();
	flush_work(&fsm_sync_work);
	if (fsm_polling)
		schedule_delayed_work(&fsm_poll_work, HZ);
	return 0;
}

/**
 * fsm_lifecycle_stop - no instance is made, set up or reaped any more.
 *
 * Every instance leaves the registry with its sources detached. Runs
 * while the module notifier (sources.c) still watches the modules that
 * own source events: a source's tracepoint lives in its module, and the
 * notifier (under fsm_mutex, like this loop) drops the sources of a module
 * that goes away before its tracepoints are freed. Unregistering the
 * notifier first left a window in which tracepoint_probe_unregister() ran
 * on a freed tracepoint.
 * Context: task (module exit, or a failed init), after fsm_trigger_exit().
 */
void fsm_lifecycle_stop(void)
{
	struct fsm_inst *inst;
	unsigned long idx;
	bool elocked;

	mutex_lock(&fsm_mutex);
	WRITE_ONCE(fsm_shutting_down, true);
	WRITE_ONCE(fsm_ready, false);
	WRITE_ONCE(fsm_worker_on, false);
	mutex_unlock(&fsm_mutex);

	/* no replay of standing patterns: the module notifier is still here */
	fsm_sources_follow_stop();
	fsm_unwatch_instances();	/* no handler runs after this */
	fsm_mkdir_works_stop();		/* nor a work it queued */
	/* the work may arm the retry and the retry may queue the work */
	cancel_work_sync(&fsm_sync_work);
	cancel_delayed_work_sync(&fsm_retry_work);
	cancel_work_sync(&fsm_sync_work);

	elocked = fsm_event_lock();	/* trigger-path sources: their data leave */
	mutex_lock(&fsm_mutex);
	xa_for_each(&fsm_insts, idx, inst) {
		struct fsm_src *src;

		list_for_each_entry(src, &inst->sources, list)
			fsm_src_detach_locked(src);
		WRITE_ONCE(inst->file, NULL);
		xa_erase(&fsm_insts, idx);
		list_add_tail(&inst->reap, &fsm_exit_reap);
	}
	mutex_unlock(&fsm_mutex);
	fsm_event_unlock(elocked);
}

/**
 * fsm_lifecycle_exit - free what fsm_lifecycle_stop() took off.
 *
 * No probe of ours runs past the grace period below; detached sources are
 * never touched again, only freed. No node is open (each holds a module
 * reference), so the registry's reference is the last one.
 * Context: task (module exit), after fsm_sources_exit().
 */
void fsm_lifecycle_exit(void)
{
	struct fsm_inst *inst, *tmp;
	LIST_HEAD(srcs);

	tracepoint_synchronize_unregister();
	/* all sources at once: one grace period, not one per instance */
	list_for_each_entry(inst, &fsm_exit_reap, reap)
		list_splice_init(&inst->sources, &srcs);
	fsm_sources_free(&srcs);
	list_for_each_entry_safe(inst, tmp, &fsm_exit_reap, reap) {
		list_del_init(&inst->reap);
		fsm_nodes_remove(inst);
		fsm_inst_put(inst);
	}
	fsm_top = NULL;
	dput(fsm_instances_dir);
	fsm_instances_dir = NULL;
}
