/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tracing.h - kernel stacks into the trace, per ftrace instance.
 *
 * Overview
 * --------
 * Every ftrace instance (the top level and each instances/NAME) has a
 * struct fsm_inst: its stack map, its chosen source events, its tracefs
 * nodes and counters. The kernel's struct trace_array is private to
 * kernel/trace; it is used here only as an opaque key (never dereferenced),
 * valid while the instance exists, and never held with a reference for
 * long: trace_get_event_file() (which does not create instances) is called
 * only inside short critical sections so that "rmdir instances/NAME" keeps
 * working while the module is loaded.
 *
 * Recording in an instance = the module's event stackmap:stack_id is
 * enabled there. The event class's .reg callback is wrapped (events.c): on
 * TRACE_REG_REGISTER for the instance's event file, every chosen source
 * event is attached through the source backend of this load (struct
 * fsm_src_ops below: hidden trigger data, src_trig.c, or a tracepoint probe
 * right after the trace event's own, src_probe.c). The backend's callback
 * captures the stack and writes stack_id records into that instance's
 * buffer with trace_event_buffer_reserve/_commit (record.c, events.c).
 *
 * Instances come and go: an fsnotify mark on tracefs "instances" sees
 * mkdir/rmdir; its handler only marks removed instances dead (it runs under
 * tracing locks) and queues a work that does everything else
 * (lifecycle.c; instances.c is the registry of struct fsm_inst). Removal
 * is safe because the kernel disables every event of
 * an instance (our .reg UNREGISTER: sources detached), waits for tracepoint
 * callers, and only then removes the directory (our handler) and frees it.
 *
 * The files of this glue are in layers, each calling only those below it
 * (src/kernel/LAYERS, Documentation/design.rst); this header declares what
 * crosses files, grouped by the file that defines it. A lower file tells a
 * higher one something only through a hook it was handed (struct
 * fsm_inst_hooks, struct fsm_src_ops).
 *
 * Lifetime: a struct fsm_inst is reference counted (kref): the instance
 * table holds one reference, every open node file one more. The map is
 * allocated on the first REGISTER and freed with the struct, after
 * tracepoint_synchronize_unregister().
 *
 * Locking (outermost first)
 * -------------------------
 *   event_mutex (kernel) -> fsm_mutex -> tracepoints_mutex (kernel)
 *   inst->map_rwsem: reset (write) against map readers (read); taken
 *                    without fsm_mutex held and never around it
 * Nothing that takes event_mutex or trace_types_lock (trace_get_event_file,
 * trace_array_set_clr_event, ...) is called with fsm_mutex held: the .reg
 * callback already runs under event_mutex and takes fsm_mutex.
 * The tracepoint probe (any context, NMI included) takes no lock, never
 * allocates, and its loops are bounded.
 */
#ifndef FSM_TRACING_H
#define FSM_TRACING_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/trace_events.h>
#include <linux/types.h>
#include <linux/xarray.h>
#include <asm/local64.h>

#include "fsm.h"

struct dentry;
struct module;
struct seq_file;
struct trace_array;
struct trace_event_file;
struct tracepoint;
struct fsm_src_trig;

/**
 * struct fsm_rb_cpu - where one CPU's ring buffer of an instance stands,
 * for re-definitions (events.c, fsm_rb_position()).
 * @last:    the buffer's count of records written on this CPU at the last
 *           look (entries + overrun + read of the ring buffer)
 * @base:    added to that count to make a position that only moves on:
 *           jumps when the count went back (the buffer was reset) or the
 *           instance's @redefine_seq moved (its definitions are gone)
 * @seq:     the instance's @redefine_seq this CPU last saw
 * @horizon: records after which a definition is written again, from the
 *           buffer's size and mean record size at the last refresh
 * @refresh: count at which @horizon is computed again
 * @seq, @floor, @overrun, @read, @rseq, @buffer: see fsm_rb_position()
 *
 * Written by every context that writes a record of the module on this
 * CPU, NMI included, with no lock: a nested writer between a read and a
 * write of a field makes at most one jump too many (every stamp due) or
 * one refresh too many; see fsm_rb_position().
 */
struct fsm_rb_cpu {
	unsigned long last;
	u32 base;
	u32 horizon;
	unsigned long refresh;
	u32 seq;
	u32 floor;	/* position of the last reset / new seq: older stamps are void */
	unsigned long overrun;	/* the buffer's overrun and read counts at */
	unsigned long read;	/* the last look: they only go back at a reset */
	u32 rseq;	/* the buffer's reset count at the last look (compat/rb_reset.h) */
	const struct trace_buffer *buffer;	/* the buffer at the last look */
};

/* The position of a record in its CPU's buffer (fsm_rb_position()). */
struct fsm_rb_pos {
	u32 now;	/* position after the record, modulo 2^32 */
	u32 horizon;	/* 0: re-definitions are off */
	/*
	 * for claims: a stamp counts only if less than this behind @now,
	 * min(@horizon, since the floor + 1)
	 */
	u32 fresh;
};

/*
 * The claim horizon at @now: a stamp written before @floor (the last reset
 * of this CPU's buffer, or a new recording / redefine) never counts, one
 * written since counts while less than @horizon behind. Unlike a jump of
 * the position, moving the floor again never revives an older stamp.
 */
static inline u32 fsm_rb_fresh(u32 now, u32 floor, u32 horizon)
{
	u32 since = now - floor;

	return since >= horizon ? horizon : since + 1;
}

/* Per-CPU counters of the tracing side (the map counts its own). */
struct fsm_inst_pcpu {
	local64_t requests;	/* fsm_map_insert() calls from the probe */
	local64_t records;	/* stack_id records committed */
	local64_t inline_emits;	/* ... of which carried an id's stack inline */
	local64_t fallbacks;	/* ... of which carried a full stack, no id */
	local64_t truncated;	/* stacks deeper than FSM_MAX_KERNEL_DEPTH */
	local64_t lost;		/* records the ring buffer refused */
	local64_t inline_lost;	/* ... of which should have carried a stack */
	local64_t nested;	/* probe nested deeper than the per-CPU buffers */
	local64_t trig_no_verdict; /* stackmap trigger hits without a verdict */
	local64_t own_frame_walks; /* captures that walked our own frames */
	local64_t redefs;	/* ... stack_def records written again (REDEF) */
	struct fsm_rb_cpu rb;	/* this CPU's ring buffer (fsm_rb_position()) */
};

/* The nodes of an instance. */
enum fsm_node {
	FSM_NODE_MAP,		/* stack_map */
	FSM_NODE_STAT,		/* stack_map_stat */
	FSM_NODE_BIN,		/* stack_map_bin */
	FSM_NODE_EVENTS,	/* stack_map_events */
	FSM_NODE_OPTION,	/* options/stackmap */
	FSM_NODE_UOPTION,	/* options/stackmap_user */
	FSM_NR_NODES
};

/**
 * struct fsm_src - a chosen source event of an instance.
 * @list:       in fsm_inst.sources (fsm_mutex)
 * @inst:       owner (the probe's data leads here)
 * @file:       the source event's trace_event_file in @inst's instance;
 *              dereferenced only by the probe, which runs only while
 *              attached, i.e. while the instance and the event exist
 * @tp:         the event's tracepoint
 * @mod:        module owning the event (NULL: core kernel)
 * @iter_start: the tracepoint iterator function (__traceiter_*), trimmed
 * @iter_size:  from captured stacks by address
 * @type:       trace_event type id of the source event
 * @attached:   probe registered on @tp (fsm_mutex)
 * @modref:     holds a reference on @mod (between resolution and entry;
 *              fsm_src_pending_lock, sources.c)
 * @mod_gone:   @mod went GOING before the source was entered: never enter
 *              it (set by the module notifier under fsm_mutex)
 * @pending:    on the list of resolved sources holding a module reference
 *              (fsm_src_pending_lock), else empty
 * @all:        on fsm_src_all from resolution until freed
 *              (fsm_src_pending_lock): the trigger backend's hooks find
 *              sources by @call and @tr there (src_trig.c)
 * @call:       the source event (compared only, never dereferenced
 *              through this field)
 * @tr:         the instance's trace_array at resolution (compared only)
 * @ops:        the source backend that attaches it (struct fsm_src_ops)
 * @trig:       the trigger backend's data: the hidden trigger data pair
 *              on @file (src_trig.c); NULL with other backends
 * @gone:       FSM_SRC_GONE_*: @file was freed or is about to be (the
 *              event was removed, or the instance): never link, never
 *              dereference @file again (written and read with event_mutex
 *              held)
 * @pc:         per-source counters (stack_map_stat's per-source section)
 * @name:       "system:event"
 */
struct fsm_src {
	struct list_head list;
	struct fsm_inst *inst;
	struct trace_event_file *file;
	struct tracepoint *tp;
	struct module *mod;
	unsigned long iter_start;
	unsigned long iter_size;
	u16 type;
	bool attached;
	bool modref;
	bool mod_gone;
	u8 gone;
	struct list_head pending;
	struct list_head all;
	struct trace_event_call *call;
	struct trace_array *tr;
	const struct fsm_src_ops *ops;
	struct fsm_src_trig *trig;
	struct fsm_src_pcpu __percpu *pc;
	char name[];
};

/* struct fsm_src.gone */
#define FSM_SRC_GONE_EVENT	1	/* dynamic event removed: say so, drop */
#define FSM_SRC_GONE_INST	2	/* its instance is being removed */
#define FSM_SRC_GONE_MOD	3	/* its module unloads */

/*
 * What a tracepoint-probe source saw before the kernel's probe of its
 * event, one per context level (task, softirq, irq, NMI) of a CPU
 * (src_probe.c, fsm_probe_pre()): the instance's ring buffer (NULL: no
 * look pending), its count of records written on this CPU then
 * (fsm_rb_written()) and the task.
 */
struct fsm_src_pre {
	struct trace_buffer *buf;
	unsigned long count;
	struct task_struct *task;
};

#define FSM_SRC_PRE_LEVELS	4

/* Per-CPU counters of one source event (stack_map_stat, "source ..."). */
struct fsm_src_pcpu {
	local64_t hits;		/* source records kept: a stack was due */
	/*
	 * source events not captured, their record not written: soft
	 * disable, set_event_pid, tracing off; on the trigger path also the
	 * event's filter (a trigger-path judge sees the kernel's decision)
	 */
	local64_t filtered;
	local64_t records;	/* stack id records written for it */
	local64_t drops;	/* hits that wrote no id record */
	/*
	 * events judged; those neither hits nor filtered had no verdict:
	 * on the trigger path a nested or unpairable case, for a
	 * tracepoint-probe source a filter or a conditional trigger on the
	 * event (src_probe.c, fsm_probe(): it cannot tell whether the record
	 * was written)
	 */
	local64_t judged;
	/*
	 * tracepoint-probe sources: hits whose record could not be shown to
	 * be the one record written in the instance on this CPU between the
	 * kernel's probe and ours (src_probe.c, fsm_probe()): no id record
	 */
	local64_t unpaired;
	struct fsm_src_pre pre[FSM_SRC_PRE_LEVELS];	/* src_probe.c */
};

/* struct fsm_inst.defaults_state */
enum {
	FSM_DFLT_TODO,
	FSM_DFLT_RUNNING,
	FSM_DFLT_DONE,
};

/**
 * struct fsm_inst - per-instance state.
 * @ref:        kref: the instance table holds one, each open node one
 * @id:         instance id (0 = top level), index in fsm_insts, written in
 *              every stack_id record ("inst") and shown in stack_map_stat
 * @name:       instance name, NULL for the top level
 * @dir:        the instance's tracefs directory (reference held)
 * @tr:         opaque key of the instance; NULL once dead
 * @seq:        serial number of this struct (per load, never reused): with
 *              @id it makes the node key (fsm_inst_node_key()), so a node
 *              inode of a removed instance never reaches a later instance
 *              that reuses the id
 * @dead:       the instance directory was removed (fsnotify handler)
 * @defaults_state: default sources: FSM_DFLT_TODO, _RUNNING (claimed by the
 *              sync work or FSM_DIR_MADE, being installed), _DONE (written
 *              under fsm_mutex; waiters: wait_var_event())
 * @nodes_done: nodes created (fsm_nodes_mutex)
 * @nodes_gone: nodes removed for good: never create them again
 *              (fsm_nodes_mutex)
 * @nodes:      the node dentries (reference held on each; fsm_nodes_mutex)
 * @dbg_dir:    debugfs mode: the instance's directory and its options/
 * @dbg_opts:
 * @reap:       worker-private list link
 * @file:       our stack_id event file while it is registered (recording),
 *              else NULL (fsm_mutex; read by the probe)
 * @epoch:      recording epoch, never 0: bumped on each REGISTER (a new
 *              recording), and by the probe when a record that should have
 *              carried a stack inline was refused by the ring buffer (so
 *              that every id is emitted inline again in the trace)
 * @sources:    chosen source events, struct fsm_src (fsm_mutex)
 * @sources_set: sources were chosen explicitly (or defaults installed)
 * @map:        the stack map, NULL until the first REGISTER; published once
 *              with smp_store_release() (readers: smp_load_acquire())
 * @map_rwsem:  reset (write) against readers of the map (read)
 * @gen:        current generation (written under @map_rwsem held for write)
 * @gen_ts:     trace-clock time after the stack_reset record that opened
 *              @gen, earlier than every record of @gen; U64_MAX if unknown
 *              (under @map_rwsem; read by the trace output, events.c)
 * @resets:     resets done (under @map_rwsem)
 * @redefine_seq: moves when the definitions in the instance's buffer must
 *              all be taken as gone: a new recording, a reader that
 *              consumed the buffer (echo redefine > stack_map); every CPU's
 *              position jumps then (fsm_rb_position()), so every stamp is
 *              due
 * @umap:       the user stack map (ustack_deliver.c), NULL until options/
 *              stackmap_user is first set; published once with
 *              smp_store_release() (readers: smp_load_acquire()), reset
 *              with @map (under @map_rwsem), freed with the struct
 * @ugen:       its current generation (written under @map_rwsem)
 * @pcpu:       tracing counters
 */
struct fsm_inst {
	struct kref ref;
	u32 id;
	u32 seq;
	const char *name;
	struct dentry *dir;
	struct trace_array *tr;
	bool dead;
	u8 defaults_state;
	bool nodes_done;
	bool nodes_gone;
	struct dentry *nodes[FSM_NR_NODES];
	struct dentry *dbg_dir;
	struct dentry *dbg_opts;
	struct list_head reap;

	struct trace_event_file *file;
	atomic_t epoch;
	struct list_head sources;
	bool sources_set;
	/*
	 * The events of this instance that have a stackmap trigger (struct
	 * fsm_inst_trig, trigger.c), under event_mutex: such an event is not
	 * a source too, and a source gets no stackmap trigger, so that each
	 * record has one id record (fsm_inst_has_trig()).
	 */
	struct list_head trigs;
	/*
	 * The standing patterns (sources.c, "Patterns that follow"): the
	 * wildcard and '!' tokens chosen since the last '>' write, in order,
	 * re-applied to events that appear later; NULL: none. With their
	 * sequence number, bumped on each change. Under fsm_mutex.
	 */
	char *src_pat;
	u32 src_pat_seq;

	/*
	 * Serialises the creation of map and umap (fsm_inst_prepare_map(),
	 * fsm_ust_umap_alloc()): the second of two concurrent enables waits
	 * for the first one's map instead of allocating a second one, which
	 * could fail the memory budget (-ENOMEM) for a map that is about to
	 * exist. Per instance, so other instances never wait; taken with
	 * event_mutex held (REGISTER) or not, never with fsm_mutex held.
	 */
	struct mutex map_alloc_mutex;
	struct fsm_map *map;
	struct rw_semaphore map_rwsem;
	u32 gen;
	u64 gen_ts;
	u64 resets;
	atomic_t redefine_seq;
	struct fsm_map *umap;
	u32 ugen;
	struct fsm_inst_pcpu __percpu *pcpu;
};

/**
 * struct fsm_inst_trig - an event of an instance with a stackmap trigger.
 * @node: in fsm_inst.trigs (event_mutex)
 * @file: the event's file in that instance
 */
struct fsm_inst_trig {
	struct list_head node;
	struct trace_event_file *file;
};

/**
 * struct fsm_inst_hooks - what the registry tells the layers above it.
 * @created:  a struct fsm_inst was made (fsm_mutex held): have its nodes
 *            and default sources made (lifecycle.c's worker)
 * @ids_busy: the ids below FSM_UST_MAX_INST that the user-stack side still
 *            refers to (fsm_mutex held)
 * @id_reset: zero the user-stack counters of a retired id about to be
 *            given out again (fsm_mutex held)
 *
 * Handed down by main.c at init (fsm_inst_set_hooks()), so that the
 * registry calls no file above it.
 */
struct fsm_inst_hooks {
	void (*created)(struct fsm_inst *inst);
	u64 (*ids_busy)(void);
	void (*id_reset)(u32 id);
};

/* instances.c: the registry, module state, find-or-create, the maps */
extern struct mutex fsm_mutex;
extern struct xarray fsm_insts;
extern bool fsm_shutting_down;	/* module exit (or a failed init) began */
extern bool fsm_ready;		/* init is done: recording may start */
extern struct dentry *fsm_instances_dir;
void fsm_inst_set_hooks(const struct fsm_inst_hooks *hooks);
bool fsm_inst_alive(const struct fsm_inst *inst);
struct fsm_inst *fsm_inst_get_by_id(u32 id);
void *fsm_inst_node_key(const struct fsm_inst *inst);
struct fsm_inst *fsm_inst_get_by_key(const void *key);
void fsm_inst_put(struct fsm_inst *inst);
const char *fsm_inst_label(const struct fsm_inst *inst);
struct fsm_inst *fsm_inst_find_tr_locked(struct trace_array *tr);
struct fsm_inst *fsm_inst_find_name_locked(const char *name);
struct fsm_inst *fsm_inst_find_or_create_locked(struct trace_event_file *file);
struct fsm_inst *fsm_inst_find_or_create_dir_locked(struct dentry *dir,
						    struct trace_array *tr);
struct fsm_inst *fsm_inst_of_tr_rcu(struct trace_array *tr);
int fsm_inst_prepare_map(struct fsm_inst *inst);
bool fsm_inst_has_trig(struct fsm_inst *inst,
		       const struct trace_event_file *file);
void fsm_inst_registry_exit(void);

/* lifecycle.c: instances made and removed (main.c runs init and exit) */
extern char *fsm_default_events;
void fsm_inst_kick_worker(void);
int fsm_lifecycle_init(void);
int fsm_lifecycle_start(void);
void fsm_lifecycle_stop(void);
void fsm_lifecycle_exit(void);

/**
 * struct fsm_caller - where the kernel called one of our callbacks from.
 * @ip: the return address into the kernel (0: unknown)
 * @sp: the kernel function's stack pointer right after that return
 * @bp: its frame pointer register then
 *
 * The state of the caller's frame at the call, as an unwinder needs it to
 * start there: the stack capture then never walks the module's own frames
 * (each one costs the unwinder a module lookup for its ORC data and
 * another one for __kernel_text_address()) nor the unwinder's. Taken by
 * FSM_CALLER() in the function the kernel called (a tracepoint probe or a
 * trigger callback), passed down to fsm_record_event_to().
 */
struct fsm_caller {
	unsigned long ip;
	unsigned long sp;
	unsigned long bp;
};

/*
 * FSM_CALLER - fill *@c in the function that the kernel called directly.
 *
 * __builtin_frame_address(0) makes GCC give that function a frame pointer
 * (push %rbp; mov %rsp, %rbp, objtool and ORC know it): the saved %rbp of
 * the caller at fp[0], the return address at fp[1], and the caller's
 * stack pointer after the return at fp + 2 -- unless the prologue
 * realigned the stack first (GCC's DRAP prologue, for a local that needs
 * more than 8-byte alignment: lea 8(%rsp),%r10; and $-N,%rsp; push
 * -8(%r10); push %rbp; mov %rsp,%rbp), where fp[1] is a copy of the
 * return address and fp + 2 is inside the realigned area. So
 * the layout is checked against __builtin_dwarf_cfa(), the caller's stack
 * pointer after the return as the compiler knows it (the canonical frame
 * address; it does not need unwind tables): any other layout leaves
 * @c->ip 0, and the capture walks from the current frame (counted as
 * own_frame_walks). fp[1] and __builtin_return_address(0) read the same
 * slot, so comparing them checks nothing. A macro, not a function: the
 * frame must be the callback's own. The slots are our own frame's, read
 * without KASAN's check as the unwinder reads stacks. x86-64 only
 * (elsewhere @c->ip is 0). Context: any.
 *
 * The callbacks that use it are NOKPROBE_SYMBOL(): a kretprobe on one
 * would put the rethook trampoline in fp[1] (the walk from the
 * current frame recovers it, a start at fp[1] would not).
 */
#ifdef CONFIG_X86_64
#define FSM_CALLER(c)	fsm_caller_fill((c), __builtin_frame_address(0),	\
					__builtin_dwarf_cfa())
#else
/* arm64: the frame record is not at the caller's stack pointer */
#define FSM_CALLER(c)	((c)->ip = 0)
#endif /* CONFIG_X86_64 */

static __always_inline void fsm_caller_fill(struct fsm_caller *c,
					    unsigned long *fp, void *cfa)
{
	c->ip = 0;
	if (unlikely((unsigned long)(fp + 2) != (unsigned long)cfa))
		return;
	c->ip = READ_ONCE_NOCHECK(fp[1]);
	c->sp = (unsigned long)(fp + 2);
	c->bp = READ_ONCE_NOCHECK(fp[0]);
}

/* events.c: the event definitions, .reg, the record writers, the output */
int fsm_events_init(void);
void fsm_events_exit(void);
bool fsm_emit_id(struct trace_event_file *file, u32 id, u64 cookie,
		 struct fsm_inst *inst, struct fsm_rb_pos *pos);
void fsm_rb_position(struct trace_buffer *buffer, struct fsm_inst *inst,
		     struct fsm_rb_pos *pos);
bool fsm_rb_written(struct trace_buffer *buffer, int cpu, unsigned long *n);
bool fsm_emit_def(struct trace_event_file *file, u32 id, u32 flags,
		  const unsigned long *ips, unsigned int nr);
bool fsm_emit_fallback(struct trace_event_file *file, u32 flags, u32 reason,
		       u64 cookie, const unsigned long *ips, unsigned int nr);
u64 fsm_write_reset_record(struct fsm_inst *inst, u32 gen);
int fsm_inst_set_recording(struct fsm_inst *inst, bool on);
bool fsm_output_may_look_up(const struct trace_iterator *iter);
bool fsm_output_room(struct trace_seq *s, unsigned int left);
void fsm_set_output(struct trace_event_call *call,
		    struct trace_event_functions *funcs,
		    trace_print_func trace, trace_print_func raw);

/* record.c: capture, insert, write the id records (any context) */
int fsm_record_init(void);
void fsm_record_exit(void);
bool fsm_record_event(struct fsm_inst *inst, struct fsm_src *src,
		      const struct fsm_caller *caller);
bool fsm_record_event_to(struct fsm_inst *inst, struct trace_event_file *file,
			 struct fsm_src *src, bool user,
			 const struct fsm_caller *caller);

/**
 * struct fsm_src_ops - a source backend: how a chosen source event is
 * made to write id records (the way file systems provide inode ops).
 * @name:         for messages
 * @refuses:      why @call cannot be a source with this backend, or NULL
 * @prepare:      fill the backend's part of a source being resolved (under
 *                the event directory's lock: the file is alive).
 *                Return: 0 or -errno
 * @attach:       start writing id records for the source (fsm_mutex held).
 *                Return: 0 or -errno
 * @detach:       stop (fsm_mutex held); its callback may still run on other
 *                CPUs until tracepoint_synchronize_unregister()
 * @quiesce:      stop from inside the kernel's walk of a trigger list: stay
 *                where it is, inert (NULL: @detach is safe there)
 * @tidy:         a detached source: take off what @quiesce left (NULL:
 *                nothing to do)
 * @free:         free the backend's part, after a grace period (NULL:
 *                nothing); also for a source whose @prepare failed or never
 *                ran
 *
 * One instance per backend (src_trig.c, src_probe.c), chosen by main.c at
 * load (fsm_sources_set_ops()); sources.c calls nothing else of a backend.
 * @attach, @detach and @tidy run with event_mutex held where the kernel's
 * is known (fsm_event_lock()), which a backend that changes the events'
 * trigger lists requires.
 */
struct fsm_src_ops {
	const char *name;
	const char *(*refuses)(const struct trace_event_call *call);
	int (*prepare)(struct fsm_src *src, struct trace_event_call *call);
	int (*attach)(struct fsm_src *src);
	void (*detach)(struct fsm_src *src);
	void (*quiesce)(struct fsm_src *src);
	void (*tidy)(struct fsm_src *src);
	void (*free)(struct fsm_src *src);
};

/* sources.c */
/*
 * FSM_SRC_REPLACE:  the text replaces the chosen set
 * FSM_SRC_DEFAULTS: only if nothing was chosen yet; unknown events are
 *                   skipped with a warning
 * FSM_SRC_PARAM:    the text is the events= parameter (for messages)
 */
#define FSM_SRC_REPLACE		0x1
#define FSM_SRC_DEFAULTS	0x2
#define FSM_SRC_PARAM		0x4
/* internal to sources.c: add what the standing patterns match now */
#define FSM_SRC_FOLLOW		0x8
/*
 * Longest text of one fsm_sources_update() call: a stack_map_events write
 * (4096 bytes) and the unfinished token held before it (4096 bytes at most).
 */
#define FSM_SRC_TEXT_MAX	8192
int fsm_sources_update(struct fsm_inst *inst, const char *text,
		       unsigned int mode);
int fsm_sources_show(struct seq_file *m, struct fsm_inst *inst);
bool fsm_sources_has_file_locked(struct fsm_inst *inst,
				 const struct trace_event_file *file);
#define FSM_TOK_BAD	0	/* fsm_sources_classify() */
#define FSM_TOK_PREFIX	1
#define FSM_TOK_EVENT	2
int fsm_sources_classify(struct fsm_inst *inst, const char *tok);
void fsm_sources_free(struct list_head *list);
int fsm_sources_init(void);
void fsm_sources_exit(void);

extern spinlock_t fsm_src_pending_lock;
extern struct list_head fsm_src_all;
void fsm_sources_gone_kick(void);
void fsm_sources_follow_kick(void);
void fsm_sources_follow_stop(void);

void fsm_sources_set_ops(const struct fsm_src_ops *ops);
bool fsm_event_lock(void);
void fsm_event_unlock(bool locked);
int fsm_src_attach_locked(struct fsm_src *src);
void fsm_src_detach_locked(struct fsm_src *src);
int fsm_sources_attach_all_locked(struct fsm_inst *inst);
void fsm_sources_detach_all_locked(struct fsm_inst *inst, bool in_walk);

/*
 * The source backends. src_trig.c: sources through hidden trigger data,
 * available when the trigger layouts, the kernel symbols and the two
 * removal hooks are, and not refused by @force_probe (the
 * force_probe_sources parameter); NULL otherwise, and then src_probe.c:
 * sources are tracepoint probes.
 */
const struct fsm_src_ops *fsm_src_trig_init(bool force_probe);
void fsm_src_trig_exit(void);
const struct fsm_src_ops *fsm_src_probe_init(void);

/* trigger.c: the stackmap trigger command */
void fsm_trigger_init(void);
void fsm_trigger_exit(void);

/* nodes_map.c: the readers of the maps, for nodes.c's table */
struct inode;
extern const struct file_operations fsm_map_fops;
extern const struct file_operations fsm_bin_fops;
struct fsm_inst *fsm_node_inst(struct inode *inode);

/* nodes.c: every tracefs node of an instance */
extern struct mutex fsm_nodes_mutex;
int fsm_nodes_create(struct fsm_inst *inst);
void fsm_nodes_remove(struct fsm_inst *inst);
int fsm_nodes_init(void);
void fsm_nodes_exit(void);

#endif /* FSM_TRACING_H */
