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
 *   a32 (either of the two above, picked per frame: pick_layout())
 *
 * (arm64 and the AArch32 frame record put {fp, lr} at fp, exactly like
 * push rbp; mov rbp, rsp; GCC's A32 frame pointer points at the saved lr,
 * with the old fp one word below. On arm64 the record may sit below the
 * frame's top, so cfa is a lower bound of the caller's sp; the checks only
 * need a lower bound.)
 *
 * The AArch32 layouts were read from the code the compilers emit today
 * (arm-linux-gnueabihf-gcc-12 and clang-14, -O2 -fno-omit-frame-pointer):
 *
 *   GCC -marm     push {fp, lr}; add fp, sp, #4        fp -> lr, old fp at fp-4
 *   clang -marm   push {r11, lr}; mov r11, sp          r11 -> {old r11, lr}
 *   clang -mthumb push {r7, lr}; mov r7, sp            r7 -> {old r7, lr}
 *   GCC -mthumb   push {r7, lr}; sub sp, #N; add r7, sp, #0
 *                                                      r7 -> the locals, the
 *                 record is N bytes higher: only frames without locals
 *                 (N = 0) can be followed.
 *
 * The kernel cannot know which compiler built a task's code (a process
 * mixes libraries), so FSM_UW_MODE_A32 decides per frame: both records are
 * read, and only a return address that follows a call instruction (A32
 * BL/BLX; Thumb BL/BLX, 32- or 16-bit; read through the separate code
 * reader) is ever reported; between two such records the one whose saved
 * fp is 0 or above the current one wins. Nothing vouched for ends the walk
 * (FSM_UW_STOP_NO_CALL). FSM_UW_RES_UNRELIABLE: a walk that starts in
 * Thumb state; a frame reported after a tie (the previous layout is kept),
 * after a return address that switched between A32 and Thumb, or taken
 * from lr at the top (below).
 *
 * Top frame (FSM_UW_MODE_A32, not AT_ENTRY):
 *   GCC -marm leaf   push {fp}; add fp, sp, #0   fp -> the saved fp, ra in
 *                    lr: leaf_record() takes lr if it follows a call and
 *                    [fp] is a plausible fp (A32 state only: in Thumb code a
 *                    stale lr and a local at [r7] could pass)
 *   Thumb syscall    r7 = the syscall number (FSM_UW_REGS_SYSCALL): a
 *                    record at sp, else lr, else r12 / r11
 *                    (a32_syscall_top(), glibc's shapes)
 *
 * arm64: return addresses saved after `paciasp` carry a pointer
 * authentication code in their top bits; regs.pac_mask clears them. The
 * arm64 kernel strips user PACs with ptrauth_strip_insn_pac(), i.e.
 * `ptr & ~ptrauth_user_pac_mask()`, GENMASK_ULL(54, vabits_actual) in 6.1;
 * the glue passes GENMASK_ULL(63, vabits_actual), which also drops a top
 * byte tag (TBI): user addresses never have those bits.
 *
 * x86 (kVouchX86): code built without frame pointers (Debian's glibc, most
 * of libpython) uses rbp/ebp as an ordinary register, so where the chain
 * passes through such code the "frame record" is whatever memory that
 * register points at, and the "return address" any word of it. Such memory
 * may change while the task is in the kernel (a read() into the buffer
 * rbp points at; another thread): the kernel's own walker, which reads it
 * at the event, and ours, which reads it on the way out, then disagree,
 * and both print garbage as a frame. So every return address read from a
 * record must lie in executable code (the code reader refuses anything
 * else): if not, it is not a return address and the walk stops before it
 * (FSM_UW_STOP_NOT_CODE). In code, a call instruction must end right
 * before it (x86_vouch()); if none does (a signal trampoline's first
 * instruction, a code pointer stored in data), it is reported flagged
 * (FSM_UW_RES_UNRELIABLE), and so is every frame after it.
 *
 * One generic loop, walk(), applies the table; each safety rule is one
 * commented line in it. Memory is read through a functor the caller
 * supplies, which reports faults; the walker itself never faults, sleeps,
 * allocates or locks, and runs at most @max iterations of its loop.
 *
 * Not handled (the walk stops early, never reports garbage knowingly):
 * code without frame pointers (Debian's glibc: chains stop inside libc),
 * arm64 and AArch32 leaf functions that keep the return address in lr
 * without a frame record (GCC's AArch64 default, clang's AArch32 one: the
 * leaf's caller is skipped, since lr cannot be told from a stale value;
 * only AT_ENTRY and the two top-frame shapes above use it), GCC Thumb code
 * with locals (r7 does not point at a frame record: flagged unreliable,
 * the walk stops), the legacy APCS {fp, ip, lr, pc} frame,
 * frames of the other instruction set in a mixed A32/Thumb stack (flagged),
 * segmented ia32 stacks (flat selectors assumed), and a prologue
 * interrupted between push and mov (x86: one caller skipped).
 *
 * Context and constraints: freestanding C++ (src/core rules): no library,
 * no exceptions, no static constructors; the descriptor table is constexpr
 * data in .rodata. Everything here that the compiler may emit has
 * internal linkage (static inline functions, kModes constexpr without
 * inline): anything else becomes a COMDAT group, which a module cannot
 * have (scripts/cxx-gate says why and refuses it).
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
inline constexpr u8 kVouchX86 = 0x4;	/* must be code, after a call: x86_vouch() */

/* ModeDesc.pick: how a chained frame's layout is chosen. */
inline constexpr u8 kPickFixed = 0;	/* always .frame */
inline constexpr u8 kPickCallSite = 1;	/* .frame or .alt per frame: pick_layout() */

struct ModeDesc {
	FrameDesc frame;	/* a frame reached through fp */
	FrameDesc entry;	/* the top frame with FSM_UW_REGS_AT_ENTRY */
	u8 word_size;		/* 4 or 8; also the address width of the mode */
	u8 fixup;		/* kFixPac, kFixThumb, kVouchX86 */
	u8 pick;		/* kPickFixed, kPickCallSite */
	FrameDesc alt;		/* kPickCallSite: the other candidate layout */
};

/*
 * Indexed by enum fsm_uw_mode, in enum order (g++ has no array designators;
 * the static_asserts below pin each row to its mode). Row NONE has
 * word_size 0 = invalid.
 */
constexpr ModeDesc kModes[FSM_UW_NR_MODES] = {
	/* FSM_UW_MODE_NONE */
	{},
	/* FSM_UW_MODE_X86_64: push %rbp; mov %rsp,%rbp */
	{ .frame = { .cfa_off = 16, .ra_off = -8, .fp_off = -16, .flags = 0 },
	  .entry = { .cfa_off = 8, .ra_off = -8, .fp_off = 0, .flags = kCfaFromSp },
	  .word_size = 8, .fixup = kVouchX86,
	  .pick = kPickFixed, .alt = {} },
	/* FSM_UW_MODE_IA32: push %ebp; mov %esp,%ebp */
	{ .frame = { .cfa_off = 8, .ra_off = -4, .fp_off = -8, .flags = 0 },
	  .entry = { .cfa_off = 4, .ra_off = -4, .fp_off = 0, .flags = kCfaFromSp },
	  .word_size = 4, .fixup = kVouchX86,
	  .pick = kPickFixed, .alt = {} },
	/* FSM_UW_MODE_ARM64: stp x29, x30, [sp, #-N]!; mov x29, sp */
	{ .frame = { .cfa_off = 16, .ra_off = -8, .fp_off = -16, .flags = 0 },
	  .entry = { .cfa_off = 0, .ra_off = 0, .fp_off = 0, .flags = kRaInLr },
	  .word_size = 8, .fixup = kFixPac,
	  .pick = kPickFixed, .alt = {} },
	/* FSM_UW_MODE_A32_GCC: push {fp, lr}; add fp, sp, #4 */
	{ .frame = { .cfa_off = 4, .ra_off = -4, .fp_off = -8, .flags = 0 },
	  .entry = { .cfa_off = 0, .ra_off = 0, .fp_off = 0, .flags = kRaInLr },
	  .word_size = 4, .fixup = kFixThumb,
	  .pick = kPickFixed, .alt = {} },
	/* FSM_UW_MODE_A32_FRAME_RECORD: push {r11, lr}; mov r11, sp (Thumb: r7) */
	{ .frame = { .cfa_off = 8, .ra_off = -4, .fp_off = -8, .flags = 0 },
	  .entry = { .cfa_off = 0, .ra_off = 0, .fp_off = 0, .flags = kRaInLr },
	  .word_size = 4, .fixup = kFixThumb,
	  .pick = kPickFixed, .alt = {} },
	/* FSM_UW_MODE_A32: the frame record (clang) or GCC's A32 frame, per frame */
	{ .frame = { .cfa_off = 8, .ra_off = -4, .fp_off = -8, .flags = 0 },
	  .entry = { .cfa_off = 0, .ra_off = 0, .fp_off = 0, .flags = kRaInLr },
	  .word_size = 4, .fixup = kFixThumb, .pick = kPickCallSite,
	  .alt = { .cfa_off = 4, .ra_off = -4, .fp_off = -8, .flags = 0 } },
};
static_assert(kModes[FSM_UW_MODE_NONE].word_size == 0 &&
	      kModes[FSM_UW_MODE_X86_64].frame.cfa_off == 16 &&
	      kModes[FSM_UW_MODE_X86_64].fixup == kVouchX86 &&
	      kModes[FSM_UW_MODE_IA32].fixup == kVouchX86 &&
	      kModes[FSM_UW_MODE_X86_64].entry.flags == kCfaFromSp &&
	      kModes[FSM_UW_MODE_IA32].word_size == 4 &&
	      kModes[FSM_UW_MODE_IA32].entry.flags == kCfaFromSp &&
	      kModes[FSM_UW_MODE_ARM64].fixup == kFixPac &&
	      kModes[FSM_UW_MODE_A32_GCC].frame.cfa_off == 4 &&
	      kModes[FSM_UW_MODE_A32_FRAME_RECORD].frame.cfa_off == 8 &&
	      kModes[FSM_UW_MODE_A32_FRAME_RECORD].fixup == kFixThumb &&
	      kModes[FSM_UW_MODE_A32].pick == kPickCallSite &&
	      kModes[FSM_UW_MODE_A32].word_size == 4,
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
		const FrameDesc *fs[3] = { &d.frame, &d.entry, &d.alt };

		for (const FrameDesc *f : fs) {
			if ((f->flags & kRaInLr) || (f == &d.alt && d.pick == kPickFixed))
				continue;
			const int low = f->cfa_off + frame_low_off(*f);

			if (f->cfa_off <= 0 || f->ra_off >= 0 || f->fp_off > 0 ||
			    f->ra_off % ws || f->fp_off % ws || low < -ws ||
			    ((f->flags & kCfaFromSp) && low < 0))
				return false;
		}
		if (d.frame.flags != 0 || d.frame.fp_off == 0)
			return false;	/* a chained frame is fp based and saves fp */
		if (d.pick == kPickCallSite &&
		    (d.alt.flags != 0 || d.alt.fp_off == 0 || ws != 4 ||
		     !(d.fixup & kFixThumb)))
			return false;	/* so is the alternative; call sites are AArch32's */
	}
	return true;
}
static_assert(descs_sane(), "bad frame descriptor");

/* Record why the walk stopped; returns the entry count for `return`. */
static inline u32 walk_stop(fsm_uw_result &res, u32 stop)
{
	res.stop = stop;
	return res.nr;
}

/* The walk's position: the frame being unwound and what came before. */
struct WalkPos {
	u64 sp;			/* lower bound of the current frame (cfa of the last one) */
	u64 fp;			/* the current frame pointer */
	u64 prev_fp;		/* the fp before it (valid when !fp_is_reg) */
	bool fp_is_reg;		/* fp is still the register, not read from memory */
	u32 records;		/* frame records read from user memory */
};

/* One record read through a FrameDesc. */
struct Record {
	u64 cfa;
	u64 ra;
	u64 next_fp;
};

inline constexpr u32 kRecordOk = FSM_UW_NR_STOPS;	/* read_record(): no stop */

/*
 * read_record - apply the safety rules to one fp/sp-based frame of shape @f
 * and read its record. Return kRecordOk, or the enum fsm_uw_stop that ends
 * the walk. At most two reads.
 */
template <typename ReadWord>
[[nodiscard]] static inline u32 read_record(const FrameDesc &f, const WalkPos &p, u64 ws,
				     u64 amask, ReadWord &read_word, Record &r)
{
	const u64 base = (f.flags & kCfaFromSp) ? p.sp : p.fp;
	const u32 fault = p.records ? FSM_UW_STOP_FAULT : FSM_UW_STOP_FIRST_FAULT;

	r.next_fp = p.fp;
	/* fp == 0: the outermost frame cleared it (or there is no chain at all). */
	if (!(f.flags & kCfaFromSp) && p.fp == 0)
		return p.fp_is_reg ? FSM_UW_STOP_ZERO_FP : FSM_UW_STOP_END;
	/* Frame records are word aligned. */
	if (base & (ws - 1))
		return FSM_UW_STOP_MISALIGNED;
	/* The fp chain strictly increases (also implied by the two sp rules below). */
	if (!p.fp_is_reg && p.fp <= p.prev_fp)
		return FSM_UW_STOP_NOT_INCREASING;
	r.cfa = base + f.cfa_off;
	/* cfa stays inside the mode's address space (no wrap-around). */
	if (r.cfa < base || r.cfa > amask)
		return FSM_UW_STOP_NOT_INCREASING;
	/* The stack grows down: the whole record lies at or above sp (so fp >= sp). */
	if (r.cfa + frame_low_off(f) < p.sp)
		return FSM_UW_STOP_NOT_INCREASING;
	/* Each frame moves strictly up, cfa > sp; sp becomes cfa, so no loop. */
	if (r.cfa <= p.sp)
		return FSM_UW_STOP_NOT_INCREASING;
	/* Stop on a fault; on the first record it means "registers only". */
	if (!read_word(r.cfa + f.ra_off, (u32)ws, r.ra))
		return fault;
	if (f.fp_off && !read_word(r.cfa + f.fp_off, (u32)ws, r.next_fp))
		return fault;
	r.ra &= amask;
	r.next_fp &= amask;
	return kRecordOk;
}

/*
 * follows_call - does the AArch32 return address @ra (bit 0 = Thumb) come
 * right after a call instruction? A32: BL<c>, BLX imm, BLX<c> Rm in the word
 * before. Thumb: a 32-bit BL/BLX imm (first halfword 11110..., second
 * 11.1.... / 11.0....) or a 16-bit BLX Rm (010001111....000) ending just
 * before it. One 4-byte read through @read_code, the code reader (the only
 * code read of the walk: @ra may be any value a wrong layout produced, so
 * the reader must refuse what is not executable; see fsm_uw_read_fn);
 * little endian; a fault is "no".
 */
template <typename ReadCode>
[[nodiscard]] static inline bool follows_call(u64 ra, ReadCode &read_code)
{
	const u64 a = ra & ~1ull;
	u64 w = 0;	/* set by read_code() when it returns true */

	if (a < 4 || (!(ra & 1) && (a & 3)) || !read_code(a - 4, 4, w))
		return false;
	if (ra & 1) {
		const u64 hw1 = w & 0xffff, hw2 = (w >> 16) & 0xffff;

		return ((hw1 & 0xf800) == 0xf000 && (hw2 & 0xc000) == 0xc000) ||
		       (hw2 & 0xff87) == 0x4780;
	}
	if ((w >> 28) == 0xf)		/* unconditional space: only BLX imm */
		return (w & 0xfe000000) == 0xfa000000;
	return (w & 0x0f000000) == 0x0b000000 ||	/* BL<c> */
	       (w & 0x0ffffff0) == 0x012fff30;		/* BLX<c> Rm */
}

/*
 * x86_call_len - the length of the call instruction that starts at @b (@n
 * bytes available), or 0 if none starts there: E8 rel32 (5 bytes), or FF
 * /2, the near indirect call, after at most two legacy prefixes (segment
 * overrides, 3E "notrack", 66, 67) and, in 64-bit code, one REX prefix,
 * with its ModRM byte, SIB byte and displacement.
 */
[[nodiscard]] static inline u32 x86_call_len(const u8 *b, u32 n, bool is64)
{
	u32 i = 0;

	while (i < 2 && i < n &&
	       (b[i] == 0x26 || b[i] == 0x2e || b[i] == 0x36 || b[i] == 0x3e ||
		b[i] == 0x64 || b[i] == 0x65 || b[i] == 0x66 || b[i] == 0x67))
		i++;
	if (is64 && i < n && (b[i] & 0xf0) == 0x40)
		i++;
	if (i == 0 && n >= 5 && b[0] == 0xe8)
		return 5;
	if (i + 2 > n || b[i] != 0xff || ((b[i + 1] >> 3) & 7) != 2)
		return 0;
	const u32 mod = b[i + 1] >> 6, rm = b[i + 1] & 7;
	u32 len = i + 2;

	if (mod == 3)
		return len;
	if (rm == 4) {			/* SIB; base 5 with mod 0: disp32 */
		if (len >= n)
			return 0;
		if (mod == 0 && (b[len] & 7) == 5)
			len += 4;
		len++;
	} else if (mod == 0 && rm == 5) {	/* disp32, RIP-relative in 64-bit code */
		len += 4;
	}
	return len + (mod == 1 ? 1 : mod == 2 ? 4 : 0);
}

/* x86_vouch() results. */
inline constexpr u32 kVouchNotCode = 0;	/* not readable as code: not a return address */
inline constexpr u32 kVouchNoCall = 1;	/* code, but no call ends right before it */
inline constexpr u32 kVouchCall = 2;	/* a call instruction ends right before it */

/*
 * x86_vouch - is the x86 return address @ra preceded by a call? The 8
 * bytes before it are read through the code reader (4 if @ra is closer
 * than that to the start of its mapping) and every instruction start in
 * them is tried (x86_call_len()): a call ending exactly at @ra vouches for
 * it. A frame-pointer walk reads "return addresses" from wherever rbp/ebp
 * points; in code built without frame pointers (Debian's glibc, an
 * interpreter) that is any register value, and the word found there any
 * data: a value in no executable mapping cannot be a return address. One
 * or two code reads; a fault is "not code".
 */
template <typename ReadCode>
[[nodiscard]] static inline u32 x86_vouch(u64 ra, bool is64, ReadCode &read_code)
{
	u8 b[8];
	u64 w;
	u32 n;

	if (ra >= 8 && read_code(ra - 8, 8, w))
		n = 8;
	else if (ra >= 4 && read_code(ra - 4, 4, w))
		n = 4;
	else
		return kVouchNotCode;
	for (u32 i = 0; i < n; i++)
		b[i] = (u8)(w >> (8 * i));
	/* The usual two first (the loop below would find them too): */
	if (n == 8 && b[3] == 0xe8)			/* call rel32 */
		return kVouchCall;
	if (b[n - 2] == 0xff && (b[n - 1] & 0xf8) == 0xd0)	/* call *%reg */
		return kVouchCall;
	for (u32 start = 0; start + 2 <= n; start++)
		if (x86_call_len(b + start, n - start, is64) == n - start)
			return kVouchCall;
	return kVouchNoCall;
}

/* pick_layout() scores of a candidate record; the higher one wins. */
inline constexpr u32 kScoreNone = 0;	/* rules fail, or ra neither 0 nor after a call */
inline constexpr u32 kScoreEnd = 1;	/* ra == 0 and saved fp 0: the outermost frame */
inline constexpr u32 kScoreCall = 2;	/* ra follows a call; the saved fp is implausible */
inline constexpr u32 kScoreChain = 3;	/* ra follows a call; saved fp 0 or above fp */

/*
 * pick_layout - kPickCallSite: read the frame as m.frame and as m.alt and
 * keep the one a call instruction vouches for. A candidate counts only if
 * its rules hold and its return address follows a call (or it is {0, 0}:
 * the end; a lone 0 word is as likely a local);
 * among those, one whose saved fp is 0 or an aligned address above fp (the
 * chain can go on) beats one whose saved fp is not (its return address is
 * reported, then the chain ends). A return address that follows no call is
 * never reported, whatever the other candidate: a GCC A32 leaf that saved
 * only fp ("push {fp}; add fp, sp, #0") has a readable "frame record" at
 * fp whose "return address" is a saved register or a local.
 * An equal score keeps @prefer (the previous frame's layout, 0 = m.frame)
 * and sets *@tie when both were vouched for (the caller flags the frame).
 * At most four stack reads and two code reads. Return kRecordOk (*@r is
 * the chosen record, r.ra == 0 for the end) or the stop: the preferred
 * candidate's if neither record was readable under the rules, else
 * FSM_UW_STOP_NO_CALL. *@chosen: 0 or 1.
 */
template <typename ReadWord, typename ReadCode>
[[nodiscard]] static inline u32 pick_layout(const ModeDesc &m, const WalkPos &p, u64 ws,
				     u64 amask, ReadWord &read_word, ReadCode &read_code,
				     u32 prefer, u32 &chosen, Record &r, bool &tie)
{
	const FrameDesc *cand[2] = { &m.frame, &m.alt };
	Record rec[2] = {};
	u32 stop[2], score[2];

	for (u32 i = 0; i < 2; i++) {
		stop[i] = read_record(*cand[i], p, ws, amask, read_word, rec[i]);
		const u64 nfp = rec[i].next_fp;
		const bool fp_ok = nfp == 0 || (nfp > p.fp && !(nfp & (ws - 1)));

		if (stop[i] != kRecordOk)
			score[i] = kScoreNone;
		else if (rec[i].ra == 0 && nfp == 0)
			score[i] = kScoreEnd;
		else if (!follows_call(rec[i].ra, read_code))
			score[i] = kScoreNone;
		else
			score[i] = fp_ok ? kScoreChain : kScoreCall;
	}
	chosen = score[0] != score[1] ? (score[1] > score[0] ? 1 : 0) : prefer;
	tie = score[0] == score[1] && score[0] >= kScoreCall;
	r = rec[chosen];
	if (score[chosen] != kScoreNone)
		return kRecordOk;
	/* Nothing vouched for: never report a guess. */
	if (stop[0] == kRecordOk || stop[1] == kRecordOk)
		return FSM_UW_STOP_NO_CALL;
	return stop[prefer];
}

/*
 * leaf_record - the top frame of an A32 leaf that saved fp and nothing
 * else, "push {fp}; add fp, sp, #0" (GCC -marm when the leaf needs no
 * callee-saved register): @base points at the saved fp, the return address
 * is still in lr. Taken only if [@base] is a plausible fp (aligned, above
 * @base) and @lr follows a call; the caller flags the frame unreliable.
 * One stack read and one code read. Return true and fill *@r.
 */
template <typename ReadWord, typename ReadCode>
[[nodiscard]] static inline bool leaf_record(u64 base, u64 sp, u64 lr, u64 ws, u64 amask,
				      ReadWord &read_word, ReadCode &read_code, Record &r)
{
	u64 nfp;

	/* The saved fp lies at or above sp, word aligned, inside the address space. */
	if (base == 0 || (base & (ws - 1)) || base < sp || base > amask - ws)
		return false;
	if (!read_word(base, (u32)ws, nfp))
		return false;
	nfp &= amask;
	/* The caller's fp is higher up the stack (not a saved lr: GCC's layout). */
	if (nfp <= base || (nfp & (ws - 1)))
		return false;
	lr &= amask;
	if (!follows_call(lr, read_code))
		return false;
	r = { .cfa = base + ws, .ra = lr, .next_fp = nfp };
	return true;
}

/*
 * vouched_at - would a walk that reaches frame pointer @fp, with everything
 * below @low already unwound, find a record there whose return address
 * follows a call? At most four stack reads and two code reads.
 */
template <typename ReadWord, typename ReadCode>
[[nodiscard]] static inline bool vouched_at(const ModeDesc &m, u64 fp, u64 low, u64 ws, u64 amask,
				     ReadWord &read_word, ReadCode &read_code)
{
	const WalkPos q = { .sp = low, .fp = fp, .prev_fp = 0, .fp_is_reg = true,
			    .records = 1 };
	Record r;
	u32 layout;
	bool tie;

	if (fp == 0)
		return false;
	return pick_layout(m, q, ws, amask, read_word, read_code, 0, layout, r, tie) ==
	       kRecordOk && r.ra != 0;
}

/*
 * a32_syscall_top - the top frame of an AArch32 task in Thumb state at a
 * syscall (FSM_UW_REGS_SYSCALL): r7 is the syscall number, not a frame
 * pointer. Debian 12's Thumb glibc (2.36, libc6-armhf) enters the kernel in
 * these shapes (its 140 "svc 0" sites, objdump of libc.so.6):
 *
 *   __libc_do_syscall   push {r7, lr}; mov r7, ip; svc 0   {r7, lr} at sp
 *   inline wrappers     push {r7}; mov.w r7, #NR; svc 0     lr live, the
 *   (__getpid, 125)                                       caller's r7 at [sp]
 *   __vfork             mov ip, r7; push {r7}; ...; svc 0   r7 also in r12
 *   syscall(), 14 more  push {r4, ..., r7}: r7 higher up, lr live
 *
 * Tried in this order, each return address only if it follows a call:
 *  1. a record at sp (either layout): __libc_do_syscall's; the next frame
 *     is at its saved r7, or else at the first of r12 and r11 at which a
 *     vouched record lies (an A32 caller of write(): glibc's frameless
 *     __libc_write keeps r11);
 *  2. lr, the wrapper's caller; the frame after it is the first of [sp]
 *     (the pushed r7), r12 and r11 (the fp of an A32 caller, which Thumb
 *     code preserves) at which a vouched record lies; if none, the walk
 *     ends after lr (*@after = FSM_UW_STOP_NO_CALL);
 *  3. r12, then r11, as the frame pointer.
 * @p.fp is set to the base of the record taken (the sp or register used);
 * *@next_is_reg: the next fp comes from a register, not from the record.
 * At most 17 stack reads and 9 code reads (1: 16 and 8). The caller flags
 * the frame.
 */
template <typename ReadWord, typename ReadCode>
[[nodiscard]] static inline u32 a32_syscall_top(const ModeDesc &m, const fsm_uw_regs &regs,
					 WalkPos &p, u64 ws, u64 amask, ReadWord &read_word,
					 ReadCode &read_code, u32 &layout, Record &r,
					 bool &next_is_reg, u32 &after)
{
	const u64 alt[2] = { regs.alt_fp[0] & amask, regs.alt_fp[1] & amask };
	const u64 lr = regs.lr & amask;
	bool tie;

	/* 1. A record at sp; its saved r7 is the caller's fp unless r12/r11 is. */
	p.fp = p.sp;
	if (pick_layout(m, p, ws, amask, read_word, read_code, 0, layout, r, tie) ==
	    kRecordOk && r.ra) {
		if (vouched_at(m, r.next_fp, r.cfa, ws, amask, read_word, read_code))
			return kRecordOk;
		for (u64 fp : alt) {
			if (vouched_at(m, fp, r.cfa, ws, amask, read_word, read_code)) {
				r.next_fp = fp;
				next_is_reg = true;
				break;
			}
		}
		return kRecordOk;
	}
	/* 2. lr, then the caller's frame pointer. */
	if (p.sp <= amask - ws && follows_call(lr, read_code)) {
		u64 pushed = 0;
		const u64 low = p.sp + ws;	/* the wrapper pushed r7 at least */
		const u64 fps[3] = { read_word(p.sp, (u32)ws, pushed) ? pushed & amask : 0,
				     alt[0], alt[1] };

		r = { .cfa = low, .ra = lr, .next_fp = 0 };
		next_is_reg = true;
		after = FSM_UW_STOP_NO_CALL;
		for (u64 fp : fps) {
			if (vouched_at(m, fp, low, ws, amask, read_word, read_code)) {
				r.next_fp = fp;
				after = kRecordOk;
				break;
			}
		}
		return kRecordOk;
	}
	/* 3. r12, r11. */
	for (u64 fp : alt) {
		if (fp == 0)
			continue;
		p.fp = fp;
		if (pick_layout(m, p, ws, amask, read_word, read_code, 0, layout, r, tie) ==
		    kRecordOk && r.ra)
			return kRecordOk;
	}
	return FSM_UW_STOP_NO_CALL;
}

/*
 * walk - the generic frame-pointer walk.
 * @regs:      user registers and mode (fsm_uw_regs).
 * @read_word: stack reader, functor bool(u64 addr, u32 size, u64 &out);
 *             false = fault. Called at most 2 * max times (4 * max + 13 for
 *             kPickCallSite: two candidates (4 reads) per frame, at most 17
 *             for the top one: a32_syscall_top()).
 * @read_code: code reader, the same shape, for call-site checks only
 *             (kPickCallSite: at most 2 * max + 7 times, 2 per frame, 9 for
 *             the top one; kVouchX86: at most 2 per return address).
 * @entries:   output array of @max entries: [0] = ip, then return addresses.
 * @res:       output; always filled (nr, stop, flags, mode).
 * Context: any in which the readers may run; never sleeps by itself.
 * Return: res.nr.
 */
template <typename ReadWord, typename ReadCode>
[[nodiscard]] static inline u32 walk(const fsm_uw_regs &regs, ReadWord &&read_word,
			      ReadCode &&read_code, u64 *entries, u32 max,
			      fsm_uw_result &res)
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
	WalkPos p = { .sp = regs.sp & amask, .fp = regs.fp & amask, .prev_fp = 0,
		      .fp_is_reg = true, .records = 0 };
	const FrameDesc *f = &m->frame;
	u32 layout = 0;			/* kPickCallSite: 0 = m->frame, 1 = m->alt */
	/* Frames found from here on may be wrong: each one reported is flagged. */
	bool unreliable = false;
	/* AArch32: the instruction set of the code being unwound (bit 0 of its pc). */
	bool thumb = (m->fixup & kFixThumb) && (regs.flags & FSM_UW_REGS_THUMB);
	/* AArch32 top frame: a leaf's lr, or a Thumb syscall's own rules. */
	const bool a32_top = m->pick == kPickCallSite && !(regs.flags & FSM_UW_REGS_AT_ENTRY);
	const bool syscall_top = a32_top && thumb && (regs.flags & FSM_UW_REGS_SYSCALL);

	if (regs.flags & FSM_UW_REGS_AT_ENTRY) {
		f = &m->entry;
		res.flags |= FSM_UW_RES_AT_ENTRY;
	}
	/* Thumb: r7 is a frame pointer for clang, not for GCC (see the top). */
	if (thumb) {
		unreliable = true;
		res.flags |= FSM_UW_RES_UNRELIABLE;
	}

	/* Entry 0 is where the task was interrupted, not a return address. */
	entries[res.nr++] = regs.ip & amask;

	for (bool top = true;; top = false) {
		Record r = { .cfa = p.sp, .ra = 0, .next_fp = p.fp };
		/* Flags of this frame: committed to res only if it is reported. */
		bool frame_unreliable = unreliable;
		bool next_is_reg = false;	/* the next fp is a register value */
		u32 after = kRecordOk;		/* stop once this frame is reported */

		if (f->flags & kRaInLr) {
			/* Function entry on arm: the return address is still in lr. */
			r.ra = regs.lr & amask;
		} else {
			u32 stop;

			if (top && syscall_top) {
				stop = a32_syscall_top(*m, regs, p, ws, amask, read_word,
						       read_code, layout, r, next_is_reg,
						       after);
				f = layout ? &m->alt : &m->frame;
			} else if (m->pick == kPickCallSite) {
				bool tie;

				stop = pick_layout(*m, p, ws, amask, read_word, read_code,
						   layout, layout, r, tie);
				f = layout ? &m->alt : &m->frame;
				/* Both layouts vouched for: which one is a guess. */
				if (tie)
					frame_unreliable = true;
				/* A32 top frame, no record vouched for: a leaf? (lr, flagged) */
				if (stop != kRecordOk && top && a32_top && !thumb &&
				    leaf_record(p.fp, p.sp, regs.lr, ws, amask, read_word,
						read_code, r)) {
					stop = kRecordOk;
					frame_unreliable = true;
				}
			} else {
				stop = read_record(*f, p, ws, amask, read_word, r);
			}
			if (stop != kRecordOk)
				return walk_stop(res, stop);
			p.records++;
		}

		if (m->fixup & kFixPac)
			r.ra &= ~regs.pac_mask;
		const bool ra_thumb = (m->fixup & kFixThumb) && (r.ra & 1);
		/* Switching instruction set switches the fp register (r11/r7). */
		const bool switched = (m->fixup & kFixThumb) && r.ra && ra_thumb != thumb;

		r.ra &= ~(u64)ra_thumb;
		/* A zero return address marks the outermost frame. */
		if (r.ra == 0)
			return walk_stop(res, FSM_UW_STOP_END);
		if (m->fixup & kVouchX86) {
			const u32 v = x86_vouch(r.ra, ws == 8, read_code);

			/* Not code: the record was no frame (rbp was data); stop before it. */
			if (v == kVouchNotCode)
				return walk_stop(res, FSM_UW_STOP_NOT_CODE);
			/* Code no call vouches for (a signal trampoline, a code pointer). */
			if (v == kVouchNoCall)
				frame_unreliable = true;
		}
		/* Bounded depth: one more valid frame but no room for it. */
		if (res.nr >= max)
			return walk_stop(res, FSM_UW_STOP_DEPTH);
		entries[res.nr++] = r.ra;
		if (ra_thumb)
			res.flags |= FSM_UW_RES_THUMB;
		if (frame_unreliable)
			res.flags |= FSM_UW_RES_UNRELIABLE;
		/* The switch's own return address is sound; the frames after it are not. */
		unreliable = frame_unreliable || switched;
		thumb = ra_thumb;

		p.sp = r.cfa;
		if (next_is_reg) {
			p.fp = r.next_fp;
			p.fp_is_reg = true;
		} else if (f->fp_off) {
			p.prev_fp = p.fp;
			p.fp = r.next_fp;
			p.fp_is_reg = false;
		}
		if (after != kRecordOk)
			return walk_stop(res, after);
		f = &m->frame;
	}
}

/* Adapter from a C read callback to the functor form; fn NULL: every read fails. */
struct CReader {
	fsm_uw_read_fn fn;
	void *ctx;

	bool operator()(u64 addr, u32 size, u64 &out) const
	{
		out = 0;
		return fn && fn(ctx, addr, size, &out);
	}
};

} /* namespace fsm::unwind */

#endif /* FSM_UNWIND_USER_H */
