// SPDX-License-Identifier: GPL-2.0
/*
 * Real AArch64 and AArch32 stacks: xprog/chain.c, cross-built with
 * -fno-omit-frame-pointer for AArch64 (also with pointer authentication),
 * A32 and Thumb (GCC and clang), ran under qemu-user and dumped its
 * registers and stack at a known call chain (CMakeLists.txt builds and runs
 * it). Here the core walker walks that dump, reading the stack from the
 * dump and code from the program's ELF segments (nothing else is mapped: a
 * read elsewhere faults), and every entry is symbolized with the program's
 * own symbol table (libelf), independently of the walker.
 *
 * What to expect (Documentation/ustack.rst, "Architectures"):
 * - AArch64, A32 GCC and clang, clang Thumb: exactly capture, f3, f2, f1,
 *   main (then glibc, which has no frame pointers: whatever follows is not
 *   checked).
 * - A leaf (no frame record: GCC AArch64): its caller f3 is skipped,
 *   because its return address is only in lr; with FSM_UW_REGS_AT_ENTRY the
 *   walker takes lr and the chain is complete.
 * - GCC Thumb: r7 points below the locals, not at the record: the walk is
 *   flagged FSM_UW_RES_UNRELIABLE and does not find the chain.
 * - A leaf without register pressure ("sink" dumps, A32SinkLeaf): GCC A32
 *   complete through lr (flagged), clang skips the leaf's caller, GCC Thumb
 *   stops after the leaf; no walk reports a frame that is not in the chain.
 * Code (the call-site checks) is read only from executable segments.
 */
#include <gtest/gtest.h>

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "unwind_user.h"
#include "xprog/xc_dump.h"

#ifndef FSM_XC_DIR
#error "FSM_XC_DIR: the directory of the cross-built programs and their dumps"
#endif

namespace {

using u64 = unsigned long long;
using u32 = unsigned int;

struct Segment {
	u64 vaddr;
	std::vector<unsigned char> bytes;	/* p_filesz bytes of the file */
	bool exec;				/* PF_X */
};

struct Symbol {
	u64 start, size;
	std::string name;
};

/* A cross-built program (segments, symbols) and one of its dumps. */
struct Target {
	std::vector<Segment> segs;
	std::vector<Symbol> syms;
	xc_header hdr{};
	std::vector<unsigned char> stack;
	std::string error;

	bool load_elf(const std::string &path)
	{
		elf_version(EV_CURRENT);
		int fd = open(path.c_str(), O_RDONLY);
		if (fd < 0)
			return fail("cannot open " + path);
		Elf *e = elf_begin(fd, ELF_C_READ, nullptr);
		bool ok = e && load_segments(e, fd) && load_symbols(e);
		if (e)
			elf_end(e);
		close(fd);
		return ok || fail(error.empty() ? "bad ELF " + path : error);
	}

	bool load_segments(Elf *e, int fd)
	{
		size_t n;
		if (elf_getphdrnum(e, &n))
			return false;
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			Segment s{ ph.p_vaddr, std::vector<unsigned char>(ph.p_filesz),
				   (ph.p_flags & PF_X) != 0 };
			if (pread(fd, s.bytes.data(), ph.p_filesz, (off_t)ph.p_offset) !=
			    (ssize_t)ph.p_filesz)
				return false;
			segs.push_back(std::move(s));
		}
		return !segs.empty();
	}

	bool load_symbols(Elf *e)
	{
		for (Elf_Scn *scn = nullptr; (scn = elf_nextscn(e, scn));) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
				continue;
			Elf_Data *d = elf_getdata(scn, nullptr);
			for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym sym;
				if (!gelf_getsym(d, (int)i, &sym) ||
				    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
					continue;
				/* Thumb functions have bit 0 set in st_value. */
				syms.push_back({ sym.st_value & ~1ull, sym.st_size,
						 elf_strptr(e, sh.sh_link, sym.st_name) });
			}
		}
		return !syms.empty();
	}

	bool load_dump(const std::string &path)
	{
		std::ifstream in(path, std::ios::binary);
		std::vector<unsigned char> all((std::istreambuf_iterator<char>(in)),
					       std::istreambuf_iterator<char>());
		if (all.size() < sizeof(hdr))
			return fail("short or missing dump " + path);
		memcpy(&hdr, all.data(), sizeof(hdr));
		if (hdr.magic != XC_MAGIC || all.size() != sizeof(hdr) + hdr.len)
			return fail("bad dump " + path);
		stack.assign(all.begin() + sizeof(hdr), all.end());
		return true;
	}

	bool fail(const std::string &why)
	{
		error = why;
		return false;
	}

	/* The reader: the dumped stack, then the ELF segments; else a fault. */
	bool read(u64 addr, u32 size, u64 &out) const
	{
		auto from = [&](u64 base, const std::vector<unsigned char> &b) {
			if (addr < base || addr - base > b.size() || b.size() - (addr - base) < size)
				return false;
			u64 v = 0;
			memcpy(&v, b.data() + (addr - base), size);
			out = v;
			return true;
		};
		if (size != 4 && size != 8)
			return false;
		if (from(hdr.sp, stack))
			return true;
		for (const Segment &s : segs)
			if (from(s.vaddr, s.bytes))
				return true;
		return false;
	}

	/* The code reader: executable segments only (the kernel's: VM_EXEC). */
	bool read_code(u64 addr, u32 size, u64 &out) const
	{
		for (const Segment &s : segs) {
			if (!s.exec || addr < s.vaddr || addr - s.vaddr > s.bytes.size() ||
			    s.bytes.size() - (addr - s.vaddr) < size)
				continue;
			u64 v = 0;
			memcpy(&v, s.bytes.data() + (addr - s.vaddr), size);
			out = v;
			return true;
		}
		return false;
	}

	/* Does a function called @name (any alias) contain @addr? */
	bool in(u64 addr, const std::string &name) const
	{
		for (const Symbol &s : syms)
			if (s.name == name && addr >= s.start && addr < s.start + s.size)
				return true;
		return false;
	}

	/* The function containing @addr, "?" if none. */
	std::string sym(u64 addr) const
	{
		for (const Symbol &s : syms)
			if (addr >= s.start && addr < s.start + s.size)
				return s.name;
		return "?";
	}
};

struct Walk {
	std::vector<std::string> names;	/* entry 0 as is, the others at ra - 1 */
	std::vector<u64> e;
	fsm_uw_result res;
};

/* AArch64 user addresses have at most 48 bits under qemu-user and Debian. */
constexpr u64 kPacMask = ~((1ull << 48) - 1);

fsm_uw_regs regs_of(const Target &t, u64 pac_mask, u32 flags = 0)
{
	fsm_uw_regs r{};
	r.ip = t.hdr.pc;
	r.sp = t.hdr.sp;
	r.fp = t.hdr.fp;
	r.lr = t.hdr.lr;
	if (t.hdr.arch == XC_ARCH_AARCH64) {
		r.mode = FSM_UW_MODE_ARM64;
		r.pac_mask = pac_mask;
	} else {
		r.mode = FSM_UW_MODE_A32;
		if (t.hdr.thumb)
			flags |= FSM_UW_REGS_THUMB;
	}
	r.flags = flags;
	return r;
}

Walk walk(const Target &t, const fsm_uw_regs &r, u32 max = FSM_MAX_USER_DEPTH)
{
	Walk w;
	u64 buf[FSM_MAX_USER_DEPTH];
	u32 n = fsm::unwind::walk(r, [&](u64 a, u32 s, u64 &o) { return t.read(a, s, o); },
				  [&](u64 a, u32 s, u64 &o) { return t.read_code(a, s, o); },
				  buf, max, w.res);
	for (u32 i = 0; i < n; i++) {
		w.e.push_back(buf[i]);
		w.names.push_back(t.sym(i ? buf[i] - 1 : buf[i]));
	}
	return w;
}

std::string describe(const Walk &w)
{
	std::string s;
	for (size_t i = 0; i < w.e.size(); i++) {
		char a[32];
		snprintf(a, sizeof(a), "%#llx", w.e[i]);
		s += std::string(i ? ", " : "") + a + " " + w.names[i];
	}
	return s + " (stop " + fsm_uw_stop_name(w.res.stop) + ", flags " +
	       std::to_string(w.res.flags) + ")";
}

/* The first names of @w, as many as @want has. */
std::vector<std::string> head(const Walk &w, size_t n)
{
	return std::vector<std::string>(w.names.begin(),
					w.names.begin() + std::min(n, w.names.size()));
}

const std::vector<std::string> kChain = { "xc_capture", "xc_f3", "xc_f2", "xc_f1", "main" };
const std::vector<std::string> kLeafChain = { "xc_capture_leaf", "xc_f3", "xc_f2", "xc_f1",
					      "main" };

const std::vector<std::string> kSinkChain = { "xc_sink_leaf", "xc_capture_sink", "xc_f3",
					      "xc_f2", "xc_f1", "main" };

Target load(const std::string &prog, u32 mode)
{
	Target t;
	const std::string dir = FSM_XC_DIR;
	const char *ext = mode == XC_MODE_SINK ? ".sink.dump" :
			  mode == XC_MODE_LEAF ? ".leaf.dump" :
			  mode == XC_MODE_SYS_GETPID ? ".getpid.dump" :
			  mode == XC_MODE_SYS_WRITE ? ".write.dump" : ".dump";

	if (t.load_elf(dir + "/" + prog))
		t.load_dump(dir + "/" + prog + ext);
	return t;
}

/*
 * Every frame @w reports is one of @chain's, in order, none twice: the walk
 * may skip frames (and stop early) but never reports one that is not there.
 */
::testing::AssertionResult no_garbage(const Walk &w, const std::vector<std::string> &chain)
{
	size_t j = 0;

	for (size_t i = 0; i < w.names.size() && i < chain.size(); i++) {
		while (j < chain.size() && chain[j] != w.names[i])
			j++;
		if (j == chain.size()) {
			/* past the chain: glibc (no frame pointers) may follow main */
			if (i > 0 && w.names[i - 1] == "main")
				break;
			return ::testing::AssertionFailure()
			       << "entry " << i << " (" << w.names[i]
			       << ") is not the next frame of the chain: " << describe(w);
		}
		j++;
	}
	return ::testing::AssertionSuccess();
}

/* One CPU state of qemu-user's "-d cpu" log (AArch32: R00..R15, PSR). */
struct CpuState {
	u64 r[16];
	u32 psr;
};

std::vector<CpuState> read_cpu_log(const std::string &path)
{
	std::vector<CpuState> out;
	std::ifstream in(path);
	std::string line;
	CpuState s{};
	u32 seen = 0;

	while (std::getline(in, line)) {
		for (size_t i = 0; (i = line.find('R', i)) != std::string::npos; i++) {
			unsigned n;
			unsigned long v;

			if (sscanf(line.c_str() + i, "R%2u=%8lx", &n, &v) == 2 && n < 16) {
				s.r[n] = v;
				seen |= 1u << n;
			}
		}
		if (line.rfind("PSR=", 0) == 0) {
			s.psr = (u32)strtoul(line.c_str() + 4, nullptr, 16);
			if (seen == 0xffff)
				out.push_back(s);
			seen = 0;
		}
	}
	return out;
}

/*
 * The registers at the svc of syscall @nr (and r0 == @r0 unless ~0ull) as
 * the kernel sees them after it: pc past the "svc 0" (Thumb 0xdf00).
 */
bool svc_regs(const Target &t, const std::vector<CpuState> &log, u64 nr, u64 r0,
	      fsm_uw_regs &r)
{
	for (const CpuState &s : log) {
		u64 insn;

		if (!(s.psr & 0x20) || s.r[7] != nr || (r0 != ~0ull && s.r[0] != r0) ||
		    !t.read_code(s.r[15], 2, insn) || insn != 0xdf00)
			continue;
		r = {};
		r.ip = s.r[15] + 2;
		r.sp = s.r[13];
		r.fp = s.r[7];
		r.lr = s.r[14];
		r.alt_fp[0] = s.r[12];
		r.alt_fp[1] = s.r[11];
		r.mode = FSM_UW_MODE_A32;
		r.flags = FSM_UW_REGS_THUMB | FSM_UW_REGS_SYSCALL;
		return true;
	}
	return false;
}

/* Entry i of @w is in function want[i] (entry 0 as is, return addresses - 1). */
::testing::AssertionResult funcs_are(const Target &t, const Walk &w,
				     const std::vector<std::string> &want)
{
	if (w.e.size() < want.size())
		return ::testing::AssertionFailure() << "too short: " << describe(w);
	for (size_t i = 0; i < want.size(); i++)
		if (!t.in(i ? w.e[i] - 1 : w.e[i], want[i]))
			return ::testing::AssertionFailure()
			       << "entry " << i << " is not in " << want[i] << ": " << describe(w);
	return ::testing::AssertionSuccess();
}

#define LOAD(tgt, prog, is_leaf)				\
	Target tgt = load(prog, is_leaf);			\
	ASSERT_TRUE(tgt.error.empty()) << tgt.error;		\
	ASSERT_EQ(tgt.hdr.leaf, (u32)(is_leaf))

} /* namespace */

TEST(UnwindXarch, Arm64Chain)
{
	LOAD(t, "xc_a64", false);
	ASSERT_EQ(t.hdr.arch, XC_ARCH_AARCH64);
	Walk w = walk(t, regs_of(t, kPacMask));
	EXPECT_EQ(head(w, kChain.size()), kChain) << describe(w);
	EXPECT_EQ(w.res.flags, 0u) << describe(w);
}

TEST(UnwindXarch, Arm64PacStripped)
{
	LOAD(t, "xc_a64_pac", false);
	/* Pointer authentication really signed the saved return addresses. */
	u64 saved_lr = 0;
	ASSERT_TRUE(t.read(t.hdr.fp + 8, 8, saved_lr));
	EXPECT_NE(saved_lr & kPacMask, 0u) << "no PAC bits in the saved x30: not a PAC test";

	Walk w = walk(t, regs_of(t, kPacMask));
	EXPECT_EQ(head(w, kChain.size()), kChain) << describe(w);

	/* Without the mask the return addresses name nothing. */
	Walk raw = walk(t, regs_of(t, 0));
	ASSERT_GE(raw.names.size(), 2u);
	EXPECT_EQ(raw.names[1], "?") << describe(raw);
}

TEST(UnwindXarch, Arm64LeafSkipsItsCaller)
{
	LOAD(t, "xc_a64", true);
	/* GCC keeps no frame record in an AArch64 leaf: fp is still f3's. */
	Walk w = walk(t, regs_of(t, kPacMask));
	EXPECT_EQ(head(w, 4), (std::vector<std::string>{ "xc_capture_leaf", "xc_f2", "xc_f1",
							 "main" })) << describe(w);
	/* A caller that knows it is at a frameless point uses lr. */
	Walk e = walk(t, regs_of(t, kPacMask, FSM_UW_REGS_AT_ENTRY));
	EXPECT_EQ(head(e, kLeafChain.size()), kLeafChain) << describe(e);
}

TEST(UnwindXarch, A32GccChain)
{
	LOAD(t, "xc_a32_gcc", false);
	ASSERT_EQ(t.hdr.thumb, 0u);
	Walk w = walk(t, regs_of(t, 0));
	EXPECT_EQ(head(w, kChain.size()), kChain) << describe(w);
	/* The fixed GCC layout agrees; the frame record layout does not. */
	fsm_uw_regs r = regs_of(t, 0);
	r.mode = FSM_UW_MODE_A32_GCC;
	Walk g = walk(t, r);
	EXPECT_EQ(head(g, kChain.size()), kChain) << describe(g);
	r.mode = FSM_UW_MODE_A32_FRAME_RECORD;
	Walk c = walk(t, r);
	EXPECT_NE(head(c, kChain.size()), kChain) << describe(c);
}

TEST(UnwindXarch, A32ClangChain)
{
	LOAD(t, "xc_a32_clang", false);
	Walk w = walk(t, regs_of(t, 0));
	EXPECT_EQ(head(w, kChain.size()), kChain) << describe(w);
	fsm_uw_regs r = regs_of(t, 0);
	r.mode = FSM_UW_MODE_A32_GCC;
	Walk g = walk(t, r);
	EXPECT_NE(head(g, kChain.size()), kChain) << describe(g);
}

TEST(UnwindXarch, ThumbClangChainFlagged)
{
	LOAD(t, "xc_t32_clang", false);
	ASSERT_EQ(t.hdr.thumb, 1u);
	Walk w = walk(t, regs_of(t, 0));
	EXPECT_EQ(head(w, kChain.size()), kChain) << describe(w);
	EXPECT_TRUE(w.res.flags & FSM_UW_RES_UNRELIABLE) << describe(w);
	EXPECT_TRUE(w.res.flags & FSM_UW_RES_THUMB) << describe(w);
	/* Entries are code addresses: bit 0 cleared. */
	for (u64 a : w.e)
		EXPECT_EQ(a & 1, 0u) << describe(w);
}

TEST(UnwindXarch, ThumbGccFlagged)
{
	LOAD(t, "xc_t32_gcc", false);
	ASSERT_EQ(t.hdr.thumb, 1u);
	/* r7 points at xc_capture's locals: no record there follows a call. */
	Walk w = walk(t, regs_of(t, 0));
	EXPECT_EQ(w.names, (std::vector<std::string>{ "xc_capture" })) << describe(w);
	EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_NO_CALL) << describe(w);
	EXPECT_TRUE(w.res.flags & FSM_UW_RES_UNRELIABLE) << describe(w);
}

/*
 * A leaf without register pressure (review item 1): GCC -marm gives it
 * "push {fp}; add fp, sp, #0": fp points at the saved fp, [fp + 4] is the
 * caller's stack (a local or a saved register), lr is not saved. Neither
 * record layout may report [fp + 4] or [fp] as a frame; the leaf shape is
 * recognised on the top frame and lr taken, because it follows a call
 * (flagged). clang omits the frame of a leaf: fp is still the caller's, so
 * the caller is skipped, as on AArch64. GCC Thumb ("push {r7}; add r7, sp,
 * #0"): r7 is not trusted in Thumb state, the walk ends after the leaf.
 */
TEST(UnwindXarch, A32SinkLeaf)
{
	const std::vector<std::string> skip_caller = { "xc_sink_leaf", "xc_f3", "xc_f2",
						       "xc_f1", "main" };
	const struct {
		const char *prog;
		std::vector<std::string> want;
		u32 flags;
		u32 stop;	/* FSM_UW_NR_STOPS: not checked (glibc follows main) */
	} cases[] = {
		{ "xc_a32_gcc", kSinkChain, FSM_UW_RES_UNRELIABLE, FSM_UW_NR_STOPS },
		{ "xc_a32_clang", skip_caller, 0, FSM_UW_NR_STOPS },
		{ "xc_t32_clang", skip_caller, FSM_UW_RES_THUMB | FSM_UW_RES_UNRELIABLE,
		  FSM_UW_NR_STOPS },
		{ "xc_t32_gcc", { "xc_sink_leaf" }, FSM_UW_RES_UNRELIABLE, FSM_UW_STOP_NO_CALL },
	};
	for (const auto &c : cases) {
		SCOPED_TRACE(c.prog);
		LOAD(t, c.prog, XC_MODE_SINK);
		Walk w = walk(t, regs_of(t, 0));
		EXPECT_TRUE(no_garbage(w, kSinkChain));
		EXPECT_EQ(head(w, c.want.size()), c.want) << describe(w);
		if (c.stop != FSM_UW_NR_STOPS) {
			EXPECT_EQ(w.res.stop, c.stop) << describe(w);
		}
		/* Flags of the chain's frames only (glibc's Thumb code follows main). */
		Walk in = walk(t, regs_of(t, 0), (u32)c.want.size());
		EXPECT_EQ(in.res.flags, c.flags) << describe(in);
	}
}

/*
 * Real syscalls through Debian's Thumb glibc (review item 2), the registers
 * taken at the "svc 0" from qemu-user's CPU log, the stack dumped by the
 * program right after the wrapper returned. r7 holds the syscall number:
 * getpid() is an inline wrapper (push {r7}: lr, then the caller's frame at
 * the pushed r7 or r11), write() goes through __libc_do_syscall (a record
 * at sp; then the saved r7, or r11 for A32 callers).
 */
TEST(UnwindXarch, A32ThumbGlibcSyscalls)
{
	for (const char *prog : { "xc_a32_gcc", "xc_a32_clang", "xc_t32_clang", "xc_t32_gcc" }) {
		for (u32 mode : { (u32)XC_MODE_SYS_GETPID, (u32)XC_MODE_SYS_WRITE }) {
			const bool getpid = mode == XC_MODE_SYS_GETPID;
			const std::string name = std::string(prog) + (getpid ? ".getpid" : ".write");
			SCOPED_TRACE(name);
			LOAD(t, prog, mode);
			auto log = read_cpu_log(std::string(FSM_XC_DIR) + "/" + name + ".log");
			fsm_uw_regs r;
			ASSERT_TRUE(svc_regs(t, log, getpid ? 20 : 4, getpid ? ~0ull : 0xffffffffull, r))
				<< "no svc state in the log";
			ASSERT_GE(r.sp, t.hdr.sp) << "the dump starts above the svc's sp";
			const bool gcc_thumb = !strcmp(prog, "xc_t32_gcc");
			std::vector<std::string> want =
				getpid ? std::vector<std::string>{ "__getpid", "xc_capture_sys" }
				       : std::vector<std::string>{ "__libc_do_syscall",
								   "__libc_write" };
			/* write(): glibc's __libc_write keeps no frame: its caller is skipped. */
			if (!gcc_thumb)
				for (const char *f : { "xc_f3", "xc_f2", "xc_f1", "main" })
					want.push_back(f);
			Walk w = walk(t, r);
			EXPECT_TRUE(funcs_are(t, w, want));
			if (gcc_thumb) {
				/* GCC Thumb r7 points at the locals: the chain ends there. */
				EXPECT_EQ(w.e.size(), want.size()) << describe(w);
				EXPECT_EQ(w.res.stop, (u32)FSM_UW_STOP_NO_CALL) << describe(w);
			}
			EXPECT_TRUE(w.res.flags & FSM_UW_RES_UNRELIABLE) << describe(w);
			/* Taking r7 (the syscall number) for fp finds nothing. */
			fsm_uw_regs old = r;
			old.flags &= ~FSM_UW_REGS_SYSCALL;
			Walk o = walk(t, old);
			EXPECT_EQ(o.e.size(), 1u) << describe(o);
		}
	}
}

/* AArch32 leaves: both compilers keep the frame at -O2 with frame pointers. */
TEST(UnwindXarch, A32Leaves)
{
	for (const char *prog : { "xc_a32_gcc", "xc_a32_clang", "xc_t32_clang" }) {
		SCOPED_TRACE(prog);
		LOAD(t, prog, true);
		Walk w = walk(t, regs_of(t, 0));
		EXPECT_EQ(head(w, kLeafChain.size()), kLeafChain) << describe(w);
	}
}
