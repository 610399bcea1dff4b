/* SPDX-License-Identifier: GPL-2.0 */
/*
 * layouts.h - kernel-internal types, checked against the target
 * kernel at build time (part of the compat place, see compat.h).
 *
 * The trigger interface (struct event_command and its friends) lives in
 * kernel/trace/trace.h, not in the headers that modules get. A blind copy
 * of those structs would compile against any kernel and corrupt memory on
 * the first one whose layout differs. So:
 *
 * - scripts/kernel-layouts reads the layouts of the kernel the module is
 *   built for (its BTF, or the source tree of our debug kernel) into
 *   generated/fsm_kernel_layouts.h, at every build (top Makefile);
 * - the declarations below name only the members we use, each checked
 *   with static_assert against the generated offsets and sizes. A member
 *   we do not touch is padding to us;
 * - scripts/kernel-layouts also compiles this header against the layouts
 *   it generated: when an assertion fails, it adds FSM_KL_LAYOUT_MISMATCH
 *   with the message, and the module builds without the trigger;
 * - when the target kernel has no BTF and no source tree, or a type or
 *   member is missing, or the layouts differ, FSM_HAVE_KL_TRIGGER is 0:
 *   the stackmap trigger is built out, the build says why
 *   (scripts/kernel-layouts, on stderr) and so does dmesg at load
 *   (FSM_KL_TRIGGER_WHY). Everything else works;
 * - the layouts hold for one build of one kernel: FSM_KL_RELEASE and
 *   FSM_KL_VERSION (uname -r, uname -v) name it. At load,
 *   fsm_compat_layouts_why() compares them with the running kernel; what
 *   relies on the layouts stays off when they differ (one dmesg line);
 * - a function pointer read out of a kernel structure through these
 *   layouts is called only after fsm_compat_fn_is() found, by
 *   sprint_symbol(), that it is the function it must be.
 */
#ifndef FSM_COMPAT_LAYOUTS_H
#define FSM_COMPAT_LAYOUTS_H

#include <linux/build_bug.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/stddef.h>
#include <linux/trace_events.h>

#if __has_include("generated/fsm_kernel_layouts.h")
#include "generated/fsm_kernel_layouts.h"
#else
#define FSM_KL_ORIGIN "none"
#define FSM_KL_NOT_GENERATED "layouts not generated (build through the top Makefile)"
#endif
#if defined(FSM_KL_RELEASE) && !defined(FSM_KL_VERSION)
/* a header of an older scripts/kernel-layouts: the version is not known */
#define FSM_KL_VERSION "unknown"
#endif

/*
 * The trigger interface of this kernel, one of:
 *   FSM_KL_TRIGGER_OPS   6.1 up to 6.12.112: the callbacks of trigger data
 *                        (trigger, init, free, print) in struct
 *                        event_trigger_ops, reached through data->ops,
 *                        which the parser gets from cmd->get_trigger_ops();
 *   FSM_KL_TRIGGER_CMD   6.12.113+: struct event_trigger_ops is gone, its
 *                        callbacks (and count_func, called before trigger
 *                        for data with EVENT_TRIGGER_FL_COUNT) are members
 *                        of struct event_command, reached through
 *                        data->cmd_ops; struct event_trigger_data has no
 *                        ops;
 *   FSM_KL_TRIGGER_NONE  neither (no BTF or source, a layout mismatch): the
 *                        reason is FSM_KL_TRIGGER_WHY.
 * Decided from the layouts of the target kernel (scripts/kernel-layouts.list:
 * the plain entries and the ":cmd" variants), never from its version.
 * FSM_HAVE_KL_TRIGGER is 1 with either layout: the stackmap trigger
 * (trigger.c) and the trigger-path sources (src_trig.c) are written once
 * for both; what differs is in compat/trig_ops.c and compat/trig_cmd.c
 * behind compat/trig_layout.h, one of them compiled per layout.
 */
#define FSM_KL_TRIGGER_NONE	0
#define FSM_KL_TRIGGER_OPS	1
#define FSM_KL_TRIGGER_CMD	2

/*
 * Kernel CFI (CONFIG_CFI_CLANG; CONFIG_CFI from 7.x on) checks the type
 * of every indirect call. The kernel calls the stackmap trigger's
 * callbacks through struct event_command and its data's callbacks, and
 * ours are typed with our own declarations (struct fsm_kl_trigger_data,
 * not struct event_trigger_data): the type hashes differ, and the first
 * call would trap. Such a kernel gets no trigger path.
 */
#if defined(CONFIG_CFI_CLANG) || defined(CONFIG_CFI)
#define FSM_KL_KCFI 1
#endif

#if defined(FSM_KL_HAVE_event_command_ops) && \
	defined(FSM_KL_HAVE_event_trigger_data_ops) && \
	defined(FSM_KL_HAVE_event_trigger_ops_ops) && \
	defined(FSM_KL_HAVE_enum_event_command_flags) && \
	defined(FSM_KL_HAVE_enum_event_trigger_type) && \
	!defined(FSM_KL_LAYOUT_MISMATCH) && !defined(FSM_KL_KCFI)
#define FSM_HAVE_KL_TRIGGER 1
#define FSM_KL_TRIGGER_LAYOUT FSM_KL_TRIGGER_OPS
#define FSM_KL_TRIGGER_WHY ""
#elif defined(FSM_KL_HAVE_event_command_cmd) && \
	defined(FSM_KL_HAVE_event_trigger_data_cmd) && \
	defined(FSM_KL_HAVE_enum_event_command_flags) && \
	defined(FSM_KL_HAVE_enum_event_trigger_type) && \
	!defined(FSM_KL_LAYOUT_MISMATCH) && !defined(FSM_KL_KCFI)
#define FSM_HAVE_KL_TRIGGER 1
#define FSM_KL_TRIGGER_LAYOUT FSM_KL_TRIGGER_CMD
#define FSM_KL_TRIGGER_WHY ""
#else
#define FSM_HAVE_KL_TRIGGER 0
#define FSM_KL_TRIGGER_LAYOUT FSM_KL_TRIGGER_NONE
#if defined(FSM_KL_KCFI)
#define FSM_KL_TRIGGER_WHY "kernel CFI (the callbacks' types are not the kernel's own)"
#elif defined(FSM_KL_NOT_GENERATED)
#define FSM_KL_TRIGGER_WHY FSM_KL_NOT_GENERATED
#elif defined(FSM_KL_LAYOUT_MISMATCH)
#define FSM_KL_TRIGGER_WHY FSM_KL_LAYOUT_MISMATCH
#elif defined(FSM_KL_MISSING_enum_event_command_flags)
#define FSM_KL_TRIGGER_WHY FSM_KL_MISSING_enum_event_command_flags
#elif defined(FSM_KL_MISSING_enum_event_trigger_type)
#define FSM_KL_TRIGGER_WHY FSM_KL_MISSING_enum_event_trigger_type
#elif defined(FSM_KL_MISSING_event_command_ops)
#define FSM_KL_TRIGGER_WHY "neither trigger layout: " FSM_KL_MISSING_event_command_ops
#elif defined(FSM_KL_MISSING_event_trigger_data_ops)
#define FSM_KL_TRIGGER_WHY "neither trigger layout: " FSM_KL_MISSING_event_trigger_data_ops
#else
#define FSM_KL_TRIGGER_WHY "neither trigger layout: " FSM_KL_MISSING_event_trigger_ops_ops
#endif
#endif

/*
 * The trace options an output callback gets as its "flags" argument
 * (tr->trace_flags & TRACE_ITER_SYM_MASK): bit numbers of enum
 * trace_iterator_bits, private to kernel/trace/trace.h.
 */
#if defined(FSM_KL_HAVE_enum_trace_iterator_bits)
#define FSM_HAVE_TRACE_ITER_BITS 1
#define FSM_TRACE_ITER_SYM_OFFSET (1UL << FSM_KL_TRACE_ITER_SYM_OFFSET_BIT)
#define FSM_TRACE_ITER_SYM_ADDR (1UL << FSM_KL_TRACE_ITER_SYM_ADDR_BIT)
#else
#define FSM_HAVE_TRACE_ITER_BITS 0
#if defined(FSM_KL_NOT_GENERATED)
#define FSM_TRACE_FLAGS_WHY FSM_KL_NOT_GENERATED
#else
#define FSM_TRACE_FLAGS_WHY FSM_KL_MISSING_enum_trace_iterator_bits
#endif
#endif

/*
 * struct trace_array (kernel/trace/trace.h): an instance's "options"
 * directory and its list of event files, read on eventfs kernels only
 * (compat/evfiles.c says why and under which lock). Offsets from the
 * target kernel; the results are checked where they are used.
 */
#if defined(FSM_KL_HAVE_trace_array)
#define FSM_HAVE_KL_TRACE_ARRAY 1
#define FSM_KL_TRACE_ARRAY_WHY ""
struct dentry;
struct trace_array;

static inline struct dentry **fsm_kl_tr_options(struct trace_array *tr)
{
	return (struct dentry **)((char *)tr + FSM_KL_trace_array__options);
}

static inline struct list_head *fsm_kl_tr_events(struct trace_array *tr)
{
	return (struct list_head *)((char *)tr + FSM_KL_trace_array__events);
}

static_assert(FSM_KL_trace_array__options % sizeof(void *) == 0 &&
	      FSM_KL_trace_array__events % sizeof(void *) == 0 &&
	      FSM_KL_trace_array__events + sizeof(struct list_head) <=
	      FSM_KL_trace_array____SIZE,
	      "struct trace_array: options/events offsets make no sense");
#else
#define FSM_HAVE_KL_TRACE_ARRAY 0
#if defined(FSM_KL_NOT_GENERATED)
#define FSM_KL_TRACE_ARRAY_WHY FSM_KL_NOT_GENERATED
#else
#define FSM_KL_TRACE_ARRAY_WHY FSM_KL_MISSING_trace_array
#endif
#endif /* FSM_KL_HAVE_trace_array */

/*
 * The ring buffer and the options of an instance (struct trace_array's
 * array_buffer.buffer and trace_flags, kernel/trace/trace.h), read by
 * tracepoint-probe sources around the kernel's probe of an event
 * (src_probe.c, fsm_probe_pre()). trace_flags is an unsigned int on 6.1
 * and 6.12 and a u64 on 7.x: its low 32 bits are read, which hold the two
 * options on every kernel (checked below) of these little-endian
 * architectures. Both are plain loads of words the kernel changes under
 * its own locks; what a stale value costs is said where they are used.
 */
struct trace_buffer;

#if defined(FSM_KL_HAVE_trace_array) && defined(FSM_KL_HAVE_array_buffer) && \
	defined(FSM_KL_HAVE_enum_trace_iterator_bits)
#define FSM_HAVE_KL_TR_BUFFER 1
#define FSM_KL_TR_BUFFER_WHY ""

static inline struct trace_buffer *fsm_kl_tr_buffer(struct trace_array *tr)
{
	return READ_ONCE(*(struct trace_buffer **)((char *)tr +
		FSM_KL_trace_array__array_buffer + FSM_KL_array_buffer__buffer));
}

static inline u32 fsm_kl_tr_flags(struct trace_array *tr)
{
	return READ_ONCE(*(u32 *)((char *)tr + FSM_KL_trace_array__trace_flags));
}

#define FSM_KL_TR_STACKTRACE	(1U << FSM_KL_TRACE_ITER_STACKTRACE_BIT)
#define FSM_KL_TR_USERSTACKTRACE (1U << FSM_KL_TRACE_ITER_USERSTACKTRACE_BIT)
#ifdef __BIG_ENDIAN
#error "fsm_kl_tr_flags() reads the low 32 bits of trace_flags as a u32"
#endif
static_assert(FSM_KL_TRACE_ITER_STACKTRACE_BIT < 32 &&
	      FSM_KL_TRACE_ITER_USERSTACKTRACE_BIT < 32 &&
	      FSM_KL_trace_array__trace_flags % sizeof(u32) == 0 &&
	      FSM_KL_trace_array__array_buffer + FSM_KL_array_buffer__buffer +
	      sizeof(void *) <= FSM_KL_trace_array____SIZE,
	      "struct trace_array: array_buffer/trace_flags make no sense");
#else
#define FSM_HAVE_KL_TR_BUFFER 0
/* never called: src_probe.c tests FSM_HAVE_KL_TR_BUFFER first */
static inline struct trace_buffer *fsm_kl_tr_buffer(struct trace_array *tr)
{
	return NULL;
}

static inline u32 fsm_kl_tr_flags(struct trace_array *tr)
{
	return 0;
}

#define FSM_KL_TR_STACKTRACE	0U
#define FSM_KL_TR_USERSTACKTRACE 0U
#if defined(FSM_KL_NOT_GENERATED)
#define FSM_KL_TR_BUFFER_WHY FSM_KL_NOT_GENERATED
#elif !defined(FSM_KL_HAVE_trace_array)
#define FSM_KL_TR_BUFFER_WHY FSM_KL_MISSING_trace_array
#elif !defined(FSM_KL_HAVE_array_buffer)
#define FSM_KL_TR_BUFFER_WHY FSM_KL_MISSING_array_buffer
#else
#define FSM_KL_TR_BUFFER_WHY FSM_KL_MISSING_enum_trace_iterator_bits
#endif
#endif /* FSM_KL_HAVE_array_buffer */

#if FSM_HAVE_KL_TRIGGER

struct event_filter;
struct fsm_kl_trigger_data;
struct fsm_kl_trigger_ops;

/* The callbacks of trigger data, in data->ops (6.1) or data->cmd_ops */
typedef void (*fsm_kl_trigger_fn)(struct fsm_kl_trigger_data *data,
				  struct trace_buffer *buffer, void *rec,
				  struct ring_buffer_event *rbe);
typedef int (*fsm_kl_init_fn)(struct fsm_kl_trigger_data *data);
typedef void (*fsm_kl_free_fn)(struct fsm_kl_trigger_data *data);
typedef int (*fsm_kl_print_fn)(struct seq_file *m,
			       struct fsm_kl_trigger_data *data);

/* struct event_command (kernel/trace/trace.h) */
struct fsm_kl_command {
	struct list_head list;
	char *name;
	enum event_trigger_type trigger_type;
	int flags;
	int (*parse)(struct fsm_kl_command *cmd_ops,
		     struct trace_event_file *file, char *glob, char *cmd,
		     char *param_and_filter);
	int (*reg)(char *glob, struct fsm_kl_trigger_data *data,
		   struct trace_event_file *file);
	void (*unreg)(char *glob, struct fsm_kl_trigger_data *data,
		      struct trace_event_file *file);
	void (*unreg_all)(struct trace_event_file *file);
	int (*set_filter)(char *filter_str, struct fsm_kl_trigger_data *data,
			  struct trace_event_file *file);
#if FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_OPS
	struct fsm_kl_trigger_ops *(*get_trigger_ops)(char *cmd, char *param);
#else
	fsm_kl_trigger_fn trigger;
	bool (*count_func)(struct fsm_kl_trigger_data *data,
			   struct trace_buffer *buffer, void *rec,
			   struct ring_buffer_event *rbe);
	fsm_kl_init_fn init;
	fsm_kl_free_fn free;
	fsm_kl_print_fn print;
#endif /* FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_OPS */
};

/* struct event_trigger_data */
struct fsm_kl_trigger_data {
	unsigned long count;
	int ref;
	int flags;
#if FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_OPS
	struct fsm_kl_trigger_ops *ops;
#endif /* FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_OPS */
	struct fsm_kl_command *cmd_ops;
	struct event_filter __rcu *filter;
	char *filter_str;
	void *private_data;
	bool paused;
	bool paused_tmp;
	struct list_head list;
	char *name;
	struct list_head named_list;
	struct fsm_kl_trigger_data *named_data;
#if defined(FSM_KL_HAVE_event_trigger_data_llist)
	struct llist_node llist;
#endif /* FSM_KL_HAVE_event_trigger_data_llist */
#if defined(FSM_KL_HAVE_event_trigger_data_pdfree)
	void (*private_data_free)(struct fsm_kl_trigger_data *data);
#endif /* FSM_KL_HAVE_event_trigger_data_pdfree */
};

/*
 * Does the kernel's last free of trigger data queue it (its llist) to a
 * kthread that frees it later (7.x)? Told by llist alone, whatever else
 * that kernel added (private_data_free): compat/trig_layout.h's
 * fsm_kl_data_free_wait() then waits where the kernel's free used to.
 */
#if defined(FSM_KL_HAVE_event_trigger_data_llist)
#define FSM_KL_DATA_FREE_DEFERRED 1
#else
#define FSM_KL_DATA_FREE_DEFERRED 0
#endif /* FSM_KL_HAVE_event_trigger_data_llist */

#if FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_OPS
/* struct event_trigger_ops */
struct fsm_kl_trigger_ops {
	fsm_kl_trigger_fn trigger;
	fsm_kl_init_fn init;
	fsm_kl_free_fn free;
	fsm_kl_print_fn print;
};
#endif /* FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_OPS */

#define FSM_KL_CHECK(ours, theirs, member)				\
	static_assert(offsetof(struct ours, member) ==			\
		      FSM_KL_##theirs##__##member &&			\
		      sizeof(((struct ours *)NULL)->member) <=		\
		      FSM_KL_##theirs##____SIZE -			\
		      FSM_KL_##theirs##__##member,			\
		      #theirs "::" #member " moved in this kernel: "	\
		      "the fsm_kl_ declarations are out of date")
#define FSM_KL_CHECK_SIZE(ours, theirs)					\
	static_assert(sizeof(struct ours) == FSM_KL_##theirs##____SIZE,	\
		      "struct " #theirs " changed size in this kernel: "	\
		      "the fsm_kl_ declarations are out of date")

FSM_KL_CHECK_SIZE(fsm_kl_command, event_command);
FSM_KL_CHECK(fsm_kl_command, event_command, list);
FSM_KL_CHECK(fsm_kl_command, event_command, name);
FSM_KL_CHECK(fsm_kl_command, event_command, trigger_type);
FSM_KL_CHECK(fsm_kl_command, event_command, flags);
FSM_KL_CHECK(fsm_kl_command, event_command, parse);
FSM_KL_CHECK(fsm_kl_command, event_command, reg);
FSM_KL_CHECK(fsm_kl_command, event_command, unreg);
FSM_KL_CHECK(fsm_kl_command, event_command, unreg_all);
FSM_KL_CHECK(fsm_kl_command, event_command, set_filter);
#if FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_OPS
FSM_KL_CHECK(fsm_kl_command, event_command, get_trigger_ops);
#else
FSM_KL_CHECK(fsm_kl_command, event_command, trigger);
FSM_KL_CHECK(fsm_kl_command, event_command, count_func);
FSM_KL_CHECK(fsm_kl_command, event_command, init);
FSM_KL_CHECK(fsm_kl_command, event_command, free);
FSM_KL_CHECK(fsm_kl_command, event_command, print);
#endif /* FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_OPS */

FSM_KL_CHECK_SIZE(fsm_kl_trigger_data, event_trigger_data);
FSM_KL_CHECK(fsm_kl_trigger_data, event_trigger_data, count);
FSM_KL_CHECK(fsm_kl_trigger_data, event_trigger_data, ref);
FSM_KL_CHECK(fsm_kl_trigger_data, event_trigger_data, flags);
#if FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_OPS
FSM_KL_CHECK(fsm_kl_trigger_data, event_trigger_data, ops);
#endif /* FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_OPS */
FSM_KL_CHECK(fsm_kl_trigger_data, event_trigger_data, cmd_ops);
FSM_KL_CHECK(fsm_kl_trigger_data, event_trigger_data, filter);
FSM_KL_CHECK(fsm_kl_trigger_data, event_trigger_data, filter_str);
FSM_KL_CHECK(fsm_kl_trigger_data, event_trigger_data, private_data);
FSM_KL_CHECK(fsm_kl_trigger_data, event_trigger_data, paused);
FSM_KL_CHECK(fsm_kl_trigger_data, event_trigger_data, paused_tmp);
FSM_KL_CHECK(fsm_kl_trigger_data, event_trigger_data, list);
FSM_KL_CHECK(fsm_kl_trigger_data, event_trigger_data, name);
FSM_KL_CHECK(fsm_kl_trigger_data, event_trigger_data, named_list);
FSM_KL_CHECK(fsm_kl_trigger_data, event_trigger_data, named_data);
#if defined(FSM_KL_HAVE_event_trigger_data_llist)
FSM_KL_CHECK(fsm_kl_trigger_data, event_trigger_data, llist);
#endif /* FSM_KL_HAVE_event_trigger_data_llist */
#if defined(FSM_KL_HAVE_event_trigger_data_pdfree)
FSM_KL_CHECK(fsm_kl_trigger_data, event_trigger_data, private_data_free);
#endif /* FSM_KL_HAVE_event_trigger_data_pdfree */

#if FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_OPS
FSM_KL_CHECK_SIZE(fsm_kl_trigger_ops, event_trigger_ops);
FSM_KL_CHECK(fsm_kl_trigger_ops, event_trigger_ops, trigger);
FSM_KL_CHECK(fsm_kl_trigger_ops, event_trigger_ops, init);
FSM_KL_CHECK(fsm_kl_trigger_ops, event_trigger_ops, free);
FSM_KL_CHECK(fsm_kl_trigger_ops, event_trigger_ops, print);
#endif /* FSM_KL_TRIGGER_LAYOUT == FSM_KL_TRIGGER_OPS */

/* enum event_command_flags and enum event_trigger_type */
#define FSM_KL_CMD_FL_POST_TRIGGER	FSM_KL_EVENT_CMD_FL_POST_TRIGGER
#define FSM_KL_CMD_FL_NEEDS_REC		FSM_KL_EVENT_CMD_FL_NEEDS_REC
static_assert(FSM_KL_ETT_STACKTRACE - ETT_STACKTRACE == 0 &&
	      FSM_KL_ETT_EVENT_EPROBE - ETT_EVENT_EPROBE == 0,
	      "enum event_trigger_type differs from the kernel's own");

#undef FSM_KL_CHECK
#undef FSM_KL_CHECK_SIZE

#endif /* FSM_HAVE_KL_TRIGGER */
#endif /* FSM_COMPAT_LAYOUTS_H */
