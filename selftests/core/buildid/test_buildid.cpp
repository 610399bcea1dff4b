// SPDX-License-Identifier: GPL-2.0
/*
 * test_buildid.cpp - fsm_buildid_parse() on real ELF files and on mutated
 * copies of them (generated here): huge n_namesz/n_descsz (the ALIGN wrap),
 * descriptors longer than 20 bytes or empty, notes cut by the segment or by
 * the end of the file, notes across a page whose neighbour is not cached,
 * zero-length files, broken headers. Each must give the right build-id
 * (libelf is the reference reader) or "none", never other bytes; the output
 * buffer is checked untouched whenever nothing is found. Built with ASan +
 * UBSan by scripts/check (core[address]).
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fsm_buildid.h"

namespace {

using Bytes = std::vector<uint8_t>;
constexpr uint64_t kPage = 4096;

/* A file as the kernel glue sees it: bytes, some pages not cached. */
struct File {
	Bytes b;
	std::set<uint64_t> missing;	/* page numbers that say "again" */
	unsigned reads = 0;
};

int read_fn(void *ctx, unsigned long long off, void *dst, unsigned int len)
{
	auto *f = static_cast<File *>(ctx);

	f->reads++;
	if (off > f->b.size() || len > f->b.size() - off)
		return FSM_BID_READ_EOF;
	for (uint64_t p = off / kPage; len && p <= (off + len - 1) / kPage; p++)
		if (f->missing.count(p))
			return FSM_BID_READ_AGAIN;
	memcpy(dst, f->b.data() + off, len);
	return FSM_BID_READ_OK;
}

struct Result {
	int rc;
	Bytes bid;
};

/* Parse; check that nothing is written unless found, reads are bounded. */
Result parse(File &f)
{
	uint8_t out[FSM_BUILDID_MAX + 8];
	unsigned int len = 0xdead;

	memset(out, 0xa5, sizeof(out));
	f.reads = 0;
	int rc = fsm_buildid_parse(read_fn, &f, out, &len);
	EXPECT_LE(f.reads, 2u + FSM_BUILDID_MAX_PHDRS *
		  (1u + FSM_BUILDID_MAX_NOTE_BYTES / 12 * 3));
	for (size_t i = FSM_BUILDID_MAX; i < sizeof(out); i++)
		EXPECT_EQ(out[i], 0xa5) << "wrote past FSM_BUILDID_MAX";
	if (rc != FSM_BID_FOUND) {
		EXPECT_EQ(len, 0xdeadu) << "length written without a build-id";
		for (size_t i = 0; i < sizeof(out); i++)
			EXPECT_EQ(out[i], 0xa5) << "bytes written without a build-id";
		return {rc, {}};
	}
	EXPECT_GE(len, 1u);
	EXPECT_LE(len, (unsigned)FSM_BUILDID_MAX);
	return {rc, Bytes(out, out + std::min(len, (unsigned)FSM_BUILDID_MAX))};
}

/* The reference: libelf's note reader. */
struct Ref {
	bool found = false;
	Bytes bid;
	size_t nhdr_off = 0;	/* file offset of the build-id note header */
	size_t phdr_off = 0;	/* file offset of its PT_NOTE program header */
	size_t seg_off = 0, seg_size = 0;
};

Ref reference(const Bytes &b)
{
	Ref r;

	elf_version(EV_CURRENT);
	Elf *e = elf_memory((char *)b.data(), b.size());
	if (!e)
		return r;
	GElf_Ehdr eh;
	size_t n = 0;
	if (gelf_getehdr(e, &eh) && !elf_getphdrnum(e, &n)) {
		for (size_t i = 0; i < n && !r.found; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE)
				continue;
			Elf_Data *d = elf_getdata_rawchunk(e, ph.p_offset, ph.p_filesz,
						ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
			GElf_Nhdr nh;
			size_t off = 0, next, name_off, desc_off;
			while (d && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off))) {
				const char *p = (const char *)d->d_buf;
				if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
				    !memcmp(p + name_off, "GNU", 4)) {
					r.found = true;
					r.bid.assign(p + desc_off, p + desc_off + nh.n_descsz);
					r.nhdr_off = ph.p_offset + off;
					r.phdr_off = eh.e_phoff + i * eh.e_phentsize;
					r.seg_off = ph.p_offset;
					r.seg_size = ph.p_filesz;
					break;
				}
				off = next;
			}
		}
	}
	elf_end(e);
	return r;
}

Bytes slurp(const std::string &path)
{
	std::ifstream in(path, std::ios::binary);
	return Bytes(std::istreambuf_iterator<char>(in), {});
}

void put32(Bytes &b, size_t off, uint32_t v) { memcpy(&b[off], &v, 4); }
void put64(Bytes &b, size_t off, uint64_t v) { memcpy(&b[off], &v, 8); }

/* Real ELF files of this machine with a build-id; the test binary first. */
std::vector<std::string> real_files()
{
	std::vector<std::string> v;
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0)
		v.emplace_back(self, n);
	for (const char *p : {"/bin/true", "/lib/x86_64-linux-gnu/libc.so.6",
			      "/usr/bin/python3"})
		if (!access(p, R_OK))
			v.emplace_back(p);
	return v;
}

TEST(BuildId, RealFilesMatchLibelf)
{
	int found = 0;

	for (auto &p : real_files()) {
		File f{slurp(p)};
		Ref ref = reference(f.b);
		Result r = parse(f);
		SCOPED_TRACE(p);
		if (ref.found && ref.bid.size() <= FSM_BUILDID_MAX) {
			EXPECT_EQ(r.rc, FSM_BID_FOUND);
			EXPECT_EQ(r.bid, ref.bid);
			found++;
		} else {
			EXPECT_EQ(r.rc, FSM_BID_NONE);
		}
	}
	EXPECT_GE(found, 1) << "no real ELF file with a build-id to test with";
}

/* A real file with a build-id (the test binary), and where its note is. */
struct Real {
	Bytes b;
	Ref ref;
};

Real real()
{
	for (auto &p : real_files()) {
		Real r{slurp(p), {}};
		r.ref = reference(r.b);
		if (r.ref.found && r.ref.bid.size() == 20 && r.b[4] == ELFCLASS64)
			return r;
	}
	ADD_FAILURE() << "no 64-bit ELF file with a 20-byte build-id";
	return {};
}

TEST(BuildId, HugeSizesWrapNothing)
{
	Real r = real();
	ASSERT_TRUE(r.ref.found);
	for (uint32_t v : {0xffffffffu, 0xfffffffeu, 0xfffffffdu, 0xfffffffcu,
			   0x80000000u, 0x7fffffffu, 0x10000u, 4097u}) {
		for (int field : {0, 1}) {	/* n_namesz, n_descsz */
			File f{r.b};
			put32(f.b, r.ref.nhdr_off + 4 * field, v);
			Result res = parse(f);
			SCOPED_TRACE(testing::Message() << "field " << field << " = " << v);
			EXPECT_EQ(res.rc, FSM_BID_NONE);
		}
	}
}

TEST(BuildId, DescriptorSizes)
{
	Real r = real();
	ASSERT_TRUE(r.ref.found);
	/* 0 and > 20: not a build-id (the next notes are still looked at) */
	for (uint32_t d : {0u, 21u, 24u, 32u, 64u}) {
		File f{r.b};
		put32(f.b, r.ref.nhdr_off + 4, d);
		SCOPED_TRACE(d);
		EXPECT_EQ(parse(f).rc, FSM_BID_NONE);
	}
	/* shorter (16, 8): a shorter build-id, exactly those leading bytes */
	for (uint32_t d : {16u, 8u, 1u}) {
		File f{r.b};
		put32(f.b, r.ref.nhdr_off + 4, d);
		Result res = parse(f);
		SCOPED_TRACE(d);
		ASSERT_EQ(res.rc, FSM_BID_FOUND);
		EXPECT_EQ(res.bid, Bytes(r.ref.bid.begin(), r.ref.bid.begin() + d));
	}
}

TEST(BuildId, WrongNameOrType)
{
	Real r = real();
	ASSERT_TRUE(r.ref.found);
	File a{r.b};
	put32(a.b, r.ref.nhdr_off, 3);		/* n_namesz "GNU" without NUL */
	EXPECT_EQ(parse(a).rc, FSM_BID_NONE);
	File b{r.b};
	b.b[r.ref.nhdr_off + 12] = 'X';		/* "XNU" */
	EXPECT_EQ(parse(b).rc, FSM_BID_NONE);
	File c{r.b};
	put32(c.b, r.ref.nhdr_off + 8, 1);	/* NT_GNU_ABI_TAG */
	EXPECT_EQ(parse(c).rc, FSM_BID_NONE);
}

TEST(BuildId, TruncatedSegmentAndFile)
{
	Real r = real();
	ASSERT_TRUE(r.ref.found);
	const size_t note_end = r.ref.nhdr_off + 12 + 4 + 20;
	const size_t filesz_at = r.ref.phdr_off + 32;	/* Elf64_Phdr.p_filesz */

	/* p_filesz ends inside the note: none; exactly at its end: found */
	for (size_t end = r.ref.nhdr_off; end <= note_end; end++) {
		File f{r.b};
		put64(f.b, filesz_at, end - r.ref.seg_off);
		Result res = parse(f);
		SCOPED_TRACE(end - r.ref.nhdr_off);
		if (end == note_end) {
			EXPECT_EQ(res.rc, FSM_BID_FOUND);
			EXPECT_EQ(res.bid, r.ref.bid);
		} else {
			EXPECT_EQ(res.rc, FSM_BID_NONE);
		}
	}
	/* the file ends inside the note, or anywhere before it */
	for (size_t end : {note_end - 1, r.ref.nhdr_off + 13, r.ref.nhdr_off,
			   r.ref.phdr_off + 10, (size_t)63, (size_t)16, (size_t)4,
			   (size_t)0}) {
		File f{Bytes(r.b.begin(), r.b.begin() + end)};
		SCOPED_TRACE(end);
		EXPECT_EQ(parse(f).rc, FSM_BID_NONE);
	}
	/* p_offset far past the end, or near 2^64 */
	for (uint64_t off : {(uint64_t)r.b.size() + 1, (uint64_t)~0ull - 3,
			     (uint64_t)1 << 63}) {
		File f{r.b};
		put64(f.b, r.ref.phdr_off + 8, off);
		EXPECT_EQ(parse(f).rc, FSM_BID_NONE);
	}
}

TEST(BuildId, BrokenHeaders)
{
	Real r = real();
	ASSERT_TRUE(r.ref.found);
	File a{r.b};
	put64(a.b, 32, ~0ull - 8);		/* e_phoff */
	EXPECT_EQ(parse(a).rc, FSM_BID_NONE);
	File b{r.b};
	b.b[56] = 0xff, b.b[57] = 0xff;		/* e_phnum = PN_XNUM */
	EXPECT_EQ(parse(b).rc, FSM_BID_NONE);
	File c{r.b};
	c.b[54] = 40;				/* e_phentsize */
	EXPECT_EQ(parse(c).rc, FSM_BID_NONE);
	File d{r.b};
	d.b[5] = 2;				/* big-endian */
	EXPECT_EQ(parse(d).rc, FSM_BID_NONE);
	File e{r.b};
	e.b[1] = 'e';				/* magic */
	EXPECT_EQ(parse(e).rc, FSM_BID_NONE);
	File z{Bytes{}};
	EXPECT_EQ(parse(z).rc, FSM_BID_NONE);
}

/* Every value of n_namesz/n_descsz at the edges: the original or none. */
TEST(BuildId, EdgeValueSweep)
{
	Real r = real();
	ASSERT_TRUE(r.ref.found);
	const uint32_t vals[] = {0, 1, 2, 3, 4, 5, 8, 12, 19, 20, 21, 4095, 4096,
				 4097, 0x7ffffffc, 0x80000000, 0xfffffff0,
				 0xfffffffc, 0xfffffffd, 0xfffffffe, 0xffffffff};
	for (uint32_t n : vals) {
		for (uint32_t d : vals) {
			File f{r.b};
			put32(f.b, r.ref.nhdr_off, n);
			put32(f.b, r.ref.nhdr_off + 4, d);
			Result res = parse(f);
			SCOPED_TRACE(testing::Message() << n << "," << d);
			if (n == 4 && d >= 1 && d <= 20) {
				ASSERT_EQ(res.rc, FSM_BID_FOUND);
				EXPECT_EQ(res.bid, Bytes(r.ref.bid.begin(),
							 r.ref.bid.begin() + d));
			} else {
				EXPECT_EQ(res.rc, FSM_BID_NONE);
			}
		}
	}
}

/* A synthetic ELF: header, one PT_NOTE at @seg_off, the given notes. */
Bytes synth(bool is64, uint64_t seg_off, const Bytes &notes, uint64_t align = 4)
{
	Bytes b(seg_off + notes.size());
	memcpy(b.data(), "\177ELF", 4);
	b[4] = is64 ? ELFCLASS64 : ELFCLASS32;
	b[5] = ELFDATA2LSB;
	b[6] = EV_CURRENT;
	if (is64) {
		put64(b, 32, 64);		/* e_phoff */
		b[54] = 56;			/* e_phentsize */
		b[56] = 1;			/* e_phnum */
		put32(b, 64, PT_NOTE);
		put64(b, 64 + 8, seg_off);
		put64(b, 64 + 32, notes.size());
		put64(b, 64 + 48, align);
	} else {
		put32(b, 28, 52);
		b[42] = 32;
		b[44] = 1;
		put32(b, 52, PT_NOTE);
		put32(b, 52 + 4, seg_off);
		put32(b, 52 + 16, notes.size());
		put32(b, 52 + 28, align);
	}
	std::copy(notes.begin(), notes.end(), b.begin() + seg_off);
	return b;
}

Bytes note(uint32_t type, const std::string &name, const Bytes &desc,
	   uint32_t align = 4)
{
	const size_t nsz = name.size() + 1;
	const size_t desc_at = (12 + nsz + align - 1) / align * align;
	Bytes n((desc_at + desc.size() + align - 1) / align * align, 0);

	put32(n, 0, nsz);
	put32(n, 4, desc.size());
	put32(n, 8, type);
	memcpy(&n[12], name.c_str(), nsz);
	if (!desc.empty())
		memcpy(&n[desc_at], desc.data(), desc.size());
	return n;
}

Bytes seq(size_t n, uint8_t first)
{
	Bytes b(n);
	for (size_t i = 0; i < n; i++)
		b[i] = first + i;
	return b;
}

TEST(BuildId, SyntheticBothClassesAndAlignments)
{
	const Bytes id = seq(20, 0x10);
	for (bool is64 : {false, true}) {
		Bytes notes = note(1, "GNU", seq(16, 0));	/* ABI tag first */
		Bytes bidn = note(NT_GNU_BUILD_ID, "GNU", id);
		notes.insert(notes.end(), bidn.begin(), bidn.end());
		File f{synth(is64, 256, notes)};
		Result r = parse(f);
		ASSERT_EQ(r.rc, FSM_BID_FOUND) << is64;
		EXPECT_EQ(r.bid, id);
		EXPECT_EQ(reference(f.b).bid, id) << "libelf disagrees";
	}
	/* 8-aligned segment: a property note with a 12-byte desc, then the id */
	Bytes notes = note(5, "GNU", seq(12, 0), 8);
	Bytes bidn = note(NT_GNU_BUILD_ID, "GNU", id, 8);
	notes.insert(notes.end(), bidn.begin(), bidn.end());
	File f{synth(true, 512, notes, 8)};
	Result r = parse(f);
	ASSERT_EQ(r.rc, FSM_BID_FOUND);
	EXPECT_EQ(r.bid, id);
	EXPECT_EQ(reference(f.b).bid, id) << "libelf disagrees";
}

/* The note straddles a page end; the kernel reads only cached pages. */
TEST(BuildId, NoteAcrossPageEnd)
{
	const Bytes id = seq(20, 0x40);
	for (uint64_t back : {4u, 12u, 16u, 20u, 30u}) {
		File f{synth(true, kPage - back, note(NT_GNU_BUILD_ID, "GNU", id))};
		Result r = parse(f);
		SCOPED_TRACE(back);
		ASSERT_EQ(r.rc, FSM_BID_FOUND);
		EXPECT_EQ(r.bid, id);
		f.missing = {1};	/* second page not cached: ask again later */
		EXPECT_EQ(parse(f).rc, FSM_BID_UNAVAILABLE);
		f.missing = {0};	/* nothing readable */
		EXPECT_EQ(parse(f).rc, FSM_BID_UNAVAILABLE);
		f.missing.clear();
		EXPECT_EQ(parse(f).rc, FSM_BID_FOUND);
	}
}

/* Notes up to the scan bound are walked; a build-id beyond it is not used. */
TEST(BuildId, ScanBound)
{
	const Bytes id = seq(20, 0x70);
	Bytes pad = note(0x100, "PAD", seq(64 - 16, 0));	/* 64 bytes each */
	ASSERT_EQ(pad.size(), 64u);
	Bytes bidn = note(NT_GNU_BUILD_ID, "GNU", id);	/* 36 bytes */
	for (size_t npad : {0u, 10u, 63u, 64u}) {
		Bytes notes;
		for (size_t i = 0; i < npad; i++)
			notes.insert(notes.end(), pad.begin(), pad.end());
		notes.insert(notes.end(), bidn.begin(), bidn.end());
		File f{synth(true, 128, notes)};
		Result r = parse(f);
		SCOPED_TRACE(npad);
		if (notes.size() <= FSM_BUILDID_MAX_NOTE_BYTES) {
			ASSERT_EQ(r.rc, FSM_BID_FOUND);
			EXPECT_EQ(r.bid, id);
		} else {
			EXPECT_EQ(r.rc, FSM_BID_NONE);
		}
	}
	/* zero-length segment, zero-length notes */
	File z{synth(true, 128, Bytes{})};
	EXPECT_EQ(parse(z).rc, FSM_BID_NONE);
	File zn{synth(true, 128, Bytes(12, 0))};	/* an all-zero note header */
	EXPECT_EQ(parse(zn).rc, FSM_BID_NONE);
}

} // namespace
