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
		return read_bytes(addr, size, out);
	}

	/*
	 * Code: bytes marked executable (what the kernel's code reader allows:
	 * VM_EXEC, not VM_IO/VM_PFNMAP). The code reader reads only those.
	 */
	void put_code32(u64 addr, u64 val)
	{
		put32(addr, val);
		for (u32 i = 0; i < 4; i++)
			code_[addr + i] = true;
	}
	void put_code(u64 addr, const uint8_t *b, u32 n)
	{
		for (u32 i = 0; i < n; i++) {
			bytes_[addr + i] = b[i];
			code_[addr + i] = true;
		}
	}

	bool read_code(u64 addr, u32 size, u64 &out) const
	{
		code_reads_++;
		for (u32 i = 0; i < size; i++)
			if (!code_.count(addr + i))
				return false;
		return read_bytes(addr, size, out);
	}

	/* Functors for fsm::unwind::walk(): stack (any mapped byte) and code. */
	auto reader() const
	{
		return [this](u64 addr, u32 size, u64 &out) { return read(addr, size, out); };
	}
	auto code_reader() const
	{
		return [this](u64 addr, u32 size, u64 &out) { return read_code(addr, size, out); };
	}

	/* C callbacks for fsm_uw_walk(). */
	static bool c_read(void *ctx, unsigned long long addr, unsigned int size,
			   unsigned long long *val)
	{
		u64 v = 0;
		bool ok = static_cast<const FakeMem *>(ctx)->read(addr, size, v);
		if (ok)
			*val = v;
		return ok;
	}
	static bool c_read_code(void *ctx, unsigned long long addr, unsigned int size,
				unsigned long long *val)
	{
		u64 v = 0;
		bool ok = static_cast<const FakeMem *>(ctx)->read_code(addr, size, v);
		if (ok)
			*val = v;
		return ok;
	}

	/* Stack reads and code reads, counted apart. */
	u64 reads() const { return reads_; }
	u64 code_reads() const { return code_reads_; }

private:
	bool read_bytes(u64 addr, u32 size, u64 &out) const
	{
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

	std::map<u64, uint8_t> bytes_;
	std::map<u64, bool> code_;
	mutable u64 reads_ = 0, code_reads_ = 0;
	u64 watch_lo_ = 0, watch_hi_ = 0;
	mutable u64 watched_ = 0;
};

/*
 * x86: the call that returns to @ra, "call rel32" (e8 + 4 bytes) after three
 * nops, so that the 8 bytes before @ra are code and a call ends at @ra
 * (the x86 walks check both: x86_vouch() in unwind_user.h).
 */
inline void put_x86_call(FakeMem &m, u64 ra)
{
	static const uint8_t call[8] = { 0x90, 0x90, 0x90, 0xe8, 0x10, 0x20, 0x30, 0x40 };

	m.put_code(ra - 8, call, 8);
}

/*
 * Write one frame record at @fp for @mode: the caller's fp (@saved_fp) and
 * the return address (@ra), in the layout the compilers actually produce;
 * x86: and the call before @ra (put_x86_call()), as a real call leaves it.
 */
inline void put_record(FakeMem &m, u32 mode, u64 fp, u64 saved_fp, u64 ra)
{
	switch (mode) {
	case FSM_UW_MODE_X86_64:	/* push %rbp; mov %rsp,%rbp */
		if (ra >= 8)
			put_x86_call(m, ra);
		m.put64(fp, saved_fp);
		m.put64(fp + 8, ra);
		break;
	case FSM_UW_MODE_ARM64:		/* stp x29, x30, [sp, #-16]!; mov x29, sp */
		m.put64(fp, saved_fp);
		m.put64(fp + 8, ra);
		break;
	case FSM_UW_MODE_IA32:		/* push %ebp; mov %esp,%ebp */
		if (ra >= 8)
			put_x86_call(m, ra);
		m.put32(fp, saved_fp);
		m.put32(fp + 4, ra);
		break;
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
