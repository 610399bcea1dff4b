// SPDX-License-Identifier: GPL-2.0
/*
 * Walker tests on synthetic stacks (fake_mem.h): exact frame lists for every
 * mode, and every stop rule. Each walk also runs through the C entry point
 * fsm_uw_walk() and must give the same result.
 */
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "fake_mem.h"
#include "unwind_user.h"

using namespace uwtest;

namespace {

constexpr u64 kGuard = 0x5a5a5a5a5a5a5a5aull;

struct Walked {
	std::vector<u64> e;	/* the entries, e.size() == res.nr */
	fsm_uw_result res;
	u64 reads;
};

Walked walk(const FakeMem &m, const fsm_uw_regs &regs, u32 max = FSM_MAX_USER_DEPTH)
{
	std::vector<u64> buf(max + 8, kGuard), cbuf(max + 8, kGuard);
	fsm_uw_result res, cres;
	memset(&res, 0xff, sizeof(res));
	memset(&cres, 0xff, sizeof(cres));

	u64 r0 = m.reads(), c0 = m.code_reads();
	u32 n = fsm::unwind::walk(regs, m.reader(), m.code_reader(), buf.data(), max, res);
	u64 code_reads = m.code_reads() - c0;
	u64 reads = m.reads() - r0;
	u32 cn = fsm_uw_walk(&regs, FakeMem::c_read, FakeMem::c_read_code,
			     const_cast<FakeMem *>(&m), cbuf.data(), max, &cres);

	EXPECT_EQ(n, res.nr);
	EXPECT_LE(res.nr, max);
	/*
	 * FSM_UW_MODE_A32 reads two candidate records and their call sites per
	 * frame, and more candidates at the top (fsm_unwind.h, fsm_uw_walk()).
	 */
	if (regs.mode == FSM_UW_MODE_A32) {
		EXPECT_LE(reads, 4ull * max + 13) << "stack read bound";
		EXPECT_LE(code_reads, 2ull * max + 7) << "code read bound";
	} else if (regs.mode == FSM_UW_MODE_X86_64 || regs.mode == FSM_UW_MODE_IA32) {
		EXPECT_LE(reads, 2ull * max) << "read bound";
		EXPECT_LE(code_reads, 2ull * max) << "code read bound (x86_vouch())";
	} else {
		EXPECT_LE(reads, 2ull * max) << "read bound";
		EXPECT_EQ(code_reads, 0u) << "arm64 and the fixed A32 layouts read no code";
	}
	EXPECT_LT(res.stop, (u32)FSM_UW_NR_STOPS);
	for (size_t i = res.nr; i < buf.size(); i++)
		EXPECT_EQ(buf[i], kGuard) << "wrote past nr at " << i;
	/* The C entry point is the same walk. */
	EXPECT_EQ(cn, n);
	EXPECT_EQ(0, memcmp(&cres, &res, sizeof(res)));
	EXPECT_EQ(0, memcmp(cbuf.data(), buf.data(), buf.size() * sizeof(u64)));

	return { std::vector<u64>(buf.begin(), buf.begin() + res.nr), res, reads + code_reads };
}

fsm_uw_regs regs_of(u32 mode, u64 ip, u64 sp, u64 fp, u64 lr = 0, u32 flags = 0)
{
	fsm_uw_regs r{};
	r.ip = ip;
	r.sp = sp;
	r.fp = fp;
	r.lr = lr;
	r.mode = mode;
	r.flags = flags;
	return r;
}

/*
 * A chain of records at fps[0] < fps[1] < ...; record i holds fps[i + 1]
 * (0 for the last) and ras[i].
 */
void put_chain(FakeMem &m, u32 mode, const std::vector<u64> &fps,
	       const std::vector<u64> &ras, u64 last_saved_fp = 0)
{
	for (size_t i = 0; i < fps.size(); i++)
		put_record(m, mode, fps[i], i + 1 < fps.size() ? fps[i + 1] : last_saved_fp,
			   ras[i]);
}

using V = std::vector<u64>;

} /* namespace */

/* ---- exact frame lists per mode ---------------------------------------- */

TEST(UnwindUser, X86_64Chain)
{
	FakeMem m;
	put_chain(m, FSM_UW_MODE_X86_64, { 0x7ffd0100, 0x7ffd0180, 0x7ffd0200 },
		  { 0x401111, 0x402222, 0x403333 });
	auto w = walk(m, regs_of(FSM_UW_MODE_X86_64, 0x400abc, 0x7ffd00e0, 0x7ffd0100));
	EXPECT_EQ(w.e, (V{ 0x400abc, 0x401111, 0x402222, 0x403333 }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_END);
	EXPECT_EQ(w.res.mode, (u32)FSM_UW_MODE_X86_64);
	EXPECT_EQ(w.res.flags, 0u);
}

TEST(UnwindUser, X86_64HighAddresses)
{
	/* Full 64-bit user addresses: nothing truncated. */
	FakeMem m;
	const u64 s = 0x7fffffffe000ull;
	put_chain(m, FSM_UW_MODE_X86_64, { s + 0x10, s + 0x50 },
		  { 0x7f1234567890ull, 0x55555555a000ull });
	auto w = walk(m, regs_of(FSM_UW_MODE_X86_64, 0x7f0000001000ull, s, s + 0x10));
	EXPECT_EQ(w.e, (V{ 0x7f0000001000ull, 0x7f1234567890ull, 0x55555555a000ull }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_END);
}

TEST(UnwindUser, Ia32Chain)
{
	/* 4-byte words: a wrong (8-byte) read would merge saved fp and ra. */
	FakeMem m;
	put_chain(m, FSM_UW_MODE_IA32, { 0xffd01004, 0xffd01020, 0xffd01100 },
		  { 0x08049111, 0xf7e02222, 0x08048333 });
	/* Upper register halves are not part of a compat task's state. */
	auto w = walk(m, regs_of(FSM_UW_MODE_IA32, 0xdead00000804a000ull,
				 0xbeef0000ffd01000ull, 0x12340000ffd01004ull));
	EXPECT_EQ(w.e, (V{ 0x0804a000, 0x08049111, 0xf7e02222, 0x08048333 }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_END);
}

TEST(UnwindUser, Arm64ChainStripsPac)
{
	FakeMem m;
	const u64 pac = 0x007f000000000000ull;	/* bits 54..48: PAC with 48-bit VAs */
	put_chain(m, FSM_UW_MODE_ARM64, { 0xffffc000ull, 0xffffc040ull, 0xffffc0a0ull },
		  { 0x0023000000401234ull, 0x0041000000405678ull, 0x0000aaaab0009abcull });
	auto r = regs_of(FSM_UW_MODE_ARM64, 0x400000, 0xffffbff0ull, 0xffffc000ull);
	r.pac_mask = pac;
	auto w = walk(m, r);
	EXPECT_EQ(w.e, (V{ 0x400000, 0x401234, 0x405678, 0xaaaab0009abcull }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_END);

	/* The mask is arm64 only: x86-64 keeps every bit. */
	FakeMem m2;
	put_chain(m2, FSM_UW_MODE_X86_64, { 0x1000 }, { 0x0023000000401234ull });
	auto r2 = regs_of(FSM_UW_MODE_X86_64, 0x400000, 0xff0, 0x1000);
	r2.pac_mask = pac;
	EXPECT_EQ(walk(m2, r2).e, (V{ 0x400000, 0x0023000000401234ull }));
}

TEST(UnwindUser, A32FrameRecordChainWithThumb)
{
	/* clang: fp (r11, or r7 in Thumb) -> {old fp, lr}. */
	FakeMem m;
	put_chain(m, FSM_UW_MODE_A32_FRAME_RECORD, { 0xbefff008, 0xbefff020, 0xbefff100 },
		  { 0x00010ab5 /* Thumb */, 0x00011230, 0xb6f01001 /* Thumb */ });
	auto w = walk(m, regs_of(FSM_UW_MODE_A32_FRAME_RECORD, 0x10a00, 0xbefff000, 0xbefff008));
	EXPECT_EQ(w.e, (V{ 0x10a00, 0x10ab4, 0x11230, 0xb6f01000 }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_END);
	EXPECT_EQ(w.res.flags & FSM_UW_RES_THUMB, FSM_UW_RES_THUMB);

	/* No Thumb return address: no flag. */
	FakeMem m2;
	put_chain(m2, FSM_UW_MODE_A32_FRAME_RECORD, { 0x8000 }, { 0x10000 });
	auto w2 = walk(m2, regs_of(FSM_UW_MODE_A32_FRAME_RECORD, 0x10a00, 0x7ff0, 0x8000));
	EXPECT_EQ(w2.res.flags & FSM_UW_RES_THUMB, 0u);
}

TEST(UnwindUser, A32GccChain)
{
	/* GCC -marm: fp -> saved lr, old fp at fp - 4. */
	FakeMem m;
	put_chain(m, FSM_UW_MODE_A32_GCC, { 0xbefff00c, 0xbefff024, 0xbefff104 },
		  { 0x00010500, 0x00010600, 0x00010701 /* Thumb caller */ });
	auto w = walk(m, regs_of(FSM_UW_MODE_A32_GCC, 0x10400, 0xbefff000, 0xbefff00c));
	EXPECT_EQ(w.e, (V{ 0x10400, 0x10500, 0x10600, 0x10700 }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_END);
	EXPECT_EQ(w.res.flags & FSM_UW_RES_THUMB, FSM_UW_RES_THUMB);

	/* The two AArch32 layouts are not interchangeable. */
	auto wrong = walk(m, regs_of(FSM_UW_MODE_A32_FRAME_RECORD, 0x10400, 0xbefff000,
				     0xbefff00c));
	EXPECT_NE(wrong.e, w.e);
}

TEST(UnwindUser, A32GccRecordMayStartOneWordBelowFp)
{
	/* The GCC record spans [fp - 4, fp + 4): fp - 4 == sp is fine. */
	FakeMem m;
	put_chain(m, FSM_UW_MODE_A32_GCC, { 0x2004 }, { 0x10500 });
	auto w = walk(m, regs_of(FSM_UW_MODE_A32_GCC, 0x10400, 0x2000, 0x2004));
	EXPECT_EQ(w.e, (V{ 0x10400, 0x10500 }));
	/* ...but not below sp. */
	auto w2 = walk(m, regs_of(FSM_UW_MODE_A32_GCC, 0x10400, 0x2004, 0x2004));
	EXPECT_EQ(w2.e, (V{ 0x10400 }));
	EXPECT_EQ(w2.res.stop, (u32)FSM_UW_STOP_NOT_INCREASING);
}

/* ---- termination rules --------------------------------------------------- */

/* ---- FSM_UW_MODE_A32: the layout picked per frame ---------------------- */

namespace {

/* Code words at the call sites: A32 "bl" (cond AL), Thumb "bl" (2 halfwords). */
constexpr u32 kA32Bl = 0xebfffffe;
constexpr u32 kThumbBl = 0xfffef7ffu;	/* hw1 0xf7ff, hw2 0xfffe at a - 4 */
constexpr u32 kA32Nop = 0xe1a00000;	/* mov r0, r0: no call */

/* The call instruction before return address @ra (bit 0: Thumb). */
void put_call(FakeMem &m, u64 ra, u32 insn)
{
	m.put_code32((ra & ~1ull) - 4, insn);
}

} /* namespace */

TEST(UnwindUser, A32PicksLayoutPerFrame)
{
	/*
	 * A clang frame (fp -> {old fp, lr}) called from GCC frames (fp -> lr,
	 * old fp at fp - 4): the walker takes each frame's own layout.
	 */
	FakeMem m;
	put_record(m, FSM_UW_MODE_A32_FRAME_RECORD, 0x2008, 0x2104, 0x10100);
	put_record(m, FSM_UW_MODE_A32_GCC, 0x2104, 0x2204, 0x10200);
	put_record(m, FSM_UW_MODE_A32_GCC, 0x2204, 0, 0x10300);
	for (u64 ra : { 0x10100, 0x10200, 0x10300 })
		put_call(m, ra, kA32Bl);
	auto w = walk(m, regs_of(FSM_UW_MODE_A32, 0x10000, 0x2000, 0x2008));
	EXPECT_EQ(w.e, (V{ 0x10000, 0x10100, 0x10200, 0x10300 }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_END);
	EXPECT_EQ(w.res.flags, 0u);
	EXPECT_LE(w.reads, 6ull * 4);

	/* The same memory through either fixed layout loses frames. */
	auto g = walk(m, regs_of(FSM_UW_MODE_A32_GCC, 0x10000, 0x2000, 0x2008));
	EXPECT_NE(g.e, w.e);
	auto c = walk(m, regs_of(FSM_UW_MODE_A32_FRAME_RECORD, 0x10000, 0x2000, 0x2008));
	EXPECT_NE(c.e, w.e);
}

TEST(UnwindUser, A32CallSiteDecides)
{
	/*
	 * GCC frame whose return address lies above the stack (a thread stack
	 * below the libraries) and whose [fp - 4] is 0: both layouts have a
	 * plausible saved fp; only the GCC one's return address follows a call.
	 */
	FakeMem m;
	put_record(m, FSM_UW_MODE_A32_GCC, 0x2004, 0, 0x40100);	/* [0x2004] = 0x40100 */
	m.put32(0x2008, 0x77777777);				/* clang's "lr": no call there */
	put_call(m, 0x40100, kA32Bl);
	auto w = walk(m, regs_of(FSM_UW_MODE_A32, 0x10000, 0x2000, 0x2004));
	EXPECT_EQ(w.e, (V{ 0x10000, 0x40100 }));
	EXPECT_EQ(w.res.flags, 0u);

	/* Without the call instruction neither is vouched for: stop, no guess. */
	put_call(m, 0x40100, kA32Nop);
	auto t = walk(m, regs_of(FSM_UW_MODE_A32, 0x10000, 0x2000, 0x2004));
	EXPECT_EQ(t.res.flags, 0u) << "no frame reported";
	EXPECT_EQ(t.res.stop, (u32)FSM_UW_STOP_NO_CALL);
	EXPECT_EQ(t.e, (V{ 0x10000 }));

	/* Both vouched for (a call before 0x77777777 too): a tie, flagged. */
	put_call(m, 0x40100, kA32Bl);
	put_call(m, 0x77777777 & ~3u, kA32Bl);
	m.put32(0x2008, 0x77777777 & ~3u);
	auto b = walk(m, regs_of(FSM_UW_MODE_A32, 0x10000, 0x2000, 0x2004));
	ASSERT_EQ(b.e.size(), 2u);
	EXPECT_EQ(b.res.flags, (u32)FSM_UW_RES_UNRELIABLE);
}

TEST(UnwindUser, A32ThumbStartIsUnreliable)
{
	/* clang Thumb: r7 -> {old r7, lr}, Thumb return addresses. */
	FakeMem m;
	put_chain(m, FSM_UW_MODE_A32_FRAME_RECORD, { 0x2008, 0x2020 }, { 0x10101, 0x10201 });
	put_call(m, 0x10101, kThumbBl);
	put_call(m, 0x10201, kThumbBl);
	auto w = walk(m, regs_of(FSM_UW_MODE_A32, 0x10000, 0x2000, 0x2008, 0,
				 FSM_UW_REGS_THUMB));
	EXPECT_EQ(w.e, (V{ 0x10000, 0x10100, 0x10200 }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_END);
	EXPECT_EQ(w.res.flags, (u32)(FSM_UW_RES_THUMB | FSM_UW_RES_UNRELIABLE));

	/* Unreliable: a record without a call before its return address ends it. */
	put_call(m, 0x10201, 0);
	auto n = walk(m, regs_of(FSM_UW_MODE_A32, 0x10000, 0x2000, 0x2008, 0,
				 FSM_UW_REGS_THUMB));
	EXPECT_EQ(n.e, (V{ 0x10000, 0x10100 }));
	EXPECT_EQ(n.res.stop, (u32)FSM_UW_STOP_NO_CALL);

	/* The same chain in A32 state: reliable until the switch to Thumb. */
	FakeMem a;
	put_chain(a, FSM_UW_MODE_A32_FRAME_RECORD, { 0x2008, 0x2020 }, { 0x10100, 0x10201 });
	put_call(a, 0x10100, kA32Bl);
	put_call(a, 0x10201, kThumbBl);
	auto s = walk(a, regs_of(FSM_UW_MODE_A32, 0x10000, 0x2000, 0x2008));
	EXPECT_EQ(s.e, (V{ 0x10000, 0x10100, 0x10200 }));
	/* (A32SwitchFlaggedOnlyWithAFrameAfterIt: no frame after the switch.) */
	EXPECT_EQ(s.res.flags, (u32)FSM_UW_RES_THUMB);
	auto r = walk(a, regs_of(FSM_UW_MODE_A32, 0x10000, 0x2000, 0x2008), 2);
	EXPECT_EQ(r.res.flags, 0u) << "A32 frames before the switch are reliable";
	EXPECT_EQ(r.res.stop, (u32)FSM_UW_STOP_DEPTH);
}

TEST(UnwindUser, A32SwitchFlaggedOnlyWithAFrameAfterIt)
{
	/*
	 * An A32 chain whose last return address goes into Thumb code (glibc's
	 * __libc_start_call_main): that return address is reliable; only frames
	 * found after it (through the A32 fp, which Thumb code does not keep)
	 * are not.
	 */
	FakeMem a;
	put_chain(a, FSM_UW_MODE_A32_FRAME_RECORD, { 0x2008, 0x2020 }, { 0x10100, 0x10201 });
	put_call(a, 0x10100, kA32Bl);
	put_call(a, 0x10201, kThumbBl);
	auto s = walk(a, regs_of(FSM_UW_MODE_A32, 0x10000, 0x2000, 0x2008));
	EXPECT_EQ(s.e, (V{ 0x10000, 0x10100, 0x10200 }));
	EXPECT_EQ(s.res.stop, (u32)FSM_UW_STOP_END);
	EXPECT_EQ(s.res.flags, (u32)FSM_UW_RES_THUMB) << "nothing after the switch reported";

	/* A frame after the switch is reported: now the stack is flagged. */
	put_record(a, FSM_UW_MODE_A32_FRAME_RECORD, 0x2020, 0x2040, 0x10201);
	put_record(a, FSM_UW_MODE_A32_FRAME_RECORD, 0x2040, 0, 0x10301);
	put_call(a, 0x10301, kThumbBl);
	auto f = walk(a, regs_of(FSM_UW_MODE_A32, 0x10000, 0x2000, 0x2008));
	EXPECT_EQ(f.e, (V{ 0x10000, 0x10100, 0x10200, 0x10300 }));
	EXPECT_EQ(f.res.flags, (u32)(FSM_UW_RES_THUMB | FSM_UW_RES_UNRELIABLE));
	/* ... but not when that frame is cut by the depth bound. */
	auto d = walk(a, regs_of(FSM_UW_MODE_A32, 0x10000, 0x2000, 0x2008), 3);
	EXPECT_EQ(d.res.stop, (u32)FSM_UW_STOP_DEPTH);
	EXPECT_EQ(d.res.flags, (u32)FSM_UW_RES_THUMB);

	/* A switch whose next record no call vouches for: stop, not flagged. */
	put_call(a, 0x10301, kA32Nop);
	auto n = walk(a, regs_of(FSM_UW_MODE_A32, 0x10000, 0x2000, 0x2008));
	EXPECT_EQ(n.e, (V{ 0x10000, 0x10100, 0x10200 }));
	EXPECT_EQ(n.res.stop, (u32)FSM_UW_STOP_NO_CALL);
	EXPECT_EQ(n.res.flags, (u32)FSM_UW_RES_THUMB);
}

TEST(UnwindUser, A32CodeReadsOnlyThroughTheCodeReader)
{
	/*
	 * A GCC A32 frame: read as a frame record, its "return address" is the
	 * word above the record, here an address inside a device mapping
	 * (UIO/VFIO/DRM: reads have side effects). The call-site check of that
	 * candidate must not read it through the stack reader.
	 */
	FakeMem m;
	const u64 dev = 0x40000000;
	put_record(m, FSM_UW_MODE_A32_GCC, 0x2004, 0, 0x10100);
	put_call(m, 0x10100, kA32Bl);
	m.put32(0x2008, dev + 0x104);	/* the frame-record candidate's "lr" */
	m.put32(dev + 0x100, kA32Bl);	/* device registers that look like a call */
	m.watch(dev, dev + 0x1000);
	auto w = walk(m, regs_of(FSM_UW_MODE_A32, 0x10000, 0x2000, 0x2004));
	EXPECT_EQ(w.e, (V{ 0x10000, 0x10100 }));
	EXPECT_EQ(m.watched_reads(), 0u) << "a code read went through the stack reader";
}

/*
 * AArch32 Thumb at a syscall (review item 2): r7 is the syscall number. The
 * stacks below are laid out exactly as Debian 12's Thumb glibc (2.36,
 * libc6-armhf-cross, objdump of libc.a) leaves them at "svc 0":
 *
 *   __libc_write+0x0e:  mov.w ip, #4; bl __libc_do_syscall   (f7ff fffe)
 *   __libc_write: push {r4, r5, r6, lr} (no frame pointer, r7 untouched)
 *   __libc_do_syscall:  push {r7, lr}; mov r7, ip; svc 0; pop {r7, pc}
 *   __getpid:           push {r7}; mov.w r7, #20; svc 0; pop {r7}; bx lr
 */
namespace {

constexpr u64 kLibc = 0xb6e00000;		/* glibc text (Thumb) */
constexpr u64 kDoSyscall = kLibc + 0x1000;	/* __libc_do_syscall */
constexpr u64 kWrite = kLibc + 0x2000;		/* __libc_write */
constexpr u64 kGetpid = kLibc + 0x3000;		/* __getpid */

fsm_uw_regs syscall_regs(u64 ip, u64 sp, u64 r7, u64 lr, u64 r12, u64 r11)
{
	fsm_uw_regs r = regs_of(FSM_UW_MODE_A32, ip, sp, r7, lr,
				FSM_UW_REGS_THUMB | FSM_UW_REGS_SYSCALL);
	r.alt_fp[0] = r12;
	r.alt_fp[1] = r11;
	return r;
}

} /* namespace */

TEST(UnwindUser, A32ThumbSyscallDoSyscall)
{
	/*
	 * write() from u1 (clang Thumb: r7 -> {old r7, lr}), called by u2, by
	 * u3. At the svc: sp -> {r7 = u1's fp, lr = __libc_write+0x16|1}; r7 =
	 * r12 = 4 (__NR_write); __libc_write keeps u1's return address in its
	 * frameless frame, so u1 is skipped; u1's record gives u2, u2's u3.
	 */
	FakeMem m;
	const u64 sp = 0xbeffe000, f1 = 0xbeffe040, f2 = 0xbeffe080;
	const u64 w_ra = kWrite + 0x17, u2_ra = 0x10201, u3_ra = 0x10301;
	m.put32(sp, f1);			/* push {r7, lr} */
	m.put32(sp + 4, w_ra);
	for (u64 a = sp + 8; a < sp + 0x18; a += 4)	/* __libc_write: push {r4, r5, r6, lr} */
		m.put32(a, 0x11111111);
	m.put32(sp + 0x14, 0x10101);		/* its lr: into u1 (not reachable) */
	put_record(m, FSM_UW_MODE_A32_FRAME_RECORD, f1, f2, u2_ra);
	put_record(m, FSM_UW_MODE_A32_FRAME_RECORD, f2, 0, u3_ra);
	for (u64 ra : { w_ra, u2_ra, u3_ra })
		put_call(m, ra, kThumbBl);
	const u64 ip = kDoSyscall + 6;

	auto w = walk(m, syscall_regs(ip, sp, 4, w_ra, 4, 0));
	EXPECT_EQ(w.e, (V{ ip, w_ra & ~1ull, u2_ra & ~1ull, u3_ra & ~1ull }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_END);
	EXPECT_EQ(w.res.flags, (u32)(FSM_UW_RES_THUMB | FSM_UW_RES_UNRELIABLE));

	/* Without FSM_UW_REGS_SYSCALL, r7 = 4 is taken for a frame pointer. */
	fsm_uw_regs r = syscall_regs(ip, sp, 4, w_ra, 4, 0);
	r.flags &= ~FSM_UW_REGS_SYSCALL;
	auto old = walk(m, r);
	EXPECT_EQ(old.e, (V{ ip }));
}

TEST(UnwindUser, A32ThumbSyscallLeafWrapper)
{
	/*
	 * getpid() from g, GCC -marm (fp = r11 -> saved lr, old fp at fp - 4),
	 * called by h, by main. At the svc: sp -> {g's r7 (not a frame
	 * pointer in A32 code)}, lr = g's return address (A32 bl before it),
	 * r11 = g's fp (Thumb glibc keeps it), r12 scratch.
	 */
	FakeMem m;
	const u64 sp = 0xbeffe000, g = 0xbeffe024, h = 0xbeffe044;
	const u64 g_lr = 0x10100, h_ra = 0x10200, main_ra = 0x10300;
	m.put32(sp, 0x0001b2c4);		/* push {r7}: g's r7, a value */
	m.put32(sp + 4, 0xbeffe010);		/* g's locals */
	put_record(m, FSM_UW_MODE_A32_GCC, g, h, h_ra);
	put_record(m, FSM_UW_MODE_A32_GCC, h, 0, main_ra);
	for (u64 ra : { g_lr, h_ra, main_ra })
		put_call(m, ra, kA32Bl);
	const u64 ip = kGetpid + 8 + 1;

	auto w = walk(m, syscall_regs(ip, sp, 20, g_lr, 0xbeffe008, g));
	EXPECT_EQ(w.e, (V{ ip & 0xffffffff, g_lr, h_ra, main_ra }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_END);
	EXPECT_EQ(w.res.flags, (u32)FSM_UW_RES_UNRELIABLE);
	/* Small arrays: the read bounds of the top frame (walk() checks them). */
	for (u32 mx = 1; mx <= 3; mx++) {
		auto d = walk(m, syscall_regs(ip, sp, 20, g_lr, 0xbeffe008, g), mx);
		EXPECT_EQ(d.res.stop, (u32)FSM_UW_STOP_DEPTH);
		EXPECT_EQ(d.e.size(), mx);
	}

	/* A clang Thumb caller: the pushed r7 is its frame pointer. */
	FakeMem t;
	const u64 f1 = 0xbeffe040;
	t.put32(sp, f1);
	put_record(t, FSM_UW_MODE_A32_FRAME_RECORD, f1, 0, 0x10201);
	put_call(t, 0x10101, kThumbBl);
	put_call(t, 0x10201, kThumbBl);
	auto c = walk(t, syscall_regs(ip, sp, 20, 0x10101, 0, 0));
	EXPECT_EQ(c.e, (V{ ip & 0xffffffff, 0x10100, 0x10200 }));
	EXPECT_EQ(c.res.flags, (u32)(FSM_UW_RES_THUMB | FSM_UW_RES_UNRELIABLE));

	/* No caller frame found after lr: lr only, then "no call". */
	auto l = walk(t, syscall_regs(ip, sp + 4, 20, 0x10101, 0, 0));
	EXPECT_EQ(l.e, (V{ ip & 0xffffffff, 0x10100 }));
	EXPECT_EQ(l.res.stop, (u32)FSM_UW_STOP_NO_CALL);

	/* Nothing vouched for (lr stale, no record): the ip alone, flagged. */
	FakeMem n;
	n.put32(sp, 0x1234);
	n.put32(sp + 4, 0x10401);
	auto z = walk(n, syscall_regs(ip, sp, 20, 0x10501, 0xbeffe000, 0));
	EXPECT_EQ(z.e, (V{ ip & 0xffffffff }));
	EXPECT_EQ(z.res.stop, (u32)FSM_UW_STOP_NO_CALL);
	EXPECT_EQ(z.res.flags, (u32)FSM_UW_RES_UNRELIABLE);
}

TEST(UnwindUser, A32ThumbSyscallR12)
{
	/* __vfork: mov ip, r7; push {r7}; mov.w r7, #190; svc 0; lr stale here. */
	FakeMem m;
	const u64 sp = 0xbeffe000, f1 = 0xbeffe040;
	m.put32(sp, 0x5);			/* not the caller's r7 in this variant */
	put_record(m, FSM_UW_MODE_A32_FRAME_RECORD, f1, 0, 0x10201);
	put_call(m, 0x10201, kThumbBl);
	const u64 ip = kLibc + 0x4009;
	auto w = walk(m, syscall_regs(ip, sp, 190, 0x10505, f1, 0));
	EXPECT_EQ(w.e, (V{ ip & 0xffffffff, 0x10200 }));
	EXPECT_EQ(w.res.flags, (u32)(FSM_UW_RES_THUMB | FSM_UW_RES_UNRELIABLE));
}

TEST(UnwindUser, A32LeafThatSavedOnlyFp)
{
	/*
	 * GCC -marm leaf "push {fp}; add fp, sp, #0" called by a GCC frame g
	 * (fp -> saved lr, old fp at fp - 4), called by h. [fp + 4] is g's
	 * lowest stack word: a local. It is not reported: 0 (not an end
	 * marker without a saved fp of 0), a code address after no call, a
	 * stack address. (Known limit, ustack.rst: a local that is a code
	 * address right after a call instruction is taken for the frame
	 * record's return address.)
	 */
	for (u64 local : { 0x0ull, 0x10abcull, 0xbeffe100ull }) {
		SCOPED_TRACE(local);
		FakeMem m;
		const u64 sp = 0xbeffe000, g = 0xbeffe014, h = 0xbeffe034;
		m.put32(sp, g);			/* push {fp} */
		m.put32(sp + 4, local);
		put_record(m, FSM_UW_MODE_A32_GCC, g, h, 0x10200);
		put_record(m, FSM_UW_MODE_A32_GCC, h, 0, 0x10300);
		for (u64 ra : { 0x10100, 0x10200, 0x10300 })
			put_call(m, ra, kA32Bl);
		auto w = walk(m, regs_of(FSM_UW_MODE_A32, 0x10050, sp, sp, 0x10100));
		EXPECT_EQ(w.e, (V{ 0x10050, 0x10100, 0x10200, 0x10300 }));
		EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_END);
		EXPECT_EQ(w.res.flags, (u32)FSM_UW_RES_UNRELIABLE) << "lr: flagged";

		/* lr after no call: the leaf is not recognised, nothing guessed. */
		auto n = walk(m, regs_of(FSM_UW_MODE_A32, 0x10050, sp, sp, 0x10110));
		EXPECT_EQ(n.e, (V{ 0x10050 }));
		EXPECT_EQ(n.res.stop, (u32)FSM_UW_STOP_NO_CALL);
	}
}

TEST(UnwindUser, A32FollowsCallEncodings)
{
	/* BL<c>, BLX imm, BLX Rm in A32; 32-bit BL/BLX and 16-bit BLX Rm in Thumb. */
	const struct { u64 ra; u32 word; bool call; } cases[] = {
		{ 0x10100, 0xebfffffe, true },	/* bl */
		{ 0x10100, 0x1b000010, true },	/* blne */
		{ 0x10100, 0xfa000010, true },	/* blx imm */
		{ 0x10100, 0xe12fff33, true },	/* blx r3 */
		{ 0x10100, 0xe12fff13, false },	/* bx r3 */
		{ 0x10100, 0xea000010, false },	/* b */
		{ 0x10101, 0xf800f000, true },	/* Thumb bl */
		{ 0x10101, 0xe800f000, true },	/* Thumb blx imm */
		{ 0x10101, 0x47980000, true },	/* Thumb blx r3 (at a - 2) */
		{ 0x10101, 0x47180000, false },	/* Thumb bx r3 */
		{ 0x10102, 0xebfffffe, false },	/* A32 address not word aligned */
	};
	for (const auto &c : cases) {
		FakeMem m;
		put_call(m, c.ra, c.word);
		auto rd = m.code_reader();
		EXPECT_EQ(fsm::unwind::follows_call(c.ra, rd), c.call)
			<< std::hex << c.ra << " " << c.word;
	}
	FakeMem none;
	auto rd = none.code_reader();
	EXPECT_FALSE(fsm::unwind::follows_call(0x10100, rd)) << "fault = no";
	EXPECT_FALSE(fsm::unwind::follows_call(0x3, rd));
}

TEST(UnwindUser, Arm64PacAndTagStripped)
{
	/* The glue's mask, GENMASK(63, 48): PAC bits 54..48 and a top-byte tag. */
	FakeMem m;
	put_chain(m, FSM_UW_MODE_ARM64, { 0x7ffff000ull, 0x7ffff040ull },
		  { 0x3a7f000000400100ull, 0x0055000000400200ull });
	auto r = regs_of(FSM_UW_MODE_ARM64, 0x400000, 0x7fffefe0ull, 0x7ffff000ull);
	r.pac_mask = ~((1ull << 48) - 1);
	auto w = walk(m, r);
	EXPECT_EQ(w.e, (V{ 0x400000, 0x400100, 0x400200 }));
	EXPECT_EQ(w.res.flags, 0u);
}

/* ---- x86: return addresses must be code after a call (x86_vouch()) ----- */

namespace {

/* @bytes as code ending right before @ra (the instruction that called). */
void put_code_before(FakeMem &m, u64 ra, std::vector<uint8_t> bytes)
{
	while (bytes.size() < 8)
		bytes.insert(bytes.begin(), 0xcc);	/* int3 padding in front */
	m.put_code(ra - bytes.size(), bytes.data(), (u32)bytes.size());
}

u32 vouch(const std::vector<uint8_t> &call, bool is64 = true)
{
	FakeMem m;
	put_code_before(m, 0x401000, call);
	auto rc = m.code_reader();
	return fsm::unwind::x86_vouch(0x401000, is64, rc);
}

} /* namespace */

TEST(UnwindUser, X86CallEncodings)
{
	using fsm::unwind::kVouchCall;
	using fsm::unwind::kVouchNoCall;
	using fsm::unwind::kVouchNotCode;

	/* What GCC and glibc emit before a return address. */
	EXPECT_EQ(vouch({ 0xe8, 0x12, 0x34, 0x56, 0x78 }), kVouchCall) << "call rel32";
	EXPECT_EQ(vouch({ 0xff, 0xd0 }), kVouchCall) << "call *%rax";
	EXPECT_EQ(vouch({ 0x41, 0xff, 0xd3 }), kVouchCall) << "call *%r11";
	EXPECT_EQ(vouch({ 0xff, 0x15, 1, 2, 3, 4 }), kVouchCall) << "call *disp32(%rip)";
	EXPECT_EQ(vouch({ 0xff, 0x50, 0x08 }), kVouchCall) << "call *0x8(%rax)";
	EXPECT_EQ(vouch({ 0xff, 0x54, 0x24, 0x08 }), kVouchCall) << "call *0x8(%rsp)";
	EXPECT_EQ(vouch({ 0xff, 0x90, 1, 2, 3, 4 }), kVouchCall) << "call *disp32(%rax)";
	EXPECT_EQ(vouch({ 0xff, 0x94, 0xc8, 1, 2, 3, 4 }), kVouchCall)
		<< "call *disp32(%rax,%rcx,8)";
	EXPECT_EQ(vouch({ 0xff, 0x14, 0x25, 1, 2, 3, 4 }), kVouchCall) << "call *abs32 (SIB)";
	EXPECT_EQ(vouch({ 0x41, 0xff, 0x54, 0x24, 0x08 }), kVouchCall) << "call *0x8(%r12)";
	EXPECT_EQ(vouch({ 0x3e, 0xff, 0xd0 }), kVouchCall) << "notrack call *%rax";
	EXPECT_EQ(vouch({ 0xff, 0x13 }), kVouchCall) << "call *(%rbx)";
	/* Not calls: jumps, returns, padding, a syscall. */
	EXPECT_EQ(vouch({ 0xff, 0xe0 }), kVouchNoCall) << "jmp *%rax";
	EXPECT_EQ(vouch({ 0xc3 }), kVouchNoCall) << "ret";
	EXPECT_EQ(vouch({ 0x90, 0x90, 0x90 }), kVouchNoCall) << "nops";
	EXPECT_EQ(vouch({ 0x0f, 0x05 }), kVouchNoCall) << "syscall";
	EXPECT_EQ(vouch({ 0xe9, 1, 2, 3, 4 }), kVouchNoCall) << "jmp rel32";
	/* A call that ends before the address is not a call to it. */
	EXPECT_EQ(vouch({ 0xff, 0xd0, 0x90 }), kVouchNoCall) << "call, then a nop";
	/* ia32: the same forms without REX (0x41 is "inc %ecx" there). */
	EXPECT_EQ(vouch({ 0xe8, 1, 2, 3, 4 }, false), kVouchCall);
	EXPECT_EQ(vouch({ 0xff, 0x55, 0x08 }, false), kVouchCall) << "call *0x8(%ebp)";
	EXPECT_EQ(vouch({ 0x41, 0xff, 0x50, 0x08 }, false), kVouchCall)
		<< "inc, then call *0x8(%eax)";
	/* Close to the start of a mapping: the 4 bytes before still tell. */
	FakeMem m;
	const uint8_t call2[4] = { 0x90, 0x90, 0xff, 0xd2 };
	m.put_code(0x500000, call2, 4);
	auto rc = m.code_reader();
	EXPECT_EQ(fsm::unwind::x86_vouch(0x500004, true, rc), kVouchCall);
	/* Not code (no mapping, or data): the reader refuses it. */
	EXPECT_EQ(fsm::unwind::x86_vouch(0x9335, true, rc), kVouchNotCode);
	m.put64(0x600000, 0xd0ff909090909090ull);	/* call bytes, but not code */
	EXPECT_EQ(fsm::unwind::x86_vouch(0x600008, true, rc), kVouchNotCode);
	EXPECT_EQ(fsm::unwind::x86_vouch(3, true, rc), kVouchNotCode);
}

/*
 * The review's 7 of 2,933 (issue 21, 3.6): a frameless glibc syscall
 * wrapper called from code without frame pointers (libpython). rbp is no
 * frame pointer there: the caller keeps in it, say, the address of a
 * struct stat in its own frame (above sp, so both walkers accept it as a
 * record). At the event (the kernel's options/userstacktrace walks then)
 * [rbp + 8] still held a stale return address into the library, left by an
 * earlier, deeper call; on the way out (our walk) fstat() has filled the
 * struct and [rbp + 8] is st_ino, 0x9335, in no mapping. The kernel's
 * walker checks neither: it printed the stale word as the caller, and the
 * old walker here printed "[novma] 0x9335". Now the second is no frame, and
 * the first, which no check can tell from a real one, is what remains of
 * the limits of frame pointers (Documentation/ustack.rst).
 */
TEST(UnwindUser, X86FramelessWrapperDataIsNoFrame)
{
	const u64 ip = 0x7f0000011234ull;	/* after "syscall" in the wrapper */
	const u64 sp = 0x7ffd0000ull, st = sp + 0x40;	/* rbp: &st in the caller's frame */
	const u64 stale_ra = 0x7f0000200150ull;	/* a return address into libpython */
	FakeMem m;
	put_code_before(m, ip, { 0x0f, 0x05 });
	put_x86_call(m, stale_ra);
	m.put64(st, 0x803);			/* st_dev */

	/* At the event: [st + 8] is the stale return address. */
	m.put64(st + 8, stale_ra);
	auto before = walk(m, regs_of(FSM_UW_MODE_X86_64, ip, sp, st));
	ASSERT_GE(before.e.size(), 2u);
	EXPECT_EQ(before.e[1], stale_ra) << "a stale return address passes every check";

	/* On the way out: fstat() wrote st_ino. Not code: no frame. */
	m.put64(st + 8, 0x9335);
	auto after = walk(m, regs_of(FSM_UW_MODE_X86_64, ip, sp, st));
	EXPECT_EQ(after.e, (V{ ip }));
	EXPECT_EQ(after.res.stop, (u32)FSM_UW_STOP_NOT_CODE);
	EXPECT_STREQ(fsm_uw_stop_name(after.res.stop), "not_code");
	EXPECT_EQ(after.res.flags & FSM_UW_RES_UNRELIABLE, 0u) << "nothing doubtful reported";

	/* Data that points into code without a call before it: flagged. */
	const u64 fnptr = 0x7f0000200400ull;	/* a function's first byte */
	put_code_before(m, fnptr, { 0xc3, 0xcc, 0xcc });	/* ret; int3 padding */
	m.put64(st + 8, fnptr);
	auto fp = walk(m, regs_of(FSM_UW_MODE_X86_64, ip, sp, st));
	ASSERT_GE(fp.e.size(), 2u);
	EXPECT_EQ(fp.e[1], fnptr);
	EXPECT_EQ(fp.res.flags & FSM_UW_RES_UNRELIABLE, FSM_UW_RES_UNRELIABLE);

	/* ia32: the same rule with 4-byte words. */
	FakeMem m32;
	put_code_before(m32, 0x08049000, { 0xcd, 0x80 });	/* int $0x80 */
	m32.put32(0xffd00040, 0x803);
	m32.put32(0xffd00044, 0x9335);
	auto w32 = walk(m32, regs_of(FSM_UW_MODE_IA32, 0x08049000, 0xffd00000, 0xffd00040));
	EXPECT_EQ(w32.e, (V{ 0x08049000 }));
	EXPECT_EQ(w32.res.stop, (u32)FSM_UW_STOP_NOT_CODE);
}

TEST(UnwindUser, X86SignalTrampolineFlaggedNotStopped)
{
	/*
	 * A signal handler's frame returns to the restorer (glibc's
	 * __restore_rt: "mov $15, %rax; syscall", a nop in front, no call);
	 * the interrupted code's frames follow. Reported, flagged from there.
	 */
	FakeMem m;
	const u64 restorer = 0x7f0000030000ull;
	put_code_before(m, restorer, { 0x90 });
	const uint8_t mov_syscall[9] = { 0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05 };
	m.put_code(restorer, mov_syscall, 9);
	m.put64(0x7ffd1000, 0x7ffd2000);	/* the handler's record, by hand: */
	m.put64(0x7ffd1008, restorer);		/* put_record() would add a call */
	put_chain(m, FSM_UW_MODE_X86_64, { 0x7ffd2000, 0x7ffd2100 }, { 0x401111, 0x402222 });
	auto w = walk(m, regs_of(FSM_UW_MODE_X86_64, 0x403000, 0x7ffd0f00, 0x7ffd1000));
	EXPECT_EQ(w.e, (V{ 0x403000, restorer, 0x401111, 0x402222 }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_END);
	EXPECT_EQ(w.res.flags & FSM_UW_RES_UNRELIABLE, FSM_UW_RES_UNRELIABLE);
	/* The same chain without the trampoline: nothing flagged. */
	auto s = walk(m, regs_of(FSM_UW_MODE_X86_64, 0x403000, 0x7ffd1f00, 0x7ffd2000));
	EXPECT_EQ(s.e, (V{ 0x403000, 0x401111, 0x402222 }));
	EXPECT_EQ(s.res.flags & FSM_UW_RES_UNRELIABLE, 0u);
	/* Deeper in the chain, data that is no code ends the walk there. */
	FakeMem d;
	put_chain(d, FSM_UW_MODE_X86_64, { 0x1000, 0x1100 }, { 0x401111, 0x402222 }, 0x1200);
	d.put64(0x1200, 0);
	d.put64(0x1208, 0x9335);
	auto dw = walk(d, regs_of(FSM_UW_MODE_X86_64, 0x400000, 0xff0, 0x1000));
	EXPECT_EQ(dw.e, (V{ 0x400000, 0x401111, 0x402222 }));
	EXPECT_EQ(dw.res.stop, (u32)FSM_UW_STOP_NOT_CODE);
	/* Without a code reader nothing is vouched for: the ip only. */
	fsm_uw_result res;
	u64 e[8];
	auto r = regs_of(FSM_UW_MODE_X86_64, 0x400000, 0xff0, 0x1000);
	EXPECT_EQ(fsm_uw_walk(&r, FakeMem::c_read, nullptr, &d, e, 8, &res), 1u);
	EXPECT_EQ(res.stop, (u32)FSM_UW_STOP_NOT_CODE);
}

TEST(UnwindUser, ZeroFpRegister)
{
	FakeMem m;
	auto w = walk(m, regs_of(FSM_UW_MODE_X86_64, 0x401000, 0x7000, 0));
	EXPECT_EQ(w.e, (V{ 0x401000 }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_ZERO_FP);
	EXPECT_EQ(w.reads, 0u);
}

TEST(UnwindUser, ZeroReturnAddressEndsChain)
{
	FakeMem m;
	put_chain(m, FSM_UW_MODE_X86_64, { 0x1000, 0x1100 }, { 0x401111, 0 }, 0x1200);
	auto w = walk(m, regs_of(FSM_UW_MODE_X86_64, 0x400000, 0xff0, 0x1000));
	EXPECT_EQ(w.e, (V{ 0x400000, 0x401111 }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_END);
}

TEST(UnwindUser, LoopSelf)
{
	/* fp -> itself: one frame, then "not increasing". */
	FakeMem m;
	put_record(m, FSM_UW_MODE_X86_64, 0x1000, 0x1000, 0x401111);
	auto w = walk(m, regs_of(FSM_UW_MODE_X86_64, 0x400000, 0xff0, 0x1000));
	EXPECT_EQ(w.e, (V{ 0x400000, 0x401111 }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_NOT_INCREASING);
}

TEST(UnwindUser, LoopBack)
{
	/* fp0 -> fp1 -> fp0 for every mode. */
	for (u32 mode = 1; mode < FSM_UW_NR_MODES; mode++) {
		SCOPED_TRACE(fsm_uw_mode_name(mode));
		FakeMem m;
		put_chain(m, mode, { 0x1008, 0x1108 }, { 0x4000, 0x5000 }, 0x1008);
		/* AArch32 reports only return addresses that follow a call. */
		put_call(m, 0x4000, kA32Bl);
		put_call(m, 0x5000, kA32Bl);
		auto w = walk(m, regs_of(mode, 0x3000, 0x1000, 0x1008));
		EXPECT_EQ(w.e, (V{ 0x3000, 0x4000, 0x5000 }));
		EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_NOT_INCREASING);
	}
}

TEST(UnwindUser, DecreasingFp)
{
	FakeMem m;
	put_record(m, FSM_UW_MODE_X86_64, 0x2000, 0x1800, 0x401111);
	put_record(m, FSM_UW_MODE_X86_64, 0x1800, 0x3000, 0x402222);
	auto w = walk(m, regs_of(FSM_UW_MODE_X86_64, 0x400000, 0x1f00, 0x2000));
	EXPECT_EQ(w.e, (V{ 0x400000, 0x401111 }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_NOT_INCREASING);
}

TEST(UnwindUser, OverlappingRecord)
{
	/* Next fp inside the current record (fp + 8): increasing, but bogus. */
	FakeMem m;
	m.put64(0x2000, 0x2008);
	m.put64(0x2008, 0x401111);
	m.put64(0x2010, 0x402222);
	put_x86_call(m, 0x401111);
	put_x86_call(m, 0x402222);
	auto w = walk(m, regs_of(FSM_UW_MODE_X86_64, 0x400000, 0x1f00, 0x2000));
	EXPECT_EQ(w.e, (V{ 0x400000, 0x401111 }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_NOT_INCREASING);
}

TEST(UnwindUser, FpBelowSp)
{
	FakeMem m;
	put_record(m, FSM_UW_MODE_X86_64, 0x1000, 0, 0x401111);
	auto w = walk(m, regs_of(FSM_UW_MODE_X86_64, 0x400000, 0x1008, 0x1000));
	EXPECT_EQ(w.e, (V{ 0x400000 }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_NOT_INCREASING);
	EXPECT_EQ(w.reads, 0u) << "checks come before reads";
	/* fp == sp is allowed (a frame with no locals). */
	auto w2 = walk(m, regs_of(FSM_UW_MODE_X86_64, 0x400000, 0x1000, 0x1000));
	EXPECT_EQ(w2.e, (V{ 0x400000, 0x401111 }));
	EXPECT_EQ(w2.res.stop, (u32)FSM_UW_STOP_END);
}

TEST(UnwindUser, Misaligned)
{
	FakeMem m;
	put_record(m, FSM_UW_MODE_X86_64, 0x1004, 0, 0x401111);
	auto w = walk(m, regs_of(FSM_UW_MODE_X86_64, 0x400000, 0x1000, 0x1004));
	EXPECT_EQ(w.e, (V{ 0x400000 }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_MISALIGNED);
	EXPECT_EQ(w.reads, 0u);

	/* Mid-chain. */
	FakeMem m2;
	put_chain(m2, FSM_UW_MODE_X86_64, { 0x1000 }, { 0x401111 }, 0x1101);
	auto w2 = walk(m2, regs_of(FSM_UW_MODE_X86_64, 0x400000, 0xff0, 0x1000));
	EXPECT_EQ(w2.e, (V{ 0x400000, 0x401111 }));
	EXPECT_EQ(w2.res.stop, (u32)FSM_UW_STOP_MISALIGNED);

	/* 4-byte alignment is enough in the 32-bit modes. */
	FakeMem m3;
	put_chain(m3, FSM_UW_MODE_IA32, { 0x1004 }, { 0x8049111 });
	auto w3 = walk(m3, regs_of(FSM_UW_MODE_IA32, 0x8048000, 0x1000, 0x1004));
	EXPECT_EQ(w3.e, (V{ 0x8048000, 0x8049111 }));
	EXPECT_EQ(w3.res.stop, (u32)FSM_UW_STOP_END);
	auto w4 = walk(m3, regs_of(FSM_UW_MODE_IA32, 0x8048000, 0x1000, 0x1006));
	EXPECT_EQ(w4.res.stop, (u32)FSM_UW_STOP_MISALIGNED);
}

TEST(UnwindUser, NoWrapAroundAddressSpace)
{
	/* ia32: cfa = 0xfffffffc + 8 leaves the 32-bit address space. */
	FakeMem m;
	m.put32(0xfffffffc, 0);
	auto w = walk(m, regs_of(FSM_UW_MODE_IA32, 0x8048000, 0xfffff000, 0xfffffffc));
	EXPECT_EQ(w.e, (V{ 0x8048000 }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_NOT_INCREASING);
	/* x86-64: cfa wraps past 2^64. */
	auto w2 = walk(m, regs_of(FSM_UW_MODE_X86_64, 0x400000, 0xfffffffffffff000ull,
				  0xfffffffffffffff8ull));
	EXPECT_EQ(w2.res.stop, (u32)FSM_UW_STOP_NOT_INCREASING);
	EXPECT_EQ(w2.reads, 0u);
}

TEST(UnwindUser, FirstFaultVsFault)
{
	/* Nothing mapped at fp: registers only. */
	FakeMem empty;
	auto w = walk(empty, regs_of(FSM_UW_MODE_X86_64, 0x400000, 0x1000, 0x1010));
	EXPECT_EQ(w.e, (V{ 0x400000 }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_FIRST_FAULT);

	/* First record half readable (ra yes, saved fp no): still first fault. */
	FakeMem half;
	half.put64(0x1018, 0x401111);
	auto wh = walk(half, regs_of(FSM_UW_MODE_X86_64, 0x400000, 0x1000, 0x1010));
	EXPECT_EQ(wh.e, (V{ 0x400000 }));
	EXPECT_EQ(wh.res.stop, (u32)FSM_UW_STOP_FIRST_FAULT);

	/* Two good records, then a hole. */
	FakeMem m;
	put_chain(m, FSM_UW_MODE_X86_64, { 0x1010, 0x1080 }, { 0x401111, 0x402222 }, 0x2000);
	auto w2 = walk(m, regs_of(FSM_UW_MODE_X86_64, 0x400000, 0x1000, 0x1010));
	EXPECT_EQ(w2.e, (V{ 0x400000, 0x401111, 0x402222 }));
	EXPECT_EQ(w2.res.stop, (u32)FSM_UW_STOP_FAULT);
	EXPECT_EQ(std::string(fsm_uw_stop_name(w2.res.stop)), "fault");
	EXPECT_EQ(std::string(fsm_uw_stop_name(FSM_UW_STOP_FIRST_FAULT)), "first_fault");
}

TEST(UnwindUser, DepthLimit)
{
	/* 300 frames, more than any limit. */
	FakeMem m;
	V fps, ras;
	for (u64 i = 0; i < 300; i++) {
		fps.push_back(0x100000 + i * 0x40);
		ras.push_back(0x401000 + i * 16);	/* apart: each has its call */
	}
	put_chain(m, FSM_UW_MODE_X86_64, fps, ras);
	auto r = regs_of(FSM_UW_MODE_X86_64, 0x400000, 0xffff0, 0x100000);

	auto w = walk(m, r, FSM_MAX_USER_DEPTH);
	ASSERT_EQ(w.e.size(), (size_t)FSM_MAX_USER_DEPTH);
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_DEPTH);
	EXPECT_EQ(w.e[0], 0x400000u);
	for (u32 i = 1; i < FSM_MAX_USER_DEPTH; i++)
		ASSERT_EQ(w.e[i], ras[i - 1]) << i;

	auto w1 = walk(m, r, 1);
	EXPECT_EQ(w1.e, (V{ 0x400000 }));
	EXPECT_EQ(w1.res.stop, (u32)FSM_UW_STOP_DEPTH);

	auto w0 = walk(m, r, 0);
	EXPECT_TRUE(w0.e.empty());
	EXPECT_EQ(w0.res.stop, (u32)FSM_UW_STOP_DEPTH);
}

TEST(UnwindUser, DepthIsExactWhenChainFitsExactly)
{
	/* ip + 126 return addresses = 127 entries: END, not DEPTH. */
	FakeMem m;
	V fps, ras;
	for (u64 i = 0; i < FSM_MAX_USER_DEPTH - 1; i++) {
		fps.push_back(0x100000 + i * 0x20);
		ras.push_back(0x401000 + i * 16);
	}
	put_chain(m, FSM_UW_MODE_X86_64, fps, ras);
	auto w = walk(m, regs_of(FSM_UW_MODE_X86_64, 0x400000, 0xffff0, 0x100000));
	EXPECT_EQ(w.e.size(), (size_t)FSM_MAX_USER_DEPTH);
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_END);
}

/* ---- first instruction of a function ------------------------------------ */

TEST(UnwindUser, AtEntryX86_64)
{
	/*
	 * The callee's first instruction: [sp] = return into the caller,
	 * rbp = caller's frame, whose record returns into the grand-caller.
	 */
	FakeMem m;
	m.put64(0x1000, 0x401111);				/* [sp] */
	put_x86_call(m, 0x401111);
	put_chain(m, FSM_UW_MODE_X86_64, { 0x1040 }, { 0x402222 });	/* caller's frame */
	auto w = walk(m, regs_of(FSM_UW_MODE_X86_64, 0x403000, 0x1000, 0x1040, 0,
				 FSM_UW_REGS_AT_ENTRY));
	EXPECT_EQ(w.e, (V{ 0x403000, 0x401111, 0x402222 }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_END);
	EXPECT_EQ(w.res.flags & FSM_UW_RES_AT_ENTRY, FSM_UW_RES_AT_ENTRY);

	/* Without the flag the caller (0x401111) is skipped. */
	auto w2 = walk(m, regs_of(FSM_UW_MODE_X86_64, 0x403000, 0x1000, 0x1040));
	EXPECT_EQ(w2.e, (V{ 0x403000, 0x402222 }));

	/* [sp] unreadable: first fault. */
	FakeMem m3;
	auto w3 = walk(m3, regs_of(FSM_UW_MODE_X86_64, 0x403000, 0x1000, 0x1040, 0,
				   FSM_UW_REGS_AT_ENTRY));
	EXPECT_EQ(w3.e, (V{ 0x403000 }));
	EXPECT_EQ(w3.res.stop, (u32)FSM_UW_STOP_FIRST_FAULT);

	/* Caller without frame pointer (rbp == 0): ip and [sp], then ZERO_FP. */
	auto w4 = walk(m, regs_of(FSM_UW_MODE_X86_64, 0x403000, 0x1000, 0, 0,
				  FSM_UW_REGS_AT_ENTRY));
	EXPECT_EQ(w4.e, (V{ 0x403000, 0x401111 }));
	EXPECT_EQ(w4.res.stop, (u32)FSM_UW_STOP_ZERO_FP);
}

TEST(UnwindUser, AtEntryIa32)
{
	FakeMem m;
	m.put32(0x1000, 0x08049111);
	put_x86_call(m, 0x08049111);
	put_chain(m, FSM_UW_MODE_IA32, { 0x1020 }, { 0x08049222 });
	auto w = walk(m, regs_of(FSM_UW_MODE_IA32, 0x0804a000, 0x1000, 0x1020, 0,
				 FSM_UW_REGS_AT_ENTRY));
	EXPECT_EQ(w.e, (V{ 0x0804a000, 0x08049111, 0x08049222 }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_END);
}

TEST(UnwindUser, AtEntryArm)
{
	/* arm64: ra in lr (PAC stripped), x29 still the caller's. */
	FakeMem m;
	put_chain(m, FSM_UW_MODE_ARM64, { 0x2000 }, { 0x402222 });
	auto r = regs_of(FSM_UW_MODE_ARM64, 0x403000, 0x1ff0, 0x2000, 0x0011000000401111ull,
			 FSM_UW_REGS_AT_ENTRY);
	r.pac_mask = 0x00ff000000000000ull;
	auto w = walk(m, r);
	EXPECT_EQ(w.e, (V{ 0x403000, 0x401111, 0x402222 }));
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_END);

	/* lr read, then the caller's record faults: first fault, 2 entries. */
	FakeMem empty;
	auto w2 = walk(empty, r);
	EXPECT_EQ(w2.e, (V{ 0x403000, 0x401111 }));
	EXPECT_EQ(w2.res.stop, (u32)FSM_UW_STOP_FIRST_FAULT);

	/* AArch32 at entry from a Thumb caller: lr bit 0 set. */
	FakeMem m3;
	put_chain(m3, FSM_UW_MODE_A32_FRAME_RECORD, { 0x2000 }, { 0x10800 });
	auto w3 = walk(m3, regs_of(FSM_UW_MODE_A32_FRAME_RECORD, 0x10a00, 0x1ff0, 0x2000,
				   0x10b01, FSM_UW_REGS_AT_ENTRY));
	EXPECT_EQ(w3.e, (V{ 0x10a00, 0x10b00, 0x10800 }));
	EXPECT_EQ(w3.res.flags & FSM_UW_RES_THUMB, FSM_UW_RES_THUMB);

	FakeMem m4;
	put_chain(m4, FSM_UW_MODE_A32_GCC, { 0x2004 }, { 0x10800 });
	auto w4 = walk(m4, regs_of(FSM_UW_MODE_A32_GCC, 0x10a00, 0x1ff0, 0x2004, 0x10b00,
				   FSM_UW_REGS_AT_ENTRY));
	EXPECT_EQ(w4.e, (V{ 0x10a00, 0x10b00, 0x10800 }));
}

/* ---- arguments, names, robustness --------------------------------------- */

TEST(UnwindUser, InvalidArguments)
{
	FakeMem m;
	u64 e[4];
	fsm_uw_result res;
	auto r = regs_of(FSM_UW_MODE_NONE, 1, 2, 3);
	EXPECT_EQ(fsm::unwind::walk(r, m.reader(), m.code_reader(), e, 4, res), 0u);
	EXPECT_EQ(res.stop, (u32)FSM_UW_STOP_INVALID);
	r.mode = FSM_UW_NR_MODES;
	EXPECT_EQ(fsm::unwind::walk(r, m.reader(), m.code_reader(), e, 4, res), 0u);
	EXPECT_EQ(res.stop, (u32)FSM_UW_STOP_INVALID);
	r.mode = FSM_UW_MODE_X86_64;
	EXPECT_EQ(fsm::unwind::walk(r, m.reader(), m.code_reader(), nullptr, 4, res), 0u);
	EXPECT_EQ(res.stop, (u32)FSM_UW_STOP_INVALID);
	EXPECT_EQ(fsm_uw_walk(&r, nullptr, nullptr, nullptr, e, 4, &res), 0u);
	EXPECT_EQ(res.stop, (u32)FSM_UW_STOP_INVALID);
	EXPECT_EQ(fsm_uw_walk(nullptr, FakeMem::c_read, FakeMem::c_read_code, &m, e, 4, &res), 0u);
	EXPECT_EQ(res.stop, (u32)FSM_UW_STOP_INVALID);
}

TEST(UnwindUser, Names)
{
	EXPECT_STREQ(fsm_uw_stop_name(FSM_UW_STOP_END), "end");
	EXPECT_STREQ(fsm_uw_stop_name(FSM_UW_STOP_DEPTH), "depth");
	EXPECT_STREQ(fsm_uw_stop_name(FSM_UW_STOP_INVALID), "invalid");
	EXPECT_STREQ(fsm_uw_stop_name(FSM_UW_NR_STOPS), "unknown");
	EXPECT_STREQ(fsm_uw_mode_name(FSM_UW_MODE_X86_64), "x86_64");
	EXPECT_STREQ(fsm_uw_mode_name(FSM_UW_MODE_A32_FRAME_RECORD), "a32_frame_record");
	EXPECT_STREQ(fsm_uw_mode_name(FSM_UW_NR_MODES), "unknown");
}

TEST(UnwindUser, RandomMemoryNeverMisbehaves)
{
	/*
	 * Random stacks (some valid chains, some garbage): the walk must
	 * respect its bounds and invariants whatever the memory holds.
	 */
	std::mt19937_64 rng(12345);
	for (int iter = 0; iter < 3000; iter++) {
		const u32 mode = 1 + rng() % (FSM_UW_NR_MODES - 1);
		const u64 base = 0x10000 + (rng() % 64) * 4;
		FakeMem m;
		for (int i = 0; i < 64; i++) {
			u64 a = base + (rng() % 512) * 4, v;
			switch (rng() % 4) {
			case 0: v = base + (rng() % 512) * 4; break;	/* stack-ish pointer */
			case 1: v = 0; break;
			case 2: v = rng(); break;
			default: v = a + 16 + (rng() % 8) * 4; break;	/* plausible next fp */
			}
			m.put(a, v, (mode == FSM_UW_MODE_X86_64 || mode == FSM_UW_MODE_ARM64) ? 8 : 4);
		}
		auto r = regs_of(mode, rng(), base + (rng() % 16) * 4, base + (rng() % 64) * 4,
				 rng(), (rng() & 1) ? FSM_UW_REGS_AT_ENTRY : 0);
		const u32 max = 1 + rng() % 40;
		auto w = walk(m, r, max);
		const u64 amask = (mode == FSM_UW_MODE_X86_64 || mode == FSM_UW_MODE_ARM64)
					  ? ~0ull : 0xffffffffull;
		ASSERT_GE(w.e.size(), 1u);
		EXPECT_EQ(w.e[0], r.ip & amask);
		for (size_t i = 1; i < w.e.size(); i++) {
			EXPECT_NE(w.e[i], 0u);
			EXPECT_EQ(w.e[i] & ~amask, 0u);
		}
		if (HasFailure())
			FAIL() << "iteration " << iter << " mode " << fsm_uw_mode_name(mode);
	}
}
