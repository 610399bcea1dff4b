/* SPDX-License-Identifier: GPL-2.0 */
/*
 * verdict.h - the verdict slots: how a post-commit trigger learns whether
 * the record of its event was kept (verdict.c, "The verdict").
 *
 * Users: the stackmap trigger (trigger.c: its companion judges) and the
 * sources of the trigger backend (src_trig.c: their judge data). Each
 * keeps its own per-CPU slots (struct fsm_verdict_slots): one event may
 * have both, and all its pre-commit calls run before all its post calls,
 * so one slot would hold the verdict of only one.
 */
#ifndef FSM_VERDICT_H
#define FSM_VERDICT_H

#include "compat/layouts.h"

#if FSM_HAVE_KL_TRIGGER

struct seq_file;
struct trace_buffer;
struct ring_buffer_event;

/* The verdict slots ("The verdict", verdict.c). */
#define FSM_TRIG_FL	(EVENT_FILE_FL_SOFT_DISABLED | EVENT_FILE_FL_FILTERED | \
			 EVENT_FILE_FL_PID_FILTER)

/* What __event_trigger_test_discard() reads after the companion. */
struct fsm_trig_snap {
	unsigned long flags;		/* file->flags & FSM_TRIG_FL */
	struct event_filter *filter;	/* file->filter */
	bool ignore_pid;		/* the pid filter refuses this task */
};

struct fsm_trig_verdict {
	unsigned long tag;		/* fsm_trig | keep; 0 = none */
	struct task_struct *task;
	unsigned long csw;		/* task->nvcsw + task->nivcsw */
	struct fsm_trig_snap snap;
};

#define FSM_TRIG_KEEP	1UL

#define FSM_TRIG_LEVELS 4	/* interrupt_context_level(): 0..3 */
struct fsm_verdict_slots {
	struct fsm_trig_verdict v[FSM_TRIG_LEVELS];
};

#define FSM_VERDICT_NONE	-1

int fsm_verdict_take(struct fsm_verdict_slots __percpu *slots,
		     unsigned long me, struct trace_event_file *file);
void fsm_verdict_clear(struct fsm_verdict_slots __percpu *slots,
		       unsigned long me);
void fsm_verdict_judge(struct fsm_verdict_slots __percpu *slots,
		       unsigned long me, struct trace_event_file *file,
		       bool will_post, void *rec, struct trace_buffer *buffer,
		       struct ring_buffer_event *rbe);
void fsm_verdict_none(struct fsm_verdict_slots __percpu *slots);
int fsm_verdict_print_none(struct seq_file *m,
			   struct fsm_kl_trigger_data *data);
void fsm_verdict_check_temp_buffer(void);

#endif /* FSM_HAVE_KL_TRIGGER */

#endif /* FSM_VERDICT_H */
