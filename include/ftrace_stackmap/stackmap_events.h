/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stackmap_events.h - the module's trace events (system "stackmap").
 *
 * Instantiated once, in src/kernel/events.c (CREATE_TRACE_POINTS). The
 * tracepoint itself is never called: records are written per instance by
 * src/kernel/events.c with trace_event_buffer_reserve()/_commit(), because
 * TP_fast_assign cannot know which instance a record is for. This header
 * therefore defines the record layout, the "format" file and the print
 * format; see include/ftrace_stackmap/abi.h for the meaning of the fields.
 *
 * The print format uses __print_array (libtraceevent 1.7.1, in Debian 12's
 * trace-cmd, cannot parse __print_dynamic_array).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM stackmap

#if !defined(_FTRACE_STACKMAP_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _FTRACE_STACKMAP_EVENTS_H

#include <linux/tracepoint.h>

TRACE_EVENT(stack_id,

	TP_PROTO(u64 cookie, u32 stack_id, u32 gen, u32 flags, u32 inst,
		 u16 src_type, u16 reason, const unsigned long *ips,
		 unsigned int nr),

	TP_ARGS(cookie, stack_id, gen, flags, inst, src_type, reason, ips, nr),

	/* Ordered for natural alignment: 32 bytes of fields, no holes. */
	TP_STRUCT__entry(
		__field(u64, cookie)
		__field(u32, stack_id)
		__field(u32, gen)
		__field(u32, flags)
		__field(u32, inst)
		__field(u16, src_type)
		__field(u16, reason)
		__dynamic_array(unsigned long, ips, nr)
	),

	TP_fast_assign(
		__entry->cookie = cookie;
		__entry->stack_id = stack_id;
		__entry->gen = gen;
		__entry->flags = flags;
		__entry->inst = inst;
		__entry->src_type = src_type;
		__entry->reason = reason;
		memcpy(__get_dynamic_array(ips), ips,
		       nr * sizeof(unsigned long));
	),

	TP_printk("stack_id=%u gen=%u src=%u inst=%u flags=0x%x reason=%u cookie=0x%llx ips=%s",
		  __entry->stack_id, __entry->gen, __entry->src_type,
		  __entry->inst, __entry->flags, __entry->reason,
		  (unsigned long long)__entry->cookie,
		  __print_array(__get_dynamic_array(ips),
				__get_dynamic_array_len(ips) / sizeof(unsigned long),
				sizeof(unsigned long)))
);

#endif /* _FTRACE_STACKMAP_EVENTS_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH ftrace_stackmap
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE stackmap_events
#include <trace/define_trace.h>
