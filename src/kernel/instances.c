// SPDX-License-Identifier: GPL-2.0
/*
 * instances.c - the registry of instances: one struct fsm_inst per ftrace
 * instance, by id, with its reference count, its id and its maps.
 *
 * The base of the tracing glue: it calls only the bottom (map.c for the
 * maps it makes and frees, compat for the instance directory of an event
 * file). What the layers above must learn from it goes through the hooks
 * main.c hands down (struct fsm_inst_hooks: an instance was made, which
 * ids the user-stack side still uses, an id to reset). Who makes an
 * instance's nodes and sources and reaps it is lifecycle.c; the order of
 * module init and exit is main.c's. The others look instances up here (by
 * id, by node key, by trace_array) and read the module state (fsm_ready,
 * fsm_shutting_down) here.
 *
 * Instance ids (the "inst" field of records, bits of the user-stack masks)
 * are the lowest free ones, reused after removal. An id is given back only
 * when nothing can refer to the old instance by it any more: see
 * fsm_inst_id_release().
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
#include <linux/idr.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "compat/compat.h"
#include "compat/evfiles.h"
#include "compat/ksyms.h"
#include "tracing.h"
#include "ustack.h"

DEFINE_MUTEX(fsm_mutex);
/* Instances by id; id 0 is the top level. */
DEFINE_XARRAY_ALLOC(fsm_insts);
/* fsm_inst_registry_exit() ran: ids are no longer given back (fsm_mutex) */
static bool fsm_registry_closed;

/*
 * Instance ids 1..: the lowest free one (fsm_inst_ida, fsm_mutex). An id
 * below FSM_UST_MAX_INST (user stacks) whose instance went is retired
 * (fsm_retired_ids, fsm_mutex) until nothing of the user-stack side can
 * refer to it any more: fsm_ids_reclaim_locked() asks the user-stack side
 * (the ids_busy hook) and gives it back with fsm_inst_ids_free_locked().
 */
static DEFINE_IDA(fsm_inst_ida);
static u64 fsm_retired_ids;
static u32 fsm_inst_seq;

/* Module state, written by lifecycle.c (init, exit), read everywhere. */
bool fsm_shutting_down;	/* module exit (or a failed init) began */
bool fsm_ready;		/* init is done: recording may start */

/* tracefs "instances" (lifecycle.c sets it at init, clears it at exit) */
struct dentry *fsm_instances_dir;

/*
 * What the registry tells the layers above it (main.c wires them before
 * any instance is made; fsm_inst_set_hooks()). Never NULL after that: the
 * registry calls them without checking.
 */
static const struct fsm_inst_hooks *fsm_hooks;

/**
 * fsm_inst_set_hooks - install the hooks of the layers above.
 * @hooks: static, every member set
 *
 * Context: module init, before any instance exists.
 */
void fsm_inst_set_hooks(const struct fsm_inst_hooks *hooks)
{
	fsm_hooks = hooks;
}


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

/**
 * fsm_inst_ids_retired_locked - the ids retired and not given back yet.
 * Context: fsm_mutex held. Return: a mask of ids below FSM_UST_MAX_INST.
 */
static u64 fsm_inst_ids_retired_locked(void)
{
	lockdep_assert_held(&fsm_mutex);
	return fsm_retired_ids;
}

/**
 * fsm_inst_ids_free_locked - give retired ids back to the allocator.
 * @ids: retired ids that nothing refers to any more (see
 *       fsm_inst_id_release())
 * Context: fsm_mutex held.
 */
static void fsm_inst_ids_free_locked(u64 ids)
{
	unsigned int id;

	lockdep_assert_held(&fsm_mutex);
	ids &= fsm_retired_ids;
	for_each_set_bit(id, (unsigned long *)&ids, FSM_UST_MAX_INST) {
		fsm_retired_ids &= ~BIT_ULL(id);
		ida_free(&fsm_inst_ida, id);
	}
}

/*
 * fsm_inst_id_release - the id of a released instance.
 *
 * Why reuse is safe: an id is given to a new instance only when nothing
 * can still refer to the old instance by it. What knows an instance by
 * its id:
 *  - fsm_insts (lookups by id: user-stack deliveries): the instance was
 *    erased from it when it was reaped, and RCU readers are past
 *    (tracepoint_synchronize_unregister() in fsm_inst_release());
 *  - node inodes (i_private): the key id + seq, compared by
 *    fsm_inst_get_by_key(), so an old inode (an O_PATH descriptor
 *    reopened through /proc) never reaches a new owner; open files hold
 *    a reference on the struct, so this runs after their close;
 *  - stack_id probes, which pass inst->id to fsm_ustack_request(): all
 *    detached, and tracepoint_synchronize_unregister() returned before
 *    this runs: no request for the old instance runs or will run;
 *  - the user-stack side: request bits of pending entries, late bits,
 *    emit works serving them (fsm_ustack_ids_busy()), the option bit
 *    (turned off when the instance was reaped) and the counters of
 *    fsm_ust_insts[id]. With no request left, no new bit of the id
 *    appears; the id stays retired until lifecycle.c, before it gives an
 *    id out, finds no bit of it, zeroes its counters and frees it. No wait
 *    anywhere: a task that asked and then sleeps for an hour keeps that
 *    one id busy for the hour; new instances get other ids meanwhile (the
 *    lowest free), and with none below FSM_UST_MAX_INST left, an instance
 *    gets kernel stacks only (user stacks refused with a dmesg line and a
 *    counter, ustack_deliver.c).
 * Ids from FSM_UST_MAX_INST up never reach the user-stack side: free at
 * once.
 * Context: task (fsm_inst_release()), takes fsm_mutex.
 */
static void fsm_inst_id_release(u32 id)
{
	mutex_lock(&fsm_mutex);
	/* module exit destroyed the allocator (a late put may follow it) */
	if (!fsm_registry_closed) {
		if (id < FSM_UST_MAX_INST)
			fsm_retired_ids |= BIT_ULL(id);
		else
			ida_free(&fsm_inst_ida, id);
	}
	mutex_unlock(&fsm_mutex);
}

/*
 * fsm_inst_free - free an instance's memory: the one place that does,
 * for the last reference and for an instance that never entered the
 * registry. Its maps (NULL until first used), the directory reference
 * (NULL before fsm_inst_alloc() took it), the strings. Context: task.
 */
static void fsm_inst_free(struct fsm_inst *inst)
{
	fsm_map_free(inst->map);
	fsm_map_free(inst->umap);	/* user stacks (ustack_deliver.c) */
	free_percpu(inst->pcpu);
	dput(inst->dir);
	kfree(inst->src_pat);
	kfree(inst->name);
	kfree(inst);
}

/*
 * The last reference. The instance was reaped (lifecycle.c): erased from
 * fsm_insts, its sources detached and freed, no node open.
 */
static void fsm_inst_release(struct kref *ref)
{
	struct fsm_inst *inst = container_of(ref, struct fsm_inst, ref);

	/* no probe and no RCU reader of fsm_insts can still see it */
	tracepoint_synchronize_unregister();
	WARN_ON_ONCE(!list_empty(&inst->sources));
	if (inst->id)
		fsm_inst_id_release(inst->id);
	fsm_inst_free(inst);
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
 * fsm_inst_node_key - what a node's i_private holds: the id and the seq.
 * @inst: instance
 *
 * Context: any. Return: the key (never dereferenced).
 */
void *fsm_inst_node_key(const struct fsm_inst *inst)
{
	return (void *)(((unsigned long)inst->seq << 32) | inst->id);
}

/**
 * fsm_inst_get_by_key - look an instance up for a node being opened.
 * @key: the node's i_private (fsm_inst_node_key())
 *
 * Context: any sleepable or atomic context.
 * Return: the live instance with a reference, or NULL if it is gone (also
 * when its id now belongs to another instance).
 */
struct fsm_inst *fsm_inst_get_by_key(const void *key)
{
	unsigned long k = (unsigned long)key;
	struct fsm_inst *inst = fsm_inst_get_by_id((u32)k);

	if (inst && inst->seq != (u32)(k >> 32)) {
		fsm_inst_put(inst);
		inst = NULL;
	}
	return inst;
}

/**
 * fsm_inst_get_by_id - look an instance up by id.
 * @id: instance id
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
		fsm_inst_free(inst);
		return NULL;
	}
	kref_init(&inst->ref);
	inst->dir = dir;
	inst->tr = tr;
	INIT_LIST_HEAD(&inst->sources);
	INIT_LIST_HEAD(&inst->trigs);
	INIT_LIST_HEAD(&inst->reap);
	init_rwsem(&inst->map_rwsem);
	mutex_init(&inst->map_alloc_mutex);
	return inst;
}

/* Live instance with that trace_array. Context: fsm_mutex held. */
struct fsm_inst *fsm_inst_find_tr_locked(struct trace_array *tr)
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
struct fsm_inst *fsm_inst_find_name_locked(const char *name)
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
 * fsm_inst_add_locked - a new instance in the registry.
 * @dir:  its directory (a new reference is taken)
 * @name: instances/NAME's name, or NULL for the top level (id 0)
 * @tr:   its key
 *
 * The id is the lowest free one (user stacks need one below
 * FSM_UST_MAX_INST). For lifecycle.c only: it gives retired ids back
 * first and has the new instance's nodes made.
 * Context: task, fsm_mutex held.
 * Return: the instance (the registry's reference) or an ERR_PTR.
 */
static struct fsm_inst *fsm_inst_add_locked(struct dentry *dir,
					    const char *name,
					    struct trace_array *tr)
{
	struct fsm_inst *inst;
	int ret;

	lockdep_assert_held(&fsm_mutex);
	inst = fsm_inst_alloc(name, dget(dir), tr);
	if (!inst) {
		dput(dir);
		return ERR_PTR(-ENOMEM);
	}
	inst->seq = ++fsm_inst_seq;
	if (!name) {
		inst->id = 0;
		ret = xa_insert(&fsm_insts, 0, inst, GFP_KERNEL);
	} else {
		ret = ida_alloc_min(&fsm_inst_ida, 1, GFP_KERNEL);
		if (ret >= 0) {
			inst->id = ret;
			ret = xa_insert(&fsm_insts, inst->id, inst, GFP_KERNEL);
			if (ret)
				ida_free(&fsm_inst_ida, inst->id);
		}
	}
	if (ret) {
		fsm_inst_free(inst);	/* also puts @dir */
		return ERR_PTR(ret);
	}
	return inst;
}

/*
 * Give the retired instance ids that nothing refers to any more back to
 * the registry, their user-stack counters zeroed (see
 * fsm_inst_id_release()). Cheap when none is retired; else one scan of
 * the user-stack task table. Context: task, fsm_mutex held.
 */
static void fsm_ids_reclaim_locked(void)
{
	u64 free = fsm_inst_ids_retired_locked();
	unsigned int id;

	lockdep_assert_held(&fsm_mutex);
	if (!free)
		return;
	free &= ~fsm_hooks->ids_busy();
	for_each_set_bit(id, (unsigned long *)&free, FSM_UST_MAX_INST)
		fsm_hooks->id_reset(id);
	fsm_inst_ids_free_locked(free);
}

/**
 * fsm_inst_find_or_create_dir_locked - the instance of directory @dir with
 * key @tr; created when not known (the created hook is told).
 * @dir: the instance's directory (the caller keeps its own reference)
 * @tr:  its trace_array (opaque key)
 *
 * Context: task, fsm_mutex held.
 * Return: the instance (no new reference) or an ERR_PTR.
 */
struct fsm_inst *fsm_inst_find_or_create_dir_locked(struct dentry *dir,
						    struct trace_array *tr)
{
	struct fsm_inst *inst;
	const char *name = NULL;

	lockdep_assert_held(&fsm_mutex);
	inst = fsm_inst_find_tr_locked(tr);
	if (inst)
		return inst;

	if (!IS_ROOT(dir)) {
		/* instances/NAME; tracefs has no rename, d_name is stable */
		if (!fsm_instances_dir || dir->d_parent != fsm_instances_dir)
			return ERR_PTR(-ENODEV);
		if (d_unhashed(dir))
			return ERR_PTR(-ENOENT);	/* removed meanwhile */
		name = dir->d_name.name;
		/* the lowest free id: user stacks need one below 63 */
		fsm_ids_reclaim_locked();
	}
	inst = fsm_inst_add_locked(dir, name, tr);
	if (!IS_ERR(inst))
		fsm_hooks->created(inst);
	return inst;
}

/**
 * fsm_inst_find_or_create_locked - the instance of one of our event files.
 * @file: our stackmap:stack_id file in some instance; the caller keeps the
 *        instance alive (event_mutex held, or a trace_get_event_file()
 *        reference)
 *
 * Creates the struct fsm_inst when the instance is not known yet and kicks
 * the work that creates its nodes.
 * Context: task, fsm_mutex held.
 * Return: the instance (no new reference) or an ERR_PTR.
 */
struct fsm_inst *fsm_inst_find_or_create_locked(struct trace_event_file *file)
{
	struct fsm_inst *inst;
	struct dentry *dir;

	lockdep_assert_held(&fsm_mutex);
	inst = fsm_inst_find_tr_locked(file->tr);
	if (inst)
		return inst;
	dir = fsm_compat_event_file_instance_dir(file);
	if (!dir)
		return ERR_PTR(-ENODEV);
	inst = fsm_inst_find_or_create_dir_locked(dir, file->tr);
	dput(dir);
	return inst;
}

/**
 * fsm_inst_has_trig - whether @file, an event of @inst, has a stackmap trigger.
 * @inst: instance
 * @file: an event file of @inst's trace_array
 *
 * The rule that keeps one id record per record: an event is a source of an
 * instance or has a stackmap trigger there, never both (sources.c refuses
 * the source, trigger.c the trigger). Both decide with event_mutex held,
 * which orders them: the list changes only under it.
 * Context: task, event_mutex held (there is no stackmap trigger, and the
 * list is empty, on a kernel where it is not known).
 */
bool fsm_inst_has_trig(struct fsm_inst *inst,
		       const struct trace_event_file *file)
{
	struct fsm_inst_trig *it;

	if (fsm_ks.event_mutex)
		lockdep_assert_held(fsm_ks.event_mutex);
	list_for_each_entry(it, &inst->trigs, node)
		if (it->file == file)
			return true;
	return false;
}

/**
 * fsm_inst_prepare_map - create @inst's stack map before recording starts.
 * @inst: instance
 *
 * options/stackmap calls it before it enables the event, so that the map
 * (up to hundreds of MiB at bits=20) is allocated and zeroed without any
 * global lock held; the REGISTER callback, which runs under event_mutex,
 * then finds it. Enabling events/stackmap/stack_id directly calls it from
 * that callback (fsm_register()), with event_mutex held by the kernel but
 * not fsm_mutex. Two callers are serialised by the instance's
 * map_alloc_mutex: the second finds the first one's map (never a second
 * allocation, which could fail the memory budget for nothing).
 * Context: task, fsm_mutex not held (event_mutex may be).
 * Return: 0, or the error of fsm_map_new() (-ENOMEM past memory_budget_mb).
 */
int fsm_inst_prepare_map(struct fsm_inst *inst)
{
	struct fsm_map_params p = {
		.bits = fsm_bits,
		.max_depth = FSM_MAX_KERNEL_DEPTH,
	};
	struct fsm_map *map;
	u32 gen;

	if (smp_load_acquire(&inst->map))	/* pairs with the stores below */
		return 0;
	mutex_lock(&inst->map_alloc_mutex);
	if (inst->map) {		/* a concurrent enable made it */
		mutex_unlock(&inst->map_alloc_mutex);
		return 0;
	}
	map = fsm_map_new(&p, fsm_inst_label(inst), "stack map", &gen);
	if (IS_ERR(map)) {
		mutex_unlock(&inst->map_alloc_mutex);
		return PTR_ERR(map);
	}
	mutex_lock(&fsm_mutex);
	inst->gen = gen;
	/* Pairs with smp_load_acquire() above, in nodes.c, nodes_map.c, events.c. */
	smp_store_release(&inst->map, map);
	mutex_unlock(&fsm_mutex);
	mutex_unlock(&inst->map_alloc_mutex);
	return 0;
}

/*
 * fsm_inst_of_tr_rcu - the instance of @tr, for the trace output (also
 * ustack_deliver.c). Context: rcu_read_lock() held; the instance stays valid
 * until rcu_read_unlock() (freed after synchronize_rcu()). Return: it, or
 * NULL.
 */
struct fsm_inst *fsm_inst_of_tr_rcu(struct trace_array *tr)
{
	struct fsm_inst *inst;
	unsigned long idx;

	/*
	 * No instance for a NULL @tr (tp_printk's iterator has none), and
	 * none that is dead: its trace_array may be freed and its address
	 * reused by a new instance before the dead one is reaped.
	 */
	if (!tr)
		return NULL;
	xa_for_each(&fsm_insts, idx, inst)
		if (READ_ONCE(inst->tr) == tr && fsm_inst_alive(inst))
			return inst;
	return NULL;
}

/**
 * fsm_inst_registry_exit - forget every id (module exit, nothing left).
 * Context: task.
 */
void fsm_inst_registry_exit(void)
{
	mutex_lock(&fsm_mutex);
	fsm_registry_closed = true;
	mutex_unlock(&fsm_mutex);
	ida_destroy(&fsm_inst_ida);
}
