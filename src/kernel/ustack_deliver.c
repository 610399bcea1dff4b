// SPDX-License-Identifier: GPL-2.0
/*
 * ustack_deliver.c - deferred user stacks: the records and what controls
 * them (overview in ustack.c).
 *
 * Delivery (the walk work of the task, ustack_work.c): every instance of
 * the delivery mask gets the file_map records its stack needs and one
 * user_stack record, from the entry's walk buffer (struct fsm_ust_stack).
 *
 * Deduplication: each instance that asked inserts the stack, keyed by the
 * address space (fsm_ust_mm_key()) and the frames, into its user stack map
 * (inst->umap, the core map of src/core, allocated when options/
 * stackmap_user is turned on). The user_stack record carries the id, and
 * the frames only the first time the id appears in the instance's current
 * recording (FSM_INSERT_FIRST_EMIT with the instance's user epoch), or
 * with FSM_USF_FALLBACK when no id can be had.
 *
 * Also here: the events' .reg (the tracepoints never fire: records are
 * written by the task works), options/stackmap_user, and the user-stack
 * lines of stack_map_stat.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/irq_work.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/trace_events.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "tracing.h"
#include "ustack_internal.h"

static int fsm_ust_reg(struct trace_event_call *call, enum trace_reg type,
		       void *data);
#define trace_event_reg fsm_ust_reg
#define CREATE_TRACE_POINTS
#include <ftrace_stackmap/ustack_events.h>
#undef trace_event_reg

struct fsm_ust_inst fsm_ust_insts[FSM_UST_MAX_INST];
/* options/stackmap_user bits; plain flags read by the probe */
u64 fsm_ust_on;


static const char * const fsm_ust_stat_names[] = {
	[FSM_UST_REQUESTS] = "user_requests",
	[FSM_UST_QUEUED] = "user_walks_queued",
	[FSM_UST_REUSES] = "user_cache_reuses",
	[FSM_UST_LATE] = "user_late_emits",
	[FSM_UST_REFUSED] = "user_refused",
	[FSM_UST_NO_SLOT] = "user_no_slot",
	[FSM_UST_BUSY] = "user_busy_drops",
	[FSM_UST_DELIVERED] = "user_stacks",
	[FSM_UST_LOST] = "user_stacks_lost",
	[FSM_UST_EMPTY] = "user_stacks_empty",
	[FSM_UST_INLINE] = "user_inline_emits",
	[FSM_UST_FALLBACK] = "user_fallbacks",
	[FSM_UST_INLINE_LOST] = "user_inline_lost",
	[FSM_UST_QUEUE_FAILED] = "user_queue_failed",
	[FSM_UST_SAME_REGS] = "user_same_regs_refused",
	[FSM_UST_SELF] = "user_self_refused",
	[FSM_UST_REDEFS] = "user_redefinitions",
	[FSM_UST_FILE_REDEFS] = "file_map_redefinitions",
};
static_assert(ARRAY_SIZE(fsm_ust_stat_names) == FSM_UST_NR_STATS);

static const char * const fsm_urs_names[] = {
	[FSM_URS_WALKED] = "walked",
	[FSM_URS_EXITING] = "exiting",
	[FSM_URS_EXEC] = "exec",
	[FSM_URS_NO_MM] = "no_mm",
	[FSM_URS_FIRST_FAULT] = "first_fault",
	[FSM_URS_NOMEM] = "nomem",
	[FSM_URS_SEGMENTS] = "segments",
};
static_assert(ARRAY_SIZE(fsm_urs_names) == FSM_URS_NR);

/* ---- writing records ---- */

static bool fsm_ust_write_file_map(void *ctx, u64 id, const char *path,
				   const u8 *bid, u32 bid_len)
{
	u32 inst = (u32)(unsigned long)ctx;
	struct trace_event_raw_file_map *entry;
	struct trace_event_buffer fbuffer;
	struct trace_event_file *file;
	u32 plen = strlen(path) + 1;
	u32 off = sizeof(*entry);
	bool ok = false;

	preempt_disable_notrace();
	file = READ_ONCE(fsm_ust_insts[inst].fm_file);
	if (!file || trace_trigger_soft_disabled(file))
		goto out;
	entry = trace_event_buffer_reserve(&fbuffer, file,
					   sizeof(*entry) + plen + bid_len);
	if (!entry)
		goto out;
	entry->file_id = id;
	entry->inst = inst;
	/* __data_loc: length in the high 16 bits, offset from the entry start */
	entry->__data_loc_path = (plen << 16) | off;
	memcpy((char *)entry + off, path, plen);
	entry->__data_loc_build_id = (bid_len << 16) | (off + plen);
	memcpy((char *)entry + off + plen, bid, bid_len);
	trace_event_buffer_commit(&fbuffer);
	ok = true;
out:
	preempt_enable_notrace();
	return ok;
}

/* What one user_stack record says (ustack_abi.h). */
struct fsm_ust_rec {
	u64 cookie;
	u32 id;
	u32 gen;
	u16 flags;
	u8 reason;
	u8 stop;
	u8 id_reason;
	u32 nr;			/* frame pairs in @frames */
	const u64 *frames;
};

/*
 * Write one user_stack record into an instance; with @in, *@pos gets the
 * record's position in this CPU's buffer (fsm_rb_position()).
 * Context: task, preemption disabled. Return: true if committed; false if
 * the event is off there or the ring buffer refused it (counted as lost).
 */
static bool fsm_ust_write_user_stack(u32 inst, const struct fsm_ust_rec *r,
				     struct fsm_inst *in, struct fsm_rb_pos *pos)
{
	struct trace_event_raw_user_stack *entry;
	struct trace_event_buffer fbuffer;
	struct trace_event_file *file;
	u32 len = 2 * r->nr * sizeof(u64);

	/*
	 * Lost too: user_stack turned off (or soft disabled) since the
	 * delivery began, after its id lookup: every lookup is then a record
	 * written or a record lost (stack_map_stat's counts add up).
	 */
	file = READ_ONCE(fsm_ust_insts[inst].us_file);
	if (!file || trace_trigger_soft_disabled(file)) {
		fsm_ust_count(inst, FSM_UST_LOST);
		return false;
	}
	entry = trace_event_buffer_reserve(&fbuffer, file, sizeof(*entry) + len);
	if (!entry) {
		fsm_ust_count(inst, FSM_UST_LOST);
		return false;
	}
	entry->cookie = r->cookie;
	entry->ustack_id = r->id;
	entry->gen = r->gen;
	entry->inst = inst;
	entry->nr = r->nr;
	entry->flags = r->flags;
	entry->reason = r->reason;
	entry->stop = r->stop;
	entry->id_reason = r->id_reason;
	entry->__data_loc_frames = (len << 16) |
				   offsetof(struct trace_event_raw_user_stack, __data);
	memcpy(entry->__data, r->frames, len);
	trace_event_buffer_commit(&fbuffer);
	if (in)
		fsm_rb_position(fbuffer.buffer, in, pos);
	return true;
}

/*
 * The id of the entry's stack (@nr frames of it) in an instance's user map.
 * Fills @r's id, gen, flags (NEW, INLINE, FALLBACK) and id_reason.
 * Context: the walk work, preemption disabled (a reset waits for
 * inserters: keep this short and unpreempted).
 */
static void fsm_ust_get_id(const struct fsm_ust_stack *stk, struct fsm_inst *inst,
			   u32 nr, u32 epoch, struct fsm_ust_rec *r)
{
	struct fsm_insert_result res;
	struct fsm_map *umap;
	int ret;

	/* Pairs with smp_store_release() in fsm_ust_umap_alloc(). */
	umap = inst ? smp_load_acquire(&inst->umap) : NULL;
	if (!umap) {
		r->flags |= FSM_USF_FALLBACK;
		r->id_reason = FSM_UIR_NO_MAP;
		return;
	}
	/* the meta word (ustack_ukey.c) has the record's truncated flag */
	ret = fsm_map_insert(umap, stk->words, FSM_UKEY_HDR + 2 * nr, epoch,
			     &res);
	if (!ret) {
		r->id = res.id;
		r->gen = res.generation;
		if (res.flags & FSM_INSERT_NEW)
			r->flags |= FSM_USF_NEW;
		if (res.flags & FSM_INSERT_FIRST_EMIT)
			r->flags |= FSM_USF_INLINE;
	} else {
		/* no id: the record carries the frames, never lost silently */
		r->gen = READ_ONCE(inst->ugen);
		r->flags |= FSM_USF_FALLBACK;
		r->id_reason = -ret;
	}
}

/*
 * The file_map records of a stack's files that this CPU's buffer may
 * overwrite before the stack: written again after it (fsm_fileid_claim()).
 * @wrote: files written before the record in this delivery (first use):
 * stamped @nrec records back instead. Context: as fsm_ust_redefine().
 */
static void fsm_ust_refile(struct fsm_inst *inst, const u64 *frames, u32 nr,
			   const struct fsm_rb_pos *pos, const u64 *wrote,
			   u32 nwrote, u32 nrec)
{
	u32 iid = inst->id, i, k;

	for (i = 0; i < nr; i++) {
		u64 id = frames[2 * i];
		bool first = false;

		if (!id || (i && frames[2 * i - 2] == id))
			continue;
		for (k = 0; k < nwrote; k++)
			first |= wrote[k] == id;
		if (first) {
			(void)fsm_fileid_claim(id, inst->seq, pos->now - nrec, 0);
			continue;
		}
		if (!fsm_fileid_claim(id, inst->seq, pos->now, pos->fresh))
			continue;
		if (fsm_fileid_write(id, fsm_ust_write_file_map,
				     (void *)(unsigned long)iid))
			fsm_ust_count(iid, FSM_UST_FILE_REDEFS);
		else
			fsm_fileid_unclaim(id, inst->seq, pos->now);
	}
}

/* What fsm_ust_sweep_def() writes with. */
struct fsm_ust_sweep_ctx {
	struct fsm_inst *inst;
	const struct fsm_rb_pos *pos;
};

/*
 * fsm_def_fn of fsm_map_def_sweep() on the user map: the frames of a user
 * stack id again (a definition-only user_stack record), and the file_map
 * records of its files that are due. @w: the map's key words (ustack.h,
 * FSM_UKEY_*). Context: as fsm_ust_redefine(), inside the map's insert
 * window.
 */
static int fsm_ust_sweep_def(void *ctx, unsigned int id, unsigned int gen,
			     const unsigned long long *w, unsigned int nw)
{
	struct fsm_ust_sweep_ctx *sc = ctx;
	u64 meta = w[FSM_UKEY_META];
	struct fsm_ust_rec d = {
		.id = id,
		.gen = gen,
		.flags = (FSM_UKEY_META_FLAGS(meta) &
			  (FSM_USF_IA32 | FSM_USF_TRUNCATED | FSM_USF_UNRELIABLE)) |
			 FSM_USF_INLINE | FSM_USF_REDEF,
		.stop = FSM_UKEY_META_STOP(meta),
		.nr = nw > FSM_UKEY_HDR ? (nw - FSM_UKEY_HDR) / 2 : 0,
		.frames = &w[FSM_UKEY_HDR],
	};

	if (!fsm_ust_write_user_stack(sc->inst->id, &d, NULL, NULL))
		return 0;
	fsm_ust_count(sc->inst->id, FSM_UST_REDEFS);
	fsm_ust_refile(sc->inst, d.frames, d.nr, sc->pos, NULL, 0, 0);
	return 1;
}

/* Most files of one delivery whose first-use file_map is remembered. */
#define FSM_UST_WROTE_FILES	8

/*
 * After the user_stack record of a delivery (at position @pos of this
 * CPU's buffer): write again, after it, the definitions that this CPU's
 * buffer may overwrite before the stack's later uses: the stack's frames
 * (a user_stack record with cookie 0, FSM_USF_INLINE | FSM_USF_REDEF) and
 * the file_map records of its files, each when this CPU's last one is a
 * horizon behind (fsm_map_def_claim(), fsm_fileid_claim()); then the
 * sweep of the user map (fsm_map_def_sweep(): the ids used since their
 * last definition here). @wrote: the files whose file_map the delivery
 * wrote before the record (first use in the recording): they are stamped
 * @nrec records back, the records this delivery wrote before the position
 * was read, so no stamp is ahead of its record. Context: task work,
 * preemption disabled since before the first record of the delivery (one
 * CPU, one buffer).
 */
static void fsm_ust_redefine(struct fsm_inst *inst, const struct fsm_ust_rec *r,
			     u32 nr, const struct fsm_rb_pos *pos,
			     const u64 *wrote, u32 nwrote, u32 nrec)
{
	u32 iid = inst->id;
	struct fsm_map *umap;

	if (!pos->horizon)
		return;
	/* Pairs with smp_store_release() in fsm_ust_umap_alloc(). */
	umap = smp_load_acquire(&inst->umap);
	if (umap && r->id != FSM_USTACK_ID_NONE && r->gen == READ_ONCE(inst->ugen)) {
		if (r->flags & FSM_USF_INLINE) {
			/* the record carries the frames: stamp its position */
			(void)fsm_map_def_claim(umap, r->id, r->gen, pos->now, 0);
		} else if (fsm_map_def_claim(umap, r->id, r->gen, pos->now,
					     pos->fresh)) {
			struct fsm_ust_rec d = *r;

			d.cookie = 0;
			d.flags = (r->flags & (FSM_USF_IA32 | FSM_USF_TRUNCATED |
					       FSM_USF_UNRELIABLE)) |
				  FSM_USF_INLINE | FSM_USF_REDEF;
			d.nr = nr;
			if (fsm_ust_write_user_stack(iid, &d, NULL, NULL))
				fsm_ust_count(iid, FSM_UST_REDEFS);
			else
				fsm_map_def_unclaim(umap, r->id, r->gen, pos->now);
		}
	}
	fsm_ust_refile(inst, r->frames, nr, pos, wrote, nwrote, nrec);
	if (umap) {
		struct fsm_ust_sweep_ctx sc = { .inst = inst, .pos = pos };

		fsm_map_def_sweep(umap, pos->now, pos->horizon, fsm_ust_sweep_def, &sc);
	}
}

/*
 * The user map's sweep on a CPU where no user stack is delivered.
 *
 * fsm_ust_redefine() sweeps the user map of the CPU it runs on, at each
 * delivery. A CPU whose records are all kernel ones for a while (idle, a
 * kernel thread, or tasks that asked no user stack) sees none, while its
 * buffer moves on and drops the definitions that the last user stacks
 * delivered there relied on. The capture path (any context, NMI
 * included) cannot write those definitions itself: their file_map records
 * are copied out of the file table under its spinlock. So, when it finds
 * this CPU's user sweep half a round behind (fsm_ustack_sweep_kick(),
 * fsm_map_def_sweep_lag()), it flags the instance in this CPU's sweeper
 * and queues its irq_work, which queues the CPU's work item; the work, in
 * task context on that CPU, runs the sweep as a delivery would, at the
 * last position a record of the module read there (the sweep's ages then
 * err young: nothing is defined that is not due). Half a round is a
 * quarter of a horizon: a definition is then written again at most a
 * horizon and three quarters after the one it replaces (87.5% of the
 * buffer at the default redefine_pct), plus the time to the work; kicking
 * earlier would wake a work item every few records on a quiet CPU of a
 * small buffer (a round of 512 sets per half horizon).
 */
#define FSM_UST_SWEEP_LAG	128	/* 256ths of a round */
/* def_sweep() calls of one catch-up (16 sets each, a round is 512) */
#define FSM_UST_SWEEP_CALLS	64

struct fsm_ust_sweeper {
	struct irq_work iw;
	struct work_struct work;
	atomic64_t pending;	/* instance ids whose sweep is behind here */
};

/*
 * Allocated at init, freed at exit; @fsm_ust_sweep_on says kicks are
 * taken (written at init and exit, read by the kick).
 */
static struct fsm_ust_sweeper __percpu *fsm_ust_sweepers;
static bool fsm_ust_sweep_on;

/* Context: task, on the CPU whose stamps are swept, preemption disabled. */
static void fsm_ust_sweep_here(struct fsm_inst *inst)
{
	struct fsm_inst_pcpu *pc = this_cpu_ptr(inst->pcpu);
	struct fsm_rb_pos pos = {
		.now = (u32)READ_ONCE(pc->rb.last) + READ_ONCE(pc->rb.base),
		.horizon = READ_ONCE(pc->rb.horizon),
	};
	struct fsm_ust_sweep_ctx sc = { .inst = inst, .pos = &pos };
	struct fsm_map *umap;
	unsigned int i;

	/* Pairs with smp_store_release() in fsm_ust_umap_alloc(). */
	umap = smp_load_acquire(&inst->umap);
	if (!umap || !pos.horizon)
		return;
	pos.fresh = fsm_rb_fresh(pos.now, READ_ONCE(pc->rb.floor), pos.horizon);
	for (i = 0; i < FSM_UST_SWEEP_CALLS &&
	     fsm_map_def_sweep_lag(umap, pos.now, pos.horizon); i++)
		fsm_map_def_sweep(umap, pos.now, pos.horizon, fsm_ust_sweep_def, &sc);
}

/* The sweeper's work item. Context: task (system_wq, bound to its CPU). */
static void fsm_ust_sweep_work(struct work_struct *work)
{
	struct fsm_ust_sweeper *s = container_of(work, struct fsm_ust_sweeper, work);
	u64 mask = atomic64_xchg(&s->pending, 0);
	struct fsm_inst *inst;
	unsigned int iid;

	for_each_set_bit(iid, (unsigned long *)&mask, FSM_UST_MAX_INST) {
		inst = fsm_inst_get_by_id(iid);	/* RCU and a kref */
		if (!inst)
			continue;
		preempt_disable_notrace();
		/* a bound work runs elsewhere only once its CPU went offline */
		if (this_cpu_ptr(fsm_ust_sweepers) == s)
			fsm_ust_sweep_here(inst);
		preempt_enable_notrace();
		fsm_inst_put(inst);
	}
}

/* Context: hard interrupt, on the CPU that queued it. */
static void fsm_ust_sweep_irq(struct irq_work *iw)
{
	struct fsm_ust_sweeper *s = container_of(iw, struct fsm_ust_sweeper, iw);

	queue_work_on(smp_processor_id(), system_wq, &s->work);
}

/**
 * fsm_ustack_sweep_kick - have this CPU's user sweep of @inst run in task
 * context if it is behind.
 * @pos: the position of the record the caller just wrote on this CPU
 *
 * For the capture path (record.c), after its own kernel-map sweep: a
 * per-CPU read of the sweep's place, and, once in half a round, an atomic
 * OR and an irq_work (NMI-safe). Nothing when user stacks are off in the
 * instance.
 * Context: any, NMI included, preemption disabled.
 */
void notrace fsm_ustack_sweep_kick(struct fsm_inst *inst,
				   const struct fsm_rb_pos *pos)
{
	struct fsm_ust_sweeper *s;
	struct fsm_map *umap;

	if (inst->id >= FSM_UST_MAX_INST || !pos->horizon ||
	    !READ_ONCE(fsm_ust_sweep_on) || !READ_ONCE(fsm_ust_insts[inst->id].us_file))
		return;
	/* Pairs with smp_store_release() in fsm_ust_umap_alloc(). */
	umap = smp_load_acquire(&inst->umap);
	if (!umap || fsm_map_def_sweep_lag(umap, pos->now, pos->horizon) <
		     FSM_UST_SWEEP_LAG)
		return;
	s = this_cpu_ptr(fsm_ust_sweepers);
	if (!(atomic64_fetch_or(BIT_ULL(inst->id), &s->pending) & BIT_ULL(inst->id)))
		irq_work_queue(&s->iw);
}

/**
 * fsm_ust_sweepers_init - the per-CPU sweepers, taking kicks from now on.
 * Context: task (init). Return: 0 or -ENOMEM.
 */
int fsm_ust_sweepers_init(void)
{
	int cpu;

	fsm_ust_sweepers = alloc_percpu(struct fsm_ust_sweeper);
	if (!fsm_ust_sweepers)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct fsm_ust_sweeper *s = per_cpu_ptr(fsm_ust_sweepers, cpu);

		/* hard: queue_work_on() takes raw locks only (PREEMPT_RT too) */
		s->iw = IRQ_WORK_INIT_HARD(fsm_ust_sweep_irq);
		INIT_WORK(&s->work, fsm_ust_sweep_work);
		atomic64_set(&s->pending, 0);
	}
	/*
	 * Published to the kick, which reads it in any context: no probe of
	 * the module is attached before user stacks are set up (init order).
	 */
	WRITE_ONCE(fsm_ust_sweep_on, true);
	return 0;
}

/**
 * fsm_ust_sweepers_exit - stop the kicks, wait for the sweepers, free
 * them. Kicks run with preemption disabled: after the grace period none
 * is left in flight, then no irq_work or work item can be queued again.
 * Context: task (exit, or a failed init).
 */
void fsm_ust_sweepers_exit(void)
{
	int cpu;

	if (!fsm_ust_sweepers)
		return;
	WRITE_ONCE(fsm_ust_sweep_on, false);
	synchronize_rcu();
	for_each_possible_cpu(cpu) {
		struct fsm_ust_sweeper *s = per_cpu_ptr(fsm_ust_sweepers, cpu);

		irq_work_sync(&s->iw);
		cancel_work_sync(&s->work);
	}
	free_percpu(fsm_ust_sweepers);
	fsm_ust_sweepers = NULL;
}

/* Serve one instance. Context: the walk work. */
static void fsm_ust_deliver_one(const struct fsm_ust_stack *stk, u32 iid,
				u64 cookie, u16 flags)
{
	struct fsm_ust_inst *ui = &fsm_ust_insts[iid];
	u32 epoch = atomic_read(&ui->epoch);
	u32 nr = min_t(u32, stk->nr, FSM_USTACK_MAX_RECORD_FRAMES);
	const u64 *fr = fsm_ust_frames(stk);
	struct fsm_ust_rec r = {
		.cookie = cookie,
		.id = FSM_USTACK_ID_NONE,
		.flags = stk->flags | flags,
		.reason = stk->reason,
		.stop = stk->stop,
		.frames = fr,
	};
	u64 wrote[FSM_UST_WROTE_FILES];
	u32 nwrote = 0, nrec = 0;
	struct fsm_rb_pos pos;
	struct fsm_inst *inst;
	unsigned int i;
	bool ok;

	if (!READ_ONCE(ui->us_file))
		return;		/* user_stack is off here: nothing to write */
	if (nr < stk->nr)
		r.flags |= FSM_USF_TRUNCATED;
	inst = fsm_inst_get_by_id(iid);	/* RCU and a kref: does not sleep */
	/*
	 * One CPU from the first record of the delivery to the last, so that
	 * the positions and stamps of fsm_ust_redefine() are those of the
	 * buffer the records went to.
	 */
	preempt_disable_notrace();
	for (i = 0; i < nr; i++) {
		u64 id = fr[2 * i];

		if (!id || (i && fr[2 * i - 2] == id))
			continue;
		if (fsm_fileid_emit(id, iid, epoch, fsm_ust_write_file_map,
				    (void *)(unsigned long)iid)) {
			nrec++;
			if (nwrote < FSM_UST_WROTE_FILES)
				wrote[nwrote++] = id;
		}
	}
	/* an empty stack has no id: nothing to deduplicate */
	if (nr)
		fsm_ust_get_id(stk, inst, nr, epoch, &r);
	if (r.flags & (FSM_USF_INLINE | FSM_USF_FALLBACK))
		r.nr = nr;
	ok = fsm_ust_write_user_stack(iid, &r, inst, &pos);
	if (ok && inst)
		fsm_ust_redefine(inst, &r, nr, &pos, wrote, nwrote, nrec + 1);
	preempt_enable_notrace();
	if (inst)
		fsm_inst_put(inst);
	if (!ok) {
		if (r.flags & FSM_USF_INLINE) {
			fsm_ust_count(iid, FSM_UST_INLINE_LOST);
			/*
			 * The id's first appearance did not reach the trace:
			 * a new epoch, so that ids (and file_map records) go
			 * out inline once more. One winner per epoch; a plain
			 * value compared by the map, no ordering needed.
			 */
			atomic_cmpxchg(&ui->epoch, epoch, epoch + 1 ? epoch + 1 : 1);
		}
		return;
	}
	fsm_ust_count(iid, FSM_UST_DELIVERED);
	if (!stk->nr)
		fsm_ust_count(iid, FSM_UST_EMPTY);
	if (r.flags & FSM_USF_INLINE)
		fsm_ust_count(iid, FSM_UST_INLINE);
	if (r.flags & FSM_USF_FALLBACK)
		fsm_ust_count(iid, FSM_UST_FALLBACK);
	atomic64_inc(&ui->empty[stk->reason < FSM_URS_NR ? stk->reason : 0]);
}

/* Serve every instance of @mask. Context: the walk work. */
void fsm_ust_deliver(const struct fsm_ust_stack *stk, u64 cookie, u64 mask,
		     u16 flags)
{
	unsigned int inst;

	for_each_set_bit(inst, (unsigned long *)&mask, FSM_UST_MAX_INST)
		fsm_ust_deliver_one(stk, inst, cookie, flags);
}

/**
 * fsm_ustack_write_reset - mark a new user map generation in the trace.
 * @inst: instance whose user map was reset
 * @gen:  the generation that starts
 *
 * A user_stack record with FSM_USF_RESET, no cookie, no stack. Written only
 * while user_stack is enabled in the instance. Context: task.
 */
void fsm_ustack_write_reset(struct fsm_inst *inst, u32 gen)
{
	struct fsm_ust_rec r = {
		.id = FSM_USTACK_ID_NONE,
		.gen = gen,
		.flags = FSM_USF_RESET,
	};

	if (inst->id < FSM_UST_MAX_INST) {
		preempt_disable_notrace();
		fsm_ust_write_user_stack(inst->id, &r, NULL, NULL);
		preempt_enable_notrace();
	}
}

/**
 * fsm_ustack_redefine - user stack ids and file_map records of an instance
 * go out with their definitions again at their next use, as at the start
 * of a recording (a new user epoch; `echo redefine > stack_map`).
 * Context: any. A plain value compared by the map and fileid.c.
 */
void fsm_ustack_redefine(struct fsm_inst *inst)
{
	struct fsm_ust_inst *ui;

	if (inst->id >= FSM_UST_MAX_INST)
		return;
	ui = &fsm_ust_insts[inst->id];
	if (!atomic_inc_return(&ui->epoch))
		atomic_inc(&ui->epoch);	/* 0 means "never inline" */
}

/* ---- the trace file: user frames under each user_stack record ---- */

/*
 * As options/userstacktrace with sym-userobj shows a user stack: one
 * " => " line per frame, innermost first, here as stack_map prints user
 * frames (path+0xoffset, [vdso]+0xoffset, [anon] 0xaddress...). The frames
 * come from the record, or, for a record that carries only its ustack_id,
 * from the instance's user map when the map is still at the record's
 * generation (gen is the full generation: the check is exact); otherwise a
 * marker. Context: any, as the kernel-stack output (events.c): no sleeping
 * lock, map_rwsem only tried.
 */
static struct trace_event_functions fsm_us_funcs;

static void fsm_us_print_frame(struct trace_seq *s, u64 file_id, u64 w)
{
	u64 off = w & FSM_UFR_OFFSET_MASK;

	trace_seq_puts(s, " => ");
	if (w & FSM_UFR_NOVMA)
		trace_seq_printf(s, "[novma] 0x%llx", off);
	else if (w & FSM_UFR_ANON)
		trace_seq_printf(s, "[anon] 0x%llx", off);
	else if (w & FSM_UFR_VDSO)
		trace_seq_printf(s, "[vdso]+0x%llx", off);
	else if (w & FSM_UFR_SPECIAL)
		trace_seq_printf(s, "[special] 0x%llx", off);
	else
		fsm_fileid_trace_seq(s, file_id, off);
	trace_seq_putc(s, '\n');
}

static void fsm_us_print_map(struct trace_iterator *iter, u32 id, u32 gen)
{
	struct trace_seq *s = &iter->seq;
	const unsigned long long *w;
	struct fsm_inst *inst;
	struct fsm_map *umap;
	unsigned int nw, i;

	if (!fsm_output_may_look_up(iter)) {
		trace_seq_puts(s, " => <user stack not shown here: read the trace file>\n");
		return;
	}
	rcu_read_lock();
	inst = fsm_inst_of_tr_rcu(iter->tr);
	if (!inst || !down_read_trylock(&inst->map_rwsem)) {
		trace_seq_puts(s, " => <user stack map busy or gone: stack not shown>\n");
		goto out;
	}
	/* Pairs with smp_store_release() in fsm_ust_umap_alloc(). */
	umap = smp_load_acquire(&inst->umap);
	if (!umap || inst->ugen != gen)
		trace_seq_printf(s, " => <user stack of generation %u not in the map: reset since>\n",
				 gen);
	else if (fsm_map_lookup_id(umap, id, &w, &nw, NULL) || nw < FSM_UKEY_HDR)
		trace_seq_printf(s, " => <ustack_id %u not in the map>\n", id);
	else
		for (i = FSM_UKEY_HDR; i + 1 < nw && fsm_output_room(s, (nw - i) / 2);
		     i += 2)
			fsm_us_print_frame(s, w[i], w[i + 1]);
	up_read(&inst->map_rwsem);
out:
	rcu_read_unlock();
}

static enum print_line_t fsm_us_trace(struct trace_iterator *iter, int flags,
				      struct trace_event *event)
{
	struct trace_event_raw_user_stack *e = (void *)iter->ent;
	const u64 *fr = (void *)e + (e->__data_loc_frames & 0xffff);
	unsigned int i, n = (e->__data_loc_frames >> 16) / (2 * sizeof(u64));
	enum print_line_t ret;

	ret = trace_raw_output_user_stack(iter, flags, event);
	if (ret != TRACE_TYPE_HANDLED)
		return ret;
	if (n) {
		for (i = 0; i < n && fsm_output_room(&iter->seq, n - i); i++)
			fsm_us_print_frame(&iter->seq, fr[2 * i], fr[2 * i + 1]);
	} else if (e->ustack_id != FSM_USTACK_ID_NONE) {
		fsm_us_print_map(iter, e->ustack_id, e->gen);
	}
	return trace_handle_return(&iter->seq);
}

/* ---- events, option, statistics ---- */

/*
 * file_map's line in the trace file: its print format, except that the
 * path is escaped (%pE) so that a file name with a newline cannot forge
 * lines for a reader of the trace. The record itself keeps the path as is.
 */
static struct trace_event_functions fsm_fm_funcs;

static enum print_line_t fsm_fm_trace(struct trace_iterator *iter, int flags,
				      struct trace_event *event)
{
	struct trace_event_raw_file_map *e = (void *)iter->ent;
	const char *path = (void *)e + (e->__data_loc_path & 0xffff);
	unsigned int plen = e->__data_loc_path >> 16;
	const u8 *bid = (void *)e + (e->__data_loc_build_id & 0xffff);
	unsigned int blen = e->__data_loc_build_id >> 16;
	int ret;

	ret = trace_raw_output_prep(iter, event);
	if (ret != TRACE_TYPE_HANDLED)
		return ret;
	trace_seq_printf(&iter->seq, "file_id=0x%llx inst=%u path=%*pE build_id=%s\n",
			 (unsigned long long)e->file_id, e->inst,
			 (int)strnlen(path, plen), path,
			 trace_print_hex_seq(&iter->tmp_seq, bid, blen, false));
	return trace_handle_return(&iter->seq);
}

/*
 * Init: the user-stack events must reach fsm_ust_reg() (the trace_event_reg
 * override above). Return: 0 or -EINVAL (with one dmesg line).
 */
int fsm_ust_events_check(void)
{
	if (event_class_user_stack.reg != fsm_ust_reg ||
	    event_class_file_map.reg != fsm_ust_reg) {
		pr_err("user-stack events are not routed through the module's .reg\n");
		return -EINVAL;
	}
	fsm_set_output(&event_user_stack, &fsm_us_funcs, fsm_us_trace, NULL);
	fsm_set_output(&event_file_map, &fsm_fm_funcs, fsm_fm_trace, NULL);
	return 0;
}

/* Instances refused user stacks for want of an id below FSM_UST_MAX_INST. */
static atomic64_t fsm_ust_no_id_refusals = ATOMIC64_INIT(0);

/*
 * User stacks asked for in an instance whose id is FSM_UST_MAX_INST or
 * more: none was free when it was made (62 live instances, or ids whose
 * old instance still has user-stack requests pending, see
 * fsm_ustack_ids_busy()). Kernel stacks work there as usual.
 */
static void fsm_ust_no_id(struct fsm_inst *inst)
{
	atomic64_inc(&fsm_ust_no_id_refusals);
	pr_warn_ratelimited("%s: no user stacks: instance id %u, they need one below %u (none was free when the instance was made)\n",
			    fsm_inst_label(inst), inst->id, FSM_UST_MAX_INST);
}

static struct fsm_ust_inst *fsm_ust_inst_of_file(struct trace_event_file *file,
						  u32 *id)
{
	struct fsm_inst *inst;

	lockdep_assert_held(&fsm_mutex);
	if (!fsm_ready)
		return ERR_PTR(fsm_shutting_down ? -ENODEV : -EBUSY);
	inst = fsm_inst_find_or_create_locked(file);
	if (IS_ERR(inst))
		return ERR_CAST(inst);
	if (inst->id >= FSM_UST_MAX_INST) {
		fsm_ust_no_id(inst);
		return ERR_PTR(-ENOSPC);
	}
	*id = inst->id;
	return &fsm_ust_insts[inst->id];
}

/*
 * .reg of user_stack and file_map: remember the instance's event file
 * (records are written by the task work, the tracepoints never fire).
 * Context: task, event_mutex held.
 */
static int fsm_ust_reg(struct trace_event_call *call, enum trace_reg type,
		       void *data)
{
	struct trace_event_file *file = data;
	bool us = call == &event_user_stack;
	struct fsm_ust_inst *ui;
	unsigned int i;
	u32 id;

	switch (type) {
	case TRACE_REG_REGISTER:
		mutex_lock(&fsm_mutex);
		ui = fsm_ust_inst_of_file(file, &id);
		if (!IS_ERR(ui)) {
			if (us) {
				/* 0 means "never inline": skip it */
				if (!atomic_inc_return(&ui->epoch))
					atomic_inc(&ui->epoch);
				WRITE_ONCE(ui->us_file, file);
			} else {
				WRITE_ONCE(ui->fm_file, file);
			}
		}
		mutex_unlock(&fsm_mutex);
		return PTR_ERR_OR_ZERO(ui);
	case TRACE_REG_UNREGISTER:
		for (i = 0; i < FSM_UST_MAX_INST; i++) {
			if (us && fsm_ust_insts[i].us_file == file)
				WRITE_ONCE(fsm_ust_insts[i].us_file, NULL);
			if (!us && fsm_ust_insts[i].fm_file == file)
				WRITE_ONCE(fsm_ust_insts[i].fm_file, NULL);
		}
		return 0;
	default:
		return 0;	/* perf and the rest: nothing to do, never fires */
	}
}

static int fsm_ust_set_event(struct fsm_inst *inst, const char *event, bool on)
{
	struct trace_event_file *file;
	int ret;

	file = trace_get_event_file(inst->name, "stackmap", event);
	if (IS_ERR(file))
		return PTR_ERR(file) == -ENOENT ? -ENODEV : PTR_ERR(file);
	if (file->tr != READ_ONCE(inst->tr))
		ret = -ENODEV;
	else
		ret = trace_array_set_clr_event(file->tr, "stackmap", event, on);
	trace_put_event_file(file);
	return ret;
}

/**
 * fsm_ustack_option_open - may options/stackmap_user of @inst be opened?
 * @inst:  the instance (a reference held by the opener)
 * @write: opened for writing
 *
 * An instance without a user-stack id refuses only opens for writing (a
 * line, a counter): reading the option there (cat, grep -r) shows 0 and
 * logs nothing. The open file holds a reference on its instance (nodes.c):
 * the id cannot pass to another instance meanwhile.
 * Context: task. Return: 0 or -ENOSPC.
 */
int fsm_ustack_option_open(struct fsm_inst *inst, bool write)
{
	if (inst->id >= FSM_UST_MAX_INST && write) {
		fsm_ust_no_id(inst);
		return -ENOSPC;
	}
	return 0;
}

/**
 * fsm_ustack_option - is options/stackmap_user set in @inst?
 * @inst: the instance
 *
 * Context: any. Return: the option's value.
 */
bool fsm_ustack_option(const struct fsm_inst *inst)
{
	return inst->id < FSM_UST_MAX_INST &&
	       (READ_ONCE(fsm_ust_on) & BIT_ULL(inst->id));
}

static DEFINE_MUTEX(fsm_ust_opt_mutex);

/*
 * Allocate the instance's user stack map (once; it lives as long as the
 * instance). The map is allocated and zeroed without any lock held, then
 * published under fsm_ust_opt_mutex; of two racing writers the second
 * frees its map. Context: task, no lock held.
 * Return: 0 or -errno (with one dmesg line).
 */
static int fsm_ust_umap_alloc(struct fsm_inst *inst)
{
	struct fsm_map_params p = {
		.bits = fsm_bits,
		.max_depth = FSM_UST_MAP_DEPTH,
		.arena_bytes = (8ULL * FSM_UST_MEAN_WORDS + 16) << fsm_bits,
	};
	struct fsm_map *map;
	u32 gen;

	/* Pairs with the smp_store_release() below. */
	if (smp_load_acquire(&inst->umap))
		return 0;
	/* See fsm_inst::map_alloc_mutex: one allocation, others wait for it. */
	mutex_lock(&inst->map_alloc_mutex);
	if (inst->umap) {
		mutex_unlock(&inst->map_alloc_mutex);
		return 0;
	}
	map = fsm_map_new(&p, fsm_inst_label(inst), "user stack map", &gen);
	if (IS_ERR(map)) {
		mutex_unlock(&inst->map_alloc_mutex);
		return PTR_ERR(map);
	}
	mutex_lock(&fsm_ust_opt_mutex);
	inst->ugen = gen;
	/* Pairs with smp_load_acquire() above, in fsm_ust_get_id() and nodes_map.c. */
	smp_store_release(&inst->umap, map);
	mutex_unlock(&fsm_ust_opt_mutex);
	mutex_unlock(&inst->map_alloc_mutex);
	return 0;
}

/**
 * fsm_ustack_set_option - set or clear options/stackmap_user of @inst.
 * @inst: the instance (a reference held: an open option file)
 * @on:   1: stack_id records of this instance carry cookies, and
 *        user_stack and file_map are enabled in it. 0: the reverse.
 *
 * Context: task, no lock held. Return: 0 or -errno.
 */
int fsm_ustack_set_option(struct fsm_inst *inst, bool on)
{
	u32 id = inst->id;
	int ret;

	if (!fsm_inst_alive(inst))
		return -ENODEV;
	if (on) {
		ret = fsm_ust_umap_alloc(inst);
		if (ret)
			return ret;
	}
	ret = fsm_ust_set_event(inst, "file_map", on);
	if (!ret)
		ret = fsm_ust_set_event(inst, "user_stack", on);
	mutex_lock(&fsm_ust_opt_mutex);
	/*
	 * A removed instance's bit must not be turned on: the reaper
	 * (lifecycle.c) marks it dead, then turns the bit off
	 * (fsm_ustack_id_retire(), under this mutex), and the id must not
	 * reach a later owner set. A test here after that retire sees the
	 * instance dead (the mutex orders it after the mark); one before it
	 * is undone by it.
	 */
	if (!ret && on && fsm_inst_alive(inst))
		WRITE_ONCE(fsm_ust_on, fsm_ust_on | BIT_ULL(id));
	else if (!on)
		WRITE_ONCE(fsm_ust_on, fsm_ust_on & ~BIT_ULL(id));
	mutex_unlock(&fsm_ust_opt_mutex);
	return ret;
}

/**
 * fsm_ustack_id_retire - an instance id leaves use (lifecycle.c).
 * @id: the id (< FSM_UST_MAX_INST) of an instance that is gone: marked
 *      dead and erased from fsm_insts, its probes detached
 *      (nodes may still be open; their writes see it dead)
 *
 * Turns the id's option bit off, so that a later owner starts without
 * user stacks. What may still refer to the id is what
 * fsm_ustack_ids_busy() reports: before lifecycle.c gives a retired id
 * out again it finds no bit of it there, then calls fsm_ustack_id_reset().
 * Context: task, may sleep.
 */
void fsm_ustack_id_retire(u32 id)
{
	if (id >= FSM_UST_MAX_INST)
		return;
	mutex_lock(&fsm_ust_opt_mutex);
	WRITE_ONCE(fsm_ust_on, fsm_ust_on & ~BIT_ULL(id));
	mutex_unlock(&fsm_ust_opt_mutex);
}

/**
 * fsm_ustack_id_reset - zero the per-id counters before the id's reuse.
 * @id: a retired id that fsm_ustack_ids_busy() reported free
 *
 * The event files were forgotten by the old owner's UNREGISTER (the
 * kernel disables every event of an instance before removing it). The
 * epoch is kept: it only grows, so fileid.c's "file_map written in epoch
 * E for instance id" never matches the new owner's first recording.
 * Context: task (fsm_mutex held by the caller).
 */
void fsm_ustack_id_reset(u32 id)
{
	struct fsm_ust_inst *ui;
	unsigned int i;

	if (id >= FSM_UST_MAX_INST)
		return;
	ui = &fsm_ust_insts[id];
	WARN_ON_ONCE(READ_ONCE(ui->us_file) || READ_ONCE(ui->fm_file));
	for (i = 0; i < FSM_UST_NR_STATS; i++)
		atomic64_set(&ui->stat[i], 0);
	for (i = 0; i < FSM_URS_NR; i++)
		atomic64_set(&ui->empty[i], 0);
}

/**
 * fsm_ustack_stat_show - user-stack lines of stack_map_stat.
 * @m:    the seq_file
 * @inst: instance (reference held by the reader)
 * Context: task.
 */
void fsm_ustack_stat_show(struct seq_file *m, struct fsm_inst *inst)
{
	unsigned long long drops = 0;
	struct fsm_map_stats st = {};
	struct fsm_ust_inst *ui;
	struct fsm_map *umap;
	unsigned int i, bufs, bufs_peak;
	u64 fixed;

	seq_printf(m, "user_no_id_refusals_all_instances: %lld\n",
		   atomic64_read(&fsm_ust_no_id_refusals));
	/* module-wide: the task table (ustack.c) */
	fsm_ust_mem_stats(&fixed, &bufs, &bufs_peak);
	seq_printf(m, "user_slots: %u\n", fsm_ust_nslots);
	seq_printf(m, "user_slots_used: %u\n", fsm_ust_slots_used());
	seq_printf(m, "user_slots_reclaimed: %llu\n", fsm_ust_slots_reclaimed());
	seq_printf(m, "user_slots_memory_bytes: %llu\n", fixed);
	seq_printf(m, "user_walk_buffers: %u\n", bufs);
	seq_printf(m, "user_walk_buffers_peak: %u\n", bufs_peak);
	seq_printf(m, "user_walk_buffer_bytes: %zu\n", sizeof(struct fsm_ust_stack));
	if (inst->id >= FSM_UST_MAX_INST) {
		/* an id of 63 or more: no user stacks here */
		seq_puts(m, "user_option: 0\nuser_available: 0\n");
		return;
	}
	ui = &fsm_ust_insts[inst->id];
	seq_puts(m, "user_available: 1\n");
	seq_printf(m, "user_option: %u\n", !!(READ_ONCE(fsm_ust_on) & BIT_ULL(inst->id)));
	seq_printf(m, "user_walks_all_instances: %lld\n", atomic64_read(&fsm_ust_walks));
	for (i = 0; i < FSM_UST_NR_STATS; i++)
		seq_printf(m, "%s: %lld\n", fsm_ust_stat_names[i],
			   atomic64_read(&ui->stat[i]));
	for (i = 0; i < FSM_URS_NR; i++)
		seq_printf(m, "user_stacks_reason_%s: %lld\n", fsm_urs_names[i],
			   atomic64_read(&ui->empty[i]));
	/* Pairs with smp_store_release() in fsm_ust_umap_alloc(). */
	umap = smp_load_acquire(&inst->umap);
	if (umap)
		fsm_map_stats(umap, &st);
	for (i = 1; i < FSM_DROP_NR_REASONS; i++)
		drops += st.drops[i];
	seq_printf(m, "user_map_allocated: %d\n", umap != NULL);
	seq_printf(m, "user_entries: %u\n", st.entries);
	seq_printf(m, "user_capacity: %u\n", st.capacity);
	seq_printf(m, "user_max_words: %u\n", st.max_depth);
	seq_printf(m, "user_arena_used: %llu\n", st.arena_used);
	seq_printf(m, "user_arena_size: %llu\n", st.arena_size);
	seq_printf(m, "user_memory_bytes: %llu\n", st.memory_bytes);
	seq_printf(m, "user_generation: %u\n", st.generation);
	seq_printf(m, "user_hits: %llu\n", st.hits);
	seq_printf(m, "user_inserts: %llu\n", st.inserts);
	seq_printf(m, "user_drops: %llu\n", drops);
	for (i = 1; i < FSM_DROP_NR_REASONS; i++)
		seq_printf(m, "user_drops_%s: %llu\n", fsm_drop_reason_name(i),
			   st.drops[i]);
	seq_printf(m, "user_lost_races: %llu\n", st.lost_races);
}

