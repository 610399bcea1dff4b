// SPDX-License-Identifier: GPL-2.0
/*
 * buildid.cpp - the GNU build-id of an ELF file, read through a callback
 * (fsm_buildid.h has the contract and the bounds).
 *
 * Layouts used (ELF gABI, little-endian fields, decoded byte by byte so
 * that no unaligned or type-punned access is made):
 *
 *   e_ident[16]: magic, EI_CLASS (1: 32 bit, 2: 64 bit), EI_DATA (1: LE)
 *   ELF32 header: e_phoff u32 @28, e_phentsize u16 @42, e_phnum u16 @44
 *   ELF64 header: e_phoff u64 @32, e_phentsize u16 @54, e_phnum u16 @56
 *   Elf32_Phdr (32 bytes): p_type @0, p_offset @4, p_filesz @16, p_align @28
 *   Elf64_Phdr (56 bytes): p_type @0, p_offset @8, p_filesz @32, p_align @48
 *   note: n_namesz u32, n_descsz u32, n_type u32, name, pad, desc, pad
 *
 * The name and the descriptor start at positions (from the segment start)
 * aligned to 4 bytes, or to 8 in a PT_NOTE segment aligned to 8 (how GNU
 * tools lay out .note.gnu.property); elfutils and binutils read them so.
 */
#include "fsm_buildid.h"

namespace fsm::buildid {
namespace {

using u8 = unsigned char;
using u32 = unsigned int;
using u64 = unsigned long long;

constexpr u32 kPtNote = 4;
constexpr u32 kNtGnuBuildId = 3;
constexpr u32 kNhdrSize = 12;
constexpr u32 kPnXnum = 0xffff;		/* e_phnum lives elsewhere: not followed */

u64 le(const u8 *p, unsigned int n)
{
	u64 v = 0;

	for (unsigned int i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/* Both results of a scan that did not find a build-id. */
struct Scan {
	bool again = false;	/* some read said "not now" */
};

/*
 * One PT_NOTE segment: [off, off + filesz) of the file, @align 4 or 8.
 * Returns true with the build-id in @bid/@len, false otherwise.
 */
bool scan_notes(fsm_bid_read_fn rd, void *ctx, u64 off, u64 filesz, u64 align,
		u8 *bid, u32 *len, Scan &s)
{
	/* only this much is looked at: every bound below is against it */
	const u64 size = filesz < FSM_BUILDID_MAX_NOTE_BYTES ?
			 filesz : FSM_BUILDID_MAX_NOTE_BYTES;
	const u64 mask = align - 1;
	u64 pos = 0;

	/* offsets past 2^62 are not in any file: off + size cannot wrap */
	if (off > (1ULL << 62))
		return false;
	/* each round advances pos by at least kNhdrSize: <= size / 12 rounds */
	while (pos + kNhdrSize <= size) {
		u8 nh[kNhdrSize];
		u8 name[4];
		u8 desc[FSM_BUILDID_MAX];

		int r = rd(ctx, off + pos, nh, kNhdrSize);
		if (r != FSM_BID_READ_OK) {
			s.again |= r == FSM_BID_READ_AGAIN;
			return false;
		}
		const u64 namesz = le(nh, 4);
		const u64 descsz = le(nh + 4, 4);
		const u64 type = le(nh + 8, 4);

		/* both below 2^32 and checked against size before any sum */
		if (namesz > size || descsz > size)
			return false;
		const u64 name_at = pos + kNhdrSize;
		/* padding aligns positions (elfutils and binutils do the same) */
		const u64 desc_at = (name_at + namesz + mask) & ~mask;
		const u64 next = (desc_at + descsz + mask) & ~mask;

		/* the note (unpadded) must lie inside the scanned part */
		if (desc_at + descsz > size)
			return false;
		if (type == kNtGnuBuildId && namesz == 4 && descsz >= 1 &&
		    descsz <= FSM_BUILDID_MAX) {
			r = rd(ctx, off + name_at, name, 4);
			if (r == FSM_BID_READ_OK && name[0] == 'G' &&
			    name[1] == 'N' && name[2] == 'U' && name[3] == 0) {
				r = rd(ctx, off + desc_at, desc, (u32)descsz);
				if (r == FSM_BID_READ_OK) {
					for (u32 i = 0; i < descsz; i++)
						bid[i] = desc[i];
					*len = (u32)descsz;
					return true;
				}
			}
			if (r != FSM_BID_READ_OK) {
				s.again |= r == FSM_BID_READ_AGAIN;
				return false;
			}
		}
		pos = next;
	}
	return false;
}

} // namespace
} // namespace fsm::buildid

extern "C" int fsm_buildid_parse(fsm_bid_read_fn rd, void *ctx,
				 unsigned char *bid, unsigned int *bid_len)
{
	using namespace fsm::buildid;
	u8 eh[64];
	Scan s;

	int r = rd(ctx, 0, eh, 16);
	if (r != FSM_BID_READ_OK)
		return r == FSM_BID_READ_AGAIN ? FSM_BID_UNAVAILABLE : FSM_BID_NONE;
	if (eh[0] != 0x7f || eh[1] != 'E' || eh[2] != 'L' || eh[3] != 'F' ||
	    (eh[4] != 1 && eh[4] != 2) || eh[5] != 1)
		return FSM_BID_NONE;
	const bool is64 = eh[4] == 2;
	r = rd(ctx, 16, eh + 16, is64 ? 64 - 16 : 52 - 16);
	if (r != FSM_BID_READ_OK)
		return r == FSM_BID_READ_AGAIN ? FSM_BID_UNAVAILABLE : FSM_BID_NONE;

	const u64 phoff = is64 ? le(eh + 32, 8) : le(eh + 28, 4);
	const u32 phentsize = (u32)le(eh + (is64 ? 54 : 42), 2);
	u32 phnum = (u32)le(eh + (is64 ? 56 : 44), 2);

	if (phentsize != (is64 ? 56u : 32u) || phnum == kPnXnum)
		return FSM_BID_NONE;
	if (phnum > FSM_BUILDID_MAX_PHDRS)
		phnum = FSM_BUILDID_MAX_PHDRS;
	/* phoff + 64 * 56 cannot wrap below 2^62 */
	if (phoff > (1ULL << 62))
		return FSM_BID_NONE;
	for (u32 i = 0; i < phnum; i++) {
		u8 ph[56];

		r = rd(ctx, phoff + (u64)i * phentsize, ph, phentsize);
		if (r != FSM_BID_READ_OK) {
			s.again |= r == FSM_BID_READ_AGAIN;
			break;
		}
		if (le(ph, 4) != kPtNote)
			continue;
		const u64 off = is64 ? le(ph + 8, 8) : le(ph + 4, 4);
		const u64 filesz = is64 ? le(ph + 32, 8) : le(ph + 16, 4);
		const u64 align = (is64 ? le(ph + 48, 8) : le(ph + 28, 4)) == 8 ? 8 : 4;

		if (scan_notes(rd, ctx, off, filesz, align, bid, bid_len, s))
			return FSM_BID_FOUND;
	}
	return s.again ? FSM_BID_UNAVAILABLE : FSM_BID_NONE;
}
