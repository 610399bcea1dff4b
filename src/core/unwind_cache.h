/* SPDX-License-Identifier: GPL-2.0 */
/*
 * unwind_cache.h - one user-stack walk per kernel entry (C++ side).
 *
 * Overview
 * --------
 * Tracers ask for the user stack of the current task from any context (NMI
 * included), but a user stack can only be walked reliably from task context
 * on the way back to user space (reads may fault pages in). So a request
 * gets a cookie now, and one task work per kernel entry walks once and
 * delivers the stack, tagged with that cookie, to every instance that asked
 * (upstream's unwind_deferred, 6.17+, rebuilt without a task_struct field
 * and without an exit-to-user hook, for 6.1).
 *
 * Per-task state (struct fsm_uwc_task, fsm_unwind.h):
 *
 *   state    one atomic word: cookie << 3 | buf << 2 | IDLE/BUSY/PENDING/DONE
 *   sig      entry signature (fsm_uwc_entry_sig) of the current cookie
 *   req[2]   requester masks: bit i = instance i asked in this entry;
 *            bit 63 (kHarvested) = the task work has taken the mask.
 *            Consecutive entries alternate between req[0] and req[1] (buf),
 *            so the next entry's mask can be cleared before it starts.
 *
 * The walk of the entry (struct fsm_uwc_result) is the completer's: it
 * passes it to complete(), which writes it while BUSY, and keeps it until
 * it has served the late requesters (late(), entry_end()). Only the
 * completer reads it, so no ordering publishes it.
 *
 *   IDLE(b) ----+  request of a new entry     the claimer, once sig is set
 *               +--cmpxchg--> BUSY(c',b^1) --store-release--> PENDING(c',b^1)
 *   DONE(c,b) --+  (sig differs)                                   |
 *       ^                                              complete(): | cmpxchg
 *       |                                                          v
 *       +-------store-release (after the walk)-------- BUSY(c',b^1) "walking"
 *
 *   DONE(c,b) --entry_end(): cmpxchg--> IDLE(b)
 *   PENDING(c,b) --abort(): cmpxchg--> BUSY(c,b) --store-release--> IDLE(b)
 *
 * A request in BUSY or PENDING joins the current entry whatever its
 * signature: a walk is queued and has not run, so the task cannot have
 * returned to user space since the entry began. DONE lasts only while the
 * entry's task works run (the kernel glue ends the entry at their end): a
 * request then is part of the same entry (our own records, the walk's
 * sleeps) and is served from the result (DELIVERED/CACHED, no requeue);
 * the signature comparison there is only a second guard. After the entry
 * ended (IDLE) every request starts a new entry.
 *
 * Who was served is decided by one atomic RMW per requester on req[buf]:
 * a requester's fetch_or returns the old mask. Without kHarvested its bit is
 * in the mask the task work will take (PENDING); with kHarvested it was
 * either already in it (DELIVERED) or not (CACHED, exactly once per
 * instance and entry because its bit is now set). The completer serves the
 * CACHED ones from req[buf] minus the harvested mask before and when it
 * ends the entry (late(), entry_end()): a CACHED requester ran before the
 * completer's read in the task's order, or is nested on it and finished.
 * There is no window where a request is lost or served twice.
 *
 * Concurrency contract: requests for a task come from the task itself and
 * from contexts nested on it (IRQ, NMI), complete() runs in the task's own
 * task work. Entries of one task never overlap: the next entry starts after
 * complete() returned and the caller ended the entry (entry_end(), which
 * the kernel glue calls at the end of the task's works: a DONE entry never
 * outlives its way out to user space). Within those rules every operation
 * is lock-free and bounded. Outside them (two unrelated threads on one
 * fsm_uwc_task) it is not correct: a requester that read a DONE word of an
 * entry that then ended and restarted could OR its bit into a mask that was
 * already cleared for the next entry (a zeroed request word leaks the bit
 * into the next entry, which then serves an instance that never asked in
 * it). The user-space race tests keep to the contract (a "task" thread plus
 * "nested" requesters on the same entry); the kernel glue keeps to it by
 * construction: a slot (and its fsm_uwc_task) belongs to one task from the
 * request that claims it until no request, entry or task work of that task
 * uses it any more (the entry ended: IDLE), and only then passes to another
 * task, through a fully ordered RMW on the slot's owner word
 * (src/kernel/ustack.c); the entries of two tasks on one fsm_uwc_task are
 * then consecutive entries like any others.
 *
 * Enforced where FSM_ASSERT checks (user-space tests, FSM_DEBUG kernels): a
 * requester whose RMW found no kHarvested (it will be served by the harvest
 * of the entry it joined) re-reads state; under the contract nothing can
 * end that entry before its harvest while the requester (or the context it
 * is nested on) runs, so the cookie must still be the one it joined. A
 * different cookie means the entry ended and a later one cleared the word
 * under it: the assertion fires (Cache.ContractViolationIsCaught). On
 * weakly ordered CPUs the re-read may miss some violations; on x86 (TSO)
 * it cannot.
 *
 * Memory ordering (each access in unwind_cache.cpp names its pair):
 *  - state: load-acquire by requesters and complete pairs with the
 *    store-release of PENDING (publishes sig and the claimer's bit) and of
 *    DONE (publishes the final sig and the cleared next mask); the
 *    cmpxchg's in between are RMWs, so they continue those release
 *    sequences.
 *  - sig: written with release after the state left DONE/IDLE, read with
 *    acquire followed by a re-load of state: a reader that sees a new sig
 *    also sees the new state and retries (no fence needed).
 *  - req[buf]: the harvest fetch_or is acq_rel and requesters' fetch_or is
 *    acquire (the chain of RMWs on the word). The late requesters' bits are
 *    read by the completer, the task itself: a requester ran before it in
 *    the task's order or nested on it, so no ordering beyond program order
 *    is needed there.
 */
#ifndef FSM_UNWIND_CACHE_H
#define FSM_UNWIND_CACHE_H

#include "fsm_unwind.h"
#include "unwind_user.h"

namespace fsm::unwind {

/* State word layout (fsm_uwc_task.state). */
inline constexpr u64 kStateMask = 0x3;
inline constexpr u64 kStIdle = FSM_UWC_STATE_IDLE;
inline constexpr u64 kStBusy = FSM_UWC_STATE_BUSY;
inline constexpr u64 kStPending = FSM_UWC_STATE_PENDING;
inline constexpr u64 kStDone = FSM_UWC_STATE_DONE;
inline constexpr u32 kBufShift = 2;
inline constexpr u32 kCookieShift = 3;
inline constexpr u64 kHarvested = 1ull << 63;

inline constexpr u32 kCookieCpuBits = FSM_UWC_COOKIE_CPU_BITS;
inline constexpr u64 kCookieSeqMask = (1ull << FSM_UWC_COOKIE_SEQ_BITS) - 1;
static_assert(FSM_UWC_COOKIE_CPU_BITS + FSM_UWC_COOKIE_SEQ_BITS + kCookieShift == 64,
	      "cookie and state bits must fill the state word exactly");
static_assert(FSM_UWC_MAX_INSTANCES == 63, "bit 63 of req[] is kHarvested");

/*
 * Attempts of one request. Each failed attempt means the state word changed
 * under us; per entry it changes at most four times (claim, PENDING, walk,
 * DONE) and contexts nest at most four deep (task, softirq, irq, NMI), so
 * eight attempts only fail under a broken contract; the caller counts it.
 */
inline constexpr u32 kRequestAttempts = 8;

constexpr u64 state_of(u64 w) { return w & kStateMask; }
constexpr u64 buf_of(u64 w) { return (w >> kBufShift) & 1; }
constexpr u64 cookie_of(u64 w) { return w >> kCookieShift; }
constexpr u64 make_state(u64 cookie, u64 buf, u64 st)
{
	return cookie << kCookieShift | buf << kBufShift | st;
}

/*
 * Test hooks: user-space tests build the core with FSM_UNWIND_TEST_HOOKS to
 * run a "nested context" at the exact points where an NMI could land. The
 * kernel build has none (the macro expands to nothing).
 */
enum TestHookPoint : u32 {
	kHookClaimed,		/* request: state is BUSY(new cookie), sig/bit not yet set */
	kHookDoneSigRead,	/* request: DONE word and sig read, not yet re-checked */
	kHookDonePublished,	/* complete_end: DONE stored, mask not yet harvested */
	kHookJoining,		/* request: joining entry w (checked), bit not yet OR'ed */
};
#ifdef FSM_UNWIND_TEST_HOOKS
extern void (*test_hook)(fsm_uwc_task *t, u32 point);
#define FSM_UWC_TEST_HOOK(t, point)					\
	do {								\
		if (::fsm::unwind::test_hook)				\
			::fsm::unwind::test_hook(&(t), (point));	\
	} while (0)
#else
#define FSM_UWC_TEST_HOOK(t, point) do { } while (0)
#endif

/* See fsm_uwc_cookie_next(). */
[[nodiscard]] u64 cookie_next(u64 *cpu_counter, u32 cpu);
/* See fsm_uwc_entry_sig(). */
[[nodiscard]] u64 entry_sig(const fsm_uw_regs &regs, u64 extra);
/* See fsm_uwc_request(). */
[[nodiscard]] int cache_request(fsm_uwc_task &t, u64 sig, u32 instance,
				u64 *cpu_counter, u32 cpu, u64 &cookie);
/* See fsm_uwc_late(). */
[[nodiscard]] u64 cache_late(const fsm_uwc_task &t, const fsm_uwc_delivery &d);
/* See fsm_uwc_entry_end(). */
u64 cache_entry_end(fsm_uwc_task &t, const fsm_uwc_delivery &d);
/* See fsm_uwc_abort(). */
[[nodiscard]] int cache_abort(fsm_uwc_task &t, u64 cookie);
/* See fsm_uwc_live_mask(). */
[[nodiscard]] u64 cache_live_mask(const fsm_uwc_task &t);
/* See fsm_uwc_state(). */
[[nodiscard]] u32 cache_state(const fsm_uwc_task &t, u64 *cookie);

/*
 * The two halves of complete() around the walk (unwind_cache.cpp).
 * complete_begin: PENDING(c,b) -> BUSY(c,b); 0 and *w = the BUSY word, or
 * FSM_UWC_ENOENT / FSM_UWC_EBUSY.
 * complete_end: stores the final sig, publishes DONE, takes the mask;
 * out.res/out.entries point into @r (the empty result below if @r is NULL).
 */
[[nodiscard]] int complete_begin(fsm_uwc_task &t, u64 &w);
void complete_end(fsm_uwc_task &t, fsm_uwc_result *r, u64 w, u64 exit_sig,
		  fsm_uwc_delivery &out);

/* The result of an entry completed without memory for its walk. */
constexpr fsm_uw_result kNoResult = {
	.nr = 0, .stop = FSM_UW_STOP_ABORTED, .flags = 0, .mode = FSM_UW_MODE_NONE
};
constexpr u64 kNoEntries[1] = {};

/*
 * cache_complete - the task work: walk once, mark done, report whom to serve.
 * @r:    the caller's result buffer, or nullptr (no memory: an empty stack,
 *        @walk not called).
 * @walk: functor u32(u64 *entries, u32 max, fsm_uw_result &res), called at
 *        most once.
 * Return, context: see fsm_uwc_complete().
 */
template <typename Walk>
[[nodiscard]] int cache_complete(fsm_uwc_task &t, fsm_uwc_result *r, u64 exit_sig,
				 Walk &&walk, fsm_uwc_delivery &out)
{
	u64 w;
	int ret = complete_begin(t, w);

	if (ret)
		return ret;
	if (r) {
		r->res.nr = 0;
		r->res.flags = 0;
		r->res.stop = FSM_UW_STOP_ABORTED;
		r->res.mode = FSM_UW_MODE_NONE;
		const u32 nr = walk(r->entries, (u32)FSM_MAX_USER_DEPTH, r->res);
		/* The return value is authoritative; a broken walk must not overrun readers. */
		r->res.nr = nr < FSM_MAX_USER_DEPTH ? nr : FSM_MAX_USER_DEPTH;
	}
	complete_end(t, r, w, exit_sig, out);
	return 0;
}

/* Adapter from the C walk callback to the functor form. */
struct CWalk {
	fsm_uwc_walk_fn fn;
	void *ctx;

	u32 operator()(u64 *entries, u32 max, fsm_uw_result &res) const
	{
		return fn(ctx, entries, max, &res);
	}
};

} /* namespace fsm::unwind */

#endif /* FSM_UNWIND_CACHE_H */
