/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM fsm_tp_test

#if !defined(FSM_TP_TEST_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define FSM_TP_TEST_EVENTS_H

#include <linux/tracepoint.h>

TRACE_EVENT(fsm_tp_ping,
	TP_PROTO(unsigned long n),
	TP_ARGS(n),
	TP_STRUCT__entry(
		__field(unsigned long, n)
	),
	TP_fast_assign(
		__entry->n = n;
	),
	TP_printk("n=%lu", __entry->n)
);

/* written between the kernel's probe of fsm_tp_ping and ours (between=1) */
TRACE_EVENT(fsm_tp_between,
	TP_PROTO(unsigned long n),
	TP_ARGS(n),
	TP_STRUCT__entry(
		__field(unsigned long, n)
	),
	TP_fast_assign(
		__entry->n = n;
	),
	TP_printk("n=%lu", __entry->n)
);

/* a record of len bytes of data (big_len=N: longer than a page takes) */
TRACE_EVENT(fsm_tp_big,
	TP_PROTO(unsigned long n, unsigned int len),
	TP_ARGS(n, len),
	TP_STRUCT__entry(
		__field(unsigned long, n)
		__dynamic_array(char, blob, len)
	),
	TP_fast_assign(
		__entry->n = n;
		memset(__get_dynamic_array(blob), 'x', len);
	),
	TP_printk("n=%lu len=%u", __entry->n, __get_dynamic_array_len(blob))
);

#endif /* FSM_TP_TEST_EVENTS_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE fsm_tp_test_events
#include <trace/define_trace.h>
