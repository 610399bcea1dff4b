// SPDX-License-Identifier: GPL-2.0
/*
 * rb_reset.c - ring buffer resets, seen where they happen (rb_reset.h).
 *
 * Hooked, each with a kretprobe whose entry handler counts a start and
 * whose return handler counts a return, in the bucket of each buffer the
 * call names (its struct trace_buffer pointer arguments):
 *
 *   ring_buffer_reset_online_cpus(buffer)   echo > trace, trace-cmd reset,
 *                                           trace_clock, tracer changes
 *   ring_buffer_reset_cpu(buffer, cpu)      per_cpu/cpuN/trace truncated
 *   ring_buffer_reset(buffer)               every CPU, online or not
 *   ring_buffer_swap_cpu(a, b, cpu)         a per-CPU snapshot swap (only
 *                                           with RING_BUFFER_ALLOW_SWAP)
 *   ring_buffer_subbuf_order_set(buffer, o) new sub-buffers, old records
 *                                           freed, counters kept (6.8+)
 *
 * The first three are required (a kernel without them is told in dmesg:
 * then only the counters of fsm_rb_position() see a reset); the other two
 * are hooked where the kernel has them. A whole snapshot swap (echo 1 >
 * snapshot) exchanges the instance's buffer pointers: fsm_rb_position()
 * sees the pointer change itself.
 *
 * Why buckets: the module has no map from a buffer to its instance
 * (struct trace_array is private), and needs none: a reset of another
 * buffer of the same bucket only costs that bucket's instances one round
 * of re-definitions, as a redefine does.
 *
 * Ordering, the writer (the resetting thread, kretprobe handlers):
 *   (W1) started[b]++, fully ordered (atomic_inc_return): before every
 *        store of the reset;
 *   ... the reset: recording disabled, synchronize_rcu() (every writer in
 *       flight, preemption off, is done; not in ring_buffer_swap_cpu(),
 *       which refuses a CPU buffer in the middle of a commit instead),
 *       the CPU buffers erased, recording enabled ...
 *   (W2) done[b]++ after smp_mb__before_atomic(): after every store of it.
 * The reader (fsm_rb_reset_seq(), called by fsm_rb_position() after the
 * record it places was committed and the buffer's counters were read):
 *   (R1) d = done[b]; smp_rmb(), pairs with (W2) and (W1);
 *   (R2) s = started[b].
 * - Reading (R1) after (W2) makes (R2) see that reset's (W1) (W1 is
 *   before W2 in its thread): s - d counts resets started and not
 *   returned, never negative. s == d: each reset counted in d started and
 *   returned before (R1), and no other had started by (R2) (it would be
 *   counted in s without its return in d): *busy is false only when
 *   nothing is under way.
 * - A record committed after the reset of its CPU buffer (kept in the
 *   buffer) read the reset's stores first (the reservation, the
 *   counters), and fsm_rb_position() has an smp_rmb() between those loads
 *   and (R1) (pairs with W1): it sees s moved, or *busy. So the first
 *   record kept after a reset never takes the previous state for current.
 * - After (R1) saw a (W2), the smp_rmb() also orders every later load of
 *   this CPU (the definitions the record path writes next) after the
 *   reset: they go to the reset buffer.
 * A kretprobe holds an instance per call in flight (FSM_RB_RESET_ACTIVE
 * at least); a call while all are taken is missed, start and return
 * alike (the kernel counts it in nmissed; we say so at unload). Callers
 * are process context and serialised per buffer by the ring buffer's
 * mutex: a miss needs that many threads inside these calls at once.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/hash.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>

#include "rb_reset.h"

#define FSM_RB_RESET_BITS	6
#define FSM_RB_RESET_ACTIVE	64

static atomic_t fsm_rb_started[1 << FSM_RB_RESET_BITS];
static atomic_t fsm_rb_done[1 << FSM_RB_RESET_BITS];

static unsigned int notrace fsm_rb_bucket(const struct trace_buffer *buffer)
{
	return hash_ptr((void *)buffer, FSM_RB_RESET_BITS);
}

u32 notrace fsm_rb_reset_seq(const struct trace_buffer *buffer, bool *busy)
{
	unsigned int b = fsm_rb_bucket(buffer);
	u32 d, s;

	d = atomic_read(&fsm_rb_done[b]);		/* (R1) */
	smp_rmb();	/* pairs with (W2) and, through it, (W1) */
	s = atomic_read(&fsm_rb_started[b]);		/* (R2) */
	*busy = s != d;
	return s;
}

/* the buffers a call names, per kretprobe instance */
struct fsm_rb_reset_call {
	struct trace_buffer *buf[2];
};

/*
 * Entry: count a start in the bucket of each buffer argument.
 * Context: the kprobe's handler (int3 or ftrace), in the calling thread.
 */
static int fsm_rb_reset_entry(struct kretprobe_instance *ri,
			      struct pt_regs *regs, unsigned int nbuf)
{
	struct fsm_rb_reset_call *c = (struct fsm_rb_reset_call *)ri->data;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		c->buf[i] = i < nbuf ? (struct trace_buffer *)
				       regs_get_kernel_argument(regs, i) : NULL;
		if (c->buf[i])	/* (W1) */
			(void)atomic_inc_return(&fsm_rb_started[fsm_rb_bucket(c->buf[i])]);
	}
	return 0;
}

static int fsm_rb_reset_entry1(struct kretprobe_instance *ri,
			       struct pt_regs *regs)
{
	return fsm_rb_reset_entry(ri, regs, 1);
}

static int fsm_rb_reset_entry2(struct kretprobe_instance *ri,
			       struct pt_regs *regs)
{
	return fsm_rb_reset_entry(ri, regs, 2);
}

/* Return: count a return where the entry counted a start. */
static int fsm_rb_reset_ret(struct kretprobe_instance *ri,
			    struct pt_regs *regs)
{
	struct fsm_rb_reset_call *c = (struct fsm_rb_reset_call *)ri->data;
	unsigned int i;

	smp_mb__before_atomic();	/* (W2): the reset's stores first */
	for (i = 0; i < 2; i++)
		if (c->buf[i])
			atomic_inc(&fsm_rb_done[fsm_rb_bucket(c->buf[i])]);
	return 0;
}

#define FSM_RB_RESET_KRP(sym, entry)					\
	{								\
		.kp.symbol_name = sym,					\
		.entry_handler = entry,					\
		.handler = fsm_rb_reset_ret,				\
		.data_size = sizeof(struct fsm_rb_reset_call),		\
	}

static struct kretprobe fsm_rb_reset_krps[] = {
	FSM_RB_RESET_KRP("ring_buffer_reset_online_cpus", fsm_rb_reset_entry1),
	FSM_RB_RESET_KRP("ring_buffer_reset_cpu", fsm_rb_reset_entry1),
	FSM_RB_RESET_KRP("ring_buffer_reset", fsm_rb_reset_entry1),
	FSM_RB_RESET_KRP("ring_buffer_swap_cpu", fsm_rb_reset_entry2),
	FSM_RB_RESET_KRP("ring_buffer_subbuf_order_set", fsm_rb_reset_entry1),
};
/* the first three are in every kernel the module supports */
#define FSM_RB_RESET_REQUIRED	3

static bool fsm_rb_reset_on[ARRAY_SIZE(fsm_rb_reset_krps)];

/* One dmesg line: the hooks placed, or the first that could not be. */
void fsm_rb_reset_init(void)
{
	unsigned int i, hooked = 0, failed = 0;
	const char *first = NULL;
	int ret, first_ret = 0;

	for (i = 0; i < ARRAY_SIZE(fsm_rb_reset_krps); i++) {
		struct kretprobe *krp = &fsm_rb_reset_krps[i];

		krp->maxactive = max_t(int, FSM_RB_RESET_ACTIVE,
				       4 * num_possible_cpus());
		ret = register_kretprobe(krp);
		if (!ret) {
			fsm_rb_reset_on[i] = true;
			hooked++;
		} else if (i < FSM_RB_RESET_REQUIRED || ret != -ENOENT) {
			if (!failed++) {
				first = krp->kp.symbol_name;
				first_ret = ret;
			}
		}
	}
	if (failed)
		pr_warn("ring buffer resets: %u kretprobes placed, %u not (%s: %d): a reset of the buffer refilled past the module's last record is not seen (write redefine to stack_map after one)\n",
			hooked, failed, first, first_ret);
	else
		pr_info("ring buffer resets seen through %u kretprobes\n", hooked);
}

void fsm_rb_reset_exit(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fsm_rb_reset_krps); i++) {
		struct kretprobe *krp = &fsm_rb_reset_krps[i];

		if (!fsm_rb_reset_on[i])
			continue;
		unregister_kretprobe(krp);
		fsm_rb_reset_on[i] = false;
		/* out of instances, or skipped as a nested kprobe hit */
		if (krp->nmissed || krp->kp.nmissed)
			pr_warn("%s: %lu calls missed by the hook (out of instances or nested): resets not seen by it\n",
				krp->kp.symbol_name,
				(unsigned long)krp->nmissed + krp->kp.nmissed);
	}
}
