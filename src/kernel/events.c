// SPDX-License-Identifier: GPL-2.0
/*
 * events.c - the stackmap:stack_id event, written per instance.
 *
 * The event is defined with TRACE_EVENT (include/ftrace_stackmap/
 * stackmap_events.h) so that it has an id, a format file, filters and
 * triggers, and appears in every instance. Its tracepoint is never called.
 * Instead the event class's .reg callback is wrapped: when the event is
 * enabled in an instance (TRACE_REG_REGISTER with that instance's
 * trace_event_file), every source event chosen in that instance is
 * attached through its source backend (sources.c, struct fsm_src_ops:
 * trigger data, src_trig.c, or a tracepoint probe, src_probe.c). The
 * backend's callback captures the kernel stack and gets its id (record.c),
 * and the records are written here into that instance's buffer with
 * trace_event_buffer_reserve()/_commit(), the pattern kprobe events use.
 *
 * This file: the event definitions, the .reg callback, the record writers
 * and the trace output (printers) of the stack_id, stack_id_user and
 * stack_fallback records.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/ring_buffer.h>
#include <linux/string.h>
#include <linux/trace_events.h>
#include <linux/tracepoint.h>

#include <ftrace_stackmap/abi.h>

#include "compat/compat.h"
#include "compat/ksyms.h"
#include "compat/rb_reset.h"
#include "param.h"
#include "tracing.h"
#include "ustack.h"

/*
 * The event class's .reg callback is ours from the start: TRACE_EVENT
 * initialises it with the name trace_event_reg, which we redirect while the
 * event is instantiated. Changing it at init instead would leave a window
 * (the event is registered, and can be enabled, before module init runs)
 * in which a registration bypassed us.
 */
static int fsm_event_reg(struct trace_event_call *call, enum trace_reg type,
			 void *data);
#define trace_event_reg fsm_event_reg
#define CREATE_TRACE_POINTS
#include <ftrace_stackmap/stackmap_events.h>
#undef trace_event_reg

/* The map stores 64-bit addresses; the probe hands it unsigned longs. */
static_assert(sizeof(unsigned long) == sizeof(unsigned long long),
	      "ftrace_stackmap supports 64-bit kernels only");
static_assert(FSM_MAX_DEPTH == FSM_MAX_KERNEL_DEPTH, "abi.h and fsm_core.h disagree");
static_assert(FSM_STACK_ID_NONE == FSM_ID_NONE, "abi.h and fsm_core.h disagree");

static_assert(FSM_DROP_NR_REASONS - 1 <= FSM_SID_REASON_MAX,
	      "drop reasons do not fit the record's reason");
/* abi.h's reason 7 "nested" is the one after the map's drop reasons */
static_assert(FSM_DROP_NR_REASONS == FSM_SID_REASON_NESTED,
	      "the nested reason collides with a drop reason");
/* The index field of the id holds every index the bits parameter allows. */
static_assert(FSM_BITS_MAX <= FSM_SID_INDEX_BITS, "ids do not fit the index bits");
static_assert(FSM_SID_INDEX_BITS + FSM_SID_GEN_BITS == 32, "the id is 32 bits");

/*
 * Sizes the record format promises (abi.h, Documentation/tracing.rst):
 * 12 and 20 bytes after the ring buffer's 4-byte event header.
 */
static_assert(sizeof(struct trace_event_raw_stack_id) == 12, "stack_id size");
static_assert(sizeof(struct trace_event_raw_stack_id_user) == 20,
	      "stack_id_user size");
static_assert(offsetof(struct trace_event_raw_stack_id, stack_id) == 8 &&
	      offsetof(struct trace_event_raw_stack_id_user, stack_id) == 8 &&
	      offsetof(struct trace_event_raw_stack_def, stack_id) == 8 &&
	      offsetof(struct trace_event_raw_stack_fallback, stack_id) == 8 &&
	      offsetof(struct trace_event_raw_stack_reset, stack_id) == 8,
	      "every record starts with stack_id");

/*
 * fsm_reserve - reserve a record of event @call in @file's instance.
 *
 * Every record of the module is reserved and committed through the
 * instance's stack_id event file (the one file the module holds while the
 * instance records: see fsm_register()); a record of another of our events
 * gets that event's type. The stack_id filter, triggers and pid filter
 * therefore apply to all of them; each layout starts with the u32 stack_id
 * field, so a filter on it reads the same field in every record.
 * Context: preemption disabled. Return: the entry, or NULL.
 */
static void *fsm_reserve(struct trace_event_buffer *fbuffer,
			 struct trace_event_file *file,
			 struct trace_event_call *call, unsigned long len)
{
	struct trace_entry *ent;

	ent = trace_event_buffer_reserve(fbuffer, file, len);
	if (ent && call != &event_stack_id)
		ent->type = call->event.type;
	return ent;
}

/*
 * redefine_pct: an id's definition (stack_def, a user_stack with frames, a
 * file_map) is written again on a CPU once that CPU's ring buffer has
 * taken this percentage of what it holds since the last one there; 0:
 * only at the first use in a recording (Documentation/flight-recorder.rst).
 */
static unsigned int fsm_redefine_pct = 50;
static struct fsm_param_range fsm_redefine_range = {
	.val = &fsm_redefine_pct, .min = 0, .max = 100,
};
module_param_cb(redefine_pct, &fsm_param_range_ops, &fsm_redefine_range, 0644);
MODULE_PARM_DESC(redefine_pct,
		 "Write an id's stack again on a CPU once its ring buffer took this % of its size since the last one (0..100, default 50; 0: first use only)");

/* A guess of bytes per record while the buffer holds too few to measure. */
#define FSM_RB_GUESS_BYTES	256
/* Records the buffer must hold for their mean size to count. */
#define FSM_RB_MEAN_MIN		64
/* The largest horizon: positions compare modulo 2^32. */
#define FSM_RB_HORIZON_MAX	(1U << 30)

/*
 * The kernel's temp_buffer (kernel/trace/trace.c): where
 * trace_event_buffer_reserve() puts a record that triggers need while the
 * instance's buffer refuses it; given to the triggers, then dropped. False
 * when the symbol was not found (said at load, verdict.c).
 */
static bool notrace fsm_rb_temp_buffer(struct trace_buffer *buffer)
{
	return fsm_ks.temp_buffer && buffer == READ_ONCE(*fsm_ks.temp_buffer);
}

/**
 * fsm_rb_position - where this CPU's ring buffer of an instance stands.
 * @buffer: the instance's ring buffer, from the record just committed
 *          (fbuffer.buffer), valid while preemption stays off
 * @inst:   the instance (its per-CPU state of this CPU is used)
 * @pos:    set to the position after that record and the horizon
 *
 * The position is the count of records the buffer took on this CPU since
 * it was last reset (entries + overrun + read: every record is retained,
 * overwritten or consumed), plus the CPU's rb.base. The ring buffer's own
 * counters are reset with the buffer (echo > trace, trace-cmd's reset).
 * Every definition of this CPU's buffer is taken as gone (a *reset* below)
 * when, since this CPU's last look:
 * (1) the buffer's reset functions were called for it: the count of
 *     resets of its bucket moved, or one is under way
 *     (compat/rb_reset.c: kretprobes, no lock here; exact, see below);
 * (2) the buffer is another one (a snapshot swap exchanged the
 *     instance's buffers: the records of the module are in the other);
 * (3) the count, the overrun or the read count is lower than at the
 *     last look (each only grows between resets: what is left when the
 *     hooks of (1) could not be placed);
 * (4) @inst->redefine_seq moved: a reader consumed the buffer (which
 *     moves no count: read goes up as entries go down), or a new
 *     recording starts.
 * Besides, a stamp counts only while the records it stands for can still
 * be in the buffer: @pos->fresh is at most the records the buffer holds
 * (a consuming read, a wrap by records larger than the mean, a shrink).
 * A reset moves the base so that the position goes on past the last
 * one, and sets the CPU's floor there: a stamp written before the floor
 * never counts again (@pos->fresh, the horizon of claims), because the
 * definitions those stamps stand for were erased with the buffer. Each
 * CPU sees the change at its next record and moves its own floor: no CPU
 * writes another's state.
 *
 * Why (1) leaves no window. A reset R of this CPU's buffer: its thread
 * counts a start (W1), disables recording, waits for every writer in
 * flight (synchronize_rcu(): the whole record path, this function and
 * the definitions after it, runs with preemption off, so none of it
 * spans the erase), erases the CPU buffer, and counts a return (W2).
 * This function reads the counts after the record's commit and the
 * counter loads, behind an smp_rmb() (pairs with W1):
 * - A record committed after the erase (kept) sees R started: either
 *   under way (busy), or returned with the count moved since this CPU
 *   stored it. Busy: the floor moves, nothing claims (@pos->fresh 0:
 *   every definition due), and the count is not stored, so the first
 *   record that finds R returned moves the floor again. That record read
 *   the returned count after (W2) and writes its definitions after that
 *   read: they are in the reset buffer (rb_reset.c: the smp_rmb()), so
 *   a stamp at or after its floor stands for a definition that is kept.
 * - A stamp written before R erased the buffer was written at this
 *   CPU's record that read the counts before (W2), i.e. before any
 *   record that stored R's returned count: below that record's floor.
 * (A per-CPU snapshot swap, ring_buffer_swap_cpu(), does not wait for
 * writers: a record placed across it may read counters of either
 * buffer, and sees the swap under way whenever it read any of the new
 * one: every definition due, and the floor moved again after it.)
 * The counts are per bucket of buffers: a reset of another buffer of
 * the bucket is taken for one of ours (one more round of definitions).
 * No reset seen is missed, NMI or not: what is read is atomics; the
 * hooks miss a call only when FSM_RB_RESET_ACTIVE calls are in flight at
 * once (said at unload), or are not placed (said at load); then (3) is
 * what is left, which misses a reset refilled past the last count by
 * other events before the module writes on this CPU again.
 *
 * The horizon is @redefine_pct of the records this CPU's buffer holds,
 * estimated as its size over the mean record size of what it holds now
 * (bytes over entries, page padding included: an over-estimate of the
 * record size, so the horizon errs short), when it holds at least
 * FSM_RB_MEAN_MIN records; before the first such estimate a record is
 * guessed at FSM_RB_GUESS_BYTES, short again. Recomputed every eighth of
 * a horizon (at least every 16 records), so the three ring buffer calls
 * of the position are the price of an id record; the size of the buffer
 * may change (resize) and the mean with the load.
 *
 * Why a definition is then enough: one written at position d is retained
 * until the buffer has taken about a whole buffer after it. A use at u
 * that finds it less than a horizon behind (u - d < pct% of the buffer)
 * is in the trace with it as long as the use is in the newest (100 -
 * pct)% of the buffer; older uses may outlive it, and are resolved by
 * the next definition of the same id, which any use of the id in that
 * newest part writes. So what cannot be resolved from the trace is the
 * uses of ids last used in the oldest pct% of the buffer, whose last
 * definition was dropped before them (Documentation/flight-recorder.rst).
 *
 * NMI: the ring buffer calls read counters (a cpumask test and loads, no
 * lock), fsm_rb_reset_seq() reads two atomics; no lock, no loop. @pc->rb
 * is this CPU's, written without lock by every context nested on it: a
 * nested writer between our read and write of a field costs at most an
 * extra floor (every stamp due once) or an extra refresh, never a
 * position that went back nor a floor undone (the overrun, read, reset
 * count and buffer stored are ours or older than a nested one's: never a
 * false "went back" later, at worst one floor more).
 * Context: preemption disabled, any context. Return: nothing; @pos->horizon
 * is 0 when re-definitions are off (redefine_pct=0) or @buffer is the
 * kernel's temp_buffer.
 */
void notrace fsm_rb_position(struct trace_buffer *buffer,
			     struct fsm_inst *inst, struct fsm_rb_pos *pos)
{
	struct fsm_inst_pcpu *pc = this_cpu_ptr(inst->pcpu);
	unsigned int pct = READ_ONCE(fsm_redefine_pct);
	u32 seq = atomic_read(&inst->redefine_seq);
	int cpu = smp_processor_id();
	unsigned long held, count, last, overrun, read;
	bool reset = false, busy;
	u32 base, floor, rseq;

	pos->now = 0;
	pos->horizon = 0;
	pos->fresh = 0;
	/*
	 * A record that went to the kernel's temp_buffer (tracing off, a
	 * conditional trigger on stack_id wanted it) is in no buffer of
	 * the instance: that buffer's counters say nothing of this CPU's
	 * position. No position: no stamp is claimed, the record is written
	 * as with re-definitions off (a first use defines the id).
	 */
	if (!pct || fsm_rb_temp_buffer(buffer))
		return;
	/*
	 * This CPU's state before the ring buffer's counters: a context
	 * nested between the two can then only make our count larger than
	 * the last it stored, never smaller (a false reset).
	 */
	last = READ_ONCE(pc->rb.last);
	base = READ_ONCE(pc->rb.base);
	floor = READ_ONCE(pc->rb.floor);
	if (READ_ONCE(pc->rb.overrun) > ring_buffer_overrun_cpu(buffer, cpu) ||
	    READ_ONCE(pc->rb.read) > ring_buffer_read_events_cpu(buffer, cpu) ||
	    READ_ONCE(pc->rb.buffer) != buffer)
		reset = true;
	barrier();
	held = ring_buffer_entries_cpu(buffer, cpu);
	overrun = ring_buffer_overrun_cpu(buffer, cpu);
	read = ring_buffer_read_events_cpu(buffer, cpu);
	count = held + overrun + read;
	/*
	 * The reset counts after the record's commit and the counters:
	 * pairs with (W1) in compat/rb_reset.c (see above, "Why (1)").
	 */
	smp_rmb();
	rseq = fsm_rb_reset_seq(buffer, &busy);
	if (busy || rseq != READ_ONCE(pc->rb.rseq))
		reset = true;
	if (reset || count < last || seq != READ_ONCE(pc->rb.seq)) {
		/*
		 * Every definition of this CPU's buffer is gone: the position
		 * goes on past where it stood (never back), and the stamps
		 * written before it stop counting (the floor). No jump of the
		 * position: two jumps of 2^31 cancel each other.
		 */
		if (count <= last)
			base += (u32)(last - count) + 1;
		/* after every stamp so far: they were all at last + base or before */
		floor = (u32)count + base;
		WRITE_ONCE(pc->rb.base, base);
		WRITE_ONCE(pc->rb.floor, floor);
		WRITE_ONCE(pc->rb.seq, seq);
		WRITE_ONCE(pc->rb.buffer, buffer);
		/* under way: the next record moves the floor again */
		if (!busy)
			WRITE_ONCE(pc->rb.rseq, rseq);
		WRITE_ONCE(pc->rb.refresh, 0);
	} else if ((u32)count + base - floor > (1U << 31)) {
		/* a floor that far back voids nothing a horizon would not */
		floor = (u32)count + base - (1U << 31);
		WRITE_ONCE(pc->rb.floor, floor);
	}
	WRITE_ONCE(pc->rb.last, count);
	WRITE_ONCE(pc->rb.overrun, overrun);
	WRITE_ONCE(pc->rb.read, read);
	if (count >= READ_ONCE(pc->rb.refresh)) {
		unsigned long bytes = ring_buffer_bytes_cpu(buffer, cpu);
		u32 horizon = READ_ONCE(pc->rb.horizon);
		u64 size = ring_buffer_size(buffer, cpu), mean = 0, h;

		/*
		 * The mean from what the buffer holds, once it holds enough
		 * records to say (a reader that keeps up leaves a page or
		 * two, whose byte count includes the part of a page already
		 * read: a mean far too large); else the last estimate, or
		 * the guess.
		 */
		if (held >= FSM_RB_MEAN_MIN && bytes)
			mean = DIV_ROUND_UP(bytes, held);
		else if (!horizon)
			mean = FSM_RB_GUESS_BYTES;
		if (mean) {
			h = div_u64(div64_u64(size, mean) * pct, 100);
			horizon = clamp_t(u64, h, 1, FSM_RB_HORIZON_MAX);
			WRITE_ONCE(pc->rb.horizon, horizon);
		}
		WRITE_ONCE(pc->rb.refresh, count + max_t(u32, horizon / 8, 16));
	}
	pos->now = (u32)count + base;
	pos->horizon = READ_ONCE(pc->rb.horizon);
	/*
	 * A reset under way: no stamp counts, not even one after the floor.
	 * And never one older than what the buffer holds now: positions
	 * count records, and records leave from the front (overwritten or
	 * consumed), so a definition written after a stamp @held or more
	 * records behind @now is gone, whatever the horizon says (a burst of
	 * records much larger than the mean the horizon was computed from, a
	 * consuming read, a buffer shrunk by a resize: none moves a count
	 * back).
	 */
	pos->fresh = busy ? 0 : min_t(unsigned long,
				      fsm_rb_fresh(pos->now, floor, pos->horizon),
				      held);
}

/**
 * fsm_rb_written - the count of records committed to a ring buffer on a
 * CPU since the buffer was last reset.
 * @buffer: an instance's ring buffer, valid while preemption stays off
 * @cpu:    this CPU
 * @n:      set to the count
 *
 * The ring buffer's own count of commits (cpu_buffer->entries, which
 * every commit increments, a discarded reservation does not, and only a
 * reset lowers) is not exported; it is entries + overrun + read of the
 * exported calls, as in fsm_rb_position(). A reader on another CPU moves
 * read, and an interrupt's write on this CPU may move overrun, between
 * those calls: the sum is taken only when overrun and read were the
 * same before and after ring_buffer_entries_cpu(), which returns
 * entries - overrun - read. Both only grow between resets, so equal
 * values around the call are the values it used. At most three tries.
 * NMI: the calls read counters (a cpumask test and loads, no lock).
 * Context: preemption disabled, any context. Return: false if no
 * consistent count was read (@n unset).
 */
bool notrace fsm_rb_written(struct trace_buffer *buffer, int cpu,
			    unsigned long *n)
{
	unsigned long o, r, e;
	int i;

	for (i = 0; i < 3; i++) {
		o = ring_buffer_overrun_cpu(buffer, cpu);
		r = ring_buffer_read_events_cpu(buffer, cpu);
		e = ring_buffer_entries_cpu(buffer, cpu);
		if (o == ring_buffer_overrun_cpu(buffer, cpu) &&
		    r == ring_buffer_read_events_cpu(buffer, cpu)) {
			*n = e + o + r;
			return true;
		}
	}
	return false;
}

/*
 * fsm_emit_id - the id record of one source event: stack_id (16 bytes in
 * the ring buffer) or, with a user-stack cookie, stack_id_user (24).
 * With @inst, *@pos is set to the record's position (fsm_rb_position()).
 * The writers run inside the capture path (record.c), in any context:
 * notrace, as the rest of that path.
 * Context: preemption disabled. Return: true if committed.
 */
bool notrace fsm_emit_id(struct trace_event_file *file, u32 id, u64 cookie,
			 struct fsm_inst *inst, struct fsm_rb_pos *pos)
{
	struct trace_event_raw_stack_id_user *eu;
	struct trace_event_raw_stack_id *e;
	struct trace_event_buffer fbuffer;

	if (!cookie) {
		e = fsm_reserve(&fbuffer, file, &event_stack_id, sizeof(*e));
		if (!e)
			return false;
		e->stack_id = id;
	} else {
		eu = fsm_reserve(&fbuffer, file, &event_stack_id_user,
				 sizeof(*eu));
		if (!eu)
			return false;
		eu->stack_id = id;
		eu->cookie_lo = (u32)cookie;
		eu->cookie_hi = (u32)(cookie >> 32);
	}
	trace_event_buffer_commit(&fbuffer);
	if (inst)
		fsm_rb_position(fbuffer.buffer, inst, pos);
	return true;
}

/* The stack of @id (stack_def). Context, return: as fsm_emit_id(). */
bool notrace fsm_emit_def(struct trace_event_file *file, u32 id, u32 flags,
			  const unsigned long *ips, unsigned int nr)
{
	struct trace_event_raw_stack_def *e;
	struct trace_event_buffer fbuffer;
	u32 len = nr * sizeof(unsigned long);
	u32 off = offsetof(struct trace_event_raw_stack_def, __data);

	e = fsm_reserve(&fbuffer, file, &event_stack_def, off + len);
	if (!e)
		return false;
	e->stack_id = id;
	e->flags = flags;
	/* __data_loc: length in the high 16 bits, offset in the low 16 */
	e->__data_loc_ips = (len << 16) | off;
	memcpy(e->__data, ips, len);
	trace_event_buffer_commit(&fbuffer);
	return true;
}

/*
 * The id record of a source event that got no id (stack_fallback): the
 * whole stack (none for reason nested) and the cookie, if any.
 * Context, return: as fsm_emit_id().
 */
bool notrace fsm_emit_fallback(struct trace_event_file *file, u32 flags,
			       u32 reason, u64 cookie, const unsigned long *ips,
			       unsigned int nr)
{
	struct trace_event_raw_stack_fallback *e;
	struct trace_event_buffer fbuffer;
	u32 clen = cookie ? sizeof(u64) : 0;
	u32 len = nr * sizeof(unsigned long);
	u32 off = offsetof(struct trace_event_raw_stack_fallback, __data);

	e = fsm_reserve(&fbuffer, file, &event_stack_fallback,
			off + clen + len);
	if (!e)
		return false;
	e->stack_id = FSM_STACK_ID_NONE;
	e->flags = flags;
	e->reason = reason;
	e->__data_loc_cookie = (clen << 16) | off;
	e->__data_loc_ips = (len << 16) | (off + clen);
	if (clen)
		memcpy(e->__data, &cookie, clen);
	memcpy(e->__data + clen, ips, len);
	trace_event_buffer_commit(&fbuffer);
	return true;
}

/*
 * A reset: generation @gen starts. Context: preemption disabled.
 * Return: the time of the buffer's clock right after the commit, or
 * U64_MAX if the record was not written.
 */
static u64 fsm_emit_reset(struct trace_event_file *file, u32 gen)
{
	struct trace_event_raw_stack_reset *e;
	struct trace_event_buffer fbuffer;

	e = fsm_reserve(&fbuffer, file, &event_stack_reset, sizeof(*e));
	if (!e)
		return U64_MAX;
	e->stack_id = FSM_STACK_ID_NONE;
	e->generation = gen;
	trace_event_buffer_commit(&fbuffer);
	/* the instance's buffer, valid while preemption stays off */
	return ring_buffer_time_stamp(fbuffer.buffer);
}

/*
 * TRACE_REG_REGISTER of stackmap:stack_id in @file's instance.
 * Context: task, event_mutex held (by the kernel).
 */
static int fsm_register(struct trace_event_file *file)
{
	struct fsm_inst *inst, *ref = NULL;
	int ret;

	mutex_lock(&fsm_mutex);
	if (!fsm_ready) {
		/* module init not done yet, or exit under way */
		ret = fsm_shutting_down ? -ENODEV : -EBUSY;
		goto out;
	}
	inst = fsm_inst_find_or_create_locked(file);
	if (IS_ERR(inst)) {
		ret = PTR_ERR(inst);
		goto out;
	}
	if (!inst->map) {
		/*
		 * The event was enabled directly, not through options/
		 * stackmap: allocate and zero the map without fsm_mutex (the
		 * kernel holds event_mutex around this callback, which we
		 * cannot drop), with a reference that keeps the instance,
		 * then look the instance up again: exit or an rmdir may have
		 * run meanwhile.
		 */
		ref = fsm_inst_get_by_id(inst->id);
		mutex_unlock(&fsm_mutex);
		ret = ref ? fsm_inst_prepare_map(ref) : -ENODEV;
		mutex_lock(&fsm_mutex);
		if (ret)
			goto out;
		if (!fsm_ready) {
			ret = -ENODEV;
			goto out;
		}
		inst = fsm_inst_find_or_create_locked(file);
		if (IS_ERR(inst)) {
			ret = PTR_ERR(inst);
			goto out;
		}
		if (!inst->map) {
			/* a new instance object took its place meanwhile */
			pr_warn_ratelimited("%s: instance changed while its map was allocated\n",
					    fsm_inst_label(inst));
			ret = -EAGAIN;
			goto out;
		}
	}

	/*
	 * A new recording: ids carry their stack inline once more. The epoch
	 * is a plain value compared by the map: no ordering needed.
	 */
	if (!atomic_inc_return(&inst->epoch))
		atomic_inc(&inst->epoch);	/* 0 means "never inline" */
	/* and no stamp of an earlier recording counts (fsm_rb_position()) */
	atomic_inc(&inst->redefine_seq);
	/*
	 * Published to the sources' callbacks by their attach below
	 * (fsm_sources_attach_all_locked()): tracepoint_probe_register_prio()
	 * installs a probe with rcu_assign_pointer() (src_probe.c), the
	 * trigger backend links its data with list_add_tail_rcu()
	 * (src_trig.c), both a release, which orders this store (and the
	 * map's) before any call of the callback. The READ_ONCE() in
	 * fsm_record_event() only keeps the compiler honest.
	 */
	WRITE_ONCE(inst->file, file);
	ret = fsm_sources_attach_all_locked(inst);
	if (ret)
		WRITE_ONCE(inst->file, NULL);
out:
	mutex_unlock(&fsm_mutex);
	if (ref)
		fsm_inst_put(ref);
	return ret;
}

/*
 * TRACE_REG_UNREGISTER. The kernel calls it also when the instance is being
 * removed and when this module's events are removed after our exit (then
 * nothing is found: fsm_lifecycle_stop() detached everything already).
 *
 * SOFT_DISABLED set here means the soft path: trace_event_enable_disable(
 * file, 0, 1), the end of stack_id's soft mode (6.1: only then is the
 * callback reached with the bit still set; a plain disable has neither
 * SOFT_MODE nor SOFT_DISABLED). Its caller is the free or removal of an
 * enable_event/disable_event trigger, or the end of stack_id's own trigger
 * mode, and may be inside a walk of a trigger list holding our pairs:
 * clear_event_triggers() (rmdir), with kprobes disarmed.
 * There the sources' pairs are quiesced, not taken off (the backend's
 * quiesce, src_trig.c).
 * Context: task, event_mutex held.
 */
static void fsm_unregister(struct trace_event_file *file)
{
	bool in_walk = READ_ONCE(file->flags) & EVENT_FILE_FL_SOFT_DISABLED;
	struct fsm_inst *inst, *found = NULL;
	unsigned long idx;

	mutex_lock(&fsm_mutex);
	xa_for_each(&fsm_insts, idx, inst) {
		if (inst->file == file) {
			found = inst;
			break;
		}
	}
	if (found) {
		fsm_sources_detach_all_locked(found, in_walk);
		WRITE_ONCE(found->file, NULL);
	}
	mutex_unlock(&fsm_mutex);
}

static int fsm_event_reg(struct trace_event_call *call, enum trace_reg type,
			 void *data)
{
	/*
	 * The other events of the header are written through the stack_id
	 * file (fsm_reserve()): enabling them does nothing, they record
	 * whenever stack_id does.
	 */
	if (call != &event_stack_id) {
#ifdef CONFIG_PERF_EVENTS
		if (type == TRACE_REG_PERF_REGISTER)
			return -EOPNOTSUPP;
#endif /* CONFIG_PERF_EVENTS */
		return 0;
	}
	switch (type) {
	case TRACE_REG_REGISTER:
		return fsm_register(data);
	case TRACE_REG_UNREGISTER:
		fsm_unregister(data);
		return 0;
#ifdef CONFIG_PERF_EVENTS
	case TRACE_REG_PERF_REGISTER:
		/* Records exist only per ftrace instance. */
		return -EOPNOTSUPP;
#endif /* CONFIG_PERF_EVENTS */
	default:
		return 0;
	}
}

/**
 * fsm_write_reset_record - mark a new generation in the instance's trace.
 * @inst: instance
 * @gen:  the generation that starts
 *
 * Called before the map opens @gen (fsm_inst_reset()), so that every record
 * of @gen is written after this one: its timestamp is later (records of
 * the old generation still in flight on other CPUs may follow it; their
 * ids carry their generation). Written only while the instance records.
 * No lock: as in the probe, @file stays valid while preemption is off.
 * Context: task.
 * Return: a time of the instance's trace clock after the record, earlier
 * than every record of @gen; U64_MAX if no record was written.
 */
u64 fsm_write_reset_record(struct fsm_inst *inst, u32 gen)
{
	struct trace_event_file *file;
	u64 ts = U64_MAX;

	/* as in a tracepoint: trace_event_buffer_reserve() expects it */
	preempt_disable_notrace();
	file = READ_ONCE(inst->file);
	if (file && !trace_trigger_soft_disabled(file))
		ts = fsm_emit_reset(file, gen);
	preempt_enable_notrace();
	return ts;
}

/**
 * fsm_inst_set_recording - enable or disable stackmap:stack_id in @inst.
 * @inst: instance
 * @on:   enable
 *
 * The same as writing events/stackmap/stack_id/enable in that instance.
 * Context: task; must not hold fsm_mutex (takes event_mutex).
 * Return: 0, -ENODEV if the instance is gone, or the kernel's error.
 */
int fsm_inst_set_recording(struct fsm_inst *inst, bool on)
{
	struct trace_event_file *file;
	int ret;

	/*
	 * Looks up, never creates; the reference is held only meanwhile (the
	 * kernel's own events/stackmap/stack_id/enable holds one from open to
	 * close). The caller made the map first (fsm_inst_prepare_map(),
	 * without any reference or global lock): REGISTER only attaches
	 * probes, so the reference lasts microseconds, not a map's zeroing.
	 */
	file = trace_get_event_file(inst->name, "stackmap", "stack_id");
	if (IS_ERR(file))
		return PTR_ERR(file) == -ENOENT ? -ENODEV : PTR_ERR(file);
	if (file->tr != READ_ONCE(inst->tr))
		ret = -ENODEV;
	else
		ret = trace_array_set_clr_event(file->tr, "stackmap", "stack_id",
						on);
	trace_put_event_file(file);
	return ret;
}

/*
 * The trace file: stack lines under each id record
 * -------------------------------------------------
 * The stack_id and stack_id_user events get output callbacks of their own
 * (struct trace_event_functions): the record's line as its print format
 * says, then one " => " line per frame from the instance's map, as
 * options/stacktrace prints a kernel_stack record (seq_print_ip_sym():
 * options/sym-offset adds +off/size, sym-addr adds " <address>"). With
 * options/raw the .raw callback prints the id and the bare addresses.
 * stack_fallback records print the stack they carry the same way. The
 * format files and the binary records do not change.
 *
 * The callbacks run when the trace is read (also from ftrace_dump(), with
 * interrupts off): no sleeping lock. The instance is found under RCU (an
 * instance is freed after synchronize_rcu(), see fsm_inst_release()), its
 * map read under map_rwsem taken with down_read_trylock() (a reset in
 * progress prints a marker instead).
 *
 * A stack is printed only when it is certainly the record's: the record's
 * generation bits equal those of the map's generation, and either fewer
 * than 2^12 generations exist (no two share their low bits) or the record
 * is younger than the stack_reset record that opened the map's generation
 * (inst->gen_ts). Otherwise a marker says that the stack is gone.
 */
static struct trace_event_functions fsm_sid_funcs, fsm_sidu_funcs,
	fsm_fb_funcs;

static void fsm_print_ip(struct trace_seq *s, unsigned long ip,
			 unsigned int sym)
{
	trace_seq_puts(s, " => ");
	if (!ip)
		trace_seq_putc(s, '0');
	else if (sym & FSM_SYM_OFFSET)
		trace_seq_printf(s, "%pS", (void *)ip);
	else
		trace_seq_printf(s, "%ps", (void *)ip);
	if (ip && (sym & FSM_SYM_ADDR))
		trace_seq_printf(s, " <%016lx>", ip);
	trace_seq_putc(s, '\n');
}

static void fsm_print_raw_ip(struct trace_seq *s, unsigned long ip)
{
	trace_seq_printf(s, " => %016lx\n", ip);
}

/* The " => " lines of @nr frames; @sym: FSM_SYM_* bits, or -1 for raw. */
static void fsm_print_ips(struct trace_seq *s, const unsigned long *ips,
			  unsigned int nr, int sym)
{
	unsigned int i;

	for (i = 0; i < nr && fsm_output_room(s, nr - i); i++) {
		if (sym < 0)
			fsm_print_raw_ip(s, ips[i]);
		else
			fsm_print_ip(s, ips[i], sym);
	}
}

/*
 * fsm_output_may_look_up - may an output callback read the map? Not in
 * NMI (ftrace_dump() from an NMI oops: up_read() may wake a waiter) and
 * not without a trace_array (tp_printk prints from the probe itself).
 * Context: any.
 */
bool fsm_output_may_look_up(const struct trace_iterator *iter)
{
	return iter->tr && !in_nmi();
}

/*
 * Bytes of " => " lines per record: trace_seq holds one page, and a line
 * that does not fit is dropped whole ("[LINE TOO BIG]"), id line included.
 * 64 frames with sym-offset, sym-addr and module names can pass it.
 */
#define FSM_STACK_LINES_MAX	(PAGE_SIZE - 512)

/* Room for one more frame line? If not, say how many are left out. */
bool fsm_output_room(struct trace_seq *s, unsigned int left)
{
	if (trace_seq_used(s) < FSM_STACK_LINES_MAX)
		return true;
	trace_seq_printf(s, " => ... %u more frames\n", left);
	return false;
}

/*
 * fsm_print_map_stack - the " => " lines of @id from @iter's instance map.
 * @sym: FSM_SYM_* bits, or -1 for raw addresses
 * Context: any (no sleeping); the reader of the trace.
 */
static void fsm_print_map_stack(struct trace_iterator *iter, u32 id, int sym)
{
	struct trace_seq *s = &iter->seq;
	const unsigned long long *ips;
	struct fsm_inst *inst;
	struct fsm_map *map;
	unsigned int nr;
	u32 gen;

	if (!fsm_output_may_look_up(iter)) {
		trace_seq_puts(s, " => <stack not shown here: read the trace file>\n");
		return;
	}
	rcu_read_lock();
	inst = fsm_inst_of_tr_rcu(iter->tr);
	if (!inst) {
		trace_seq_puts(s, " => <no stack map in this instance>\n");
		goto out;
	}
	if (!down_read_trylock(&inst->map_rwsem)) {
		trace_seq_puts(s, " => <stack map being reset: stack not shown>\n");
		goto out;
	}
	/* Pairs with smp_store_release() in fsm_map_alloc_locked(). */
	map = smp_load_acquire(&inst->map);
	gen = inst->gen;	/* stable: map_rwsem held */
	if (!map || FSM_SID_GEN(id) != (gen & FSM_SID_GEN_MASK) ||
	    (gen > FSM_SID_GEN_MASK && iter->ts < inst->gen_ts)) {
		trace_seq_printf(s, " => <stack of generation %u not in the map: reset since (now generation %u)>\n",
				 FSM_SID_GEN(id), gen);
	} else if (fsm_map_lookup_id(map, FSM_SID_INDEX(id), &ips, &nr, NULL)) {
		trace_seq_printf(s, " => <index %u not in the map>\n",
				 FSM_SID_INDEX(id));
	} else {
		fsm_print_ips(s, (const unsigned long *)ips, nr, sym);
	}
	up_read(&inst->map_rwsem);
out:
	rcu_read_unlock();
}

/* stack_id and stack_id_user share the offset of stack_id (see above). */
static u32 fsm_entry_id(const struct trace_iterator *iter)
{
	return ((const struct trace_event_raw_stack_id *)iter->ent)->stack_id;
}

static enum print_line_t fsm_sid_trace(struct trace_iterator *iter, int flags,
				       struct trace_event *event)
{
	static struct trace_event_call *const others[] = {
		&event_stack_def, &event_stack_fallback, &event_stack_reset,
	};
	enum print_line_t ret;
	unsigned int i;

	/*
	 * Every record is committed through the stack_id file, so tp_printk
	 * (output_printk()) calls stack_id's callback for all of them; the
	 * trace file looks callbacks up by type and never gets here with
	 * another type. Hand the others to their own callback.
	 */
	for (i = 0; i < ARRAY_SIZE(others); i++)
		if (iter->ent->type == others[i]->event.type)
			return others[i]->event.funcs->trace(iter, flags,
							    &others[i]->event);
	if (iter->ent->type == event_stack_id_user.event.type)
		ret = trace_raw_output_stack_id_user(iter, flags, event);
	else
		ret = trace_raw_output_stack_id(iter, flags, event);
	if (ret != TRACE_TYPE_HANDLED)
		return ret;
	fsm_print_map_stack(iter, fsm_entry_id(iter),
			    fsm_compat_sym_flags(flags));
	return trace_handle_return(&iter->seq);
}

static enum print_line_t fsm_sid_raw(struct trace_iterator *iter, int flags,
				     struct trace_event *event)
{
	u32 id = fsm_entry_id(iter);

	trace_seq_printf(&iter->seq, "%u\n", id);
	fsm_print_map_stack(iter, id, -1);
	return trace_handle_return(&iter->seq);
}

/* The ' => ' lines of a fallback record's own ips (its __data_loc array). */
static void fsm_fb_print_ips(struct trace_iterator *iter, int sym_flags)
{
	struct trace_event_raw_stack_fallback *e = (void *)iter->ent;
	const unsigned long *ips = (void *)e + (e->__data_loc_ips & 0xffff);
	unsigned int nr = (e->__data_loc_ips >> 16) / sizeof(long);

	fsm_print_ips(&iter->seq, ips, nr, sym_flags);
}

static enum print_line_t fsm_fb_trace(struct trace_iterator *iter, int flags,
				      struct trace_event *event)
{
	enum print_line_t ret;

	ret = trace_raw_output_stack_fallback(iter, flags, event);
	if (ret != TRACE_TYPE_HANDLED)
		return ret;
	fsm_fb_print_ips(iter, fsm_compat_sym_flags(flags));
	return trace_handle_return(&iter->seq);
}

static enum print_line_t fsm_fb_raw(struct trace_iterator *iter, int flags,
				    struct trace_event *event)
{
	struct trace_event_raw_stack_fallback *e = (void *)iter->ent;

	trace_seq_printf(&iter->seq, "%u %u %u\n", e->stack_id, e->flags,
			 e->reason);
	fsm_fb_print_ips(iter, -1);
	return trace_handle_return(&iter->seq);
}

/*
 * fsm_set_output - route @call's output through @funcs: a copy of the
 * kernel's callbacks (register_trace_event() filled in the defaults) with
 * ours in place (@raw NULL: the kernel's). The pointer is replaced in one
 * store; a reader of the trace sees either table. Context: module init,
 * the events are registered.
 */
void fsm_set_output(struct trace_event_call *call,
		    struct trace_event_functions *funcs,
		    trace_print_func trace, trace_print_func raw)
{
	*funcs = *call->event.funcs;
	funcs->trace = trace;
	if (raw)
		funcs->raw = raw;
	WRITE_ONCE(call->event.funcs, funcs);
}

/**
 * fsm_events_init - check that the event class is routed through us and
 * put our printers in place.
 * Context: task (module init), before any probe is registered.
 * Return: 0, -EINVAL if the TRACE_EVENT expansion did not pick up
 * fsm_event_reg() (a kernel whose macros changed).
 */
int fsm_events_init(void)
{
	if (event_class_stack_id.reg != fsm_event_reg) {
		pr_err("stackmap:stack_id is not routed through the module's .reg\n");
		return -EINVAL;
	}
	fsm_set_output(&event_stack_id, &fsm_sid_funcs, fsm_sid_trace,
		       fsm_sid_raw);
	fsm_set_output(&event_stack_id_user, &fsm_sidu_funcs, fsm_sid_trace,
		       fsm_sid_raw);
	fsm_set_output(&event_stack_fallback, &fsm_fb_funcs, fsm_fb_trace,
		       fsm_fb_raw);
	fsm_rb_reset_init();	/* before any record: fsm_rb_position() */
	return 0;
}

/**
 * fsm_events_exit - the ring buffer reset hooks go; the event goes away
 * with the module; fsm_event_reg() answers the UNREGISTER calls of that
 * removal.
 * Context: task (module exit or failed init), no probe attached.
 */
void fsm_events_exit(void)
{
	fsm_rb_reset_exit();
}
