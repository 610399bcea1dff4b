// SPDX-License-Identifier: GPL-2.0
/*
 * ftrace_stackmap - record each distinct stack once, put a stack id in the
 * trace.
 *
 * main.c: module parameters, the load-time self-check of the C++ core, and
 * the order in which the parts of the module start and stop (fsm_init(),
 * fsm_teardown()). The parts do not start or stop each other.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/preempt.h>
#include <linux/smp.h>
#include <linux/kernel.h>
#include <linux/kstrtox.h>
#include <linux/kallsyms.h>
#include <linux/stacktrace.h>
#include <linux/string.h>

#include "compat/compat.h"
#include "compat/evfiles.h"
#include "compat/ksyms.h"
#include "fsm.h"
#include "param.h"
#include "tracing.h"
#include "ustack.h"

static bool fsm_force_debugfs;
module_param_named(force_debugfs, fsm_force_debugfs, bool, 0444);
MODULE_PARM_DESC(force_debugfs,
		 "Offer the nodes under /sys/kernel/debug/ftrace_stackmap even when tracefs is usable (tests)");

/*
 * force_probe_sources: sources are tracepoint probes even where the trigger
 * path is available, as on a kernel without it (Debian's arm64): lets the
 * x86 guests test that path.
 */
static bool fsm_force_probe_sources;
module_param_named(force_probe_sources, fsm_force_probe_sources, bool, 0444);
MODULE_PARM_DESC(force_probe_sources,
		 "Sources are tracepoint probes even where sources through triggers are available (tests)");

static bool show_selfcheck_trace;
module_param(show_selfcheck_trace, bool, 0444);
MODULE_PARM_DESC(show_selfcheck_trace,
		 "Print the load-time stack trace taken through the C++ core (default 0)");

struct fsm_trace_check {
	unsigned int cxx_frames;	/* frames in fsm::Descend<N>::run */
	bool reached_caller;		/* a frame in fsm_trace_through_cxx */
};

/*
 * Called from the innermost C++ frame: is the C++ part walkable?
 * Context: module init only (single-threaded), hence the static buffers.
 */
static noinline void __init fsm_trace_probe(void *arg)
{
	static unsigned long entries[32] __initdata;
	static char sym[KSYM_SYMBOL_LEN] __initdata;
	struct fsm_trace_check *chk = arg;
	unsigned int nr, i;

	nr = stack_trace_save(entries, ARRAY_SIZE(entries), 0);
	for (i = 0; i < nr; i++) {
		sprint_symbol_no_offset(sym, entries[i]);
		if (show_selfcheck_trace)
			pr_info("selfcheck trace [%u] %pS\n", i, (void *)entries[i]);
		/* mangled fsm::(anonymous namespace)::Descend<N>::run */
		if (strstr(sym, "Descend") && strstr(sym, "3run"))
			chk->cxx_frames++;
		else if (chk->cxx_frames && strstr(sym, "fsm_trace_through_cxx"))
			chk->reached_caller = true;
	}
}

/*
 * fsm_trace_through_cxx - check that kernel stack traces walk through the
 * C++ core (ORC data from objtool for the C++ object). A failure does not
 * stop the module: traces would only be shorter. Say so once.
 */
static noinline void __init fsm_trace_through_cxx(void)
{
	struct fsm_trace_check chk = {};

	fsm_core_call_through(fsm_trace_probe, &chk);
	if (chk.cxx_frames < 4 || !chk.reached_caller)
		pr_warn("stack traces do not unwind through the C++ core (%u C++ frames, caller %sreached)\n",
			chk.cxx_frames, chk.reached_caller ? "" : "not ");
	else if (show_selfcheck_trace)
		pr_info("selfcheck: unwound through %u C++ frames into the C caller\n",
			chk.cxx_frames);
}

/* The registry's hooks (struct fsm_inst_hooks): the layers it calls up to. */
static void fsm_inst_created(struct fsm_inst *inst)
{
	fsm_inst_kick_worker();
}

static const struct fsm_inst_hooks fsm_inst_hooks = {
	.created = fsm_inst_created,
	.ids_busy = fsm_ustack_ids_busy,
	.id_reset = fsm_ustack_id_reset,
};

static void fsm_teardown(void);

static int __init fsm_init(void)
{
	const struct fsm_src_ops *ops;
	int ret;

	fsm_map_init();
	fsm_inst_set_hooks(&fsm_inst_hooks);

	/* The core reads the CPU number through fsm_plat_cpu(): check its path. */
	preempt_disable();
	ret = fsm_core_cpu() != raw_smp_processor_id();
	preempt_enable();
	if (ret) {
		pr_err("core CPU number disagrees with raw_smp_processor_id()\n");
		return -EINVAL;
	}

	ret = fsm_core_selfcheck();
	if (ret) {
		pr_err("core self-check failed (%d)\n", ret);
		return ret;
	}
	fsm_trace_through_cxx();

	/* user stacks first: stack_id probes may request them at once */
	ret = fsm_ustack_init();
	if (ret)
		return ret;
	/*
	 * The tracing side, in dependency order: compat (kernel symbols),
	 * nodes, the top level instance and "instances", our trace events,
	 * the source events' module notifier and the trigger-path sources'
	 * removal hooks, then instances are followed
	 * (the top level's events= sources and nodes, the watch). A trigger
	 * that cannot be registered is not a load failure.
	 */
	fsm_compat_init(fsm_force_debugfs);
	fsm_ksyms_init();	/* every other borrowed kernel symbol, once */
	ret = fsm_compat_evfiles_init();	/* can event files be found? */
	if (!ret)
		ret = fsm_nodes_init();
	if (!ret)
		ret = fsm_lifecycle_init();
	if (!ret)
		ret = fsm_events_init();
	if (!ret)
		ret = fsm_record_init();
	if (!ret)
		ret = fsm_sources_init();
	if (!ret) {
		/* the source backend, before any source is resolved */
		ops = fsm_src_trig_init(fsm_force_probe_sources);
		fsm_sources_set_ops(ops ?: fsm_src_probe_init());
		ret = fsm_lifecycle_start();
	}
	if (ret) {
		fsm_teardown();
		return ret;
	}
	fsm_trigger_init();
	fsm_compat_announce();
	return 0;
}

/*
 * Module exit, and a failed init (every exit function copes with a part
 * that never started). The reverse order, with the instances taken off in
 * two steps around the module notifier (fsm_lifecycle_stop()).
 */
static void fsm_teardown(void)
{
	fsm_trigger_exit();	/* triggers first: they reach every instance */
	fsm_lifecycle_stop();	/* no instance made or reaped; probes detached */
	fsm_src_trig_exit();	/* no source is linked: the removal hooks go */
	fsm_sources_exit();	/* the module notifier */
	fsm_lifecycle_exit();	/* instances freed, nodes removed */
	fsm_record_exit();
	fsm_events_exit();
	fsm_nodes_exit();
	fsm_compat_exit();
	fsm_inst_registry_exit();
	fsm_ustack_exit();	/* no probe left: wait for queued user walks */
}

static void __exit fsm_exit(void)
{
	fsm_teardown();
}

module_init(fsm_init);
module_exit(fsm_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Deduplicated kernel and user stack traces for ftrace");
MODULE_VERSION(FSM_VERSION);
MODULE_AUTHOR("ftrace_stackmap developers");
