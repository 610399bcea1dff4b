// SPDX-License-Identifier: GPL-2.0
/*
 * selfcheck.cpp - fsm_core_selfcheck(): a small deterministic test of the
 * map, run by the kernel module at load time (and by the user-space tests).
 *
 * It goes through the real C++ paths (StackMap::create/insert/reset,
 * templates, member functions that are kept out of line on purpose), so the
 * kernel can also check that stack traces unwind through C++ frames.
 * It allocates one small map (bits = FSM_BITS_MIN), so it needs task
 * context; it sleeps only in fsm_plat_alloc() and fsm_map_reset().
 */
#include "stackmap.h"

namespace fsm {
namespace {

/* A stack of at most N frames built from a seed: distinct seeds or depths
 * give distinct stacks; frames look like kernel text addresses. */
template <u32 N>
struct TestStack {
	u64 ips[N];
	u32 nr;

	TestStack(u32 seed, u32 depth) : ips{}, nr(depth)
	{
		for (u32 i = 0; i < depth; i++)
			ips[i] = 0xffffffff81000000ull + (u64)seed * 0x10000 + i * 0x40 + 5;
	}
};

class SelfCheck {
public:
	[[nodiscard]] int run();

private:
	/* Record the first failing check; keep going is pointless after it. */
	template <typename A, typename B>
	bool expect_eq(A actual, B expected)
	{
		if (actual == (A)expected)
			return true;
		failed_ = true;
		return false;
	}

	template <u32 N>
	int insert(const TestStack<N> &s, u32 epoch, fsm_insert_result &res)
	{
		calls_++;
		return map_->insert(s.ips, s.nr, epoch, &res);
	}

	template <u32 N>
	bool record_matches(u32 id, const TestStack<N> &s)
	{
		const u64 *ips = nullptr;
		u32 nr = 0;
		u64 hits = 0;

		if (!expect_eq(map_->lookup_id(id, &ips, &nr, &hits), 0) ||
		    !expect_eq(nr, s.nr))
			return false;
		for (u32 i = 0; i < nr; i++)
			if (!expect_eq(ips[i], s.ips[i]))
				return false;
		return true;
	}

	FSM_NOINLINE void check_dedup();
	FSM_NOINLINE void check_first_emit();
	FSM_NOINLINE void check_def_claim();
	FSM_NOINLINE void check_invalid();
	FSM_NOINLINE void check_limits();
	FSM_NOINLINE void check_reset();
	FSM_NOINLINE void check_stats();

	StackMap *map_ = nullptr;
	u64 calls_ = 0;
	bool failed_ = false;
};

void SelfCheck::check_dedup()
{
	const TestStack<16> a(1, 8), b(2, 16), b_prefix(2, 15);
	fsm_insert_result r{};

	/* New stacks get dense ids in order, generation 1. */
	expect_eq(insert(a, 0, r), 0);
	expect_eq(r.id, 0u);
	expect_eq(r.generation, 1u);
	expect_eq(r.flags, (u32)FSM_INSERT_NEW);
	expect_eq(insert(b, 0, r), 0);
	expect_eq(r.id, 1u);
	expect_eq(insert(b_prefix, 0, r), 0);
	expect_eq(r.id, 2u);
	/* The same stack again: same id, nothing created. */
	expect_eq(insert(b, 0, r), 0);
	expect_eq(r.id, 1u);
	expect_eq(r.flags, 0u);
	expect_eq(map_->nr_ids(), 3u);
	record_matches(0, a);
	record_matches(1, b);
	record_matches(2, b_prefix);

	u64 hits = 0;
	expect_eq(map_->lookup_id(1, nullptr, nullptr, &hits), 0);
	expect_eq(hits, 2ull);
	expect_eq(map_->lookup_id(3, nullptr, nullptr, nullptr), -2);
}

void SelfCheck::check_first_emit()
{
	const TestStack<16> a(1, 8), c(3, 5);
	fsm_insert_result r{};

	expect_eq(insert(a, 7, r), 0);
	expect_eq(r.flags, (u32)FSM_INSERT_FIRST_EMIT);
	expect_eq(insert(a, 7, r), 0);
	expect_eq(r.flags, 0u);
	expect_eq(insert(a, 8, r), 0);
	expect_eq(r.flags, (u32)FSM_INSERT_FIRST_EMIT);
	expect_eq(insert(c, 8, r), 0);
	expect_eq(r.flags, (u32)(FSM_INSERT_NEW | FSM_INSERT_FIRST_EMIT));
	expect_eq(insert(c, 8, r), 0);
	expect_eq(r.flags, 0u);
}

/*
 * Definition stamps (def_claim()): due on first use, then once the stamp is
 * the horizon behind, never for a stamp of another generation, always for
 * horizon 0 or a position behind the stamp; def_unclaim() forgets one. On
 * one CPU throughout: the stamps are per CPU.
 */
void SelfCheck::check_def_claim()
{
	fsm_plat_nopreempt_begin();
	expect_eq(map_->def_claim(5, 1, 100, 50), true);	/* never defined */
	expect_eq(map_->def_claim(5, 1, 149, 50), false);	/* 49 behind */
	expect_eq(map_->def_claim(5, 1, 150, 50), true);	/* 50 behind */
	expect_eq(map_->def_claim(5, 1, 151, 50), false);
	expect_eq(map_->def_claim(5, 2, 151, 50), true);	/* other generation */
	expect_eq(map_->def_claim(5, 1, 152, 0), true);	/* horizon 0 */
	expect_eq(map_->def_claim(5, 1, 140, 50), true);	/* count restarted */
	map_->def_unclaim(5, 1, 140);
	expect_eq(map_->def_claim(5, 1, 141, 50), true);	/* forgotten */
	fsm_plat_nopreempt_end();
}

/*
 * Separate from check_limits() so that each frame stays small: the
 * 65-frame stack alone is 520 bytes, and KASAN kernels warn from 1024.
 */
void SelfCheck::check_invalid()
{
	fsm_insert_result r{};
	const TestStack<FSM_MAX_KERNEL_DEPTH + 1> too_deep(9, FSM_MAX_KERNEL_DEPTH + 1);
	const TestStack<4> empty(9, 0);

	expect_eq(insert(too_deep, 0, r), -FSM_DROP_INVALID);
	expect_eq(insert(empty, 0, r), -FSM_DROP_INVALID);
}

void SelfCheck::check_limits()
{
	fsm_insert_result r{};

	/* Fill every id, then one more. */
	for (u32 seed = 100; map_->nr_ids() < map_->capacity(); seed++)
		if (!expect_eq(insert(TestStack<4>(seed, 4), 0, r), 0))
			return;
	expect_eq(insert(TestStack<4>(99, 4), 0, r), -FSM_DROP_MAP_FULL);
	/* Existing stacks are still found when the map is full. */
	expect_eq(insert(TestStack<16>(1, 8), 0, r), 0);
	expect_eq(r.id, 0u);
}

void SelfCheck::check_reset()
{
	const TestStack<16> b(2, 16);
	fsm_insert_result r{};

	expect_eq(map_->reset(), 2u);
	expect_eq(map_->nr_ids(), 0u);
	expect_eq(map_->lookup_id(0, nullptr, nullptr, nullptr), -2);
	expect_eq(insert(b, 0, r), 0);
	expect_eq(r.id, 0u);
	expect_eq(r.generation, 2u);
	expect_eq(r.flags, (u32)FSM_INSERT_NEW);
	record_matches(0, b);
}

void SelfCheck::check_stats()
{
	struct fsm_map_stats st{};
	u64 sum;

	map_->stats(&st);
	sum = st.hits + st.inserts;
	for (u32 i = 1; i < FSM_DROP_NR_REASONS; i++)
		sum += st.drops[i];
	expect_eq(sum, calls_);
	expect_eq(st.drops[FSM_DROP_MAP_FULL], 1ull);
	expect_eq(st.drops[FSM_DROP_INVALID], 2ull);
	expect_eq(st.entries, 1u);
	expect_eq(st.generation, 2u);
}

int SelfCheck::run()
{
	fsm_map_params p{};
	int err = 0;

	p.bits = FSM_BITS_MIN;
	p.max_depth = FSM_MAX_KERNEL_DEPTH;
	p.key[0] = 0x0123456789abcdefull;
	p.key[1] = 0xfedcba9876543210ull;
	map_ = StackMap::create(p, &err);
	if (!map_)
		return err;

	check_dedup();
	if (!failed_)
		check_first_emit();
	if (!failed_)
		check_def_claim();
	if (!failed_)
		check_invalid();
	if (!failed_)
		check_limits();
	if (!failed_)
		check_reset();
	if (!failed_)
		check_stats();

	map_->destroy();
	map_ = nullptr;
	return failed_ ? -22 : 0;
}

} /* namespace */
} /* namespace fsm */

extern "C" int fsm_core_selfcheck(void)
{
	fsm::SelfCheck check;

	return check.run();
}
