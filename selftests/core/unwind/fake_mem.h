// SPDX-License-Identifier: GPL-2.0
/*
 * fake_mem.h - a synthetic user address space for walker tests: a sparse map
 * of byte address -> byte. Reads of any byte never written fault. Values are
 * little-endian (every mode we walk is little-endian).
 *
 * The stack-building helpers below spell out each frame layout by hand,
 * independently of the descriptor table in unwind_user.h, so that a wrong
 * descriptor makes the tests fail.
 */
#ifndef FSM_SELFTESTS_UNWIND_FAKE_MEM_H
#define FSM_SELFTESTS_UNWIND_FAKE_MEM_H

#include <cstdint>
#include <map>

#include "fsm_unwind.h"

namespace uwtest {

using u64 = unsigned long long;
using u32 = unsigned int;

class FakeMem {
public:
	void put(u64 addr, u64 val, u32 size)
	{
		for (u32 i = 0; i < size; i++)
			bytes_[addr + i] = (uint8_t)(val >> (8 * i));
	}
	void put64(u64 addr, u64 val) { put(addr, val, 8); }
	void put32(u64 addr, u64 val) { put(addr, val, 4); }
	void unmap(u64 addr, u32 size)
	{
		for (u32 i = 0; i < size; i++)
			bytes_.erase(addr + i);
	}

	/* Count reads that touch [lo, hi) ("a device mapping"). */
	void watch(u64 lo, u64 hi)
	{
		watch_lo_ = lo;
		watch_hi_ = hi;
	}
	u64 watched_reads() const { return watched_; }

	bool read(u64 addr, u32 size, u64 &out) const
	{
		reads_++;
		if (addr < watch_hi_ && addr + size > watch_lo_)
			watched_++;
		if (size != 4 && size != 8)
			return false;
		u64 v = 0;
		for (u32 i = 0; i < size; i++) {
			auto it = bytes_.find(addr + i);
			if (it == bytes_.end())
				return false;
			v |= (u64)it->second << (8 * i);
		}
		out = v;
		return true;
	}

	/* Functor for fsm::unwind::walk(). */
	auto reader() const
	{
		return [this](u64 addr, u32 size, u64 &out) { return read(addr, size, out); };
	}

	/* C callback for fsm_uw_walk(). */
	static bool c_read(void *ctx, unsigned long long addr, unsigned int size,
			   unsigned long long *val)
	{
		u64 v = 0;
		bool ok = static_cast<const FakeMem *>(ctx)->read(addr, size, v);
		if (ok)
			*val = v;
		return ok;
	}

	u64 reads() const { return reads_; }

private:
	std::map<u64, uint8_t> bytes_;
	mutable u64 reads_ = 0;
	u64 watch_lo_ = 0, watch_hi_ = 0;
	mutable u64 watched_ = 0;
};

/*
 * Write one frame record at @fp for @mode: the caller's fp (@saved_fp) and
 * the return address (@ra), in the layout the compilers actually produce.
 */
inline void put_record(FakeMem &m, u32 mode, u64 fp, u64 saved_fp, u64 ra)
{
	switch (mode) {
	case FSM_UW_MODE_X86_64:	/* push %rbp; mov %rsp,%rbp */
	case FSM_UW_MODE_ARM64:		/* stp x29, x30, [sp, #-16]!; mov x29, sp */
		m.put64(fp, saved_fp);
		m.put64(fp + 8, ra);
		break;
	case FSM_UW_MODE_IA32:		/* push %ebp; mov %esp,%ebp */
	case FSM_UW_MODE_A32_FRAME_RECORD:	/* push {r11, lr}; mov r11, sp */
	case FSM_UW_MODE_A32:		/* either layout: the frame record here */
		m.put32(fp, saved_fp);
		m.put32(fp + 4, ra);
		break;
	case FSM_UW_MODE_A32_GCC:	/* push {fp, lr}; add fp, sp, #4 */
		m.put32(fp, ra);
		m.put32(fp - 4, saved_fp);
		break;
	default:
		break;
	}
}

} /* namespace uwtest */

#endif /* FSM_SELFTESTS_UNWIND_FAKE_MEM_H */
