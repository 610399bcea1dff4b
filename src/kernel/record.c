// SPDX-License-Identifier: GPL-2.0
/*
 * record.c - the capture path: one source event's kernel stack captured,
 * inserted into the instance's map, and its id records written (through
 * the writers of events.c) right behind the source record.
 *
 * The one entry point of every source backend (src_trig.c, src_probe.c)
 * and of the stackmap trigger (trigger.c): fsm_record_event() and
 * fsm_record_event_to(). Runs in any context, NMI included: no lock, no
 * allocation, bounded loops, and a small stack frame (Kbuild makes a frame
 * over 512 bytes an error for this object).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/stacktrace.h>
#include <linux/trace_events.h>

#include <ftrace_stackmap/abi.h>

#include "compat/ksyms.h"
#include "tracing.h"
#include "ustack.h"

/*
 * Frames captured: the map's maximum plus room for the frames trimmed at the
 * top (unwinder, this probe, the tracepoint iterator): 72 * 8 = 576 bytes.
 * Not on the stack (the probe may run in NMI, on a small stack): per CPU,
 * one buffer per context level that can nest on a CPU (task, softirq, irq,
 * NMI), the way the kernel's own ftrace_stacks work for stack traces
 * (kernel/trace/trace.c, __ftrace_trace_stack()). 4 * 576 = 2304 bytes per
 * CPU for the whole module, from alloc_percpu() at load (not a static
 * DEFINE_PER_CPU: those come from the 8 KiB PERCPU_MODULE_RESERVE that
 * every module of the host shares, and insmod fails when it runs out).
 */
#define FSM_CAPTURE_DEPTH	(FSM_MAX_KERNEL_DEPTH + 8)
#define FSM_KSTACK_NESTING	4

struct fsm_kstack {
	unsigned long ips[FSM_CAPTURE_DEPTH];
	struct pt_regs regs;	/* the caller's state (fsm_capture()) */
};

struct fsm_kstacks {
	struct fsm_kstack stacks[FSM_KSTACK_NESTING];
	int reserve;	/* levels in use on this CPU */
};

/*
 * Set by fsm_record_init() before any probe is registered (registration
 * publishes the probe with rcu_assign_pointer(), which orders this store
 * before the probe's load); freed by fsm_record_exit() after
 * tracepoint_synchronize_unregister().
 */
static struct fsm_kstacks __percpu *fsm_kstacks __read_mostly;
/* Frames of the unwinder itself that may precede our own frames. */
#define FSM_TRIM_SCAN		8

/*
 * Kernel functions borrowed through compat/ksyms.h (resolved at load,
 * before any probe is registered):
 * - stack_trace_save_regs(): NULL: every capture walks from the current
 *   frame (said at load);
 * - tracer_tracing_is_on() (kernel/trace/trace.c): whether the instance's
 *   ring buffer takes writes now, i.e. !buffer->record_disabled
 *   (ring_buffer_record_is_on(), not exported either): 0 while tracing_on
 *   is 0 and while the buffer is disabled for a moment (resize, snapshot
 *   swap, tracing_stop()). NULL: tracepoint-probe sources capture and
 *   insert while tracing is off (said at load).
 */

/*
 * Index of the first frame that belongs to the traced code: skip the
 * unwinder's frames, then ours (this module), then the tracepoint iterator
 * (absent when the static call reaches us directly). By address, not by a
 * fixed count. Context: any; bounded by @nr.
 */
static unsigned int fsm_trim(const struct fsm_src *src, const unsigned long *ips,
			     unsigned int nr)
{
	unsigned int i, own = nr;

	for (i = 0; i < nr && i < FSM_TRIM_SCAN; i++) {
		if (within_module(ips[i], THIS_MODULE)) {
			own = i;
			break;
		}
	}
	if (own == nr)
		return 0;	/* no frame of ours seen: keep everything */
	for (i = own; i < nr && within_module(ips[i], THIS_MODULE); i++)
		;
	if (i < nr && ips[i] - src->iter_start < src->iter_size)
		i++;
	return i;
}

static __always_inline void fsm_count(local64_t *c)
{
	local64_inc(c);
}

/*
 * fsm_capture - the kernel stack of the traced code into @ks->ips.
 * @caller: the state of the kernel function that called our callback
 *          (FSM_CALLER()), or NULL / ip 0: unknown
 * @skip:   set to the number of leading frames that are not the traced
 *          code's (fsm_trim())
 *
 * With the caller's state, the unwind starts at the caller's frame
 * (stack_trace_save_regs(), the way the kernel unwinds from an
 * exception's registers): regs->ip is the first entry, the caller's
 * callers follow. The unwinder never looks at this module's frames nor at
 * its own, whose ORC lookups in module text (and __kernel_text_address()
 * on each module address) made most of the cost over options/stacktrace.
 * The frames are those the walk from the current frame reports after the
 * module's frames: the unwinder reaches the caller's frame with the same
 * ip, sp and bp (callee-saved, restored through our frames' ORC data), and
 * the ORC entry of a return address describes the state after the call,
 * the state the caller was in during the call. Only ip, sp and bp are
 * set: a caller whose ORC data needed another register (stack realignment
 * prologues) cannot make calls to us from there, and the walk from the
 * current frame would not get that register either.
 * NMI: stack_trace_save_regs() is the same unwinder as stack_trace_save()
 * (arch_stack_walk(), no lock, no allocation, bounded by @size); @ks->regs
 * is written only inside this context level's reservation of @ks (see
 * fsm_record_event_to()), like @ks->ips, so a nested interrupt or NMI
 * uses another slot.
 * Context: as fsm_record_event(); @ks reserved for this context level.
 * Return: the number of frames in @ks->ips.
 */
static unsigned int notrace fsm_capture(const struct fsm_src *src,
					const struct fsm_caller *caller,
					struct fsm_kstack *ks,
					struct fsm_inst_pcpu *pc,
					unsigned int *skip)
{
	unsigned int nr;

#ifdef CONFIG_X86_64	/* FSM_CALLER() leaves ip 0 elsewhere */
	if (likely(caller && caller->ip && fsm_ks.stack_trace_save_regs)) {
		ks->regs.ip = caller->ip;
		ks->regs.sp = caller->sp;
		ks->regs.bp = caller->bp;
		ks->regs.cs = __KERNEL_CS;	/* !user_mode() */
		nr = fsm_kcall(stack_trace_save_regs)(&ks->regs, ks->ips,
							FSM_CAPTURE_DEPTH, 0);
		*skip = nr && ks->ips[0] - src->iter_start < src->iter_size;
		return nr;
	}
#endif
	fsm_count(&pc->own_frame_walks);
	nr = stack_trace_save(ks->ips, FSM_CAPTURE_DEPTH, 0);
	*skip = fsm_trim(src, ks->ips, nr);
	return nr;
}

/* What fsm_sweep_def() writes with. */
struct fsm_sweep_ctx {
	struct trace_event_file *file;
	struct fsm_inst_pcpu *pc;
};

/*
 * fsm_def_fn of fsm_map_def_sweep(): the stack_def of an id, again. The
 * map does not keep whether a stack was truncated: one of the largest
 * depth is marked truncated (it may have been exactly that deep).
 * Context: as fsm_record_event(), inside the map's insert window.
 */
static int notrace fsm_sweep_def(void *ctx, unsigned int index, unsigned int gen,
				 const unsigned long long *ips, unsigned int nr)
{
	struct fsm_sweep_ctx *sc = ctx;
	u32 flags = FSM_SID_F_REDEF;

	if (nr >= FSM_MAX_KERNEL_DEPTH)
		flags |= FSM_SID_F_TRUNCATED;
	if (!fsm_emit_def(sc->file, FSM_SID_MAKE(gen, index), flags,
			  (const unsigned long *)ips, nr))
		return 0;
	fsm_count(&sc->pc->inline_emits);
	fsm_count(&sc->pc->redefs);
	return 1;
}

/*
 * fsm_record_stack - capture, insert and write the records, with @ks the
 * buffers reserved for this context level on this CPU.
 * Context: as fsm_record_event().
 */
static bool notrace fsm_record_stack(struct fsm_src *src, struct fsm_inst *inst,
				     struct trace_event_file *file,
				     struct fsm_map *map, struct fsm_inst_pcpu *pc,
				     struct fsm_kstack *ks,
				     const struct fsm_caller *caller, bool user)
{
	unsigned long *ips = ks->ips;
	struct fsm_insert_result res;
	struct fsm_rb_pos pos;
	unsigned int nr, skip, n;
	u32 epoch, flags = 0, id;
	bool wrote = false;
	u64 cookie;
	int ret;

	nr = fsm_capture(src, caller, ks, pc, &skip);
	n = nr - skip;
	if (nr == FSM_CAPTURE_DEPTH || n > FSM_MAX_KERNEL_DEPTH) {
		flags |= FSM_SID_F_TRUNCATED;
		n = min_t(unsigned int, n, FSM_MAX_KERNEL_DEPTH);
	}

	fsm_count(&pc->requests);
	if (flags & FSM_SID_F_TRUNCATED)
		fsm_count(&pc->truncated);
	epoch = atomic_read(&inst->epoch);
	ret = fsm_map_insert(map, (const unsigned long long *)&ips[skip], n,
			     epoch, &res);
	cookie = user ? fsm_ustack_request(inst->id) : 0;	/* ustack.c */
	if (ret) {
		/* No id: the record carries the whole stack, never lost. */
		if (!fsm_emit_fallback(file, flags, -ret, cookie, &ips[skip], n)) {
			fsm_count(&pc->lost);
			return false;
		}
		fsm_count(&pc->records);
		fsm_count(&pc->fallbacks);
		return true;
	}

	id = FSM_SID_MAKE(res.generation, res.id);
	if (!fsm_emit_id(file, id, cookie, inst, &pos)) {
		fsm_count(&pc->lost);
		if (res.flags & FSM_INSERT_FIRST_EMIT)
			goto inline_lost;
		return false;
	}
	fsm_count(&pc->records);
	wrote = true;
	if (res.flags & FSM_INSERT_FIRST_EMIT) {
		/*
		 * First use of the id in this recording: its stack follows
		 * the id record, in a record of its own, whatever this CPU's
		 * stamp says (horizon 0), and the stamp takes the position.
		 */
		if (res.flags & FSM_INSERT_NEW)
			flags |= FSM_SID_F_NEW;
		if (pos.horizon)
			(void)fsm_map_def_claim(map, res.id, res.generation,
						pos.now, 0);
	} else if (!pos.horizon ||
		   !fsm_map_def_claim(map, res.id, res.generation, pos.now,
				      pos.fresh)) {
		goto sweep;	/* this CPU's buffer has the stack recently */
	} else {
		/*
		 * This CPU's buffer took a horizon of records since the id's
		 * last stack_def here (or has none: another CPU defined it, or
		 * the stamp was evicted): the older one may be overwritten
		 * while this use stays. The position was read after the id
		 * record and before this stack_def, so the stamp is never
		 * ahead of the definition it stands for.
		 */
		flags |= FSM_SID_F_REDEF;
	}
	if (fsm_emit_def(file, id, flags, &ips[skip], n)) {
		fsm_count(&pc->inline_emits);
		if (flags & FSM_SID_F_REDEF)
			fsm_count(&pc->redefs);
		goto sweep;
	}
	if (pos.horizon)
		fsm_map_def_unclaim(map, res.id, res.generation, pos.now);
	if (flags & FSM_SID_F_REDEF) {
		fsm_count(&pc->inline_lost);
		return true;	/* the next use of the id on this CPU is due again */
	}
inline_lost:
	fsm_count(&pc->inline_lost);
	/*
	 * The id's stack did not reach the trace (tracing_on=0, a full
	 * non-overwrite buffer...): start a new epoch so that ids carry their
	 * stack once more. One winner per epoch; a plain value compared by
	 * the map, no ordering needed.
	 */
	atomic_cmpxchg(&inst->epoch, epoch, epoch + 1 ? epoch + 1 : 1);
	return wrote;	/* the id record went in, its stack_def did not */

sweep:
	/*
	 * The ids used on this CPU since their last stack_def here, whose
	 * stack_def is now a horizon behind: write it again, after those
	 * uses (fsm_map_def_sweep(); a few stamp sets per call, at most
	 * four records).
	 */
	if (pos.horizon) {
		struct fsm_sweep_ctx sc = { .file = file, .pc = pc };

		fsm_map_def_sweep(map, pos.now, pos.horizon, fsm_sweep_def, &sc);
		/* the user map's, in task context, if it fell behind here */
		fsm_ustack_sweep_kick(inst, &pos);	/* ustack_deliver.c */
	}
	return true;
}

/*
 * fsm_record_nested - deeper than task/softirq/irq/NMI: no buffer for the
 * stack. Still write an id record, without id or stack (stack_fallback,
 * reason "nested"): records are paired with their source event by
 * position on the CPU, so a missing record would pair this event with the
 * next event's stack. Context: as fsm_record_event().
 */
static bool notrace fsm_record_nested(struct trace_event_file *file,
				      struct fsm_inst_pcpu *pc)
{
	fsm_count(&pc->nested);
	return fsm_emit_fallback(file, 0, FSM_SID_REASON_NESTED, 0, NULL, 0);
}

/**
 * fsm_record_event - write the stack records of one source event.
 * @inst: the instance whose buffer gets them
 * @src:  the source event (its tracepoint iterator is trimmed from the
 *        stack)
 * @caller: the state of the kernel function that called the callback
 *        (FSM_CALLER()), or NULL: the capture then walks from here
 *
 * The one entry point of every source backend (src_probe.c, src_trig.c):
 * captures the current kernel stack, gets its id from @inst's map
 * and writes the id record (plus the stack_def of a first use) into
 * @inst's buffer, right behind the source record the caller just wrote on
 * this CPU. Does nothing while @inst does not record.
 *
 * Context: any (task, softirq, irq, NMI) with preemption disabled. No lock,
 * no allocation, bounded. Every request that does not produce a record is
 * counted. Return: an id record (stack_id, stack_id_user or
 * stack_fallback) was written.
 */
bool notrace fsm_record_event(struct fsm_inst *inst, struct fsm_src *src,
			      const struct fsm_caller *caller)
{
	/*
	 * inst->file and inst->map are written before the probe is
	 * registered; tracepoint_probe_register() publishes the probe with
	 * rcu_assign_pointer(), which orders them before our call. The file
	 * stays valid until we return: the kernel frees an instance's event
	 * files only after tracepoint_synchronize_unregister(), which waits
	 * for this preemption-disabled section.
	 */
	return fsm_record_event_to(inst, READ_ONCE(inst->file), src, true,
				   caller);
}

/**
 * fsm_record_event_to - fsm_record_event() through a given stack_id file.
 * @inst: the instance whose buffer gets the records
 * @file: our stackmap:stack_id event file in @inst's instance (NULL: do
 *        nothing), valid until this returns
 * @src:  the source (for the trim)
 * @user: also request the user stack (when @inst has user stacks on)
 * @caller: as for fsm_record_event()
 *
 * For attach paths that write whether or not stackmap:stack_id is enabled
 * in the instance (the stackmap trigger, trigger.c). @inst's map must have
 * been published (smp_store_release()) before this can be called.
 * Context: as fsm_record_event(). Return: as fsm_record_event().
 */
bool notrace fsm_record_event_to(struct fsm_inst *inst,
				 struct trace_event_file *file,
				 struct fsm_src *src, bool user,
				 const struct fsm_caller *caller)
{
	struct fsm_inst_pcpu *pc;
	struct fsm_kstacks *ks;
	struct fsm_map *map;
	bool done;
	int level;

	map = READ_ONCE(inst->map);
	if (unlikely(!file || !map))
		return false;
	if (trace_trigger_soft_disabled(file))
		return false;

	pc = this_cpu_ptr(inst->pcpu);
	/*
	 * Reserve this context level's buffer, as __ftrace_trace_stack()
	 * does. Preemption is off, so we stay on this CPU. The increment is
	 * a single CPU-local instruction: an interrupt or NMI sees the value
	 * before or after it, and one that came in between has restored it
	 * when it returns. barrier() keeps the compiler from moving buffer
	 * accesses outside the reservation.
	 */
	ks = this_cpu_ptr(fsm_kstacks);
	level = __this_cpu_inc_return(fsm_kstacks->reserve) - 1;
	barrier();
	if (likely(level < FSM_KSTACK_NESTING))
		done = fsm_record_stack(src, inst, file, map, pc,
					&ks->stacks[level], caller, user);
	else
		done = fsm_record_nested(file, pc);
	barrier();
	__this_cpu_dec(fsm_kstacks->reserve);
	return done;
}


/**
 * fsm_record_init - allocate the capture's per-CPU stack buffers.
 * Context: task (module init), before any source is attached.
 * Return: 0 or -ENOMEM.
 */
int fsm_record_init(void)
{
	fsm_kstacks = alloc_percpu(struct fsm_kstacks);
	if (!fsm_kstacks)
		return -ENOMEM;
	if (!fsm_ks.stack_trace_save_regs)
		pr_info("stack_trace_save_regs not found: stack captures walk the module's own frames (slower)\n");
	return 0;
}

/**
 * fsm_record_exit - free the per-CPU stack buffers.
 * Context: task (module exit or failed init), after every source and
 * trigger was detached and tracepoint_synchronize_unregister() returned.
 */
void fsm_record_exit(void)
{
	free_percpu(fsm_kstacks);
	fsm_kstacks = NULL;
}
