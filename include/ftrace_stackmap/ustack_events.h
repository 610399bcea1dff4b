/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ustack_events.h - user-stack events of system "stackmap" (user_stack,
 * file_map), instantiated in src/kernel/ustack_deliver.c. As for stack_id, the
 * tracepoints are never called: records are written per instance with
 * trace_event_buffer_reserve()/_commit() (see ustack_abi.h for the fields).
 * Print formats use only what libtraceevent 1.7.1 parses (__print_array,
 * __print_hex, __get_str).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM stackmap

#if !defined(_FTRACE_STACKMAP_USTACK_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _FTRACE_STACKMAP_USTACK_EVENTS_H

#include <linux/tracepoint.h>

TRACE_EVENT(user_stack,

	TP_PROTO(u64 cookie, u32 ustack_id, u32 gen, u32 inst, u16 flags,
		 u8 reason, u8 stop, u8 id_reason, const u64 *frames,
		 unsigned int nr),

	TP_ARGS(cookie, ustack_id, gen, inst, flags, reason, stop, id_reason,
		frames, nr),

	TP_STRUCT__entry(
		__field(u64, cookie)
		__field(u32, ustack_id)
		__field(u32, gen)
		__field(u32, inst)
		__field(u32, nr)
		__field(u16, flags)
		__field(u8, reason)
		__field(u8, stop)
		__field(u8, id_reason)
		__dynamic_array(u64, frames, 2 * nr)
	),

	TP_fast_assign(
		__entry->cookie = cookie;
		__entry->ustack_id = ustack_id;
		__entry->gen = gen;
		__entry->inst = inst;
		__entry->nr = nr;
		__entry->flags = flags;
		__entry->reason = reason;
		__entry->stop = stop;
		__entry->id_reason = id_reason;
		memcpy(__get_dynamic_array(frames), frames, 2 * nr * sizeof(u64));
	),

	/* "8", not sizeof(u64): libtraceevent 1.7.1's sizeof() knows no u64 */
	TP_printk("cookie=0x%llx ustack_id=%u gen=%u inst=%u flags=0x%x reason=%u stop=%u id_reason=%u nr=%u frames=%s",
		  (unsigned long long)__entry->cookie, __entry->ustack_id,
		  __entry->gen, __entry->inst, __entry->flags, __entry->reason,
		  __entry->stop, __entry->id_reason, __entry->nr,
		  __print_array(__get_dynamic_array(frames),
				__get_dynamic_array_len(frames) / 8, 8))
);

TRACE_EVENT(file_map,

	TP_PROTO(u64 file_id, u32 inst, const char *path, const u8 *build_id,
		 unsigned int bid_len),

	TP_ARGS(file_id, inst, path, build_id, bid_len),

	TP_STRUCT__entry(
		__field(u64, file_id)
		__field(u32, inst)
		/*
		 * What __string(path, path) declares, spelled with
		 * __dynamic_array() because __string()'s companion
		 * __assign_str() changed its arguments across kernels (the
		 * record is written by ustack_deliver.c, never through this
		 * assignment; the format file is the same).
		 */
		__dynamic_array(char, path, strlen(path) + 1)
		__dynamic_array(u8, build_id, bid_len)
	),

	TP_fast_assign(
		__entry->file_id = file_id;
		__entry->inst = inst;
		memcpy(__get_dynamic_array(path), path, strlen(path) + 1);
		memcpy(__get_dynamic_array(build_id), build_id, bid_len);
	),

	TP_printk("file_id=0x%llx inst=%u path=%s build_id=%s",
		  (unsigned long long)__entry->file_id, __entry->inst,
		  __get_str(path),
		  __print_hex(__get_dynamic_array(build_id),
			      __get_dynamic_array_len(build_id)))
);

#endif /* _FTRACE_STACKMAP_USTACK_EVENTS_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH ftrace_stackmap
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE ustack_events
#include <trace/define_trace.h>
