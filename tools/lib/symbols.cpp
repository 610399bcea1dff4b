// SPDX-License-Identifier: GPL-2.0
/*
 * symbols.cpp - see symbols.h.
 */
#include "symbols.h"
#include "abi.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <traceevent/event-parse.h>
#include <unistd.h>

namespace smr {

struct UserSyms::Callbacks {
	Dwfl_Callbacks c;
};

namespace {

std::string hexaddr(uint64_t a)
{
	char b[24];
	snprintf(b, sizeof(b), "0x%" PRIx64, a);
	return b;
}

std::string demangle(const char *name)
{
	if (!name)
		return "";
	if (name[0] != '_' || name[1] != 'Z')
		return name;
	int st = 0;
	char *d = abi::__cxa_demangle(name, nullptr, nullptr, &st);
	if (!d || st)
		return name;
	std::string s(d);
	free(d);
	return s;
}

} /* namespace */

const KernelSyms::Ent &KernelSyms::lookup(uint64_t ip)
{
	auto it = cache_.find(ip);
	if (it != cache_.end())
		return it->second;
	Ent e{"", 0, false};
	const char *n = ip ? tep_find_function(tep_, ip) : nullptr;
	if (n) {
		e.name = n;
		e.start = tep_find_function_address(tep_, ip);
		e.found = true;
	}
	return cache_.emplace(ip, std::move(e)).first->second;
}

std::string KernelSyms::name_off(uint64_t ip)
{
	const Ent &e = lookup(ip);
	if (!e.found)
		return hexaddr(ip);
	return e.name + "+" + hexaddr(ip - e.start);
}

std::vector<std::string> user_frame_lines(const UserFrame &f)
{
	std::vector<std::string> out;
	if (f.funcs.empty()) {
		out.push_back(f.where);
		return out;
	}
	for (size_t j = 0; j < f.funcs.size(); j++) {
		const SymFrame &sf = f.funcs[j];
		std::string l = sf.func.empty() ? "??" : sf.func;
		if (!sf.file.empty())
			l += " (" + sf.file + ":" + std::to_string(sf.line) + ")";
		if (j + 1 < f.funcs.size())
			l += " (inlined)";
		out.push_back(l + " [" + f.where + "]");
	}
	return out;
}

std::string KernelSyms::name(uint64_t ip)
{
	const Ent &e = lookup(ip);
	return e.found ? e.name : hexaddr(ip);
}

bool KernelSyms::known(uint64_t ip)
{
	return lookup(ip).found;
}

UserSyms::UserSyms(std::string sysroot, std::vector<std::string> debug_dirs)
	: sysroot_(std::move(sysroot)), debug_dirs_(std::move(debug_dirs))
{
	/* libdwfl's search path: "+" checks CRCs, ".debug" and the dirs */
	debuginfo_path_ = "-:.debug";
	for (const auto &d : debug_dirs_)
		debuginfo_path_ += ":" + d;
	debuginfo_path_ += ":/usr/lib/debug";
	debuginfo_cstr_ = strdup(debuginfo_path_.c_str());
	cbs_ = std::make_unique<Callbacks>();
	cbs_->c.find_elf = dwfl_build_id_find_elf;
	cbs_->c.find_debuginfo = dwfl_standard_find_debuginfo;
	cbs_->c.section_address = dwfl_offline_section_address;
	cbs_->c.debuginfo_path = &debuginfo_cstr_;
	elf_version(EV_CURRENT);
}

UserSyms::~UserSyms()
{
	for (auto &[id, m] : mods_)
		if (m->dwfl)
			dwfl_end(m->dwfl);
	free(debuginfo_cstr_);
}

bool UserSyms::open_candidate(const std::string &file, const std::string &build_id,
			      Mod *m)
{
	if (access(file.c_str(), R_OK))
		return false;
	Dwfl *d = dwfl_begin(&cbs_->c);
	if (!d)
		return false;
	dwfl_report_begin(d);
	Dwfl_Module *mod = dwfl_report_elf(d, file.c_str(), file.c_str(), -1, 0, false);
	dwfl_report_end(d, nullptr, nullptr);
	if (!mod) {
		dwfl_end(d);
		return false;
	}
	if (!build_id.empty()) {
		const unsigned char *bits;
		GElf_Addr vaddr;
		int n = dwfl_module_build_id(mod, &bits, &vaddr);
		std::string got;
		static const char digits[] = "0123456789abcdef";
		for (int i = 0; i < n; i++) {
			got += digits[bits[i] >> 4];
			got += digits[bits[i] & 15];
		}
		if (got != build_id) {
			dwfl_end(d);
			return false;
		}
	}
	m->dwfl = d;
	m->mod = mod;
	return true;
}

UserSyms::Mod *UserSyms::module(uint64_t file_id, const std::string &path,
				const std::string &build_id)
{
	auto it = mods_.find(file_id);
	if (it != mods_.end())
		return it->second->mod ? it->second.get() : nullptr;
	auto m = std::make_unique<Mod>();
	std::vector<std::string> cands;
	std::string p = path;
	const char del[] = " (deleted)";
	if (p.size() > sizeof(del) - 1 &&
	    p.compare(p.size() - (sizeof(del) - 1), sizeof(del) - 1, del) == 0)
		p.resize(p.size() - (sizeof(del) - 1));
	if (!p.empty() && p[0] == '/') {
		if (!sysroot_.empty())
			cands.push_back(sysroot_ + p);
		cands.push_back(p);
	}
	if (build_id.size() > 2) {
		std::vector<std::string> dirs = debug_dirs_;
		dirs.push_back("/usr/lib/debug");
		for (const auto &d : dirs) {
			std::string b = d + "/.build-id/" + build_id.substr(0, 2) + "/" +
					build_id.substr(2);
			cands.push_back(b);
			cands.push_back(b + ".debug");
		}
	}
	for (const auto &c : cands)
		if (open_candidate(c, build_id, m.get()))
			break;
	Mod *r = m->mod ? m.get() : nullptr;
	mods_[file_id] = std::move(m);
	return r;
}

UserFrame UserSyms::frame(uint64_t file_id, uint64_t word, const std::string &path,
			  const std::string &build_id, bool ret)
{
	UserFrame f;
	uint64_t off = word & FSM_UFR_OFFSET_MASK;
	char b[64];
	/* frames without a file: the kind and the offset, in this order */
	static const struct {
		uint64_t flag;
		const char *prefix;
	} kinds[] = {
		{FSM_UFR_NOVMA, "[novma] 0x"},
		{FSM_UFR_ANON, "[anon] 0x"},
		{FSM_UFR_VDSO, "[vdso]+0x"},
		{FSM_UFR_SPECIAL, "[special] 0x"},
	};
	for (const auto &k : kinds) {
		if (word & k.flag) {
			snprintf(b, sizeof(b), "%s%" PRIx64, k.prefix, off);
			f.where = b;
			return f;
		}
	}
	snprintf(b, sizeof(b), "+0x%" PRIx64, off);
	if (path.empty()) {
		char id[32];
		snprintf(id, sizeof(id), "file:%016" PRIx64, file_id);
		f.where = std::string(id) + b;
		return f;
	}
	f.where = path + b;
	uint64_t look = ret && off ? off - 1 : off;
	auto key = std::make_pair(file_id, look);
	auto c = cache_.find(key);
	if (c != cache_.end()) {
		f.funcs = c->second;
		return f;
	}
	std::vector<SymFrame> &out = cache_[key];
	Mod *m = module(file_id, path, build_id);
	if (!m) {
		return f;
	}
	/* file offset -> address through the PT_LOAD program headers */
	GElf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	size_t nph = 0;
	bool mapped = false;
	GElf_Addr addr = 0;
	if (elf && elf_getphdrnum(elf, &nph) == 0) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, int(i), &ph) || ph.p_type != PT_LOAD)
				continue;
			if (look >= ph.p_offset && look - ph.p_offset < ph.p_memsz) {
				addr = look - ph.p_offset + ph.p_vaddr + bias;
				mapped = true;
				break;
			}
		}
	}
	if (!mapped)
		return f;
	/* DWARF scopes: inlined subroutines, innermost first */
	Dwarf_Addr dbias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(m->mod, addr, &dbias);
	Dwarf_Die *scopes = nullptr;
	int ns = cu ? dwarf_getscopes(cu, addr - dbias, &scopes) : 0;
	std::string src;
	int line = 0;
	Dwfl_Line *dl = dwfl_module_getsrc(m->mod, addr);
	if (dl) {
		const char *s = dwfl_lineinfo(dl, nullptr, &line, nullptr, nullptr, nullptr);
		if (s)
			src = s;
	}
	Dwarf_Files *files = nullptr;
	size_t nfiles = 0;
	if (cu)
		dwarf_getsrcfiles(cu, &files, &nfiles);
	for (int i = 0; i < ns; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		const char *n = dwarf_diename(&scopes[i]);
		Dwarf_Attribute a;
		const char *ln = nullptr;
		if (dwarf_attr_integrate(&scopes[i], DW_AT_linkage_name, &a))
			ln = dwarf_formstring(&a);
		out.push_back({ln ? demangle(ln) : (n ? n : ""), src, line});
		if (tag == DW_TAG_subprogram)
			break;
		/* the caller's line is the call site of this inlined instance */
		Dwarf_Word cf = 0, cl = 0;
		src.clear();
		line = 0;
		if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &cf) == 0 &&
		    files && cf < nfiles) {
			const char *s = dwarf_filesrc(files, cf, nullptr, nullptr);
			if (s)
				src = s;
		}
		if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &cl) == 0)
			line = int(cl);
	}
	free(scopes);
	if (out.empty() || out.back().func.empty()) {
		/* no DWARF: the symbol table */
		GElf_Off so;
		GElf_Sym sym;
		const char *n = dwfl_module_addrinfo(m->mod, addr, &so, &sym, nullptr,
						     nullptr, nullptr);
		if (n) {
			if (out.empty())
				out.push_back({demangle(n), src, line});
			else
				out.back().func = demangle(n);
		}
	}
	f.funcs = out;
	return f;
}

uint16_t UserSyms::machine(uint64_t file_id, const std::string &path,
			   const std::string &build_id)
{
	Mod *m = module(file_id, path, build_id);
	GElf_Addr bias = 0;
	Elf *elf = m ? dwfl_module_getelf(m->mod, &bias) : nullptr;
	GElf_Ehdr eh;

	if (!elf || !gelf_getehdr(elf, &eh))
		return 0;
	return eh.e_machine;
}

} /* namespace smr */
