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
 * trace-cmd, cannot parse __print_dynamic_array) and spells the size of
 * the u64 cookie as 8: its sizeof() parser knows no "u64".
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM stackmap

#if !defined(_FTRACE_STACKMAP_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _FTRACE_STACKMAP_EVENTS_H

#include <linux/tracepoint.h>

TRACE_EVENT(stack_id,

	TP_PROTO(u32 stack_id, u16 src_type, u8 gen, u8 flags,
		 const u64 *cookie, unsigned int ncookie,
		 const unsigned long *ips, unsigned int nr),

	TP_ARGS(stack_id, src_type, gen, flags, cookie, ncookie, ips, nr),

	/*
	 * 8 bytes of fixed fields and two __data_loc words: 16 bytes after
	 * the common header, 28 in the ring buffer with its event header,
	 * when neither array has elements (the common case: an id hit).
	 */
	TP_STRUCT__entry(
		__field(u32, stack_id)
		__field(u16, src_type)
		__field(u8, gen)
		__field(u8, flags)
		__dynamic_array(u64, cookie, ncookie)
		__dynamic_array(unsigned long, ips, nr)
	),

	TP_fast_assign(
		__entry->stack_id = stack_id;
		__entry->src_type = src_type;
		__entry->gen = gen;
		__entry->flags = flags;
		memcpy(__get_dynamic_array(cookie), cookie,
		       ncookie * sizeof(u64));
		memcpy(__get_dynamic_array(ips), ips,
		       nr * sizeof(unsigned long));
	),

	TP_printk("stack_id=%u gen=%u src=%u flags=0x%x reason=%u cookie=%s ips=%s",
		  __entry->stack_id, __entry->gen, __entry->src_type,
		  __entry->flags, __entry->flags >> 5,
		  __print_array(__get_dynamic_array(cookie),
				__get_dynamic_array_len(cookie) / 8, 8),
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
