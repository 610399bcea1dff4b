// SPDX-License-Identifier: GPL-2.0
/*
 * instances.c - one struct fsm_inst per ftrace instance, created after load
 * too, gone with rmdir; module load and unload of the tracing side.
 *
 * There is no notifier for instance mkdir/rmdir. An fsnotify mark on the
 * tracefs "instances" directory (compat: fsm_compat_watch_dir()) sees
 * FS_CREATE and FS_DELETE of its subdirectories. The handler runs under
 * tracing locks (event_mutex, trace_types_lock, the directory's inode
 * lock): it only marks a removed instance dead and queues fsm_sync_work,
 * which does the rest in task context: reaps dead instances, discovers new
 * ones, creates their nodes and installs the default source events. A
 * kernel without fsnotify gets a poll every second instead.
 *
 * Identity: an instance is known by its struct trace_array pointer (opaque)
 * while it lives. The pointer is learned from one of our own event files
 * (trace_get_event_file(), which never creates an instance, or the .reg
 * callback), and forgotten (inst->tr = NULL, inst->dead) synchronously by the
 * fsnotify handler during the removal, before the kernel frees it. Even
 * without that handler, a removed instance's directory dentry (we hold a
 * reference) is unhashed before the kernel frees the trace_array:
 * fsm_inst_alive() checks both, so a recycled pointer is never mistaken for
 * an old instance.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dcache.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/trace_events.h>
#include <linux/tracepoint.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "tracing.h"

DEFINE_MUTEX(fsm_mutex);
/* Instances by id; id 0 is the top level. */
DEFINE_XARRAY_ALLOC(fsm_insts);
bool fsm_shutting_down;
bool fsm_ready;

char *fsm_default_events;
module_param_named(events, fsm_default_events, charp, 0444);
MODULE_PARM_DESC(events,
		 "Default source events of every instance, set_event syntax separated by commas, e.g. \"sched:sched_switch,irq:*\"; unknown events fail the load");

static bool fsm_force_debugfs;
module_param_named(force_debugfs, fsm_force_debugfs, bool, 0444);
MODULE_PARM_DESC(force_debugfs,
		 "Offer the nodes under /sys/kernel/debug/ftrace_stackmap even when tracefs is usable (tests)");

static struct dentry *fsm_instances_dir;	/* tracefs "instances" */
static u32 fsm_next_inst_id = 1;
/* fsm_sync_work may be queued (false before init is done, during exit) */
static bool fsm_worker_on;

static void fsm_sync_workfn(struct work_struct *work);
static DECLARE_WORK(fsm_sync_work, fsm_sync_workfn);

/**
 * fsm_inst_label - name of an instance for messages.
 * @inst: instance
 *
 * Context: any. Return: the instance name, or "top level".
 */
const char *fsm_inst_label(const struct fsm_inst *inst)
{
	return inst->name ? inst->name : "top level";
}

/**
 * fsm_inst_alive - is the instance still there?
 * @inst: instance
 *
 * Dead once the fsnotify handler said so, or once its directory dentry is
 * unhashed (the kernel's removal d_invalidate()s it before it frees the
 * trace_array). The top level never dies.
 * Context: any.
 * Return: true while the instance exists.
 */
bool fsm_inst_alive(const struct fsm_inst *inst)
{
	if (!inst->name)
		return true;
	return !READ_ONCE(inst->dead) && !d_unhashed(inst->dir);
}

static void fsm_inst_release(struct kref *ref)
{
	struct fsm_inst *inst = container_of(ref, struct fsm_inst, ref);
	LIST_HEAD(srcs);

	/*
	 * Unreachable now (erased from fsm_insts, no node open, probes
	 * detached): wait until no probe and no RCU reader of fsm_insts can
	 * still see it.
	 */
	tracepoint_synchronize_unregister();
	list_splice_init(&inst->sources, &srcs);
	fsm_sources_free(&srcs);
	fsm_map_free(inst->map);
	fsm_map_free(inst->umap);	/* user stacks (ustack.c) */
	free_percpu(inst->pcpu);
	dput(inst->dir);
	kfree(inst->name);
	kfree(inst);
}

/**
 * fsm_inst_put - drop a reference to an instance.
 * @inst: instance
 *
 * Context: task, may sleep (the last reference frees the map). Must not hold
 * fsm_mutex.
 */
void fsm_inst_put(struct fsm_inst *inst)
{
	kref_put(&inst->ref, fsm_inst_release);
}

/**
 * fsm_inst_get_by_id - look an instance up for a node being opened.
 * @id: instance id (stored in the node's i_private)
 *
 * Context: any sleepable or atomic context.
 * Return: the live instance with a reference, or NULL if it is gone.
 */
struct fsm_inst *fsm_inst_get_by_id(u32 id)
{
	struct fsm_inst *inst;

	rcu_read_lock();
	inst = xa_load(&fsm_insts, id);
	if (inst && (!fsm_inst_alive(inst) || !kref_get_unless_zero(&inst->ref)))
		inst = NULL;
	rcu_read_unlock();
	return inst;
}

static struct fsm_inst *fsm_inst_alloc(const char *name, struct dentry *dir,
				       struct trace_array *tr)
{
	struct fsm_inst *inst;

	inst = kzalloc(sizeof(*inst), GFP_KERNEL);
	if (!inst)
		return NULL;
	inst->pcpu = alloc_percpu(struct fsm_inst_pcpu);
	if (name)
		inst->name = kstrdup(name, GFP_KERNEL);
	if (!inst->pcpu || (name && !inst->name)) {
		free_percpu(inst->pcpu);
		kfree(inst->name);
		kfree(inst);
		return NULL;
	}
	kref_init(&inst->ref);
	inst->dir = dir;
	inst->tr = tr;
	INIT_LIST_HEAD(&inst->sources);
	INIT_LIST_HEAD(&inst->reap);
	init_rwsem(&inst->map_rwsem);
	return inst;
}

/* Live instance with that trace_array. Context: fsm_mutex held. */
static struct fsm_inst *fsm_inst_find_tr_locked(struct trace_array *tr)
{
	struct fsm_inst *inst;
	unsigned long idx;

	lockdep_assert_held(&fsm_mutex);
	xa_for_each(&fsm_insts, idx, inst)
		if (fsm_inst_alive(inst) && READ_ONCE(inst->tr) == tr)
			return inst;
	return NULL;
}

/* Live instance with that name (NULL: top level). Context: fsm_mutex held. */
static struct fsm_inst *fsm_inst_find_name_locked(const char *name)
{
	struct fsm_inst *inst;
	unsigned long idx;

	lockdep_assert_held(&fsm_mutex);
	xa_for_each(&fsm_insts, idx, inst) {
		if (!fsm_inst_alive(inst))
			continue;
		if (!name ? !inst->name : inst->name && !strcmp(inst->name, name))
			return inst;
	}
	return NULL;
}

/**
 * fsm_inst_find_or_create_locked - the instance of one of our event files.
 * @file: our stackmap:stack_id file in some instance; the caller keeps the
 *        instance alive (event_mutex held, or a trace_get_event_file()
 *        reference)
 *
 * Creates the struct fsm_inst when the instance is not known yet (the
 * fsnotify work did not run yet) and kicks the work that creates its nodes.
 * Context: task, fsm_mutex held.
 * Return: the instance (no new reference) or an ERR_PTR.
 */
struct fsm_inst *fsm_inst_find_or_create_locked(struct trace_event_file *file)
{
	struct trace_array *tr = file->tr;
	struct fsm_inst *inst;
	struct dentry *dir;
	const char *name = NULL;
	int ret;

	lockdep_assert_held(&fsm_mutex);
	inst = fsm_inst_find_tr_locked(tr);
	if (inst)
		return inst;

	dir = fsm_compat_event_file_instance_dir(file);
	if (!dir)
		return ERR_PTR(-ENODEV);
	if (!IS_ROOT(dir)) {
		/* instances/NAME; tracefs has no rename, d_name is stable */
		if (!fsm_instances_dir || dir->d_parent != fsm_instances_dir) {
			dput(dir);
			return ERR_PTR(-ENODEV);
		}
		name = dir->d_name.name;
	}
	inst = fsm_inst_alloc(name, dir, tr);
	if (!inst) {
		dput(dir);
		return ERR_PTR(-ENOMEM);
	}
	if (!name) {
		inst->id = 0;
		ret = xa_insert(&fsm_insts, 0, inst, GFP_KERNEL);
	} else {
		/* cyclic: an id is not reused soon after its instance went */
		ret = xa_alloc_cyclic(&fsm_insts, &inst->id, inst,
				      XA_LIMIT(1, INT_MAX), &fsm_next_inst_id,
				      GFP_KERNEL);
		ret = ret < 0 ? ret : 0;
	}
	if (ret) {
		inst->dir = NULL;
		dput(dir);
		free_percpu(inst->pcpu);
		kfree(inst->name);
		kfree(inst);
		return ERR_PTR(ret);
	}
	fsm_inst_kick_worker();
	return inst;
}

/**
 * fsm_inst_kick_worker - have fsm_sync_work look at the instances.
 * Context: any but NMI.
 */
void fsm_inst_kick_worker(void)
{
	if (READ_ONCE(fsm_worker_on))
		queue_work(system_wq, &fsm_sync_work);
}

/* Reap instances marked dead. Context: task, no fsm lock held. */
static void fsm_reap_dead(void)
{
	struct fsm_inst *inst, *tmp;
	unsigned long idx;
	LIST_HEAD(reap);

	mutex_lock(&fsm_mutex);
	xa_for_each(&fsm_insts, idx, inst) {
		if (fsm_inst_alive(inst))
			continue;
		WRITE_ONCE(inst->tr, NULL);
		WRITE_ONCE(inst->dead, true);
		xa_erase(&fsm_insts, idx);
		list_add_tail(&inst->reap, &reap);
	}
	/* The kernel disabled our event before the rmdir; be sure anyway. */
	list_for_each_entry(inst, &reap, reap) {
		struct fsm_src *src;

		list_for_each_entry(src, &inst->sources, list)
			fsm_src_detach_locked(src);
		WRITE_ONCE(inst->file, NULL);
	}
	mutex_unlock(&fsm_mutex);

	list_for_each_entry_safe(inst, tmp, &reap, reap) {
		list_del_init(&inst->reap);
		fsm_nodes_remove(inst);
		fsm_inst_put(inst);
	}
}

static bool fsm_not_known(const char *name, void *arg)
{
	return true;
}

/* Learn the instances that exist but are not known. Context: task. */
static void fsm_discover(void)
{
	struct trace_event_file *file;
	struct fsm_inst *inst;
	struct fsm_name *n;
	LIST_HEAD(names);
	bool known;

	if (fsm_compat_list_subdirs(fsm_instances_dir, fsm_not_known, NULL,
				    &names))
		pr_warn_ratelimited("out of memory listing instances\n");
	list_for_each_entry(n, &names, list) {
		mutex_lock(&fsm_mutex);
		known = fsm_inst_find_name_locked(n->name) != NULL;
		mutex_unlock(&fsm_mutex);
		if (known)
			continue;
		/*
		 * Never creates the instance; the reference (which would make
		 * a concurrent rmdir fail with -EBUSY) is held only while the
		 * instance is entered in the table.
		 */
		file = trace_get_event_file(n->name, "stackmap", "stack_id");
		if (IS_ERR(file))
			continue;	/* removed meanwhile */
		mutex_lock(&fsm_mutex);
		if (!fsm_shutting_down) {
			inst = fsm_inst_find_or_create_locked(file);
			if (IS_ERR(inst))
				pr_warn_ratelimited("instance %s: not tracked (%ld)\n",
						    n->name, PTR_ERR(inst));
		}
		mutex_unlock(&fsm_mutex);
		trace_put_event_file(file);
	}
	fsm_free_names(&names);
}

/* Next live instance that needs its nodes, with a reference. */
static struct fsm_inst *fsm_next_setup(void)
{
	struct fsm_inst *inst, *found = NULL;
	unsigned long idx;

	mutex_lock(&fsm_mutex);
	xa_for_each(&fsm_insts, idx, inst) {
		if (!fsm_inst_alive(inst) || inst->setup_done)
			continue;
		inst->setup_done = true;
		kref_get(&inst->ref);
		found = inst;
		break;
	}
	mutex_unlock(&fsm_mutex);
	return found;
}

/* Nodes and default sources of a new instance. Context: task. */
static int fsm_inst_setup(struct fsm_inst *inst, bool strict)
{
	int ret = 0;

	if (fsm_default_events && *fsm_default_events) {
		ret = fsm_sources_update(inst, fsm_default_events,
					 strict ? FSM_SRC_REPLACE | FSM_SRC_PARAM :
					 FSM_SRC_REPLACE | FSM_SRC_DEFAULTS);
		if (ret && !strict)
			pr_warn("%s: default events not installed (%d)\n",
				fsm_inst_label(inst), ret);
		if (ret && strict)
			return ret;
	}
	ret = fsm_nodes_create(inst);
	if (ret && ret != -ENOENT)
		pr_warn("%s: cannot create the nodes (%d)\n",
			fsm_inst_label(inst), ret);
	return ret == -ENOENT ? 0 : ret;	/* -ENOENT: removed meanwhile */
}

static void fsm_sync_workfn(struct work_struct *work)
{
	struct fsm_inst *inst;

	if (READ_ONCE(fsm_shutting_down))
		return;
	fsm_reap_dead();
	fsm_discover();
	while ((inst = fsm_next_setup())) {
		fsm_inst_setup(inst, false);
		fsm_inst_put(inst);
		if (READ_ONCE(fsm_shutting_down))
			break;
	}
}

/*
 * A subdirectory of "instances" came or went (compat watch). Context: the
 * mkdir/rmdir, under the kernel's tracing locks and the "instances" inode
 * lock: no sleeping lock, no allocation, only mark and queue. fsm_insts is
 * read under RCU (entries are freed after a grace period, see
 * fsm_inst_release()).
 */
static void fsm_instances_event(const struct qstr *name, bool deleted)
{
	struct fsm_inst *inst;
	unsigned long idx;

	if (deleted) {
		rcu_read_lock();
		xa_for_each(&fsm_insts, idx, inst) {
			if (!inst->name || READ_ONCE(inst->dead) ||
			    strlen(inst->name) != name->len ||
			    memcmp(inst->name, name->name, name->len))
				continue;
			/*
			 * The kernel frees the trace_array after this returns:
			 * forget the key now (see also fsm_inst_alive()). The
			 * readers that matter, the .reg callback's lookups,
			 * run under event_mutex like this handler (for a
			 * removal); the others use READ_ONCE() and tolerate
			 * either value.
			 */
			WRITE_ONCE(inst->tr, NULL);
			WRITE_ONCE(inst->dead, true);
			break;
		}
		rcu_read_unlock();
	}
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
	if (!IS_ERR(inst) && inst->id != 0) {
		pr_err("top level instance got id %u\n", inst->id);
		return ERR_PTR(-EINVAL);
	}
	return inst;
}

static void fsm_tracing_teardown(void)
{
	struct fsm_inst *inst, *tmp;
	unsigned long idx;
	LIST_HEAD(reap);

	fsm_trigger_exit();	/* triggers first: they reach every instance */
	mutex_lock(&fsm_mutex);
	WRITE_ONCE(fsm_shutting_down, true);
	WRITE_ONCE(fsm_ready, false);
	WRITE_ONCE(fsm_worker_on, false);
	mutex_unlock(&fsm_mutex);

	fsm_unwatch_instances();
	cancel_work_sync(&fsm_sync_work);
	fsm_sources_exit();

	mutex_lock(&fsm_mutex);
	xa_for_each(&fsm_insts, idx, inst) {
		struct fsm_src *src;

		list_for_each_entry(src, &inst->sources, list)
			fsm_src_detach_locked(src);
		WRITE_ONCE(inst->file, NULL);
		xa_erase(&fsm_insts, idx);
		list_add_tail(&inst->reap, &reap);
	}
	mutex_unlock(&fsm_mutex);

	/* No probe of ours runs past this point. */
	tracepoint_synchronize_unregister();
	list_for_each_entry_safe(inst, tmp, &reap, reap) {
		list_del_init(&inst->reap);
		fsm_nodes_remove(inst);
		fsm_inst_put(inst);	/* no node is open: module refcount */
	}
	fsm_events_exit();
	fsm_nodes_exit();
	fsm_compat_exit();
	dput(fsm_instances_dir);
	fsm_instances_dir = NULL;
}

/**
 * fsm_tracing_init - the tracing side of module init.
 *
 * Context: task (module init).
 * Return: 0, or a negative error (the load fails; -EINVAL with a dmesg line
 * for an unknown event in the events= parameter).
 */
int fsm_tracing_init(void)
{
	struct fsm_inst *top;
	int ret;

	fsm_compat_init(fsm_force_debugfs);
	ret = fsm_nodes_init();
	if (ret)
		goto fail;

	top = fsm_top_init();
	if (IS_ERR(top)) {
		ret = PTR_ERR(top);
		goto fail;
	}
	fsm_instances_dir = fsm_compat_lookup(top->dir, "instances");
	if (!fsm_instances_dir) {
		pr_err("no tracefs instances directory\n");
		ret = -ENODEV;
		goto fail;
	}

	ret = fsm_events_init();
	if (ret)
		goto fail;
	ret = fsm_sources_init();
	if (ret)
		goto fail;

	/* The top level: default sources must all resolve (param check). */
	mutex_lock(&fsm_mutex);
	top->setup_done = true;
	mutex_unlock(&fsm_mutex);
	ret = fsm_inst_setup(top, true);
	if (ret)
		goto fail;

	ret = fsm_watch_instances();
	if (ret) {
		pr_err("cannot watch the tracefs instances directory (%d)\n", ret);
		goto fail;
	}
	/* Recording may start; instances that exist (and any made meanwhile). */
	mutex_lock(&fsm_mutex);
	WRITE_ONCE(fsm_ready, true);
	mutex_unlock(&fsm_mutex);
	WRITE_ONCE(fsm_worker_on, true);
	fsm_sync_workfn(NULL);
	fsm_trigger_init();	/* no trigger is not a load failure */
	if (fsm_polling)
		schedule_delayed_work(&fsm_poll_work, HZ);
	fsm_compat_announce();
	return 0;

fail:
	fsm_tracing_teardown();
	return ret;
}

/**
 * fsm_tracing_exit - the tracing side of module exit.
 *
 * Detaches every probe, waits for running ones, removes every node and
 * frees every map. No node can be open (each holds a module reference).
 * Context: task (module exit).
 */
void fsm_tracing_exit(void)
{
	fsm_tracing_teardown();
}
