// SPDX-License-Identifier: GPL-2.0
/*
 * A real walk: this process walks its own stack through a chain of six
 * noinline functions compiled with frame pointers (this file is built with
 * -fno-omit-frame-pointer -fno-optimize-sibling-calls), reading its own
 * memory through the same kind of callback the kernel provides (bounded to
 * the thread's stack, so a bad pointer is a "fault", never a crash).
 *
 * Expected frames come from two independent sources: each function records
 * __builtin_return_address(0) (the exact value the walk must find), and
 * dladdr() on every walked address must name the function it lies in (the
 * test binary is linked with -rdynamic).
 */
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <pthread.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "unwind_user.h"

namespace {

using u64 = unsigned long long;
using u32 = unsigned int;

struct Capture {
	fsm_uw_regs regs;
	u64 ret[7];		/* ret[k] = return address seen by uw_real_f<k> */
	u64 entries[FSM_MAX_USER_DEPTH];
	fsm_uw_result res;
	u32 max;
	bool use_c_api;		/* walk through fsm_uw_walk() instead of the template */
};

u64 g_stack_lo, g_stack_hi;

/*
 * The user-memory reader: the thread's stack only; anything else faults.
 * Not instrumented: it reads other frames' slots on purpose.
 */
__attribute__((no_sanitize("address", "thread", "undefined"), noinline))
bool read_self(u64 addr, u32 size, u64 &out)
{
	if (addr < g_stack_lo || addr > g_stack_hi || g_stack_hi - addr < size)
		return false;
	if (size == 8)
		out = *(const volatile u64 *)(uintptr_t)addr;
	else if (size == 4)
		out = *(const volatile u32 *)(uintptr_t)addr;
	else
		return false;
	return true;
}

/*
 * The code reader: executable mappings of this process only (what the
 * kernel's reader allows: VM_EXEC), from /proc/self/maps. x86-64 checks
 * that each return address is code after a call (x86_vouch()); arm64 reads
 * no code.
 */
std::vector<std::pair<u64, u64>> g_code;

bool init_code_ranges()
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo, hi;
	char perm[8], line[512];

	if (!f)
		return false;
	g_code.clear();
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) == 3 && perm[2] == 'x')
			g_code.emplace_back(lo, hi);
	fclose(f);
	return !g_code.empty();
}

u64 g_code_reads;

bool read_code_self(u64 addr, u32 size, u64 &out)
{
	g_code_reads++;
#if !defined(__x86_64__)
	ADD_FAILURE() << "code read outside x86 and AArch32";
#endif
	for (const auto &r : g_code) {
		if (addr >= r.first && addr < r.second && r.second - addr >= size &&
		    (size == 4 || size == 8)) {
			u64 v = 0;

			memcpy(&v, (const void *)(uintptr_t)addr, size);
			out = v;
			return true;
		}
	}
	return false;
}

bool read_self_c(void *, unsigned long long addr, unsigned int size,
		 unsigned long long *val)
{
	u64 v;

	if (!read_self(addr, size, v))
		return false;
	*val = v;
	return true;
}

bool read_code_self_c(void *, unsigned long long addr, unsigned int size,
		      unsigned long long *val)
{
	u64 v;

	if (!read_code_self(addr, size, v))
		return false;
	*val = v;
	return true;
}

bool init_stack_bounds()
{
	pthread_attr_t a;
	void *lo;
	size_t sz;

	if (pthread_getattr_np(pthread_self(), &a))
		return false;
	int ret = pthread_attr_getstack(&a, &lo, &sz);
	pthread_attr_destroy(&a);
	if (ret)
		return false;
	g_stack_lo = (u64)(uintptr_t)lo;
	g_stack_hi = g_stack_lo + sz;
	return true;
}

std::string sym_of(u64 addr)
{
	Dl_info info{};
	if (!dladdr((void *)(uintptr_t)addr, &info) || !info.dli_sname)
		return "?";
	return info.dli_sname;
}

} /* namespace */

/* Each function calls the next and does work after the call (no tail call). */
extern "C" {
__attribute__((noinline)) u32 uw_real_f6(Capture *c);
__attribute__((noinline)) u32 uw_real_f5(Capture *c);
__attribute__((noinline)) u32 uw_real_f4(Capture *c);
__attribute__((noinline)) u32 uw_real_f3(Capture *c);
__attribute__((noinline)) u32 uw_real_f2(Capture *c);
__attribute__((noinline)) u32 uw_real_f1(Capture *c);
}

/* Innermost: snapshot the registers and walk while every frame is live. */
extern "C" __attribute__((noinline)) u32 uw_real_f6(Capture *c)
{
	u64 ip, sp;

#if defined(__x86_64__)
	asm volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1" : "=r"(ip), "=r"(sp));
	c->regs.mode = FSM_UW_MODE_X86_64;
#elif defined(__aarch64__)
	asm volatile("adr %0, .\n\tmov %1, sp" : "=r"(ip), "=r"(sp));
	c->regs.mode = FSM_UW_MODE_ARM64;
#else
	ip = sp = 0;
	c->regs.mode = FSM_UW_MODE_NONE;
#endif
	c->ret[6] = (u64)(uintptr_t)__builtin_return_address(0);
	c->regs.ip = ip;
	c->regs.sp = sp;
	c->regs.fp = (u64)(uintptr_t)__builtin_frame_address(0);
	c->regs.lr = 0;
	c->regs.pac_mask = 0;
	c->regs.flags = 0;
	if (c->use_c_api)
		return fsm_uw_walk(&c->regs, read_self_c, read_code_self_c, nullptr, c->entries,
				   c->max, &c->res) + 1;
	return fsm::unwind::walk(c->regs, read_self, read_code_self, c->entries, c->max,
				 c->res) + 1;
}

#define UW_REAL_LINK(k, next)							\
	extern "C" __attribute__((noinline)) u32 uw_real_f##k(Capture *c)	\
	{									\
		c->ret[k] = (u64)(uintptr_t)__builtin_return_address(0);	\
		u32 r = next(c);						\
		asm volatile("" : "+r"(r) : : "memory");			\
		return r + 1;							\
	}
UW_REAL_LINK(5, uw_real_f6)
UW_REAL_LINK(4, uw_real_f5)
UW_REAL_LINK(3, uw_real_f4)
UW_REAL_LINK(2, uw_real_f3)
UW_REAL_LINK(1, uw_real_f2)

TEST(UnwindReal, WalksOwnStack)
{
#if !defined(__x86_64__) && !defined(__aarch64__)
	GTEST_SKIP() << "no native mode for this architecture";
#endif
	ASSERT_TRUE(init_stack_bounds());
	ASSERT_TRUE(init_code_ranges());
	Capture c{};
	c.max = FSM_MAX_USER_DEPTH;
	g_code_reads = 0;
	u32 r = uw_real_f1(&c);
	EXPECT_EQ(r, c.res.nr + 6);
#if defined(__x86_64__)
	/* Every return address reported was vouched for by the call GCC emitted. */
	EXPECT_GE(g_code_reads, (u64)c.res.nr - 1);
	EXPECT_EQ(c.res.flags & FSM_UW_RES_UNRELIABLE, 0u);
#endif

	/* ip (in f6), f5, f4, f3, f2, f1, then this test body. */
	ASSERT_GE(c.res.nr, 7u) << "stop " << fsm_uw_stop_name(c.res.stop);
	EXPECT_EQ(c.entries[0], c.regs.ip);
	for (u32 i = 1; i <= 6; i++)
		EXPECT_EQ(c.entries[i], c.ret[7 - i]) << "frame " << i;

	const char *names[] = { "uw_real_f6", "uw_real_f5", "uw_real_f4",
				"uw_real_f3", "uw_real_f2", "uw_real_f1" };
	for (u32 i = 0; i < 6; i++) {
		EXPECT_EQ(sym_of(c.entries[i]), names[i]) << "frame " << i;
		/* A return address lies after its function's start. */
		EXPECT_GT(c.entries[i], (u64)(uintptr_t)dlsym(RTLD_DEFAULT, names[i]));
	}
	/* Frame 6 returns into this test's body (a gtest-generated function). */
	EXPECT_NE(sym_of(c.entries[6]).find("UnwindReal_WalksOwnStack"), std::string::npos)
		<< sym_of(c.entries[6]);
	/* Wherever the chain ends (libc, gtest without frame pointers), it ends cleanly. */
	EXPECT_NE(c.res.stop, (u32)FSM_UW_STOP_FIRST_FAULT);
	EXPECT_NE(c.res.stop, (u32)FSM_UW_STOP_INVALID);
	for (u32 i = 1; i < c.res.nr; i++)
		EXPECT_NE(c.entries[i], 0u);
}

TEST(UnwindReal, DepthCutOnOwnStack)
{
#if !defined(__x86_64__) && !defined(__aarch64__)
	GTEST_SKIP() << "no native mode for this architecture";
#endif
	ASSERT_TRUE(init_stack_bounds());
	ASSERT_TRUE(init_code_ranges());
	Capture c{};
	c.max = 4;
	uw_real_f1(&c);
	ASSERT_EQ(c.res.nr, 4u);
	EXPECT_EQ(c.res.stop, (u32)FSM_UW_STOP_DEPTH);
	EXPECT_EQ(c.entries[1], c.ret[6]);
	EXPECT_EQ(c.entries[2], c.ret[5]);
	EXPECT_EQ(c.entries[3], c.ret[4]);
}

TEST(UnwindReal, CEntryPointOnOwnStack)
{
#if !defined(__x86_64__) && !defined(__aarch64__)
	GTEST_SKIP() << "no native mode for this architecture";
#endif
	/* The same chain walked through fsm_uw_walk() and a C read callback. */
	ASSERT_TRUE(init_stack_bounds());
	ASSERT_TRUE(init_code_ranges());
	Capture c{};
	c.max = FSM_MAX_USER_DEPTH;
	c.use_c_api = true;
	uw_real_f1(&c);
	ASSERT_GE(c.res.nr, 7u) << "stop " << fsm_uw_stop_name(c.res.stop);
	EXPECT_EQ(c.entries[0], c.regs.ip);
	for (u32 i = 1; i <= 6; i++)
		EXPECT_EQ(c.entries[i], c.ret[7 - i]) << "frame " << i;
	EXPECT_NE(sym_of(c.entries[6]).find("UnwindReal_CEntryPointOnOwnStack"),
		  std::string::npos) << sym_of(c.entries[6]);
}
