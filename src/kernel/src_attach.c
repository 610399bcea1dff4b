// SPDX-License-Identifier: GPL-2.0
/*
 * src_attach.c - the life of one source event: from its resolution (a
 * module reference until it is entered) through attach and detach by its
 * backend (struct fsm_src_ops: src_trig.c, src_probe.c) to its free, and
 * the work that drops the sources whose event was removed. sources.c
 * decides which sources an instance has; this file only carries them out.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/tracepoint.h>
#include <linux/workqueue.h>

#include "compat/ksyms.h"
#include "tracing.h"
#include "sources_internal.h"

/*
 * Resolved sources of a module that are not entered yet.
 * try_module_get() succeeds on a COMING module, and when its
 * init fails the kernel frees it whatever its refcount, right after the
 * GOING notifiers: a reference held by a source that is resolved but not
 * entered (not on inst->sources, so fsm_module_notify() does not see it)
 * would then be put on freed memory, and the source entered with a freed
 * tracepoint. So such a source is on fsm_src_pending while it holds the
 * reference: the reference is taken under fsm_src_pending_lock (a GOING
 * module refuses it: module_is_live()), and the GOING notifier, under
 * fsm_mutex and this lock, puts the reference itself while the module
 * still exists and marks the source mod_gone; fsm_sources_apply_locked(),
 * under fsm_mutex, never enters a mod_gone source. Whoever clears
 * src->modref under the lock puts the reference. A leaf spinlock: nothing
 * is taken inside it, and it is taken in the event directory's inode lock
 * (resolution) and inside fsm_mutex (notifier, entry).
 */
DEFINE_SPINLOCK(fsm_src_pending_lock);
LIST_HEAD(fsm_src_pending);
/*
 * Every source of the trigger backend from its resolution to its free
 * (src->all; written under fsm_src_pending_lock, read under RCU): the
 * removal hooks of src_trig.c look up the sources of a removed dynamic
 * event or instance there, from an int3 handler (NMI-like: no lock). A
 * source is added while the event directory's inode lock is held (the
 * event cannot be removed before it is on the list) and removed only
 * when freed, one grace period before its memory goes.
 */
LIST_HEAD(fsm_src_all);

/*
 * The source backend of this load (struct fsm_src_ops): chosen by main.c
 * before any source is resolved (fsm_sources_set_ops()), never changed.
 * Each source keeps the ops it was made with (src->ops).
 */
const struct fsm_src_ops *fsm_src_backend;

/**
 * fsm_sources_set_ops - the backend that attaches the sources of this load.
 * @ops: src_trig.c's or src_probe.c's
 *
 * Context: task (module init), before any source is resolved.
 */
void fsm_sources_set_ops(const struct fsm_src_ops *ops)
{
	WRITE_ONCE(fsm_src_backend, ops);
}

/**
 * fsm_event_lock - take event_mutex where the kernel's is known.
 *
 * A backend that changes the events' trigger lists (src_trig.c) needs
 * event_mutex, the lock of every writer of those lists, around attach,
 * detach and tidy. Every backend needs it to choose sources: an event
 * with a stackmap trigger in the instance is not made a source
 * (fsm_inst_has_trig(), which reads a list the trigger changes under
 * event_mutex). The order is event_mutex -> fsm_mutex, and the kernel's
 * own is event_mutex -> tracepoints_mutex (an event's .reg registers its
 * probe under it), so a tracepoint probe may be attached inside it. A
 * kernel where it is not known (no kallsyms of data: Debian's arm64 6.1)
 * has no stackmap trigger either, and then nothing is taken.
 * Context: task; fsm_mutex not held.
 * Return: whether the lock was taken, for fsm_event_unlock(): the backend
 * is chosen during load, after the module notifier that takes this lock
 * is registered, so the unlock must not decide again.
 */
bool fsm_event_lock(void)
{
	if (!READ_ONCE(fsm_src_backend) || !fsm_ks.event_mutex)
		return false;
	fsm_compat_event_lock();
	return true;
}

/* Undo fsm_event_lock(), given what it returned. Context: task. */
void fsm_event_unlock(bool locked)
{
	if (locked)
		fsm_compat_event_unlock();
}

/**
 * fsm_src_attach_locked - attach a source through its backend.
 * @src: source of an instance that is recording
 *
 * A backend may decline without an error (a source whose event or
 * instance is gone: the work that drops it comes); the source then counts
 * as attached, as it always did.
 * Context: task, fsm_mutex held; event_mutex too if the backend needs it
 * (fsm_event_lock(), or the kernel's .reg callback).
 * Return: 0, or the backend's error (tracepoint_probe_register_prio()'s).
 */
int fsm_src_attach_locked(struct fsm_src *src)
{
	int ret;

	lockdep_assert_held(&fsm_mutex);
	if (src->attached)
		return 0;
	ret = src->ops->attach(src);
	if (!ret)
		src->attached = true;
	return ret;
}

/**
 * fsm_src_detach_locked - detach a source through its backend.
 * @src: source
 *
 * Its callback may still be running on other CPUs when this returns: call
 * tracepoint_synchronize_unregister() before freeing @src or its instance.
 * Context: task, fsm_mutex held (and event_mutex as for attaching).
 */
void fsm_src_detach_locked(struct fsm_src *src)
{
	lockdep_assert_held(&fsm_mutex);
	if (!src->attached)
		return;
	src->attached = false;
	src->ops->detach(src);
}

/**
 * fsm_sources_attach_all_locked - attach every source of @inst.
 * @inst: instance that starts recording (inst->file set)
 *
 * All or nothing: on an error, those attached are detached again.
 * Context: task, fsm_mutex held, event_mutex held (the .reg callback).
 * Return: 0 or the first backend error.
 */
int fsm_sources_attach_all_locked(struct fsm_inst *inst)
{
	struct fsm_src *src;
	int ret;

	list_for_each_entry(src, &inst->sources, list) {
		ret = fsm_src_attach_locked(src);
		if (ret) {
			fsm_sources_detach_all_locked(inst, false);
			return ret;
		}
	}
	return 0;
}

/**
 * fsm_sources_detach_all_locked - detach every source of @inst.
 * @inst:    instance
 * @in_walk: the caller may be inside the kernel's walk of a trigger list
 *           (the .reg UNREGISTER on the soft path, events.c): a backend
 *           with a quiesce callback leaves its data on their lists,
 *           inert, instead of taking them off (src_trig.c)
 *
 * Context: task, fsm_mutex held, event_mutex held.
 */
void fsm_sources_detach_all_locked(struct fsm_inst *inst, bool in_walk)
{
	struct fsm_src *src;

	list_for_each_entry(src, &inst->sources, list) {
		if (in_walk && src->ops->quiesce && src->attached) {
			src->attached = false;
			src->ops->quiesce(src);
		} else {
			fsm_src_detach_locked(src);
		}
	}
}

/*
 * The backend's part of a source that is being freed (or never entered).
 * Context: task, no fsm_mutex nor event_mutex held (see fsm_src_ops.free).
 */
void fsm_src_ops_free(struct fsm_src *src)
{
	if (src->ops && src->ops->free)
		src->ops->free(src);
}

/*
 * A reference on @mod for @src, pending until entered. Context: task
 * (resolution, under the event directory's lock). Return: taken.
 * @noref (a replay): pending without a reference, so that a replay never
 * makes "rmmod" of a module just loaded fail: the GOING notifier marks
 * the source mod_gone under the same lock either way, and it is then
 * never entered (the reference only keeps the module from going in the
 * meantime, which a replay does not need).
 */
bool fsm_src_modref_get(struct fsm_src *src, struct module *mod,
			bool noref)
{
	bool ok;

	spin_lock(&fsm_src_pending_lock);
	ok = noref ? module_is_live(mod) : try_module_get(mod);
	if (ok) {
		src->mod = mod;
		src->modref = !noref;
		list_add_tail(&src->pending, &fsm_src_pending);
	}
	spin_unlock(&fsm_src_pending_lock);
	return ok;
}

/*
 * @src is entered or freed: put its module reference if it still holds it.
 * Context: task or atomic (a leaf spinlock).
 */
void fsm_src_unpend(struct fsm_src *src)
{
	bool put;

	spin_lock(&fsm_src_pending_lock);
	list_del_init(&src->pending);
	put = src->modref;
	src->modref = false;
	spin_unlock(&fsm_src_pending_lock);
	if (put)
		module_put(src->mod);
}

/**
 * fsm_sources_free - free a list of sources (detached, unreachable).
 * @list: struct fsm_src list
 *
 * Context: task; no probe may still run on them
 * (tracepoint_synchronize_unregister() done, or never attached).
 */
void fsm_sources_free(struct list_head *list)
{
	struct fsm_src *src, *tmp;

	bool on_all = false;

	/*
	 * Off fsm_src_all first, then one grace period: the removal hooks
	 * (src_trig.c) read that list under rcu_read_lock() only.
	 */
	spin_lock(&fsm_src_pending_lock);
	list_for_each_entry(src, list, list) {
		if (list_empty(&src->all))
			continue;
		list_del_rcu(&src->all);
		on_all = true;
	}
	spin_unlock(&fsm_src_pending_lock);
	if (on_all)
		synchronize_rcu();
	list_for_each_entry_safe(src, tmp, list, list) {
		WARN_ON_ONCE(src->attached);
		list_del(&src->list);
		fsm_src_unpend(src);
		fsm_src_ops_free(src);
		free_percpu(src->pc);
		kfree(src);
	}
}

/*
 * Sources whose dynamic event was removed (FSM_SRC_GONE_EVENT, set by the
 * removal hook of src_trig.c, which already took their trigger data off the
 * event): drop them from their instance, one dmesg line each. Also take
 * off the pairs of detached sources that were left on their lists, inert
 * (the backend's quiesce, src_trig.c: a detach inside the kernel's walk of a trigger
 * list).
 * Context: task (system workqueue).
 */
static void fsm_sources_gone_fn(struct work_struct *work)
{
	struct fsm_src *src, *tmp;
	struct fsm_inst *inst;
	unsigned long idx;
	LIST_HEAD(removed);
	bool elocked;

	elocked = fsm_event_lock();
	mutex_lock(&fsm_mutex);
	xa_for_each(&fsm_insts, idx, inst) {
		list_for_each_entry_safe(src, tmp, &inst->sources, list) {
			if (!src->attached && src->ops->tidy)
				src->ops->tidy(src);	/* if left quiesced */
			if (READ_ONCE(src->gone) != FSM_SRC_GONE_EVENT)
				continue;
			fsm_src_detach_locked(src);
			list_move_tail(&src->list, &removed);
			pr_info("%s: source event %s dropped: the event was removed\n",
				fsm_inst_label(inst), src->name);
		}
	}
	mutex_unlock(&fsm_mutex);
	fsm_event_unlock(elocked);
	if (!list_empty(&removed)) {
		tracepoint_synchronize_unregister();
		fsm_sources_free(&removed);
	}
}

static DECLARE_WORK(fsm_sources_gone_work, fsm_sources_gone_fn);

/**
 * fsm_sources_gone_kick - some sources are FSM_SRC_GONE_EVENT: drop them.
 * Context: any (a kretprobe handler, src_trig.c).
 */
void fsm_sources_gone_kick(void)
{
	schedule_work(&fsm_sources_gone_work);
}

/**
 * fsm_src_attach_exit - wait for the work that drops removed sources.
 * Context: task (module exit), the removal hooks gone: nothing requeues.
 */
void fsm_src_attach_exit(void)
{
	flush_work(&fsm_sources_gone_work);
}
