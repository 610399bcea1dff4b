/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fsm_unwind.h - C ABI of the user-stack walker and of the per-entry unwind
 * cache (C++ implementation: unwind_user.{h,cpp}, unwind_cache.{h,cpp}).
 *
 * Like fsm_core.h this header includes nothing and uses only compiler types,
 * so the kernel glue (C), the C++ core and the user-space tests all see the
 * same layout. (It may be folded into fsm_core.h once that settles.)
 *
 * Overview
 * --------
 * 1. The walker. The caller snapshots the user registers of the interrupted
 *    task into struct fsm_uw_regs (ip, sp, fp, lr, a mode saying which
 *    architecture/ABI they belong to) and supplies a read function that
 *    fetches one word of user memory and reports faults. fsm_uw_walk()
 *    follows the frame-pointer chain with one generic loop driven by a small
 *    per-mode descriptor table (unwind_user.h) and fills an array of
 *    addresses: entry 0 is the user ip, the others are return addresses.
 *    It always says why it stopped (enum fsm_uw_stop): an empty or short
 *    stack is never silent.
 *
 * 2. The per-entry cache. 6.1 has no hook on the return to user space, and
 *    user stacks can only be walked safely from task context (reads may
 *    fault), so a request made in any context (NMI included) is answered
 *    with a cookie now and the stack later, by a task work that walks once
 *    per kernel entry and delivers the result to every tracing instance that
 *    asked. struct fsm_uwc_task is the per-task state for that (32 bytes),
 *    driven by fsm_uwc_request() (any context), fsm_uwc_complete() and
 *    fsm_uwc_entry_end() (the task work). The walk itself goes into a
 *    struct fsm_uwc_result that the caller supplies to fsm_uwc_complete():
 *    the kernel glue keeps the small state for every task with an entry in
 *    progress and the large result only while a walk is delivered.
 *
 * Address convention
 * ------------------
 * Entries are the values found in the registers and frame records: the ip,
 * then RETURN addresses (the instruction after each call), not call sites.
 * Nothing is subtracted; symbolizers subtract 1 (any byte inside the call
 * instruction is enough to find the caller's line). AArch32 Thumb return
 * addresses have bit 0 set in lr; the walker clears it (and sets
 * FSM_UW_RES_THUMB), so every entry is a plain code address. arm64
 * pointer-authentication bits are stripped with a mask the caller provides.
 */
#ifndef FSM_UNWIND_H
#define FSM_UNWIND_H

#ifdef __cplusplus
#define FSM_UW_BOOL bool
extern "C" {
#else
#define FSM_UW_BOOL _Bool
#endif

/*
 * Largest user stack (entries, ip included) a walk produces and the cache
 * stores. Upstream's deferred unwinder allows 511 (one lazily kmalloc'ed
 * 4 KiB page per task). Our per-task state lives in a table preallocated at
 * load time, so that a request from NMI never allocates: 127 entries keep a
 * slot at about 1 KiB (1 MiB for 1024 tracked tasks instead of 4 MiB), cover
 * real programs (deep C++ or interpreter stacks rarely pass 100 frames with
 * frame pointers), and bound the walk to 2 * 127 user reads. Deeper stacks
 * are cut and say so (FSM_UW_STOP_DEPTH).
 */
#define FSM_MAX_USER_DEPTH	127

/* Which register layout and frame-record layout to walk. */
enum fsm_uw_mode {
	FSM_UW_MODE_NONE = 0,		/* invalid (a zeroed struct is rejected) */
	FSM_UW_MODE_X86_64,		/* rbp chain: [rbp] = old rbp, [rbp+8] = ra */
	FSM_UW_MODE_IA32,		/* compat ebp chain, 4-byte words, flat segments */
	FSM_UW_MODE_ARM64,		/* x29 -> {x29, x30} frame record */
	FSM_UW_MODE_A32_GCC,		/* AArch32 GCC -marm: fp (r11) -> saved lr, old fp at fp-4 */
	FSM_UW_MODE_A32_FRAME_RECORD,	/* AArch32 AAPCS frame record (clang, A32 r11 or Thumb r7): fp -> {fp, lr} */
	/*
	 * AArch32, layout picked per frame between A32_FRAME_RECORD and A32_GCC
	 * (the kernel cannot know which compiler built the code): the layout
	 * whose return address follows a call instruction and whose saved fp
	 * moves up wins (unwind_user.h, pick_layout()). What the kernel glue
	 * uses for compat tasks; fp is r11, or r7 with FSM_UW_REGS_THUMB.
	 */
	FSM_UW_MODE_A32,
	FSM_UW_NR_MODES
};

/* fsm_uw_regs.flags */
/*
 * The ip is at the first instruction of a function: the call has pushed (x86)
 * or set in lr (arm) the return address, but the prologue has not run, so fp
 * still belongs to the caller. The kernel cannot know symbol starts; a caller
 * that does (a uprobe at a function entry, a test) sets this flag. Without it
 * the topmost caller is skipped in that state.
 */
#define FSM_UW_REGS_AT_ENTRY	0x1u
/*
 * AArch32: the task was interrupted in Thumb state (CPSR.T), fp is r7.
 * GCC's Thumb r7 points below the locals, not at the frame record, so such
 * a walk is a best effort: the result gets FSM_UW_RES_UNRELIABLE.
 */
#define FSM_UW_REGS_THUMB	0x2u
/*
 * AArch32 in Thumb state at a syscall (arm64: syscallno >= 0): r7 holds the
 * syscall number (EABI), not a frame pointer, so fp is ignored. The walker
 * looks for the caller's frame where Debian's Thumb glibc leaves it
 * (fsm_uw_regs.alt_fp: r12, r11; unwind_user.h, a32_syscall_top()).
 * Only with FSM_UW_REGS_THUMB and FSM_UW_MODE_A32.
 */
#define FSM_UW_REGS_SYSCALL	0x4u

/* User registers of the interrupted task, as the caller read them. */
struct fsm_uw_regs {
	unsigned long long ip;		/* user pc */
	unsigned long long sp;		/* user stack pointer */
	unsigned long long fp;		/* rbp / ebp / x29 / r11 (A32) or r7 (Thumb) */
	unsigned long long lr;		/* arm: x30 / r14 (used with AT_ENTRY); else 0 */
	/*
	 * arm64: bits to clear in every return address (pointer authentication,
	 * and the top byte if tags may be present), e.g. ptrauth_user_pac_mask().
	 * Ignored by the other modes.
	 */
	unsigned long long pac_mask;
	unsigned int mode;		/* enum fsm_uw_mode */
	unsigned int flags;		/* FSM_UW_REGS_* */
	/*
	 * FSM_UW_REGS_SYSCALL: r12 and r11, tried in this order as the frame
	 * pointer of the syscall wrapper's caller. Ignored otherwise.
	 */
	unsigned long long alt_fp[2];
};

/* Why a walk stopped. Names: fsm_uw_stop_name(). */
enum fsm_uw_stop {
	FSM_UW_STOP_END = 0,		/* chain ended normally: saved fp or return address 0 */
	FSM_UW_STOP_ZERO_FP,		/* the fp register itself is 0: no chain to follow */
	FSM_UW_STOP_FIRST_FAULT,	/* the first frame record was unreadable: registers only */
	FSM_UW_STOP_FAULT,		/* a read faulted further up the chain */
	FSM_UW_STOP_MISALIGNED,		/* fp (or sp) not aligned to the word size */
	FSM_UW_STOP_NOT_INCREASING,	/* frame below sp or below the previous one (bad fp, loop) */
	FSM_UW_STOP_DEPTH,		/* the entries array is full and one more frame was valid */
	FSM_UW_STOP_ABORTED,		/* not walked: the caller completed with an empty stack */
	FSM_UW_STOP_INVALID,		/* bad arguments (mode, NULL array) */
	FSM_UW_STOP_NO_CALL,		/* FSM_UW_MODE_A32: no return address that follows a
					 * call instruction in the next frame */
	FSM_UW_STOP_NOT_CODE,		/* x86: the next return address is in no executable
					 * mapping: the record was not a frame (rbp held data) */
	FSM_UW_NR_STOPS
};

/* fsm_uw_result.flags */
#define FSM_UW_RES_THUMB	0x1u	/* at least one Thumb return address (bit 0 cleared) */
#define FSM_UW_RES_AT_ENTRY	0x2u	/* the function-entry rule was used for the top frame */
#define FSM_UW_RES_LATE		0x4u	/* cache: the walked regs differ from the first requester's */
/*
 * AArch32: frames past entry 0 may be wrong or missing. Set when the walk
 * started in Thumb state (FSM_UW_REGS_THUMB: r7 may not be a frame pointer),
 * and when a frame is reported that was found after a return address
 * switched between A32 and Thumb (the caller's frame pointer is another
 * register), after both layouts of FSM_UW_MODE_A32 fitted a frame equally,
 * or through lr at the top (a leaf, a syscall wrapper). A switch or a tie
 * with no frame reported after it does not set it.
 * x86 and ia32: a return address was reported that lies in code but that
 * no call instruction precedes (a signal trampoline, or a code pointer that
 * a frame pointer used as a general register led to); it and the frames
 * after it may be wrong.
 */
#define FSM_UW_RES_UNRELIABLE	0x8u

struct fsm_uw_result {
	unsigned int nr;		/* entries written (0 only for ABORTED/INVALID/max 0) */
	unsigned int stop;		/* enum fsm_uw_stop */
	unsigned int flags;		/* FSM_UW_RES_* */
	unsigned int mode;		/* enum fsm_uw_mode that was walked */
};

/*
 * Read @size (4 or 8) bytes of user memory at @addr into *@val, zero
 * extended. Return true on success, false on a fault (the walk then stops
 * with FSM_UW_STOP_FAULT or FSM_UW_STOP_FIRST_FAULT). The kernel implements
 * it with copy_from_user_nofault() (any context) or __copy_from_user_inatomic
 * / copy_from_user (task context, may fault pages in).
 *
 * The code reader (FSM_UW_MODE_A32's call-site checks, the x86 modes' check
 * that a return address is code after a call) has the same type: it reads
 * the instructions before a candidate return address, which may be any
 * value a wrong layout or a frame pointer used as a general register
 * produced, so it must read only executable mappings, never a device
 * (VM_IO/VM_PFNMAP) one; false = "not code".
 */
typedef FSM_UW_BOOL (*fsm_uw_read_fn)(void *ctx, unsigned long long addr,
				      unsigned int size, unsigned long long *val);

/*
 * fsm_uw_walk - walk a user stack by frame pointers.
 * @regs:      the user registers and mode.
 * @read:      stack reader (see fsm_uw_read_fn), called at most 2 * @max
 *             times (4 * @max + 13 with FSM_UW_MODE_A32: two candidate
 *             records per frame, more candidates at the top); @ctx is passed
 *             through.
 * @read_code: code reader for call-site checks (FSM_UW_MODE_A32, the x86
 *             modes), called at most 2 * @max + 7 times; NULL: code is never
 *             read, no return address is vouched for: an A32 walk ends at
 *             its first record (FSM_UW_STOP_NO_CALL), an x86 one before its
 *             first return address (FSM_UW_STOP_NOT_CODE).
 * @entries:   output, @max entries; entry 0 is regs->ip.
 * @res:       output: nr, stop reason, flags. Always filled.
 * Context: any in which @read and @read_code may be called; the walker
 * itself never sleeps, allocates or takes a lock, and every loop is bounded
 * by @max.
 * Return: the number of entries written (res->nr).
 */
unsigned int fsm_uw_walk(const struct fsm_uw_regs *regs, fsm_uw_read_fn read,
			 fsm_uw_read_fn read_code, void *ctx,
			 unsigned long long *entries, unsigned int max,
			 struct fsm_uw_result *res);

/* "end", "zero_fp", ...; "unknown" for out-of-range values. */
const char *fsm_uw_stop_name(unsigned int stop);
/* "x86_64", "ia32", "arm64", "a32_gcc", "a32_frame_record", "a32"; "none"/"unknown". */
const char *fsm_uw_mode_name(unsigned int mode);

/* ---- Per-entry cache --------------------------------------------------- */

/*
 * Cookies identify one kernel entry of one task: every event recorded in
 * that entry carries it, and so does the deferred user stack delivered for
 * it. Layout (61 bits, bits 61..63 always 0):
 *
 *   63    61 60                                   13 12          0
 *   |  0 0 0 |  per-CPU sequence (48 bits, >= 1)     |  cpu (13)  |
 *
 * The sequence comes from a per-CPU counter of the CPU the cookie was made
 * on (the caller passes that counter and the CPU number), so cookies are
 * unique without a shared cache line and never 0 (0 = "no cookie"). 13 CPU
 * bits cover CONFIG_NR_CPUS=8192 (Debian amd64); 2^48 cookies per CPU last
 * nine years at a million entries per second. Cookies are not timestamps:
 * those can repeat (rejected upstream for that reason).
 */
#define FSM_UWC_COOKIE_CPU_BITS	13
#define FSM_UWC_COOKIE_SEQ_BITS	48
#define FSM_UWC_COOKIE_NONE	0ull

/* Instances are bits of a 64-bit mask; bit 63 is the "harvested" marker. */
#define FSM_UWC_MAX_INSTANCES	63

/* fsm_uwc_request() results (>= 0), upstream's convention. */
enum fsm_uwc_status {
	FSM_UWC_QUEUE = 0,	/* first request of this entry: caller must queue the task work */
	FSM_UWC_PENDING,	/* walk queued; your instance will be in the delivery mask */
	FSM_UWC_DELIVERED,	/* this entry's stack was (or will be) delivered to your instance */
	FSM_UWC_CACHED,		/* walk done, your instance was not in the delivery mask:
				 * the completer serves it before the entry ends
				 * (fsm_uwc_late(), fsm_uwc_entry_end()); once: later
				 * requests of your instance in this entry return
				 * DELIVERED */
};
/* Errors are negative: */
#define FSM_UWC_EINVAL	(-22)	/* instance >= 63, cpu out of range, NULL pointer */
#define FSM_UWC_EBUSY	(-16)	/* state kept changing (bounded retries): drop, count it */
#define FSM_UWC_ENOENT	(-2)	/* complete/abort: no such pending entry */

/*
 * Per-task state. Zeroed memory is a valid idle state (so is
 * fsm_uwc_init()). The fields are private to unwind_cache.cpp; C code only
 * allocates the struct and passes pointers. Size: 32 bytes. An idle state
 * (no entry in progress) may pass from one task to another: the next
 * request starts a new entry whoever makes it.
 */
struct fsm_uwc_task {
	/* Atomic words: 8-byte aligned even where u64 is not (i386 ABI). */
	unsigned long long state __attribute__((__aligned__(8)));	/* cookie << 3 | buf << 2 | state */
	unsigned long long sig __attribute__((__aligned__(8)));	/* entry signature of the current cookie */
	unsigned long long req[2] __attribute__((__aligned__(8)));	/* requester masks, indexed by buf */
};

/*
 * The walk of one entry, in memory the completer supplies
 * (fsm_uwc_complete()) and keeps until it has served the entry.
 */
struct fsm_uwc_result {
	struct fsm_uw_result res;
	unsigned long long entries[FSM_MAX_USER_DEPTH];
};

/* What fsm_uwc_complete() hands back: deliver @res/@entries to @mask. */
struct fsm_uwc_delivery {
	unsigned long long cookie;
	unsigned long long mask;	/* instance bits that requested before the harvest */
	const struct fsm_uw_result *res;	/* in the completer's result */
	const unsigned long long *entries;
	unsigned long long word;	/* private: the entry's DONE state word */
};

/*
 * The walk the task work performs inside fsm_uwc_complete(): fill @entries
 * (at most @max) and *@res, return res->nr. Usually a wrapper around
 * fsm_uw_walk() on task_pt_regs(current); on exit/exec it returns 0 with
 * res->stop = FSM_UW_STOP_ABORTED (requesters still get an empty stack).
 */
typedef unsigned int (*fsm_uwc_walk_fn)(void *ctx, unsigned long long *entries,
					unsigned int max,
					struct fsm_uw_result *res);

/* Context: no other user of @t. Same as zeroing it. */
void fsm_uwc_init(struct fsm_uwc_task *t);

/*
 * fsm_uwc_cookie_next - a new cookie (layout above).
 * @cpu_counter: the per-CPU sequence counter of @cpu (atomic increment, so a
 *               migration between reading @cpu and the call is harmless).
 * Context: any, NMI included.
 * Return: the cookie, or 0 if @cpu >= 2^13 or @cpu_counter is NULL.
 */
unsigned long long fsm_uwc_cookie_next(unsigned long long *cpu_counter,
				       unsigned int cpu);

/*
 * fsm_uwc_entry_sig - signature of "this kernel entry": a 64-bit mix of the
 * saved user ip, sp, fp, lr, mode and an opaque @extra the caller chooses.
 *
 * Weakness: two entries with identical user registers (a syscall in a loop,
 * or the same leaf called from two callers at the same depth) look like one
 * entry; the second then reuses the first one's cookie and stack, which is
 * wrong if the callers above differ. @extra mitigates it: pass anything that
 * changes between kernel entries and stays constant within one, e.g. a
 * per-task syscall/irq count. nvcsw + nivcsw is a fallback that also changes
 * when the task sleeps inside an entry (cost: one extra walk and cookie,
 * never a wrong stack). The signature only matters once the walk is done:
 * while a walk is pending the task cannot have returned to user space, so
 * every request joins it whatever its signature.
 * Context: any.
 */
unsigned long long fsm_uwc_entry_sig(const struct fsm_uw_regs *regs,
				     unsigned long long extra);

/*
 * fsm_uwc_request - ask for the user stack of the current kernel entry.
 * @t:        the current task's state (requests for a task come from that
 *            task and from contexts nested on it: IRQ, NMI).
 * @sig:      fsm_uwc_entry_sig() of the current user registers.
 * @instance: requesting tracing instance, 0..62.
 * @cpu_counter, @cpu: cookie source, used only if a new entry starts.
 * @cookie:   out: the cookie of this entry (on success).
 * Context: any, NMI included. Lock-free: no allocation, at most 8 attempts.
 * Return: enum fsm_uwc_status, or FSM_UWC_EINVAL / FSM_UWC_EBUSY.
 */
int fsm_uwc_request(struct fsm_uwc_task *t, unsigned long long sig,
		    unsigned int instance, unsigned long long *cpu_counter,
		    unsigned int cpu, unsigned long long *cookie);

/*
 * fsm_uwc_complete - the task work: walk once, mark done, say whom to serve.
 * @r:        where the walk goes (see struct fsm_uwc_result); NULL: no
 *            memory for it, the entry completes with an empty stack
 *            (FSM_UW_STOP_ABORTED) and @walk is not called.
 * @exit_sig: fsm_uwc_entry_sig() of the registers being walked (the ones the
 *            task returns to user with); becomes the entry's signature so
 *            that late requests on the way out match it.
 * @walk:     the walk (see fsm_uwc_walk_fn); called at most once.
 * @out:      filled on success; the caller emits out->res/out->entries for
 *            every bit of out->mask (possibly none), then the late
 *            requesters (fsm_uwc_late(), fsm_uwc_entry_end()), keeping @r
 *            until then.
 * Context: task work of the task owning @t (may sleep if @walk does).
 * Requests from nested contexts may run concurrently.
 * Return: 0, FSM_UWC_ENOENT (nothing pending: spurious call) or
 * FSM_UWC_EBUSY (a claim or another completion is in progress; impossible
 * when called from the task's own task work).
 */
int fsm_uwc_complete(struct fsm_uwc_task *t, struct fsm_uwc_result *r,
		     unsigned long long exit_sig, fsm_uwc_walk_fn walk, void *ctx,
		     struct fsm_uwc_delivery *out);

/*
 * fsm_uwc_late - the late requesters of the entry @d was completed for:
 * instance bits that asked after its harvest (their request returned
 * FSM_UWC_CACHED) and are not in d->mask. Each instance appears at most
 * once per entry, so a caller that serves and removes what it got (mask &
 * ~served) needs at most 63 rounds.
 * Context: the completer (the task's own task work, after
 * fsm_uwc_complete() and before fsm_uwc_entry_end()): every requester of
 * the entry either ran before it in the task's order or is nested on it
 * and has finished.
 */
unsigned long long fsm_uwc_late(const struct fsm_uwc_task *t,
				const struct fsm_uwc_delivery *d);

/*
 * fsm_uwc_entry_end - end the entry @d was completed for (DONE -> IDLE):
 * the next request starts a new entry whatever its registers. Returns the
 * entry's late requesters as fsm_uwc_late() does, now final: a request
 * after this one starts another entry. If a request already started a new
 * entry (another signature while this one was DONE), the state is left
 * alone; the late requesters of this one are still returned.
 * Context: the completer, as fsm_uwc_late(); never nested on a request of
 * the same task (see unwind_cache.h, the contract).
 */
unsigned long long fsm_uwc_entry_end(struct fsm_uwc_task *t,
				     const struct fsm_uwc_delivery *d);

/*
 * fsm_uwc_abort - end a pending entry that will never be walked (its task
 * work could not be queued). PENDING(@cookie) goes back to IDLE with no
 * result: the next request starts a new entry and queues again. Requesters
 * that joined the aborted entry hold a cookie for which no stack comes.
 * Context: the task owning @t, any context (the requester that claimed it).
 * Return: 0, FSM_UWC_ENOENT (not pending with @cookie), FSM_UWC_EBUSY (a
 * walk took it first).
 */
int fsm_uwc_abort(struct fsm_uwc_task *t, unsigned long long cookie);

/*
 * fsm_uwc_live_mask - the instances that the current entry of @t may still
 * serve: its requester bits while it is being claimed, pending, walked or
 * done (until fsm_uwc_entry_end()); 0 while idle (after the entry ended or
 * was aborted: nothing of it is delivered by the entry itself any more; a
 * completer that serves the late requesters fsm_uwc_entry_end() returned
 * covers those itself).
 *
 * For retiring an instance number: once no request for instance i can run
 * any more (its requesters are gone), a clear bit i means that this entry
 * will not deliver to i, and has finished doing so if the caller's task
 * work ends each entry with fsm_uwc_entry_end() after its deliveries,
 * ordered after them (a full barrier). A set bit may be stale (a finished
 * delivery whose entry did not end yet): ask again later.
 * Context: any, from any CPU; a snapshot (no lock, bounded). The caller
 * orders it after its own "no more requests" point (a full barrier or a
 * grace period).
 */
unsigned long long fsm_uwc_live_mask(const struct fsm_uwc_task *t);

/* For tests and debugfs: FSM_UWC_STATE_* of @t, cookie in *@cookie if set. */
#define FSM_UWC_STATE_IDLE	0u
#define FSM_UWC_STATE_BUSY	1u	/* claiming a new entry, or walking */
#define FSM_UWC_STATE_PENDING	2u
#define FSM_UWC_STATE_DONE	3u
unsigned int fsm_uwc_state(const struct fsm_uwc_task *t,
			   unsigned long long *cookie);

#ifdef __cplusplus
}
#endif

#endif /* FSM_UNWIND_H */
