// SPDX-License-Identifier: GPL-2.0
/*
 * instances.c - the registry of instances: one struct fsm_inst per ftrace
 * instance, by id, with its reference count, its id and its maps.
 *
 * A registry only: it calls none of the other parts of the module (the
 * core's fsm_map_free() for the maps it frees aside). Who
 * creates an instance, makes its nodes and sources and reaps it is
 * lifecycle.c; the order of module init and exit is main.c's. The others
 * look instances up here (by id, by node key, by trace_array).
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
 * refer to it any more: lifecycle.c asks ustack_deliver.c and gives it
 * back with fsm_inst_ids_free_locked().
 */
static DEFINE_IDA(fsm_inst_ida);
static u64 fsm_retired_ids;
static u32 fsm_inst_seq;

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
u64 fsm_inst_ids_retired_locked(void)
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
void fsm_inst_ids_free_locked(u64 ids)
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
	fsm_map_free(inst->map);
	fsm_map_free(inst->umap);	/* user stacks (ustack.c) */
	free_percpu(inst->pcpu);
	dput(inst->dir);
	kfree(inst->src_pat);
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
struct fsm_inst *fsm_inst_add_locked(struct dentry *dir, const char *name,
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
		dput(dir);
		free_percpu(inst->pcpu);
		kfree(inst->name);
		kfree(inst);
		return ERR_PTR(ret);
	}
	return inst;
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
