// SPDX-License-Identifier: GPL-2.0
/*
 * fsm_kunit.c - KUnit tests of the ftrace_stackmap core inside a kernel.
 *
 * The module carries its own copy of the C++ core (kunit_core.cpp includes
 * the same unity file as ftrace_stackmap.ko) and of its platform glue, and
 * drives the map from every context the core promises to support: task,
 * softirq (timer), hardirq (hrtimer in hard mode, irq_work) and NMI (a
 * self-IPI with NMI_VECTOR and a local NMI handler on x86), alone and
 * concurrently with resets. Results go to dmesg (KTAP) and to
 * /sys/kernel/debug/kunit/<suite>/results.
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/stacktrace.h>
#include <linux/timer.h>
#ifdef CONFIG_X86_LOCAL_APIC
#include <asm/apic.h>
#include <asm/nmi.h>
#endif

#include "compat/timers.h"
#include "fsm_core.h"

#define KT_BITS		8
#define KT_STACKS	32	/* distinct synthetic stacks */
#define KT_DEPTH	12

/* Synthetic stack @i: distinct for each i, deterministic. */
static void kt_stack(unsigned int i, unsigned long long *ips)
{
	unsigned int j;

	for (j = 0; j < KT_DEPTH; j++)
		ips[j] = 0xffffffff81000000ULL + i * 0x1000 + j * 0x10;
}

static struct fsm_map *kt_map_create(struct kunit *test, unsigned int bits)
{
	struct fsm_map_params p = {
		.bits = bits,
		.max_depth = FSM_MAX_KERNEL_DEPTH,
	};
	struct fsm_map *map;
	int err = 0;

	get_random_bytes(p.key, sizeof(p.key));
	map = fsm_map_create(&p, &err);
	KUNIT_ASSERT_NOT_NULL_MSG(test, map, "fsm_map_create: %d", err);
	return map;
}

/* Check that published id @id holds synthetic stack @i. */
static void kt_expect_record(struct kunit *test, struct fsm_map *map,
			     unsigned int id, unsigned int i)
{
	unsigned long long want[KT_DEPTH];
	const unsigned long long *ips;
	unsigned long long hits;
	unsigned int nr;

	kt_stack(i, want);
	KUNIT_ASSERT_EQ(test, fsm_map_lookup_id(map, id, &ips, &nr, &hits), 0);
	KUNIT_ASSERT_EQ(test, nr, (unsigned int)KT_DEPTH);
	KUNIT_EXPECT_EQ(test, memcmp(ips, want, sizeof(want)), 0);
}

static void fsm_test_selfcheck(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, fsm_core_selfcheck(), 0);
}

static void fsm_test_bad_params(struct kunit *test)
{
	struct fsm_map_params p = { .max_depth = FSM_MAX_KERNEL_DEPTH };
	int err = 0;

	p.bits = FSM_BITS_MIN - 1;
	KUNIT_EXPECT_NULL(test, fsm_map_create(&p, &err));
	KUNIT_EXPECT_EQ(test, err, -EINVAL);
	p.bits = FSM_BITS_MAX + 1;
	err = 0;
	KUNIT_EXPECT_NULL(test, fsm_map_create(&p, &err));
	KUNIT_EXPECT_EQ(test, err, -EINVAL);
	p.bits = FSM_BITS_MIN;
	p.max_depth = FSM_MAX_MAP_DEPTH + 1;
	err = 0;
	KUNIT_EXPECT_NULL(test, fsm_map_create(&p, &err));
	KUNIT_EXPECT_EQ(test, err, -EINVAL);
}

/* Task context: real kernel stacks from stack_trace_save dedup to one id. */
static noinline unsigned int kt_insert_here(struct fsm_map *map,
					    struct fsm_insert_result *res)
{
	unsigned long entries[32];
	unsigned int nr;
	int ret;

	BUILD_BUG_ON(sizeof(unsigned long) != sizeof(unsigned long long));
	nr = stack_trace_save(entries, ARRAY_SIZE(entries), 0);
	/* inserts run with preemption off, as the module's (fsm_core.h) */
	preempt_disable();
	ret = fsm_map_insert(map, (const unsigned long long *)entries, nr, 0,
			     res);
	preempt_enable();
	return ret ? 0 : nr;
}

static void fsm_test_task(struct kunit *test)
{
	struct fsm_map *map = kt_map_create(test, KT_BITS);
	struct fsm_insert_result r[11];
	struct fsm_map_stats st;
	unsigned int i;

	/*
	 * One call site: the same kernel stack every time. The loop has no
	 * branch on i and i is hidden from the optimiser: GCC for arm64
	 * peeled the first iteration of a loop that tested i == 0, a second
	 * call site with another return address, hence another stack.
	 */
	for (i = 0; i < ARRAY_SIZE(r); i++) {
		OPTIMIZER_HIDE_VAR(i);
		KUNIT_ASSERT_GT(test, kt_insert_here(map, &r[i]), 0U);
	}
	KUNIT_EXPECT_TRUE(test, r[0].flags & FSM_INSERT_NEW);
	for (i = 1; i < ARRAY_SIZE(r); i++) {
		KUNIT_EXPECT_EQ(test, r[i].id, r[0].id);
		KUNIT_EXPECT_FALSE(test, r[i].flags & FSM_INSERT_NEW);
	}
	fsm_map_stats(map, &st);
	KUNIT_EXPECT_EQ(test, st.entries, 1U);
	KUNIT_EXPECT_EQ(test, st.inserts, 1ULL);
	KUNIT_EXPECT_EQ(test, st.hits, 10ULL);
	fsm_map_destroy(map);
}

/* ---- contexts: one insert worker used by timer, hrtimer, irq_work, NMI ---- */

struct kt_ctx {
	struct fsm_map *map;
	atomic_t calls;
	atomic_t ok;
	atomic_t wrong_ctx;
	atomic_t drops;
	/*
	 * idgen[i]: generation << 32 | id last returned for stack i (last
	 * writer wins; one word so that id and generation always match).
	 */
	u64 idgen[KT_STACKS];
	int (*in_ctx)(void);
};

static void kt_insert_from(struct kt_ctx *c)
{
	unsigned long long ips[KT_DEPTH];
	struct fsm_insert_result r;
	unsigned int i = atomic_inc_return(&c->calls) % KT_STACKS;
	int ret;

	if (c->in_ctx && !c->in_ctx())
		atomic_inc(&c->wrong_ctx);
	kt_stack(i, ips);
	/* inserts run with preemption off, as the module's (fsm_core.h) */
	preempt_disable();
	ret = fsm_map_insert(c->map, ips, KT_DEPTH, 0, &r);
	preempt_enable();
	if (ret) {
		atomic_inc(&c->drops);
		return;
	}
	WRITE_ONCE(c->idgen[i], (u64)r.generation << 32 | r.id);
	atomic_inc(&c->ok);
}

/*
 * After the fact, in task context: every recorded (id, gen) of the current
 * generation must name the stack that was inserted.
 */
static void kt_check_ids(struct kunit *test, struct kt_ctx *c)
{
	struct fsm_map_stats st;
	unsigned int i;

	fsm_map_stats(c->map, &st);
	for (i = 0; i < KT_STACKS; i++) {
		u64 v = READ_ONCE(c->idgen[i]);

		if (v && (u32)(v >> 32) == st.generation)
			kt_expect_record(test, c->map, (u32)v, i);
	}
}

static int kt_in_softirq(void) { return in_serving_softirq(); }
static int kt_in_hardirq(void) { return in_hardirq(); }
static int kt_in_nmi(void) { return in_nmi(); }

static struct kt_ctx *kt_ctx_new(struct kunit *test, int (*in_ctx)(void))
{
	struct kt_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->map = kt_map_create(test, KT_BITS);
	c->in_ctx = in_ctx;
	return c;
}

static void kt_ctx_finish(struct kunit *test, struct kt_ctx *c, int min_calls)
{
	struct fsm_map_stats st;
	unsigned long long drops = 0;
	unsigned int r;

	KUNIT_EXPECT_GE(test, atomic_read(&c->calls), min_calls);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->wrong_ctx), 0);
	kt_check_ids(test, c);
	fsm_map_stats(c->map, &st);
	for (r = 1; r < FSM_DROP_NR_REASONS; r++)
		drops += st.drops[r];
	/* every call is exactly one of: hit, insert, drop */
	KUNIT_EXPECT_EQ(test, st.hits + st.inserts + drops,
			(unsigned long long)atomic_read(&c->calls));
	KUNIT_EXPECT_EQ(test, drops, (unsigned long long)atomic_read(&c->drops));
	fsm_map_destroy(c->map);
}

/* softirq: a timer_list callback */
struct kt_timer {
	struct timer_list t;
	struct kt_ctx *c;
	int left;
};

static void kt_timer_fn(struct timer_list *t)
{
	struct kt_timer *kt = fsm_timer_container_of(kt, t, t);

	kt_insert_from(kt->c);
	if (--kt->left > 0)
		mod_timer(&kt->t, jiffies + 1);
}

static void fsm_test_softirq(struct kunit *test)
{
	struct kt_ctx *c = kt_ctx_new(test, kt_in_softirq);
	struct kt_timer kt = { .c = c, .left = 64 };
	unsigned long deadline = jiffies + 10 * HZ;

	timer_setup_on_stack(&kt.t, kt_timer_fn, 0);
	mod_timer(&kt.t, jiffies + 1);
	while (READ_ONCE(kt.left) > 0 && time_before(jiffies, deadline))
		usleep_range(5000, 10000);
	fsm_timer_delete_sync(&kt.t);
	fsm_timer_destroy_on_stack(&kt.t);
	kt_ctx_finish(test, c, 64);
}

/* hardirq: an hrtimer in hard mode */
struct kt_hrt {
	struct hrtimer t;
	struct kt_ctx *c;
	atomic_t left;
};

static enum hrtimer_restart kt_hrt_fn(struct hrtimer *t)
{
	struct kt_hrt *h = container_of(t, struct kt_hrt, t);

	kt_insert_from(h->c);
	if (atomic_dec_return(&h->left) <= 0)
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, ns_to_ktime(100 * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static void kt_hrt_run(struct kt_hrt *h, struct kt_ctx *c, int n)
{
	h->c = c;
	atomic_set(&h->left, n);
	fsm_hrtimer_setup(&h->t, kt_hrt_fn, CLOCK_MONOTONIC,
			  HRTIMER_MODE_REL_HARD);
	hrtimer_start(&h->t, ns_to_ktime(100 * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_HARD);
}

static void kt_hrt_wait(struct kt_hrt *h)
{
	unsigned long deadline = jiffies + 20 * HZ;

	while (atomic_read(&h->left) > 0 && time_before(jiffies, deadline))
		usleep_range(5000, 10000);
	hrtimer_cancel(&h->t);
}

static void fsm_test_hardirq(struct kunit *test)
{
	struct kt_ctx *c = kt_ctx_new(test, kt_in_hardirq);
	struct kt_hrt h;

	kt_hrt_run(&h, c, 256);
	kt_hrt_wait(&h);
	kt_ctx_finish(test, c, 256);
}

/* hardirq: irq_work (the path NMI users take to get out of NMI) */
struct kt_iw {
	struct irq_work w;
	struct kt_ctx *c;
};

static void kt_iw_fn(struct irq_work *w)
{
	kt_insert_from(container_of(w, struct kt_iw, w)->c);
}

static void fsm_test_irq_work(struct kunit *test)
{
	struct kt_ctx *c = kt_ctx_new(test, kt_in_hardirq);
	struct kt_iw iw = { .c = c };
	int i;

	iw.w = IRQ_WORK_INIT_HARD(kt_iw_fn);
	for (i = 0; i < 128; i++) {
		irq_work_queue(&iw.w);
		irq_work_sync(&iw.w);
	}
	kt_ctx_finish(test, c, 128);
}

/* NMI: a self-IPI with NMI_VECTOR, handled by a local NMI handler. */
#ifdef CONFIG_X86_LOCAL_APIC
static struct kt_ctx *kt_nmi_ctx;
static atomic_t kt_nmi_armed;

static int kt_nmi_handler(unsigned int cmd, struct pt_regs *regs)
{
	struct kt_ctx *c;

	if (!atomic_xchg(&kt_nmi_armed, 0))
		return NMI_DONE;
	c = READ_ONCE(kt_nmi_ctx);
	if (c)
		kt_insert_from(c);
	return NMI_HANDLED;
}

static int kt_nmi_burst(struct kt_ctx *c, int n)
{
	int i, sent = 0;

	for (i = 0; i < n; i++) {
		unsigned long deadline = jiffies + HZ;

		atomic_set(&kt_nmi_armed, 1);
		apic->send_IPI_self(NMI_VECTOR);
		/* the NMI is delivered before we get far; bounded wait */
		while (atomic_read(&kt_nmi_armed) && time_before(jiffies, deadline))
			cpu_relax();
		if (!atomic_read(&kt_nmi_armed))
			sent++;
	}
	atomic_set(&kt_nmi_armed, 0);
	return sent;
}

static void fsm_test_nmi(struct kunit *test)
{
	struct kt_ctx *c = kt_ctx_new(test, kt_in_nmi);
	int ret, got;

	WRITE_ONCE(kt_nmi_ctx, c);
	ret = register_nmi_handler(NMI_LOCAL, kt_nmi_handler, 0, "fsm_kunit");
	KUNIT_ASSERT_EQ(test, ret, 0);
	got = kt_nmi_burst(c, 128);
	unregister_nmi_handler(NMI_LOCAL, "fsm_kunit");
	WRITE_ONCE(kt_nmi_ctx, NULL);
	KUNIT_EXPECT_EQ(test, got, 128);
	kt_ctx_finish(test, c, 128);
}
#endif

/*
 * Resets racing inserts from hardirq (hrtimer), NMI and another task: the
 * resetter never waits for an inserter that could be inside the old
 * generation (the core drains them); inserters never block (they drop with
 * "resetting"). Afterwards every (id, generation) of the current generation
 * must still name the stack inserted for it.
 */
struct kt_task {
	struct kt_ctx *c;
	atomic_t stop;
};

static int kt_task_fn(void *arg)
{
	struct kt_task *t = arg;

	while (!atomic_read(&t->stop)) {
		kt_insert_from(t->c);
		cond_resched();
	}
	return 0;
}

static void fsm_test_reset_race(struct kunit *test)
{
	struct kt_ctx *c = kt_ctx_new(test, NULL);
	struct kt_task kt = { .c = c };
	struct task_struct *th;
	struct kt_hrt h;
	unsigned int gen0, gen1, i;
	struct fsm_map_stats st;

	fsm_map_stats(c->map, &st);
	gen0 = st.generation;
	th = kthread_run(kt_task_fn, &kt, "fsm_kunit_ins");
	KUNIT_ASSERT_FALSE(test, IS_ERR(th));
	get_task_struct(th);
	kt_hrt_run(&h, c, 2000);
#ifdef CONFIG_X86_LOCAL_APIC
	WRITE_ONCE(kt_nmi_ctx, c);
	KUNIT_ASSERT_EQ(test, register_nmi_handler(NMI_LOCAL, kt_nmi_handler, 0,
						   "fsm_kunit"), 0);
#endif
	for (i = 0; i < 50; i++) {
		gen1 = fsm_map_reset(c->map);
		KUNIT_EXPECT_NE(test, gen1, gen0);
		gen0 = gen1;
#ifdef CONFIG_X86_LOCAL_APIC
		kt_nmi_burst(c, 4);
#endif
		usleep_range(200, 400);
	}
	kt_hrt_wait(&h);
#ifdef CONFIG_X86_LOCAL_APIC
	unregister_nmi_handler(NMI_LOCAL, "fsm_kunit");
	WRITE_ONCE(kt_nmi_ctx, NULL);
#endif
	atomic_set(&kt.stop, 1);
	kthread_stop(th);
	put_task_struct(th);
	fsm_map_stats(c->map, &st);
	KUNIT_EXPECT_EQ(test, st.generation, gen0);
	KUNIT_EXPECT_GT(test, atomic_read(&c->ok), 0);
	kt_ctx_finish(test, c, 1);
}

static struct kunit_case fsm_core_cases[] = {
	KUNIT_CASE(fsm_test_selfcheck),
	KUNIT_CASE(fsm_test_bad_params),
	KUNIT_CASE(fsm_test_task),
	KUNIT_CASE(fsm_test_softirq),
	KUNIT_CASE(fsm_test_hardirq),
	KUNIT_CASE(fsm_test_irq_work),
#ifdef CONFIG_X86_LOCAL_APIC
	KUNIT_CASE(fsm_test_nmi),
#endif
	KUNIT_CASE(fsm_test_reset_race),
	{}
};

static struct kunit_suite fsm_core_suite = {
	.name = "ftrace_stackmap_core",
	.test_cases = fsm_core_cases,
};

kunit_test_suite(fsm_core_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests of the ftrace_stackmap core");
