// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_dump.cpp - stackmap-report dump: decode a stack_map_bin snapshot
 * (FSMB) as text or JSON, its kernel frames named from /proc/kallsyms or
 * a System.map, its user frames by libdwfl.
 */
#include <traceevent/event-parse.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "abi.h"
#include "commands.h"
#include "frames.h"
#include "fsmb.h"
#include "resolve.h"
#include "symbols.h"

namespace smr::report {

namespace {

std::string slurp(const std::string &path, bool *ok)
{
	std::ifstream in(path, std::ios::binary);
	std::stringstream ss;
	ss << in.rdbuf();
	*ok = bool(in);
	return ss.str();
}

std::string jstr(const std::string &s)
{
	std::string o = "\"";
	for (unsigned char c : s) {
		if (c == '"' || c == '\\') {
			o += '\\';
			o += char(c);
		} else if (c < 0x20) {
			char b[8];
			snprintf(b, sizeof(b), "\\u%04x", c);
			o += b;
		} else {
			o += char(c);
		}
	}
	return o + "\"";
}

} /* namespace */

int run_dump(const Options &o)
{
	Fsmb f;
	std::string err;
	if (!fsmb_read_file(o.dump_file, &f, &err)) {
		std::cerr << "stackmap-report: " << err << "\n";
		return 1;
	}
	bool ok = false;
	std::string syms = slurp(o.kallsyms, &ok);
	std::unique_ptr<tep_handle, void (*)(tep_handle *)> tep(tep_alloc(), tep_free);
	int64_t reloc = 0;
	bool have_syms = false;
	if (!ok) {
		std::cerr << "stackmap-report: warning: cannot read " << o.kallsyms
			  << ": kernel frames are not symbolized\n";
	} else if (!f.hidden() && (f.flags & FSMB_F_KERNEL)) {
		if (tep_parse_kallsyms(tep.get(), syms.c_str()) < 0) {
			std::cerr << "stackmap-report: " << o.kallsyms
				  << ": not a kallsyms / System.map file\n";
			return 1;
		}
		/* the reference symbol's address there: the KASLR offset */
		std::istringstream in(syms);
		std::string l;
		uint64_t ref = 0;
		while (std::getline(in, l)) {
			std::istringstream ls(l);
			std::string a, ty, name;
			if ((ls >> a >> ty >> name) && name == FSMB_REF_SYMBOL &&
			    (ty == "T" || ty == "t")) {
				ref = strtoull(a.c_str(), nullptr, 16);
				break;
			}
		}
		if (!ref) {
			std::cerr << "stackmap-report: warning: no '" FSMB_REF_SYMBOL "' in "
				  << o.kallsyms << " (addresses hidden?): kernel frames are "
				     "not symbolized\n";
		} else if (ref != f.ref_symbol_addr && !o.system_map) {
			std::cerr << "stackmap-report: " << o.dump_file
				  << " is from another boot than " << o.kallsyms << " ('"
				  FSMB_REF_SYMBOL "' at " << hex64(f.ref_symbol_addr) << ", not "
				  << hex64(ref) << "): use --system-map of that kernel\n";
			return 1;
		} else {
			reloc = int64_t(f.ref_symbol_addr - ref);
			have_syms = true;
		}
	}
	KernelSyms ks(tep.get());
	UserSyms us(o.sysroot, o.debug_dirs);
	auto ksym = [&](uint64_t ip) {
		return have_syms ? ks.name_off(ip - uint64_t(reloc)) : hex64(ip);
	};
	Resolver files;
	for (const auto &[id, ff] : f.files)
		files.add_file_map(0, 0, id, ff.path, ff.build_id);
	auto uframes = [&](const FsmbUStack &u) {
		std::vector<UserFrame> v;
		for (size_t i = 0; i < u.frames.size(); i++) {
			const FileInfo *fi = files.file(u.frames[i].first);
			v.push_back(us.frame(u.frames[i].first, u.frames[i].second,
					     fi ? fi->path : "", fi ? fi->build_id : "",
					     i > 0));
		}
		return v;
	};
	/* ELF machine of the stack's first file that is found (compat_name()) */
	auto umachine = [&](const FsmbUStack &u) -> uint16_t {
		if (!(u.flags & FSM_USF_IA32))
			return 0;
		for (const auto &fr : u.frames) {
			const FileInfo *fi = files.file(fr.first);
			uint16_t m = fi ? us.machine(fr.first, fi->path, fi->build_id) : 0;
			if (m)
				return m;
		}
		return 0;
	};
	if (o.json) {
		std::cout << "{\"version\":" << f.version << ",\"instance\":" << jstr(f.instance)
			  << ",\"generation\":" << f.generation << ",\"bits\":" << f.bits
			  << ",\"flags\":" << f.flags << ",\"hidden\":"
			  << (f.hidden() ? "true" : "false") << ",\"ref_symbol_addr\":"
			  << jstr(hex64(f.ref_symbol_addr)) << ",\"ugeneration\":"
			  << f.ugeneration << ",\"kernel_stacks\":[";
		for (size_t i = 0; i < f.kstacks.size(); i++) {
			const auto &k = f.kstacks[i];
			std::cout << (i ? "," : "") << "{\"index\":" << k.stack_id
				  << ",\"stack_id\":" << f.record_id(k.stack_id)
				  << ",\"hits\":" << k.hits << ",\"frames\":[";
			for (size_t j = 0; j < k.ips.size(); j++)
				std::cout << (j ? "," : "") << "{\"ip\":" << jstr(hex64(k.ips[j]))
					  << ",\"sym\":" << jstr(ksym(k.ips[j])) << "}";
			std::cout << "]}";
		}
		std::cout << "],\"user_stacks\":[";
		for (size_t i = 0; i < f.ustacks.size(); i++) {
			const auto &u = f.ustacks[i];
			std::cout << (i ? "," : "") << "{\"ustack_id\":" << u.ustack_id
				  << ",\"hits\":" << u.hits << ",\"flags\":" << u.flags
				  << ",\"stop\":" << unsigned(u.stop) << ",\"mm\":"
				  << jstr(hex64(u.mm)) << ",\"frames\":[";
			auto v = uframes(u);
			for (size_t j = 0; j < v.size(); j++) {
				std::cout << (j ? "," : "") << "{\"where\":" << jstr(v[j].where)
					  << ",\"funcs\":[";
				for (size_t q = 0; q < v[j].funcs.size(); q++)
					std::cout << (q ? "," : "") << "{\"func\":"
						  << jstr(v[j].funcs[q].func) << ",\"file\":"
						  << jstr(v[j].funcs[q].file) << ",\"line\":"
						  << v[j].funcs[q].line << "}";
				std::cout << "]}";
			}
			std::cout << "]}";
		}
		std::cout << "],\"files\":[";
		bool first = true;
		for (const auto &[id, ff] : f.files) {
			std::cout << (first ? "" : ",") << "{\"file_id\":" << jstr(hex64(id))
				  << ",\"path\":" << jstr(ff.path) << ",\"build_id\":"
				  << jstr(ff.build_id) << "}";
			first = false;
		}
		std::cout << "]}\n";
		return 0;
	}
	std::cout << "FSMB version " << f.version << ", instance "
		  << (f.instance.empty() ? "(top level)" : f.instance) << ", generation "
		  << f.generation << ", bits " << f.bits << ", flags " << hex64(f.flags)
		  << (f.hidden() ? " (kernel addresses hidden)" : "")
		  << (f.flags & FSMB_F_PARTIAL ? " (partial)" : "") << "\n"
		  << "ref_symbol_addr " << hex64(f.ref_symbol_addr) << ", "
		  << f.kstacks.size() << " kernel stacks, " << f.ustacks.size()
		  << " user stacks (generation " << f.ugeneration << "), "
		  << f.files.size() << " files\n";
	for (const auto &k : f.kstacks) {
		/* as the kernel's stack_map: the records' id, then its parts */
		std::cout << "stack_id " << f.record_id(k.stack_id) << " [gen " << f.generation
			  << ", index " << k.stack_id << ", hits " << k.hits << ", depth "
			  << k.ips.size() << "]\n";
		for (size_t j = 0; j < k.ips.size(); j++)
			std::cout << "  [" << j << "] " << ksym(k.ips[j]) << "\n";
	}
	for (const auto &u : f.ustacks) {
		std::cout << "ustack_id " << u.ustack_id << " [gen " << f.ugeneration
			  << ", hits " << u.hits << ", depth "
			  << u.frames.size() << ", mm " << hex64(u.mm) << ", stop "
			  << unsigned(u.stop) << ustack_flag_text(u.flags, umachine(u)) << "]\n";
		auto v = uframes(u);
		for (size_t j = 0; j < v.size(); j++) {
			std::cout << "  [" << j << "] " << v[j].where;
			for (const auto &sf : v[j].funcs) {
				std::cout << " " << (sf.func.empty() ? "??" : sf.func);
				if (!sf.file.empty())
					std::cout << " (" << sf.file << ":" << sf.line << ")";
			}
			std::cout << "\n";
		}
	}
	for (const auto &[id, ff] : f.files)
		std::cout << "file " << hex64(id) << " "
			  << (ff.build_id.empty() ? "-" : ff.build_id) << " " << ff.path << "\n";
	return 0;
}

void help_dump()
{
	std::cout << "usage: stackmap-report dump FILE.fsmb [OPTIONS]\n\n"
		     "Decode a stack_map_bin snapshot (FSMB version 4).\n\n"
		     "      --kallsyms FILE   kernel symbols (default /proc/kallsyms)\n"
		     "      --system-map FILE kernel symbols from a System.map (relocated\n"
		     "                        by the snapshot's ref_symbol_addr)\n"
		     "      --json            JSON instead of text\n"
		     "      --sysroot DIR, --debug-dir DIR   as for the other commands\n"
		     "  -h, --help            this text\n";
}

} /* namespace smr::report */
