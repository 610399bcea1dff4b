// SPDX-License-Identifier: GPL-2.0
/*
 * unwind_cache.cpp - per-task, per-entry user unwind cache: the state
 * machine described in unwind_cache.h, and its C entry points.
 *
 * The atomic words are fields of struct fsm_uwc_task, a C struct (the
 * kernel glue embeds it), and the caller's per-CPU cookie counter: every
 * access goes through fsm::AtomicRef (platform.h's rule), with its memory
 * order written at the call site; each one says what it publishes or what
 * it pairs with.
 */
#include "platform.h"
#include "unwind_cache.h"

namespace fsm::unwind {

#ifdef FSM_UNWIND_TEST_HOOKS
void (*test_hook)(fsm_uwc_task *t, u32 point);
#endif

u64 cookie_next(u64 *cpu_counter, u32 cpu)
{
	if (!cpu_counter || cpu >= (1u << kCookieCpuBits))
		return FSM_UWC_COOKIE_NONE;
	/*
	 * Relaxed: uniqueness needs only the atomicity of the increment (an
	 * NMI may interrupt an increment of the same per-CPU counter). The
	 * sequence wraps at 2^48 and skips 0, so a cookie is never 0; a second
	 * wrap-around within one call would need 2^48 nested increments.
	 */
	u64 seq = (AtomicRef(*cpu_counter).fetch_add(1, relaxed) + 1) & kCookieSeqMask;
	if (!seq)
		seq = (AtomicRef(*cpu_counter).fetch_add(1, relaxed) + 1) & kCookieSeqMask;
	return seq << kCookieCpuBits | cpu;
}

/* splitmix64's finalizer: a bijective 64-bit mix (no 128-bit arithmetic). */
static inline u64 uwc_mix64(u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

u64 entry_sig(const fsm_uw_regs &regs, u64 extra)
{
	u64 h = uwc_mix64(0x9e3779b97f4a7c15ull ^ regs.mode);

	h = uwc_mix64(h ^ regs.ip);
	h = uwc_mix64(h ^ regs.sp);
	h = uwc_mix64(h ^ regs.fp);
	h = uwc_mix64(h ^ regs.lr);
	return uwc_mix64(h ^ extra);
}

int cache_request(fsm_uwc_task &t, u64 sig, u32 instance, u64 *cpu_counter,
		  u32 cpu, u64 &cookie)
{
	u64 new_cookie = FSM_UWC_COOKIE_NONE;

	if (instance >= FSM_UWC_MAX_INSTANCES)
		return FSM_UWC_EINVAL;
	const u64 bit = 1ull << instance;

	for (u32 attempt = 0; attempt < kRequestAttempts; attempt++) {
		/*
		 * Acquire: pairs with the store-release of PENDING (claimer) and
		 * DONE (complete_end), and via the RMWs after them: we see sig,
		 * the cleared next mask and, in DONE, the result.
		 */
		u64 w = AtomicRef(t.state).load(acquire);
		const u64 st = state_of(w);
		bool new_entry = st == kStIdle;

		if (st == kStDone) {
			/*
			 * Acquire: pairs with the store-release of sig in a claim
			 * or complete_end; if we read a sig newer than w, the
			 * re-load below sees the state that came with it and we
			 * start over instead of comparing against the wrong entry.
			 */
			const u64 esig = AtomicRef(t.sig).load(acquire);

			FSM_UWC_TEST_HOOK(t, kHookDoneSigRead);
			if (AtomicRef(t.state).load(relaxed) != w)
				continue;
			new_entry = esig != sig;
		}

		if (!new_entry) {
			/*
			 * BUSY, PENDING, or DONE of this entry: join it. One RMW
			 * decides; acquire pairs with the harvest's release so that
			 * a CACHED requester sees the finished result.
			 */
			FSM_UWC_TEST_HOOK(t, kHookJoining);
			const u64 old = AtomicRef(t.req[buf_of(w)]).fetch_or(bit,
									    acquire);

			cookie = cookie_of(w);
			/*
			 * The concurrency contract (unwind_cache.h): not yet
			 * harvested, so the entry we joined cannot have ended.
			 * If it did, our bit went into a mask already cleared
			 * for a later entry. Evaluated only where FSM_ASSERT
			 * checks. Acquire: a violator's state change precedes
			 * its clearing of the word we just read.
			 */
			FSM_ASSERT((old & kHarvested) ||
				   cookie_of(AtomicRef(t.state).load(acquire)) == cookie_of(w));
			if (!(old & kHarvested))
				return FSM_UWC_PENDING;
			return (old & bit) ? FSM_UWC_DELIVERED : FSM_UWC_CACHED;
		}

		/* A new entry: claim the state word with a fresh cookie. */
		if (new_cookie == FSM_UWC_COOKIE_NONE) {
			new_cookie = cookie_next(cpu_counter, cpu);
			if (new_cookie == FSM_UWC_COOKIE_NONE)
				return FSM_UWC_EINVAL;
		}
		const u64 nb = buf_of(w) ^ 1;
		/*
		 * Acquire on success continues the acquire above (the RMW reads
		 * the same release sequence); relaxed on failure: we reload.
		 */
		if (!AtomicRef(t.state).cmpxchg(w, make_state(new_cookie, nb, kStBusy),
						acquire, relaxed))
			continue;
		FSM_UWC_TEST_HOOK(t, kHookClaimed);
		/*
		 * BUSY(new_cookie, nb) is ours. Release: pairs with the acquire
		 * load of sig by a DONE-state requester (see above).
		 */
		AtomicRef(t.sig).store(sig, release);
		/*
		 * req[nb] was cleared by the previous complete_end() before it
		 * published DONE (or is zero from init). Nested requesters that
		 * saw our BUSY word may already have added their bits: OR, never
		 * store. Relaxed: published by the PENDING release below, and the
		 * harvest reads it through the RMW chain anyway.
		 */
		(void)AtomicRef(t.req[nb]).fetch_or(bit, relaxed);
		/* Release: publishes sig (pairs with every acquire load of state). */
		AtomicRef(t.state).store(make_state(new_cookie, nb, kStPending),
					 release);
		cookie = new_cookie;
		return FSM_UWC_QUEUE;
	}
	return FSM_UWC_EBUSY;
}

int complete_begin(fsm_uwc_task &t, u64 &w)
{
	/* Acquire: pairs with the claimer's PENDING release (sig). */
	w = AtomicRef(t.state).load(acquire);
	if (state_of(w) == kStBusy)
		return FSM_UWC_EBUSY;
	if (state_of(w) != kStPending)
		return FSM_UWC_ENOENT;
	const u64 busy = make_state(cookie_of(w), buf_of(w), kStBusy);
	/*
	 * PENDING -> BUSY makes this call the only completer (a second one
	 * sees BUSY or DONE). Requesters treat BUSY like PENDING and join.
	 * Acquire: as the load above; relaxed on failure: we return.
	 */
	if (!AtomicRef(t.state).cmpxchg(w, busy, acquire, relaxed))
		return FSM_UWC_EBUSY;
	w = busy;
	return 0;
}

void complete_end(fsm_uwc_task &t, fsm_uwc_result *r, u64 w, u64 exit_sig,
		  fsm_uwc_delivery &out)
{
	const u64 b = buf_of(w);
	const u64 c = cookie_of(w);
	const u64 done = make_state(c, b, kStDone);

	/* Relaxed: only claimers write sig, and none can run while we are BUSY. */
	if (r && AtomicRef(t.sig).load(relaxed) != exit_sig)
		r->res.flags |= FSM_UW_RES_LATE;
	/*
	 * The entry's final signature: late requests on the way out compare
	 * against the registers we return to. Release: pairs with the acquire
	 * load of sig by DONE-state requesters (they re-check state after).
	 */
	AtomicRef(t.sig).store(exit_sig, release);
	/*
	 * The next entry's mask starts empty. Nobody uses req[b ^ 1] during
	 * this entry; relaxed, published by the DONE release below, which the
	 * next claimer acquires before it touches req[b ^ 1].
	 */
	AtomicRef(t.req[b ^ 1]).store(0, relaxed);
	/*
	 * Release: publishes sig and the cleared mask to every requester that
	 * loads DONE with acquire (late requests, the next claimer).
	 */
	AtomicRef(t.state).store(done, release);
	FSM_UWC_TEST_HOOK(t, kHookDonePublished);
	/*
	 * Harvest. Requesters that OR'ed their bit before this RMW are
	 * served by our caller; later ones see kHarvested and know they were
	 * not. Release (of acq_rel): pairs with the requesters' acquire
	 * fetch_or, so a CACHED requester sees the result even if it never
	 * loads state. Acquire: nothing to pair with, kept for symmetry of
	 * the RMW chain.
	 */
	const u64 mask = AtomicRef(t.req[b]).fetch_or(kHarvested, acq_rel);

	out.cookie = c;
	out.mask = mask & ~kHarvested;
	out.res = r ? &r->res : &kNoResult;
	out.entries = r ? r->entries : kNoEntries;
	out.word = done;
}

u64 cache_late(const fsm_uwc_task &t, const fsm_uwc_delivery &d)
{
	/*
	 * req[b] holds every requester's bit of the entry until the next
	 * entry clears it for the one after (its complete_end or abort). The
	 * next entry's walk cannot run while its completer, our caller, still
	 * runs; an abort could (a nested request with another signature that
	 * started an entry and could not queue its walk), but the signature of
	 * a DONE entry is that of the registers the task returns to, which do
	 * not change while its task work runs. Relaxed: the requesters are
	 * this task's contexts, done before the caller in the task's order or
	 * nested on it (fsm_uwc_late()).
	 */
	return AtomicRef(t.req[buf_of(d.word)]).load(relaxed) &
	       ~kHarvested & ~d.mask;
}

u64 cache_entry_end(fsm_uwc_task &t, const fsm_uwc_delivery &d)
{
	u64 w = d.word;

	/*
	 * DONE(c,b) -> IDLE(b): keeps buf, so the next claim still uses the
	 * mask complete_end cleared. Relaxed both ways: an RMW continues the
	 * DONE release sequence for the next claimer; on failure a request
	 * already started another entry (another signature) and this one is
	 * over anyway.
	 */
	if (state_of(w) == kStDone)
		(void)AtomicRef(t.state).cmpxchg(w, make_state(0, buf_of(w), kStIdle),
						 relaxed, relaxed);
	/* From here a request starts a new entry: no late requester joins. */
	return cache_late(t, d);
}

int cache_abort(fsm_uwc_task &t, u64 cookie)
{
	/* Acquire: as complete_begin(), pairs with the claimer's PENDING release. */
	u64 w = AtomicRef(t.state).load(acquire);

	if (state_of(w) != kStPending || cookie_of(w) != cookie)
		return FSM_UWC_ENOENT;
	const u64 b = buf_of(w);
	/*
	 * PENDING -> BUSY, exactly as complete_begin(): whoever wins owns the
	 * entry (a task work that got queued after all would see BUSY or IDLE
	 * and return ENOENT/EBUSY). Relaxed on failure: we return.
	 */
	if (!AtomicRef(t.state).cmpxchg(w, make_state(cookie, b, kStBusy),
					acquire, relaxed))
		return FSM_UWC_EBUSY;
	/*
	 * The next claim takes req[b ^ 1]: clear it, as complete_end() does
	 * before DONE. req[b] keeps this entry's bits until the entry after the
	 * next one clears it (its own complete_end() or abort). Relaxed:
	 * published by the IDLE release below, which the next claimer acquires.
	 */
	AtomicRef(t.req[b ^ 1]).store(0, relaxed);
	/* Release: pairs with every acquire load of state (the cleared mask). */
	AtomicRef(t.state).store(make_state(0, b, kStIdle), release);
	return 0;
}

u64 cache_live_mask(const fsm_uwc_task &t)
{
	/*
	 * Acquire: pairs with the store-release of PENDING (claimer), DONE
	 * (complete_end) and IDLE (abort), and through the RMWs after them
	 * (complete_begin, entry_end): the req[] word read below is at
	 * least as new as that state.
	 */
	const u64 w = AtomicRef(t.state).load(acquire);

	if (state_of(w) == kStIdle)
		return 0;
	/*
	 * BUSY (claim or walk), PENDING, DONE: the current entry's mask.
	 * Claims clear nothing (the previous complete_end or abort cleared
	 * req[buf] before it published), so the word holds no bit of an
	 * older entry. Relaxed is enough for a snapshot: the caller orders
	 * it (see fsm_uwc_live_mask()).
	 */
	return AtomicRef(t.req[buf_of(w)]).load(relaxed) & ~kHarvested;
}

u32 cache_state(const fsm_uwc_task &t, u64 *cookie)
{
	/* Acquire: a caller may go on to read what that state published. */
	const u64 w = AtomicRef(t.state).load(acquire);

	if (cookie)
		*cookie = cookie_of(w);
	return (u32)state_of(w);
}

} /* namespace fsm::unwind */

/* ---- C entry points (fsm_unwind.h) ---- */

/* Context: no other user of @t (the AtomicRef rule's init exception). */
extern "C" void fsm_uwc_init(struct fsm_uwc_task *t)
{
	__builtin_memset(t, 0, sizeof(*t));
}

extern "C" unsigned long long fsm_uwc_cookie_next(unsigned long long *cpu_counter,
						  unsigned int cpu)
{
	return fsm::unwind::cookie_next(cpu_counter, cpu);
}

extern "C" unsigned long long fsm_uwc_entry_sig(const struct fsm_uw_regs *regs,
						unsigned long long extra)
{
	return regs ? fsm::unwind::entry_sig(*regs, extra) : extra;
}

extern "C" int fsm_uwc_request(struct fsm_uwc_task *t, unsigned long long sig,
			       unsigned int instance,
			       unsigned long long *cpu_counter, unsigned int cpu,
			       unsigned long long *cookie)
{
	unsigned long long c = FSM_UWC_COOKIE_NONE;

	if (!t || !cookie)
		return FSM_UWC_EINVAL;
	const int ret = fsm::unwind::cache_request(*t, sig, instance, cpu_counter, cpu, c);
	if (ret >= 0)
		*cookie = c;
	return ret;
}

extern "C" int fsm_uwc_complete(struct fsm_uwc_task *t, struct fsm_uwc_result *r,
				unsigned long long exit_sig,
				fsm_uwc_walk_fn walk, void *ctx,
				struct fsm_uwc_delivery *out)
{
	if (!t || !walk || !out)
		return FSM_UWC_EINVAL;
	return fsm::unwind::cache_complete(*t, r, exit_sig,
					   fsm::unwind::CWalk{ walk, ctx }, *out);
}

extern "C" unsigned long long fsm_uwc_late(const struct fsm_uwc_task *t,
					   const struct fsm_uwc_delivery *d)
{
	return t && d ? fsm::unwind::cache_late(*t, *d) : 0;
}

extern "C" unsigned long long fsm_uwc_entry_end(struct fsm_uwc_task *t,
						const struct fsm_uwc_delivery *d)
{
	return t && d ? fsm::unwind::cache_entry_end(*t, *d) : 0;
}

extern "C" int fsm_uwc_abort(struct fsm_uwc_task *t, unsigned long long cookie)
{
	if (!t)
		return FSM_UWC_EINVAL;
	return fsm::unwind::cache_abort(*t, cookie);
}

extern "C" unsigned long long fsm_uwc_live_mask(const struct fsm_uwc_task *t)
{
	return fsm::unwind::cache_live_mask(*t);
}

extern "C" unsigned int fsm_uwc_state(const struct fsm_uwc_task *t,
				      unsigned long long *cookie)
{
	return fsm::unwind::cache_state(*t, cookie);
}
