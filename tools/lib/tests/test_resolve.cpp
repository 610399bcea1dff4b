// SPDX-License-Identifier: GPL-2.0
/*
 * test_resolve.cpp - the resolution rules of record format 2 and of user
 * stacks, on records made here (Documentation/tracing.rst, ustack.rst).
 */
#include <gtest/gtest.h>

#include "abi.h"
#include "resolve.h"

using namespace smr;

namespace {

constexpr uint32_t sid(uint32_t gen, uint32_t index)
{
	return FSM_SID_MAKE(gen, index);
}

} /* namespace */

/* A definition written after the first use (another CPU) still resolves. */
TEST(Resolve, DefinitionAfterUse)
{
	Resolver r;
	r.add_def(0, 200, sid(1, 5), 0, {0x10, 0x20});
	r.finish();
	auto k = r.kernel(0, 100, sid(1, 5));	/* the use, at ts 100 */
	ASSERT_EQ(k.status, Status::OK);
	EXPECT_EQ(*k.ips, (std::vector<uint64_t>{0x10, 0x20}));
}

/* No definition anywhere: unresolved, never another stack. */
TEST(Resolve, UnresolvedNotGuessed)
{
	Resolver r;
	r.add_def(0, 10, sid(1, 5), 0, {0x10});
	r.add_def(1, 10, sid(1, 6), 0, {0x30});	/* another buffer */
	r.finish();
	EXPECT_EQ(r.kernel(0, 20, sid(1, 6)).status, Status::UNRESOLVED);
	EXPECT_EQ(r.kernel(0, 20, sid(2, 5)).status, Status::UNRESOLVED);
	EXPECT_EQ(r.kernel(1, 20, sid(1, 5)).status, Status::UNRESOLVED);
	EXPECT_EQ(r.kernel(1, 20, sid(1, 6)).status, Status::OK);
}

TEST(Resolve, TruncatedFlag)
{
	Resolver r;
	r.add_def(0, 10, sid(1, 1), FSM_SID_F_TRUNCATED | FSM_SID_F_NEW, {0x10});
	r.finish();
	EXPECT_TRUE(r.kernel(0, 20, sid(1, 1)).truncated);
}

/*
 * Generations 1 and 4097 share their low 12 bits: the stack_reset records
 * (full generations) tell the two definitions of index 3 apart, and a
 * record of generation G - 1 still in flight after reset G keeps its own.
 */
TEST(Resolve, GenerationsAcrossResets)
{
	Resolver r;
	r.add_reset(0, 100, 4096);
	r.add_def(0, 50, sid(1, 3), 0, {0xa});		/* gen 1 (bits 1) */
	r.add_reset(0, 200, 4097);
	r.add_def(0, 300, sid(4097, 3), 0, {0xb});	/* gen 4097 (bits 1) */
	r.add_def(0, 150, sid(4096, 2), 0, {0xc});
	r.finish();
	auto old = r.kernel(0, 60, sid(1, 3));
	ASSERT_EQ(old.status, Status::OK);
	EXPECT_EQ(old.generation, 1u);
	EXPECT_EQ((*old.ips)[0], 0xau);
	auto cur = r.kernel(0, 310, sid(4097, 3));
	ASSERT_EQ(cur.status, Status::OK);
	EXPECT_EQ(cur.generation, 4097u);
	EXPECT_EQ((*cur.ips)[0], 0xbu);
	/* G - 1 (4096) after the reset to 4097: in flight, still its stack */
	auto late = r.kernel(0, 210, sid(4096, 2));
	ASSERT_EQ(late.status, Status::OK);
	EXPECT_EQ(late.generation, 4096u);
	EXPECT_EQ((*late.ips)[0], 0xcu);
	/* index 2 of generation 4097 was never defined */
	EXPECT_EQ(r.kernel(0, 310, sid(4097, 2)).status, Status::UNRESOLVED);
	EXPECT_TRUE(r.buffer_has_generation(0, 4097));
	EXPECT_FALSE(r.buffer_has_generation(0, 5));
}

/* stack_id_user -> user_stack by cookie, in the same buffer only. */
TEST(Resolve, UserByCookie)
{
	Resolver r;
	UserStackRec a;
	a.cookie = 0x2000;
	a.ustack_id = 4;
	a.gen = 1;
	a.flags = FSM_USF_INLINE | FSM_USF_NEW;
	a.frames = {{0xf, 0x1139}, {0xf, 0x1197}};
	r.add_user_stack(0, 10, a);
	UserStackRec b;		/* id only: frames from the inline record */
	b.cookie = 0x4000;
	b.ustack_id = 4;
	b.gen = 1;
	r.add_user_stack(0, 20, b);
	UserStackRec c = b;	/* id only, unknown in buffer 1 */
	c.cookie = 0x6000;
	r.add_user_stack(1, 20, c);
	UserStackRec e;		/* empty stack: no id */
	e.cookie = 0x8000;
	e.ustack_id = FSM_USTACK_ID_NONE;
	e.reason = FSM_URS_EXITING;
	r.add_user_stack(0, 30, e);
	UserStackRec m;		/* reset marker: ignored */
	m.flags = FSM_USF_RESET;
	m.ustack_id = FSM_USTACK_ID_NONE;
	r.add_user_stack(0, 40, m);
	r.finish();

	auto ua = r.user(0, 0x2000);
	ASSERT_EQ(ua.status, Status::OK);
	EXPECT_EQ(ua.frames->size(), 2u);
	auto ub = r.user(0, 0x4000);
	ASSERT_EQ(ub.status, Status::OK);
	EXPECT_EQ(*ub.frames, a.frames);
	EXPECT_EQ(r.user(1, 0x6000).status, Status::UNRESOLVED);
	EXPECT_EQ(r.user(1, 0x2000).status, Status::MISSING);	/* other buffer */
	EXPECT_EQ(r.user(0, 0x8000).status, Status::NONE);
	EXPECT_EQ(r.user(0, 0x9999).status, Status::MISSING);
}

/*
 * The module writes definitions again when its buffer may drop the last
 * one (redefine_pct): a REDEF stack_def after the use, and a
 * definition-only user_stack (cookie 0, INLINE | REDEF) that names no
 * event. Both resolve uses before and after them, in any buffer order.
 */
TEST(Resolve, Redefinitions)
{
	Resolver r;
	r.add_def(0, 500, sid(1, 7), FSM_SID_F_REDEF, {0x70, 0x71});
	UserStackRec use;	/* its inline definition was overwritten */
	use.cookie = 0x3000;
	use.ustack_id = 9;
	use.gen = 1;
	r.add_user_stack(0, 100, use);
	UserStackRec redef;
	redef.cookie = 0;
	redef.ustack_id = 9;
	redef.gen = 1;
	redef.flags = FSM_USF_INLINE | FSM_USF_REDEF | FSM_USF_IA32;
	redef.frames = {{0xf1, 0x10}, {0xf2, 0x20}};
	r.add_user_stack(0, 400, redef);
	r.finish();
	auto k = r.kernel(0, 100, sid(1, 7));
	ASSERT_EQ(k.status, Status::OK);
	EXPECT_EQ(*k.ips, (std::vector<uint64_t>{0x70, 0x71}));
	EXPECT_FALSE(k.truncated);
	auto u = r.user(0, 0x3000);
	ASSERT_EQ(u.status, Status::OK);
	EXPECT_EQ(*u.frames, redef.frames);
	EXPECT_TRUE(u.ia32);
	EXPECT_EQ(r.user(0, 0).status, Status::MISSING);	/* it names no event */
}

/* Files a user stack names that no file_map record describes. */
TEST(Resolve, MissingFiles)
{
	Resolver r;
	r.add_file_map(0, 1, 0xa, "/bin/a", "");
	r.finish();
	std::vector<UFrame> fr = {
		{0xa, 0x10}, {0xb, 0x20}, {0xb, 0x30},	/* b twice: one file */
		{0, 0x40 | FSM_UFR_VDSO}, {0, 0x7f00 | FSM_UFR_ANON},
		{0xc, 0x50}};
	EXPECT_EQ(r.missing_files(fr), 2u);
	r.add_file_map(0, 2, 0xb, "/bin/b", "");	/* pass 1 and 2 may mix in tests */
	EXPECT_EQ(r.missing_files(fr), 1u);
	EXPECT_EQ(r.missing_files({}), 0u);
}

TEST(Resolve, FileMapLatestKeepsBuildId)
{
	Resolver r;
	r.add_file_map(0, 1, 0xabc, "/bin/x", "");
	r.add_file_map(0, 2, 0xabc, "/bin/x", "aabb");
	r.add_file_map(1, 3, 0xabc, "/bin/x (deleted)", "");
	r.finish();
	const FileInfo *f = r.file(0xabc);
	ASSERT_NE(f, nullptr);
	EXPECT_EQ(f->path, "/bin/x (deleted)");
	EXPECT_EQ(f->build_id, "aabb");
	EXPECT_EQ(r.file(0xdef), nullptr);
}

/* A snapshot fills what the trace lacks; a contradicting one is refused. */
TEST(Resolve, Snapshot)
{
	Resolver r;
	r.add_def(0, 10, sid(1, 0), 0, {0x10});
	r.finish();
	Fsmb s;
	s.generation = 1;
	s.flags = FSMB_F_KERNEL;
	s.kstacks.push_back({0, 1, {0x10}});
	s.kstacks.push_back({1, 1, {0x20, 0x30}});
	EXPECT_EQ(r.kernel(0, 20, sid(1, 1)).status, Status::UNRESOLVED);
	EXPECT_EQ(r.add_snapshot(0, s), "");
	auto k = r.kernel(0, 20, sid(1, 1));
	ASSERT_EQ(k.status, Status::OK);
	EXPECT_EQ(*k.ips, (std::vector<uint64_t>{0x20, 0x30}));

	Resolver r2;
	r2.add_def(0, 10, sid(1, 0), 0, {0x11});	/* another stack at index 0 */
	r2.finish();
	std::string why = r2.add_snapshot(0, s);
	EXPECT_NE(why.find("another boot"), std::string::npos) << why;
	/* nothing was added */
	EXPECT_EQ(r2.kernel(0, 20, sid(1, 1)).status, Status::UNRESOLVED);
}

/*
 * A recording of stackmap:stack_id alone: no stack_def, no stack_reset, so
 * the ids' 12 generation bits are all the trace tells. A snapshot whose
 * generation has those bits is accepted, also one 4096 resets later
 * (generation 4101 has the bits of 5), and its stacks resolve the ids.
 */
TEST(Resolve, SnapshotIdsOnly)
{
	for (uint32_t gen : {5u, 4101u}) {
		Resolver r;
		r.add_id(0, sid(gen, 3));
		r.add_id(0, sid(gen, 7));
		r.finish();
		EXPECT_EQ(r.kernel(0, 20, sid(gen, 3)).status, Status::UNRESOLVED);
		Fsmb s;
		s.generation = gen;
		s.flags = FSMB_F_KERNEL;
		s.kstacks.push_back({3, 1, {0x30}});
		s.kstacks.push_back({7, 1, {0x70, 0x71}});
		ASSERT_EQ(r.snapshot_generation(0, gen, "top"), "") << gen;
		ASSERT_EQ(r.add_snapshot(0, s), "");
		auto k = r.kernel(0, 20, sid(gen, 7));
		ASSERT_EQ(k.status, Status::OK) << gen;
		EXPECT_EQ(k.generation, gen);
		EXPECT_EQ(*k.ips, (std::vector<uint64_t>{0x70, 0x71}));
		EXPECT_EQ(r.kernel(0, 20, sid(gen, 3)).status, Status::OK);
		/* an index the snapshot lacks stays unresolved */
		EXPECT_EQ(r.kernel(0, 20, sid(gen, 4)).status, Status::UNRESOLVED);
		/* a second snapshot of the same buffer, same bits, other generation */
		std::string why = r.snapshot_generation(0, gen ^ 4096, "top");
		EXPECT_NE(why.find("already added"), std::string::npos) << why;
		EXPECT_EQ(r.snapshot_generation(0, gen, "top"), "");
	}
}

/* Ids of other generation bits than the snapshot's: refused, nothing added. */
TEST(Resolve, SnapshotIdsOnlyOtherGeneration)
{
	Resolver r;
	r.add_id(0, sid(5, 3));
	r.add_id(0, sid(6, 3));		/* a reset while recording */
	r.add_id(1, sid(6, 3));		/* another buffer: not counted for 0 */
	r.finish();
	std::string why = r.snapshot_generation(0, 5, "the top level");
	EXPECT_NE(why.find("1 of the ids of the top level carry generation bits 6, not 5"),
		  std::string::npos) << why;
	why = r.snapshot_generation(0, 6, "the top level");
	EXPECT_NE(why.find("generation bits 5, not 6"), std::string::npos) << why;
	/* nothing was taken: the ids keep their bits only */
	EXPECT_EQ(r.kernel(0, 20, sid(5, 3)).generation, 5u);
	EXPECT_EQ(r.snapshot_generation(1, 6, "b"), "");
	EXPECT_EQ(r.snapshot_generation(1, 4102, "b").empty(), false);
}

/*
 * With stack_def or stack_reset records the trace tells full generations:
 * a snapshot must be of one of them, whatever its bits.
 */
TEST(Resolve, SnapshotGenerationFromTrace)
{
	Resolver r;
	r.add_id(0, sid(1, 0));
	r.add_def(0, 10, sid(1, 0), 0, {0x10});
	r.finish();
	EXPECT_EQ(r.snapshot_generation(0, 1, "top"), "");
	std::string why = r.snapshot_generation(0, 4097, "top");
	EXPECT_NE(why.find("its generation 4097 is not one that top recorded"),
		  std::string::npos) << why;
	Resolver r2;
	r2.add_reset(0, 5, 2);
	r2.finish();
	EXPECT_EQ(r2.snapshot_generation(0, 2, "top"), "");
	EXPECT_NE(r2.snapshot_generation(0, 3, "top"), "");
}

/* The header words of a user stack, as the kernel's stack_map prints them. */
TEST(Resolve, UstackFlagText)
{
	EXPECT_EQ(ustack_flag_text(0, 0), "");
	EXPECT_EQ(ustack_flag_text(FSM_USF_IA32, 3), ", ia32");
	EXPECT_EQ(ustack_flag_text(FSM_USF_IA32 | FSM_USF_UNRELIABLE, 40),
		  ", aarch32, unreliable");
	EXPECT_EQ(ustack_flag_text(FSM_USF_TRUNCATED | FSM_USF_UNRELIABLE, 183),
		  ", truncated, unreliable");
	EXPECT_EQ(ustack_flag_text(FSM_USF_IA32, 0), ", compat");
	EXPECT_STREQ(compat_name(40), "aarch32");
}

TEST(Resolve, UserUnreliableFlag)
{
	Resolver r;
	UserStackRec u{};
	u.cookie = 7;
	u.ustack_id = 3;
	u.flags = FSM_USF_IA32 | FSM_USF_INLINE | FSM_USF_UNRELIABLE;
	u.frames = { { 0, 0x1000 } };
	r.add_user_stack(0, 1, u);
	r.finish();
	UserResult x = r.user(0, 7);
	EXPECT_TRUE(x.unreliable);
	EXPECT_TRUE(x.ia32);
}
