/* SPDX-License-Identifier: GPL-2.0 */
/*
 * unwind_user.h - frame-pointer walker for user stacks (C++ side).
 *
 * Overview
 * --------
 * Architecture code is data. For every mode (fsm_unwind.h, enum fsm_uw_mode)
 * a ModeDesc holds two FrameDescs, each three small offsets:
 *
 *   base = fp (or sp for the function-entry frame on x86)
 *   cfa  = base + cfa_off      the caller's sp once this frame has returned
 *   ra   = [cfa + ra_off]      the return address (or the lr register)
 *   fp'  = [cfa + fp_off]      the caller's fp (fp_off 0: fp not saved yet)
 *
 *   mode              word  frame: cfa ra  fp    entry frame
 *   x86_64              8         +16  -8  -16   ra at [sp], fp unchanged
 *   ia32                4          +8  -4   -8   ra at [sp], fp unchanged
 *   arm64               8         +16  -8  -16   ra in lr,  fp unchanged
 *   a32_frame_record    4          +8  -4   -8   ra in lr,  fp unchanged
 *   a32_gcc             4          +4  -4   -8   ra in lr,  fp unchanged
 *
 * (arm64 and the AArch32 frame record put {fp, lr} at fp, exactly like
 * push rbp; mov rbp, rsp; GCC's A32 frame pointer points at the saved lr,
 * with the old fp one word below. On arm64 the record may sit below the
 * frame's top, so cfa is a lower bound of the caller's sp; the checks only
 * need a lower bound.)
 *
 * One generic loop, walk(), applies the table; each safety rule is one
 * commented line in it. Memory is read through a functor the caller
 * supplies, which reports faults; the walker itself never faults, sleeps,
 * allocates or locks, and runs at most @max iterations of its loop.
 *
 * Not handled (the walk stops early, never reports garbage knowingly):
 * code without frame pointers (Debian's glibc: chains stop inside libc),
 * arm64 leaf functions that keep the return address in lr without a frame
 * record (looks like the entry state; only AT_ENTRY helps), GCC Thumb code
 * (r7 does not point at a frame record), the legacy APCS {fp, ip, lr, pc}
 * frame, mixed A32/Thumb layouts within one stack, segmented ia32 stacks
 * (flat selectors assumed), and a prologue interrupted between push and mov
 * (x86: one caller skipped).
 *
 * Context and constraints: freestanding C++ (src/core rules): no library,
 * no exceptions, no static constructors; the descriptor table is constexpr
 * data in .rodata.
 */
#ifndef FSM_UNWIND_USER_H
#define FSM_UNWIND_USER_H

#include "fsm_unwind.h"

namespace fsm::unwind {

using u8 = unsigned char;
using s8 = signed char;
using u32 = unsigned int;
using u64 = unsigned long long;

/* FrameDesc.flags */
inline constexpr u8 kCfaFromSp = 0x1;	/* base is sp instead of fp */
inline constexpr u8 kRaInLr = 0x2;	/* ra is the lr register; nothing is read */

/* One frame shape: where cfa, the return address and the caller's fp are. */
struct FrameDesc {
	s8 cfa_off;	/* cfa = base + cfa_off (base = fp, or sp with kCfaFromSp) */
	s8 ra_off;	/* return address at cfa + ra_off (unless kRaInLr) */
	s8 fp_off;	/* caller's fp at cfa + fp_off; 0 = fp is not saved (unchanged) */
	u8 flags;	/* kCfaFromSp, kRaInLr */
};

/* ModeDesc.fixup: what to do with every return address read. */
inline constexpr u8 kFixPac = 0x1;	/* clear regs.pac_mask bits (arm64 PAC/tags) */
inline constexpr u8 kFixThumb = 0x2;	/* bit 0 = Thumb state: clear it, flag it */

struct ModeDesc {
	FrameDesc frame;	/* a frame reached through fp */
	FrameDesc entry;	/* the top frame with FSM_UW_REGS_AT_ENTRY */
	u8 word_size;		/* 4 or 8; also the address width of the mode */
	u8 fixup;		/* kFixPac, kFixThumb */
};

/*
 * Indexed by enum fsm_uw_mode, in enum order (g++ has no array designators;
 * the static_asserts below pin each row to its mode). Row NONE has
 * word_size 0 = invalid.
 */
inline constexpr ModeDesc kModes[FSM_UW_NR_MODES] = {
	/* FSM_UW_MODE_NONE */
	{},
	/* FSM_UW_MODE_X86_64: push %rbp; mov %rsp,%rbp */
	{ .frame = { .cfa_off = 16, .ra_off = -8, .fp_off = -16, .flags = 0 },
	  .entry = { .cfa_off = 8, .ra_off = -8, .fp_off = 0, .flags = kCfaFromSp },
	  .word_size = 8, .fixup = 0 },
	/* FSM_UW_MODE_IA32: push %ebp; mov %esp,%ebp */
	{ .frame = { .cfa_off = 8, .ra_off = -4, .fp_off = -8, .flags = 0 },
	  .entry = { .cfa_off = 4, .ra_off = -4, .fp_off = 0, .flags = kCfaFromSp },
	  .word_size = 4, .fixup = 0 },
	/* FSM_UW_MODE_ARM64: stp x29, x30, [sp, #-N]!; mov x29, sp */
	{ .frame = { .cfa_off = 16, .ra_off = -8, .fp_off = -16, .flags = 0 },
	  .entry = { .cfa_off = 0, .ra_off = 0, .fp_off = 0, .flags = kRaInLr },
	  .word_size = 8, .fixup = kFixPac },
	/* FSM_UW_MODE_A32_GCC: push {fp, lr}; add fp, sp, #4 */
	{ .frame = { .cfa_off = 4, .ra_off = -4, .fp_off = -8, .flags = 0 },
	  .entry = { .cfa_off = 0, .ra_off = 0, .fp_off = 0, .flags = kRaInLr },
	  .word_size = 4, .fixup = kFixThumb },
	/* FSM_UW_MODE_A32_FRAME_RECORD: push {r11, lr}; mov r11, sp (Thumb: r7) */
	{ .frame = { .cfa_off = 8, .ra_off = -4, .fp_off = -8, .flags = 0 },
	  .entry = { .cfa_off = 0, .ra_off = 0, .fp_off = 0, .flags = kRaInLr },
	  .word_size = 4, .fixup = kFixThumb },
};
static_assert(kModes[FSM_UW_MODE_NONE].word_size == 0 &&
	      kModes[FSM_UW_MODE_X86_64].frame.cfa_off == 16 &&
	      kModes[FSM_UW_MODE_X86_64].entry.flags == kCfaFromSp &&
	      kModes[FSM_UW_MODE_IA32].word_size == 4 &&
	      kModes[FSM_UW_MODE_IA32].entry.flags == kCfaFromSp &&
	      kModes[FSM_UW_MODE_ARM64].fixup == kFixPac &&
	      kModes[FSM_UW_MODE_A32_GCC].frame.cfa_off == 4 &&
	      kModes[FSM_UW_MODE_A32_FRAME_RECORD].frame.cfa_off == 8 &&
	      kModes[FSM_UW_MODE_A32_FRAME_RECORD].fixup == kFixThumb,
	      "kModes rows out of enum fsm_uw_mode order");

/* The descriptor of @mode, or nullptr if @mode is not a valid mode. */
constexpr const ModeDesc *mode_desc(u32 mode)
{
	if (mode >= FSM_UW_NR_MODES || kModes[mode].word_size == 0)
		return nullptr;
	return &kModes[mode];
}

/* Lowest offset from cfa that a frame reads (the bottom of its record). */
constexpr int frame_low_off(const FrameDesc &f)
{
	return f.fp_off && f.fp_off < f.ra_off ? f.fp_off : f.ra_off;
}

/*
 * Each descriptor must describe a record lying below its cfa (negative
 * ra/fp offsets, cfa_off > 0): then "the record is at or above sp" and
 * "cfa > sp" make sp (which becomes cfa) and the fp chain strictly
 * increasing, so the walk cannot loop, and consecutive records cannot
 * overlap. A record may start below its base by at most one word (GCC's
 * A32 fp points at the saved lr, the old fp is at fp - 4); since a valid fp
 * is a non-zero multiple of the word size, computing its address cannot
 * wrap. An sp-based record must start at or above sp.
 */
constexpr bool descs_sane()
{
	for (u32 m = 1; m < FSM_UW_NR_MODES; m++) {
		const ModeDesc &d = kModes[m];
		const int ws = d.word_size;

		if (ws != 4 && ws != 8)
			return false;
		const FrameDesc *fs[2] = { &d.frame, &d.entry };

		for (const FrameDesc *f : fs) {
			if (f->flags & kRaInLr)
				continue;
			const int low = f->cfa_off + frame_low_off(*f);

			if (f->cfa_off <= 0 || f->ra_off >= 0 || f->fp_off > 0 ||
			    f->ra_off % ws || f->fp_off % ws || low < -ws ||
			    ((f->flags & kCfaFromSp) && low < 0))
				return false;
		}
		if (d.frame.flags != 0 || d.frame.fp_off == 0)
			return false;	/* a chained frame is fp based and saves fp */
	}
	return true;
}
static_assert(descs_sane(), "bad frame descriptor");

/* Record why the walk stopped; returns the entry count for `return`. */
inline u32 walk_stop(fsm_uw_result &res, u32 stop)
{
	res.stop = stop;
	return res.nr;
}

/*
 * walk - the generic frame-pointer walk.
 * @regs:      user registers and mode (fsm_uw_regs).
 * @read_word: functor bool(u64 addr, u32 size, u64 &out); false = fault.
 *             Called at most 2 * max times.
 * @entries:   output array of @max entries: [0] = ip, then return addresses.
 * @res:       output; always filled (nr, stop, flags, mode).
 * Context: any in which @read_word may run; never sleeps by itself.
 * Return: res.nr.
 */
template <typename ReadWord>
[[nodiscard]] inline u32 walk(const fsm_uw_regs &regs, ReadWord &&read_word,
			      u64 *entries, u32 max, fsm_uw_result &res)
{
	const ModeDesc *m = mode_desc(regs.mode);

	res.nr = 0;
	res.flags = 0;
	res.mode = regs.mode;
	if (!m || !entries)
		return walk_stop(res, FSM_UW_STOP_INVALID);
	if (max == 0)
		return walk_stop(res, FSM_UW_STOP_DEPTH);

	const u64 ws = m->word_size;
	const u64 amask = ws == 8 ? ~0ull : 0xffffffffull;	/* the mode's address space */
	u64 sp = regs.sp & amask;
	u64 fp = regs.fp & amask;
	u64 prev_fp = 0;
	bool fp_is_reg = true;		/* fp is still the register, not read from memory */
	u32 records = 0;		/* frame records read from user memory */
	const FrameDesc *f = &m->frame;

	if (regs.flags & FSM_UW_REGS_AT_ENTRY) {
		f = &m->entry;
		res.flags |= FSM_UW_RES_AT_ENTRY;
	}

	/* Entry 0 is where the task was interrupted, not a return address. */
	entries[res.nr++] = regs.ip & amask;

	for (;;) {
		u64 cfa, ra = 0, next_fp = fp;

		if (f->flags & kRaInLr) {
			/* Function entry on arm: the return address is still in lr. */
			ra = regs.lr & amask;
			cfa = sp;
		} else {
			const u64 base = (f->flags & kCfaFromSp) ? sp : fp;
			const u32 fault = records ? FSM_UW_STOP_FAULT : FSM_UW_STOP_FIRST_FAULT;

			/* fp == 0: the outermost frame cleared it (or there is no chain at all). */
			if (!(f->flags & kCfaFromSp) && fp == 0)
				return walk_stop(res, fp_is_reg ? FSM_UW_STOP_ZERO_FP : FSM_UW_STOP_END);
			/* Frame records are word aligned. */
			if (base & (ws - 1))
				return walk_stop(res, FSM_UW_STOP_MISALIGNED);
			/* The fp chain strictly increases (also implied by the two sp rules below). */
			if (!fp_is_reg && fp <= prev_fp)
				return walk_stop(res, FSM_UW_STOP_NOT_INCREASING);
			cfa = base + f->cfa_off;
			/* cfa stays inside the mode's address space (no wrap-around). */
			if (cfa < base || cfa > amask)
				return walk_stop(res, FSM_UW_STOP_NOT_INCREASING);
			/* The stack grows down: the whole record lies at or above sp (so fp >= sp). */
			if (cfa + frame_low_off(*f) < sp)
				return walk_stop(res, FSM_UW_STOP_NOT_INCREASING);
			/* Each frame moves strictly up, cfa > sp; sp becomes cfa, so no loop. */
			if (cfa <= sp)
				return walk_stop(res, FSM_UW_STOP_NOT_INCREASING);
			/* Stop on a fault; on the first record it means "registers only". */
			if (!read_word(cfa + f->ra_off, (u32)ws, ra))
				return walk_stop(res, fault);
			if (f->fp_off && !read_word(cfa + f->fp_off, (u32)ws, next_fp))
				return walk_stop(res, fault);
			records++;
			ra &= amask;
			next_fp &= amask;
		}

		if (m->fixup & kFixPac)
			ra &= ~regs.pac_mask;
		if ((m->fixup & kFixThumb) && (ra & 1)) {
			ra &= ~1ull;
			res.flags |= FSM_UW_RES_THUMB;
		}
		/* A zero return address marks the outermost frame. */
		if (ra == 0)
			return walk_stop(res, FSM_UW_STOP_END);
		/* Bounded depth: one more valid frame but no room for it. */
		if (res.nr >= max)
			return walk_stop(res, FSM_UW_STOP_DEPTH);
		entries[res.nr++] = ra;

		sp = cfa;
		if (f->fp_off) {
			prev_fp = fp;
			fp = next_fp;
			fp_is_reg = false;
		}
		f = &m->frame;
	}
}

/* Adapter from the C read callback to the functor form. */
struct CReader {
	fsm_uw_read_fn fn;
	void *ctx;

	bool operator()(u64 addr, u32 size, u64 &out) const
	{
		out = 0;
		return fn(ctx, addr, size, &out);
	}
};

} /* namespace fsm::unwind */

#endif /* FSM_UNWIND_USER_H */
