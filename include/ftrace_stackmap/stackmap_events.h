/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stackmap_events.h - the module's kernel-stack events (system "stackmap").
 *
 * Instantiated once, in src/kernel/events.c (CREATE_TRACE_POINTS). The
 * tracepoints themselves are never called: records are written per
 * instance by src/kernel/events.c with trace_event_buffer_reserve()/
 * _commit() on the instance's stack_id event file, because TP_fast_assign
 * cannot know which instance a record is for. This header therefore
 * defines the record layouts, the "format" files and the print formats;
 * include/ftrace_stackmap/abi.h gives the meaning of the fields.
 *
 * Record format version 2 (FSM_SID_FORMAT_VERSION). Every source event is
 * followed on its CPU by exactly one *id record*: stack_id, stack_id_user
 * (the same with the user-stack cookie) or stack_fallback (no id). A
 * stack_def record (the stack of an id, once per recording) follows the id
 * record that used the id first; a stack_reset record marks a reset.
 * Every layout starts with the u32 stack_id at offset 8, so a filter on
 * "stack_id" means the same thing for every record (they are all committed
 * through the stack_id event file: its filter and triggers see them all).
 * Sizes in the ring buffer, 4-byte event header included: stack_id 16,
 * stack_id_user 24 (no padding: the cookie is split into two u32).
 *
 * The print formats use __print_array (libtraceevent 1.7.1, in Debian 12's
 * trace-cmd, cannot parse __print_dynamic_array) and spell the size of a
 * u64 element as 8: its sizeof() parser knows no "u64". The id's fields
 * are printed with >> and & (which libtraceevent evaluates).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM stackmap

#if !defined(_FTRACE_STACKMAP_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _FTRACE_STACKMAP_EVENTS_H

#include <linux/tracepoint.h>

/* 12 bytes after the 4-byte ring-buffer header: 16 in the ring buffer. */
TRACE_EVENT(stack_id,

	TP_PROTO(u32 stack_id),

	TP_ARGS(stack_id),

	TP_STRUCT__entry(
		__field(u32, stack_id)
	),

	TP_fast_assign(
		__entry->stack_id = stack_id;
	),

	TP_printk("stack_id=%u gen=%u index=%u", __entry->stack_id,
		  __entry->stack_id >> 20, __entry->stack_id & 0xfffff)
);

/* 20 bytes after the ring-buffer header: 24 in the ring buffer. */
TRACE_EVENT(stack_id_user,

	TP_PROTO(u32 stack_id, u64 cookie),

	TP_ARGS(stack_id, cookie),

	TP_STRUCT__entry(
		__field(u32, stack_id)
		__field(u32, cookie_lo)
		__field(u32, cookie_hi)
	),

	TP_fast_assign(
		__entry->stack_id = stack_id;
		__entry->cookie_lo = (u32)cookie;
		__entry->cookie_hi = (u32)(cookie >> 32);
	),

	/* the cookie as user_stack prints it (libtraceevent does casts) */
	TP_printk("stack_id=%u gen=%u index=%u cookie=0x%llx",
		  __entry->stack_id, __entry->stack_id >> 20,
		  __entry->stack_id & 0xfffff,
		  (unsigned long long)__entry->cookie_hi << 32 |
		  __entry->cookie_lo)
);

TRACE_EVENT(stack_def,

	TP_PROTO(u32 stack_id, u32 flags, const unsigned long *ips,
		 unsigned int nr),

	TP_ARGS(stack_id, flags, ips, nr),

	TP_STRUCT__entry(
		__field(u32, stack_id)
		__field(u32, flags)
		__dynamic_array(unsigned long, ips, nr)
	),

	TP_fast_assign(
		__entry->stack_id = stack_id;
		__entry->flags = flags;
		memcpy(__get_dynamic_array(ips), ips,
		       nr * sizeof(unsigned long));
	),

	TP_printk("stack_id=%u gen=%u index=%u flags=0x%x ips=%s",
		  __entry->stack_id, __entry->stack_id >> 20,
		  __entry->stack_id & 0xfffff, __entry->flags,
		  __print_array(__get_dynamic_array(ips),
				__get_dynamic_array_len(ips) / sizeof(unsigned long),
				sizeof(unsigned long)))
);

TRACE_EVENT(stack_fallback,

	TP_PROTO(u32 flags, u32 reason, const u64 *cookie, unsigned int ncookie,
		 const unsigned long *ips, unsigned int nr),

	TP_ARGS(flags, reason, cookie, ncookie, ips, nr),

	TP_STRUCT__entry(
		__field(u32, stack_id)
		__field(u32, flags)
		__field(u32, reason)
		__dynamic_array(u64, cookie, ncookie)
		__dynamic_array(unsigned long, ips, nr)
	),

	TP_fast_assign(
		__entry->stack_id = 0xffffffff;
		__entry->flags = flags;
		__entry->reason = reason;
		memcpy(__get_dynamic_array(cookie), cookie,
		       ncookie * sizeof(u64));
		memcpy(__get_dynamic_array(ips), ips,
		       nr * sizeof(unsigned long));
	),

	TP_printk("stack_id=%u flags=0x%x reason=%u cookie=%s ips=%s",
		  __entry->stack_id, __entry->flags, __entry->reason,
		  __print_array(__get_dynamic_array(cookie),
				__get_dynamic_array_len(cookie) / 8, 8),
		  __print_array(__get_dynamic_array(ips),
				__get_dynamic_array_len(ips) / sizeof(unsigned long),
				sizeof(unsigned long)))
);

TRACE_EVENT(stack_reset,

	TP_PROTO(u32 generation),

	TP_ARGS(generation),

	TP_STRUCT__entry(
		__field(u32, stack_id)
		__field(u32, generation)
	),

	TP_fast_assign(
		__entry->stack_id = 0xffffffff;
		__entry->generation = generation;
	),

	TP_printk("stack_id=%u generation=%u gen=%u", __entry->stack_id,
		  __entry->generation, __entry->generation & 0xfff)
);

#endif /* _FTRACE_STACKMAP_EVENTS_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH ftrace_stackmap
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE stackmap_events
#include <trace/define_trace.h>
