// SPDX-License-Identifier: GPL-2.0
/*
 * sources.c - the source events of an instance (stack_map_events, events=).
 *
 * Syntax: the one of set_event. Tokens separated by white space or commas:
 *   sys:event     that event
 *   sys:* / sys:  every event of a system
 *   *:event / :event   that event name in every system
 *   name          every event of system "name" and every event named "name"
 *   !pattern      remove what the pattern matches from the chosen set
 * Tokens apply in order. Patterns are resolved to concrete events when
 * written, like set_event; a wildcard must match at least one event then
 * (a typo is -EINVAL, not a silent no-op).
 *
 * Patterns that follow: unlike set_event, the wildcard
 * tokens stand. An event that appears later (a dynamic event created with
 * kprobe_events, uprobe_events, synthetic_events or an eprobe; the events
 * of a module loaded later) and that the standing patterns choose becomes
 * a source of the instance, with one dmesg line. The standing patterns are
 * the wildcard and '!' tokens written since the last '>' write (or the
 * events= defaults), kept in order in inst->src_pat; a named event is a
 * choice of that event only: once removed, it does not come back when an
 * event of that name is made again. Replaying the standing patterns on the
 * events that exist gives the chosen set minus the named events, so a
 * replay only ever adds events that appeared since (FSM_SRC_FOLLOW: '!'
 * tokens remove from what the replay adds, never from the set). The replay
 * runs from a work item (fsm_sources_follow_fn()), kicked by a kretprobe
 * on trace_add_event_call() (src_trig.c) and by the module notifier at
 * MODULE_STATE_LIVE: both come after the event's files exist in every
 * instance, so the work sees them; a kick while the work runs queues it
 * again.
 *
 * Every event type qualifies when sources go through
 * trigger data (src_trig.c):
 * tracepoint, syscall, kprobe/kretprobe, uprobe, synthetic and eprobe
 * events, as they all commit through trace_event_buffer_commit(); the
 * event's filter, soft disable and pid filter decide, record by record,
 * whether an id record follows. Refused (-EINVAL when named,
 * skipped by wildcards): ftrace's own events (IGNORE_ENABLE) and this
 * module's events. Without the trigger layouts or the removal hooks,
 * sources fall back to a tracepoint probe: tracepoint events only, filters
 * not seen (src_probe.c, fsm_probe()).
 *
 * Resolution never takes a reference on the instance: trace_get_event_file()
 * would (a trace_array reference), and a concurrent rmdir of the instance
 * would fail with -EBUSY, once per event resolved ("*" is about 2,000).
 * The event file is found and held valid by compat/evfiles.c instead
 * (fsm_compat_event_file_lock(): the events/SYS/EV directory's inode lock
 * on 6.1, event_mutex on eventfs kernels): a removal waits for it.
 *
 * A resolved source keeps a pointer to the event's trace_event_file in the
 * instance (not a reference: that would block rmdir, and a dynamic event's
 * removal). It is dereferenced only while valid:
 * - the instance: the clear_event_triggers() hook (src_trig.c) unlinks the
 *   trigger data of its sources and marks them gone before rmdir frees
 *   the files (the tracepoint path: our probes are detached by the
 *   kernel's UNREGISTER first);
 * - a dynamic event: the trace_remove_event_call() hook unlinks them
 *   before the files are freed and marks them gone once the removal
 *   succeeded; fsm_sources_gone_fn() then drops them with a dmesg line;
 * - a module's event: a module notifier running before the trace events'
 *   own drops the sources of a module that goes away.
 * A gone source is never linked again, and its file pointer only compared.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/notifier.h>
#include <linux/rculist.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/trace_events.h>
#include <linux/tracepoint.h>
#include <linux/workqueue.h>

#include "compat/compat.h"
#include "compat/evfiles.h"
#include "compat/ksyms.h"
#include "tracing.h"
#include "sources_internal.h"

/* kicks of the replay so far (fsm_sources_follow_kick()) */
static atomic_t fsm_follow_kicks = ATOMIC_INIT(0);
static void fsm_sources_follow_fn(struct work_struct *work);
static DECLARE_WORK(fsm_sources_follow_work, fsm_sources_follow_fn);

/*
 * Resolve sys:ev in @inst, without a reference on the instance; a source of
 * a module holds a reference on it until entered (src->modref). @hint: the
 * file a listing found (fsm_compat_list_events()), or NULL.
 * Return: 1 resolved (added to @out), 0 skipped
 * (wildcard), or -errno (named explicitly: a one-line message said why).
 */
static int fsm_resolve_one(struct fsm_inst *inst, const char *sys,
			   const char *ev, struct trace_event_file *hint,
			   bool named, const char *who,
			   struct list_head *out, bool replay)
{
	struct trace_event_call *call;
	struct trace_event_file *file;
	struct fsm_evlock lk;
	const char *why;
	struct fsm_src *src, *s;
	int ret = 0;

	src = kzalloc(struct_size(src, name, strlen(sys) + strlen(ev) + 2),
		      GFP_KERNEL);
	if (!src)
		return -ENOMEM;
	INIT_LIST_HEAD(&src->pending);
	INIT_LIST_HEAD(&src->all);
	src->ops = fsm_src_backend;
	src->pc = alloc_percpu(struct fsm_src_pcpu);
	if (!src->pc) {
		kfree(src);
		return -ENOMEM;
	}
	file = fsm_compat_event_file_lock(inst->dir, sys, ev, hint, &lk);
	if (!file) {
		free_percpu(src->pc);
		kfree(src);
		if (named && lk.no_enable)
			fsm_warn(who, "%.64s:%.64s cannot be a source (it cannot be enabled: no enable file) (%s)\n",
				 sys, ev, fsm_inst_label(inst));
		else if (named)
			fsm_warn(who, "unknown event %.64s:%.64s (%s)\n", sys, ev,
				 fsm_inst_label(inst));
		return named ? -EINVAL : 0;
	}
	/* until the unlock: no event_mutex, no trace_types_lock (compat/evfiles.h) */
	call = file->event_call;
	if (file->tr != READ_ONCE(inst->tr)) {
		ret = -ENODEV;		/* instance removed (or replaced) */
		goto out;
	}
	/* which events the backend can attach to (src_trig.c, src_probe.c) */
	why = src->ops->refuses(call);
	if (why) {
		if (named)
			fsm_warn(who, "%s:%s cannot be a source (%s)\n", sys, ev,
				 why);
		ret = named ? -EINVAL : 0;
		goto out;
	}
	if (call->module == THIS_MODULE) {
		if (named)
			fsm_warn(who, "%s:%s is an event of this module\n",
				 sys, ev);
		ret = named ? -EINVAL : 0;
		goto out;
	}
	list_for_each_entry(s, out, list) {
		if (s->file == file)
			goto out;	/* duplicate within the token */
	}
	/* the module notifier protects entered sources; until then, this */
	if (!(call->flags & TRACE_EVENT_FL_DYNAMIC) && call->module &&
	    !fsm_src_modref_get(src, call->module, replay)) {
		if (named)
			fsm_warn(who, "%s:%s: its module is going away\n",
				 sys, ev);
		ret = named ? -EINVAL : 0;
		goto out;
	}

	sprintf(src->name, "%s:%s", sys, ev);
	src->inst = inst;
	src->file = file;
	src->call = call;
	src->tr = file->tr;
	src->type = call->event.type;
	/* still inside fsm_compat_event_file_lock(): the file is alive */
	ret = src->ops->prepare(src, call);
	if (ret) {
		fsm_src_unpend(src);
		goto out;
	}
	list_add_tail(&src->list, out);
	src = NULL;
	ret = 1;
out:
	fsm_compat_event_file_unlock(&lk);
	if (src) {
		fsm_src_ops_free(src);
		free_percpu(src->pc);
		kfree(src);
	}
	return ret;
}

/**
 * fsm_sources_has_file_locked - whether @file is a source of @inst.
 * @inst: instance
 * @file: an event file of its trace_array
 *
 * Chosen sources, attached or not (options/stackmap may be set later), not
 * gone. For the stackmap trigger, which is refused on a source (one id
 * record per record, fsm_inst_has_trig()).
 * Context: task, fsm_mutex held.
 */
bool fsm_sources_has_file_locked(struct fsm_inst *inst,
				 const struct trace_event_file *file)
{
	struct fsm_src *src;

	lockdep_assert_held(&fsm_mutex);
	list_for_each_entry(src, &inst->sources, list)
		if (src->file == file && !READ_ONCE(src->gone))
			return true;
	return false;
}

/* Is sys:ev a source of @inst (not gone)? Context: task; takes fsm_mutex. */
static bool fsm_src_chosen(struct fsm_inst *inst, const char *sys,
			   const char *ev)
{
	size_t len = strlen(sys);
	struct fsm_src *src;
	bool found = false;

	mutex_lock(&fsm_mutex);
	list_for_each_entry(src, &inst->sources, list) {
		if (!READ_ONCE(src->gone) && !strncmp(src->name, sys, len) &&
		    src->name[len] == ':' && !strcmp(src->name + len + 1, ev)) {
			found = true;
			break;
		}
	}
	mutex_unlock(&fsm_mutex);
	return found;
}

static bool fsm_walk_sys(const char *name, void *arg)
{
	const struct fsm_tok *tok = arg;

	if (!strcmp(name, "stackmap"))
		return false;	/* ours */
	/* "name" (any) may match an event of any system */
	return tok->any || !tok->sys || !strcmp(tok->sys, name);
}

static bool fsm_walk_ev(const char *sys, const char *name, void *arg)
{
	return fsm_tok_match(arg, sys, name);
}

/*
 * Resolve a wildcard token by walking the instance's events.
 * Return: number of events resolved, or -errno.
 */
static int fsm_resolve_wild(struct fsm_inst *inst, struct fsm_tok *t,
			    const char *who)
{
	const struct fsm_event_filter filter = {
		.sys = fsm_walk_sys, .ev = fsm_walk_ev, .arg = t,
	};
	struct fsm_event_name *e;
	LIST_HEAD(evs);
	int ret, found = 0;

	ret = fsm_compat_list_events(inst->dir, &filter, &evs);
	list_for_each_entry(e, &evs, list) {
		if (ret)
			break;
		ret = fsm_resolve_one(inst, e->sys, e->ev, e->file, false, who,
				      &t->srcs, false);
		if (ret > 0)
			found++;
		ret = ret > 0 ? 0 : ret;
	}
	fsm_compat_free_events(&evs);
	if (ret)
		return ret;
	if (!found)
		fsm_warn(who, "'%.64s' matches no event that can be a source (%s)\n",
			 t->text, fsm_inst_label(inst));
	return found ? found : -EINVAL;
}

struct fsm_follow {
	const struct fsm_tok *toks;
	unsigned int nr;
};

static bool fsm_follow_sys(const char *name, void *arg)
{
	/* ours, and ftrace's own events (never sources) */
	return strcmp(name, "stackmap") && strcmp(name, "ftrace");
}

static bool fsm_follow_ev(const char *sys, const char *name, void *arg)
{
	const struct fsm_follow *f = arg;

	return fsm_pat_choose(f->toks, f->nr, sys, name);
}

/*
 * A replay (FSM_SRC_FOLLOW): one walk of the instance's events/, each
 * event decided by name (fsm_pat_choose()); only the chosen events that
 * are not sources yet are resolved, into @out. The cost: per event, up to
 * FSM_PAT_MAX_TOKENS name matches and, for a chosen one, a look at the
 * instance's sources (fsm_src_chosen()); it stops when the module unloads.
 * Return: 0 or -errno.
 */
static int fsm_resolve_follow(struct fsm_inst *inst, const struct fsm_tok *toks,
			      unsigned int nr, struct list_head *out)
{
	struct fsm_follow f = { .toks = toks, .nr = nr };
	const struct fsm_event_filter filter = {
		.sys = fsm_follow_sys, .ev = fsm_follow_ev, .arg = &f,
	};
	struct fsm_event_name *e;
	LIST_HEAD(evs);
	int ret;

	ret = fsm_compat_list_events(inst->dir, &filter, &evs);
	list_for_each_entry(e, &evs, list) {
		if (ret)
			break;
		if (READ_ONCE(fsm_shutting_down)) {
			ret = -ENODEV;
			break;
		}
		if (fsm_src_chosen(inst, e->sys, e->ev))
			continue;
		ret = fsm_resolve_one(inst, e->sys, e->ev, e->file, false,
				      "stack_map_events", out, true);
		ret = ret > 0 ? 0 : ret;
		cond_resched();
	}
	fsm_compat_free_events(&evs);
	return ret;
}

/* Does a negative token name something that exists? */
static int fsm_check_neg(struct fsm_inst *inst, struct fsm_tok *t,
			 const char *who)
{
	struct trace_event_file *file;
	struct fsm_evlock lk;

	if (!t->sys || !t->ev)
		return 0;	/* wildcard removal: whatever it matches */
	file = fsm_compat_event_file_lock(inst->dir, t->sys, t->ev, NULL, &lk);
	if (!file) {
		if (lk.no_enable)
			fsm_warn(who, "%.64s:%.64s cannot be a source (it cannot be enabled: no enable file) (%s)\n",
				 t->sys, t->ev, fsm_inst_label(inst));
		else
			fsm_warn(who, "unknown event %.64s:%.64s (%s)\n",
				 t->sys, t->ev, fsm_inst_label(inst));
		return -EINVAL;
	}
	fsm_compat_event_file_unlock(&lk);
	return 0;
}

/*
 * Under fsm_mutex: compute the new set in token order, attach what is new
 * (if recording), then detach what goes. All or nothing: if a probe cannot
 * be attached, the probes attached so far are detached again and
 * inst->sources is put back exactly as it was (same sources, same order,
 * still attached); so it is, without any attach, when a named event has a
 * stackmap trigger in the instance (-EBUSY). On success, sources that go
 * are on @removed; on failure
 * the new ones are (attached for a moment: the caller synchronises before
 * freeing). Either way the caller frees @removed.
 */
static int fsm_sources_apply_locked(struct fsm_inst *inst, struct fsm_tok *toks,
				    unsigned int nr, unsigned int mode,
				    struct list_head *removed)
{
	const char *who = mode & (FSM_SRC_DEFAULTS | FSM_SRC_PARAM) ?
			  "events=" : "stack_map_events";
	struct fsm_src *cur, *src, *tmp, *other, **saved;
	unsigned int i, nsaved = 0, nleft = 0;
	const char *left = NULL;
	LIST_HEAD(chosen);
	int ret = 0;

	lockdep_assert_held(&fsm_mutex);
	/* the current order, to put it back if an attach fails */
	list_for_each_entry(cur, &inst->sources, list)
		nsaved++;
	saved = kmalloc_array(nsaved ? nsaved : 1, sizeof(*saved), GFP_KERNEL);
	if (!saved)
		return -ENOMEM;
	i = 0;
	list_for_each_entry(cur, &inst->sources, list)
		saved[i++] = cur;

	/*
	 * Walk the tokens in order over two sets: the current sources (kept
	 * or not) and the new ones (chosen or not). Kept current sources stay
	 * on inst->sources; dropped ones move to @removed; chosen new ones to
	 * @chosen. Nothing is attached or detached in this pass.
	 */
	if (mode & FSM_SRC_REPLACE)
		list_splice_init(&inst->sources, removed);
	for (i = 0; i < nr; i++) {
		struct fsm_tok *t = &toks[i];

		/*
		 * never entered: its module went (fsm_src_pending_lock), or
		 * the event or the instance was removed since its resolution
		 * (gone: event_mutex, held here on the trigger path)
		 */
		list_for_each_entry_safe(src, tmp, &t->srcs, list)
			if (src->mod_gone || READ_ONCE(src->gone))
				list_move_tail(&src->list, removed);
		if (t->neg) {
			list_for_each_entry_safe(cur, tmp, &inst->sources, list)
				if (fsm_src_match(t, cur))
					list_move_tail(&cur->list, removed);
			list_for_each_entry_safe(src, tmp, &chosen, list)
				if (fsm_src_match(t, src))
					list_move_tail(&src->list, &t->srcs);
			continue;
		}
		list_for_each_entry_safe(src, tmp, &t->srcs, list) {
			bool dup = false;

			/* a gone source's file may be a new event's address */
			list_for_each_entry(cur, &inst->sources, list)
				dup |= cur->file == src->file && !cur->gone;
			list_for_each_entry(other, &chosen, list)
				dup |= other->file == src->file;
			if (dup)
				continue;
			/*
			 * One id record per record: an event with a stackmap
			 * trigger here is not a source too. Named: refused;
			 * matched by a pattern (or a default): left out, said
			 * once the write is applied (a replay says nothing:
			 * it takes the event when the trigger goes, see
			 * fsm_trig_free()). event_mutex is held
			 * (fsm_event_lock()), under which triggers come and go.
			 */
			if (fsm_inst_has_trig(inst, src->file)) {
				if (t->sys && t->ev &&
				    !(mode & (FSM_SRC_FOLLOW | FSM_SRC_DEFAULTS))) {
					fsm_warn(who, "%s has a stackmap trigger in %s: remove it first (one id record per record)\n",
						 src->name, fsm_inst_label(inst));
					ret = -EBUSY;
					goto rollback;
				}
				if (!nleft++)
					left = src->name;
				list_move_tail(&src->list, removed);
				continue;
			}
			/* re-adding one dropped earlier: take it back */
			list_for_each_entry(cur, removed, list) {
				if (cur->file == src->file && !cur->gone &&
				    !cur->mod_gone) {
					list_move_tail(&cur->list, &inst->sources);
					dup = true;
					break;
				}
			}
			if (!dup)
				list_move_tail(&src->list, &chosen);
		}
	}

	/* What comes: attach first, while nothing was detached yet. */
	if (inst->file) {
		list_for_each_entry(src, &chosen, list) {
			ret = fsm_src_attach_locked(src);
			if (ret)
				break;
		}
	}
rollback:
	if (ret) {
		/* roll back: detach the new ones, restore the old list */
		list_for_each_entry(src, &chosen, list)
			fsm_src_detach_locked(src);
		list_splice_tail_init(&inst->sources, removed);
		for (i = 0; i < nsaved; i++)
			list_move_tail(&saved[i]->list, &inst->sources);
		list_splice_tail_init(&chosen, removed);
		kfree(saved);
		return ret;
	}
	kfree(saved);

	/* What goes: detach now, free after the caller synchronised. */
	list_for_each_entry(cur, removed, list)
		fsm_src_detach_locked(cur);
	list_for_each_entry_safe(src, tmp, &chosen, list) {
		list_move_tail(&src->list, &inst->sources);
		/* entered: from now on the module notifier protects it */
		fsm_src_unpend(src);
		if (mode & FSM_SRC_FOLLOW)
			pr_info_ratelimited("%s: source event %s added: the chosen patterns match it (it appeared, or its stackmap trigger went)\n",
					    fsm_inst_label(inst), src->name);
	}
	if (!(mode & FSM_SRC_FOLLOW))
		inst->sources_set = true;
	/* @left is freed by the caller, after this */
	if (nleft && !(mode & FSM_SRC_FOLLOW))
		pr_info("%s: %s%s left out of the sources: %s a stackmap trigger (the patterns take %s when it goes)\n",
			fsm_inst_label(inst), left,
			nleft > 1 ? " and other events" : "",
			nleft > 1 ? "they have" : "it has",
			nleft > 1 ? "each" : "it");
	return 0;
}

static int fsm_sources_do(struct fsm_inst *inst, const char *text,
			  unsigned int mode, u32 seq);

/**
 * fsm_sources_update - change the source events of an instance.
 * @inst: instance
 * @text: tokens (see the file comment)
 * @mode: FSM_SRC_REPLACE: @text replaces the set (O_TRUNC writes, events=);
 *        FSM_SRC_DEFAULTS: install only if nothing was chosen yet, skip
 *        unknown events with a warning (defaults of new instances);
 *        FSM_SRC_PARAM: messages name the events= parameter
 *
 * Resolution happens without fsm_mutex (it takes event_mutex); the new set
 * is then computed and attached under fsm_mutex. Either the whole text
 * applies or nothing does: on any error the set (and which of its probes
 * are attached) is exactly what it was before the call.
 * Context: task, may sleep; must not hold fsm_mutex.
 * Return: 0, -EINVAL (syntax, unknown event, event without a tracepoint;
 * one dmesg line says which), -EBUSY (a named event has a stackmap trigger
 * in the instance; one line), -ENODEV (instance gone), -ENOMEM, or the
 * error of attaching a probe.
 */
int fsm_sources_update(struct fsm_inst *inst, const char *text,
		       unsigned int mode)
{
	return fsm_sources_do(inst, text, mode & ~FSM_SRC_FOLLOW, 0);
}

/*
 * fsm_sources_update(), and the replay of the standing patterns @text
 * (FSM_SRC_FOLLOW) that were at sequence number @seq: applied only if
 * they are still the instance's patterns.
 */
static int fsm_sources_do(struct fsm_inst *inst, const char *text,
			  unsigned int mode, u32 seq)
{
	const char *who = mode & (FSM_SRC_DEFAULTS | FSM_SRC_PARAM) ?
			  "events=" : "stack_map_events";
	bool follow = mode & FSM_SRC_FOLLOW, elocked;
	struct fsm_tok *toks = NULL, *add;
	unsigned int nr = 0, max, i;
	char *buf, *p, *tok, *pat;
	LIST_HEAD(removed);
	int ret = 0, kicks;

	/* see fsm_sources_follow_kick(): before any lookup */
	kicks = atomic_read_acquire(&fsm_follow_kicks);

	if (strlen(text) > FSM_SRC_TEXT_MAX) {
		fsm_warn(who, "text longer than %d bytes\n", FSM_SRC_TEXT_MAX);
		return -EINVAL;
	}
	buf = kstrdup(text, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	max = strlen(buf) / 2 + 1;
	/* one more: what a replay adds */
	toks = kcalloc(max + 1, sizeof(*toks), GFP_KERNEL);
	if (!toks) {
		kfree(buf);
		return -ENOMEM;
	}
	add = &toks[max];
	INIT_LIST_HEAD(&add->srcs);

	p = buf;
	while ((tok = strsep(&p, " \t\n\r,")) && nr < max) {
		struct fsm_tok *t = &toks[nr];

		if (!*tok)
			continue;
		/* a slot given back by a skipped default token is reused */
		memset(t, 0, sizeof(*t));
		INIT_LIST_HEAD(&t->srcs);
		nr++;
		if (fsm_tok_parse(tok, t)) {
			fsm_warn(who, "bad syntax '%.64s'\n", tok);
			ret = -EINVAL;
			break;
		}
		if (follow)
			continue;	/* decided by name, in one walk below */
		if (t->neg)
			ret = fsm_check_neg(inst, t, who);
		else if (t->sys && t->ev)
			ret = fsm_resolve_one(inst, t->sys, t->ev, NULL, true,
					      who, &t->srcs, false);
		else
			ret = fsm_resolve_wild(inst, t, who);
		ret = ret > 0 ? 0 : ret;
		if (ret && (mode & FSM_SRC_DEFAULTS) && ret != -ENODEV &&
		    ret != -ENOMEM) {
			/*
			 * defaults of a new instance: skip what is missing; the
			 * token stays, with nothing resolved, so that a wildcard
			 * still stands (fsm_pat_join())
			 */
			fsm_sources_free(&t->srcs);
			ret = 0;
			continue;
		}
		if (ret)
			break;
	}
	if (!ret && follow)
		ret = fsm_resolve_follow(inst, toks, nr, &add->srcs);
	if (ret)
		goto out;

	/* event_mutex: the trigger path links trigger data (tracing.h order) */
	elocked = fsm_event_lock();
	mutex_lock(&fsm_mutex);
	pat = NULL;
	if (!fsm_inst_alive(inst) || fsm_shutting_down) {
		ret = -ENODEV;
	} else if ((mode & FSM_SRC_DEFAULTS) && inst->sources_set) {
		ret = 0;	/* chosen explicitly meanwhile: keep that */
	} else if (follow) {
		/* the patterns changed since the copy: replay the new ones */
		if (inst->src_pat_seq != seq)
			ret = -EAGAIN;
		else
			ret = fsm_sources_apply_locked(inst, add, 1, mode,
						       &removed);
	} else {
		pat = fsm_pat_join(mode & FSM_SRC_REPLACE ? NULL : inst->src_pat,
				   toks, nr, who);
		ret = IS_ERR(pat) ? PTR_ERR(pat) :
		      fsm_sources_apply_locked(inst, toks, nr, mode, &removed);
		if (!ret) {
			swap(pat, inst->src_pat);
			inst->src_pat_seq++;
		}
	}
	mutex_unlock(&fsm_mutex);
	fsm_event_unlock(elocked);
	if (!IS_ERR(pat))
		kfree(pat);
	/*
	 * An event made while this write resolved may have been missed by
	 * the lookups, and by a replay that saw the patterns before this
	 * commit: replay once more (see fsm_sources_follow_kick()).
	 */
	smp_mb();	/* the commit above before the read below */
	if (!follow && !ret && atomic_read(&fsm_follow_kicks) != kicks)
		fsm_sources_follow_kick();

	if (!list_empty(&removed)) {
		/* detached: wait for probes still running on them */
		tracepoint_synchronize_unregister();
		fsm_sources_free(&removed);
	}
out:
	for (i = 0; i < nr; i++)
		fsm_sources_free(&toks[i].srcs);
	fsm_sources_free(&add->srcs);
	kfree(toks);
	kfree(buf);
	return ret;
}

struct fsm_prefix {
	bool colon;		/* "sys:pfx": pfx is an event prefix */
	const char *sys;	/* with colon: NULL = any system */
	const char *pfx;	/* prefix of an event (or system) name */
	bool found;
};

static bool fsm_prefix_ev(const char *sys, const char *name, void *arg)
{
	struct fsm_prefix *p = arg;

	if (!strncmp(name, p->pfx, strlen(p->pfx)))
		p->found = true;
	return false;	/* collect nothing */
}

static bool fsm_prefix_sys(const char *name, void *arg)
{
	struct fsm_prefix *p = arg;

	if (p->found)
		return false;	/* decided: look no further */
	if (p->colon)
		return !p->sys || !strcmp(name, p->sys);
	if (!strncmp(name, p->pfx, strlen(p->pfx)))
		p->found = true;
	return true;
}

/* "sys:event" exactly: the system, then the event, found (collects nothing) */
static bool fsm_exact_sys(const char *name, void *arg)
{
	const struct fsm_prefix *p = arg;

	return !p->found && !strcmp(name, p->sys);
}

static bool fsm_exact_ev(const char *sys, const char *name, void *arg)
{
	struct fsm_prefix *p = arg;

	if (!strcmp(name, p->pfx))
		p->found = true;
	return false;
}

/**
 * fsm_sources_classify - what is this unfinished token?
 * @inst: instance
 * @tok:  the last token of a write, not ended by a separator
 *
 * Return: FSM_TOK_EVENT if it names an existing event exactly ("sys:event",
 * apply it now), FSM_TOK_PREFIX if more text could still make it valid ("!"
 * alone, a prefix of a system name, "sys:" and a prefix of an event of that
 * system, "sched" which could become "sched:..."), FSM_TOK_BAD otherwise.
 * Context: task, may sleep.
 */
int fsm_sources_classify(struct fsm_inst *inst, const char *tok)
{
	struct fsm_prefix p = {};
	struct fsm_event_filter filter = { .arg = &p };
	int ret = FSM_TOK_BAD;
	LIST_HEAD(none);
	char *copy, *colon;

	if (*tok == '!')
		tok++;
	if (!*tok)
		return FSM_TOK_PREFIX;
	copy = kstrdup(tok, GFP_KERNEL);
	if (!copy)
		goto out;
	colon = strchr(copy, ':');
	if (colon) {
		*colon = '\0';
		p.colon = true;
		p.sys = *copy && strcmp(copy, "*") ? copy : NULL;
		p.pfx = colon + 1;
		if (strchr(p.pfx, ':'))
			goto out;
		if (p.sys && *p.pfx && strcmp(p.pfx, "*")) {
			filter.sys = fsm_exact_sys;
			filter.ev = fsm_exact_ev;
			fsm_compat_list_events(inst->dir, &filter, &none);
			fsm_compat_free_events(&none);	/* empty */
			if (p.found) {
				ret = FSM_TOK_EVENT;
				goto out;
			}
		}
	} else {
		p.pfx = copy;
	}
	/*
	 * systems (and, without a colon, system names as prefixes), then
	 * events; the filters record a match and collect nothing
	 */
	filter.sys = fsm_prefix_sys;
	filter.ev = fsm_prefix_ev;
	fsm_compat_list_events(inst->dir, &filter, &none);
	fsm_compat_free_events(&none);	/* empty */
	if (p.found)
		ret = FSM_TOK_PREFIX;
out:
	kfree(copy);
	return ret;
}

/**
 * fsm_sources_show - list the chosen source events, one "sys:event" a line.
 * @m:    seq_file
 * @inst: instance
 *
 * Context: task; takes fsm_mutex. Return: 0.
 */
int fsm_sources_show(struct seq_file *m, struct fsm_inst *inst)
{
	struct fsm_src *src;

	mutex_lock(&fsm_mutex);
	list_for_each_entry(src, &inst->sources, list)
		seq_printf(m, "%s\n", src->name);
	mutex_unlock(&fsm_mutex);
	return 0;
}

/*
 * A module with source events goes away: drop its sources everywhere
 * before the trace events' notifier frees the event files and the
 * tracepoints. Context: task (module notifier chain).
 */
static int fsm_module_notify(struct notifier_block *nb, unsigned long state,
			     void *data)
{
	struct module *mod = data;
	struct fsm_src *src, *tmp;
	bool elocked;
	struct fsm_inst *inst;
	unsigned long idx;
	LIST_HEAD(removed);

	if (state == MODULE_STATE_LIVE && mod->num_trace_events)
		fsm_sources_follow_kick();	/* its events exist now */
	if (state != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	elocked = fsm_event_lock();
	mutex_lock(&fsm_mutex);
	/* resolved, not entered: see fsm_src_pending_lock */
	spin_lock(&fsm_src_pending_lock);
	list_for_each_entry_safe(src, tmp, &fsm_src_pending, pending) {
		if (src->mod != mod)
			continue;
		list_del_init(&src->pending);
		src->mod_gone = true;
		if (src->modref)
			module_put(mod);
		src->modref = false;
	}
	/* every source of the module: its files go (trigger path hooks) */
	list_for_each_entry(src, &fsm_src_all, all)
		if (src->mod == mod && !src->gone)
			WRITE_ONCE(src->gone, FSM_SRC_GONE_MOD);
	spin_unlock(&fsm_src_pending_lock);
	xa_for_each(&fsm_insts, idx, inst) {
		list_for_each_entry_safe(src, tmp, &inst->sources, list) {
			if (src->mod != mod)
				continue;
			fsm_src_detach_locked(src);
			list_move_tail(&src->list, &removed);
			pr_info("%s: source event %s dropped: module %s unloads\n",
				fsm_inst_label(inst), src->name, mod->name);
		}
	}
	mutex_unlock(&fsm_mutex);
	fsm_event_unlock(elocked);
	if (!list_empty(&removed)) {
		tracepoint_synchronize_unregister();
		fsm_sources_free(&removed);
	}
	return NOTIFY_DONE;
}

/*
 * Replay the standing patterns of every instance that has some (see
 * "Patterns that follow" at the top). Instances are visited by id, one
 * reference at a time; one made meanwhile resolved its patterns itself.
 * Context: task (system workqueue).
 */
static void fsm_sources_follow_fn(struct work_struct *work)
{
	unsigned long idx, start = 0;
	struct fsm_inst *inst;
	unsigned int tries;
	char *pat;
	u32 seq;
	int ret;

	for (;;) {
		bool found = false;

		mutex_lock(&fsm_mutex);
		if (fsm_shutting_down) {
			mutex_unlock(&fsm_mutex);
			return;
		}
		xa_for_each_start(&fsm_insts, idx, inst, start) {
			if (inst->src_pat && fsm_inst_alive(inst)) {
				found = true;
				break;
			}
		}
		mutex_unlock(&fsm_mutex);
		if (!found)
			return;
		start = idx + 1;
		inst = fsm_inst_get_by_id(idx);
		if (!inst)
			continue;
		for (tries = 0; ; tries++) {
			mutex_lock(&fsm_mutex);
			pat = inst->src_pat ? kstrdup(inst->src_pat, GFP_KERNEL) :
			      NULL;
			seq = inst->src_pat_seq;
			mutex_unlock(&fsm_mutex);
			ret = pat ? fsm_sources_do(inst, pat, FSM_SRC_FOLLOW, seq) :
			      0;
			kfree(pat);
			/* a write changed the patterns meanwhile: theirs */
			if (ret != -EAGAIN)
				break;
			if (tries == 3) {
				fsm_sources_follow_kick();	/* later */
				break;
			}
		}
		if (ret && ret != -ENODEV && ret != -EAGAIN)
			pr_warn_ratelimited("%s: new events not checked against the chosen patterns (%d)\n",
					    fsm_inst_label(inst), ret);
		fsm_inst_put(inst);
		cond_resched();
	}
}

/**
 * fsm_sources_follow_kick - events appeared: replay the standing patterns.
 *
 * The count pairs with the one a write reads before its lookups and again
 * after its commit (fsm_sources_do()), in the store-buffering pattern: the
 * kick stores the count then the work reads the patterns (fully ordered
 * increment; the work runs after it is queued); the write stores the
 * patterns (its commit) then reads the count (smp_mb()). One of the two
 * sees the other: the work replays the new patterns, or the write kicks
 * again. The event's files exist before the kick (it comes after
 * trace_add_event_call() or a module's COMING notifier), so a write whose
 * first read already sees the count also sees the event in its lookups.
 * Context: any (a kretprobe handler, the module notifier).
 */
void fsm_sources_follow_kick(void)
{
	atomic_inc_return(&fsm_follow_kicks);
	schedule_work(&fsm_sources_follow_work);
}

/**
 * fsm_sources_follow_stop - no replay from now on (rmmod).
 *
 * A replay resolves events and takes references on their modules: it
 * must end while the module notifier still guards them (a COMING module
 * whose init fails is freed whatever its count, see fsm_src_pending_lock).
 * Context: task, fsm_shutting_down set (the work does nothing any more).
 */
void fsm_sources_follow_stop(void)
{
	cancel_work_sync(&fsm_sources_follow_work);
}

static struct notifier_block fsm_module_nb = {
	.notifier_call = fsm_module_notify,
	.priority = 2,	/* before trace events (1) and tracepoints (0) */
};

static bool fsm_module_nb_registered;

/**
 * fsm_sources_init - watch modules that own source events.
 * Context: task (module init). Return: 0 or -errno.
 */
int fsm_sources_init(void)
{
	int ret = register_module_notifier(&fsm_module_nb);

	fsm_module_nb_registered = !ret;
	return ret;
}

/**
 * fsm_sources_exit - stop watching modules.
 * Context: task (module exit).
 */
void fsm_sources_exit(void)
{
	if (fsm_module_nb_registered)
		unregister_module_notifier(&fsm_module_nb);
	fsm_module_nb_registered = false;
	/* the removal hooks are gone (fsm_src_trig_exit()): nothing requeues */
	fsm_src_attach_exit();
	/* nor the creation hook and the notifier: the last replay */
	cancel_work_sync(&fsm_sources_follow_work);
}
