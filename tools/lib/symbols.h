/* SPDX-License-Identifier: GPL-2.0 */
/*
 * symbols.h - names for addresses.
 *
 * Kernel: the function resolver of libtraceevent (tep_find_function*),
 * fed by the kallsyms that trace-cmd saved in trace.dat, or, for `dump`,
 * by /proc/kallsyms or a System.map given to tep_parse_kallsyms().
 *
 * User: elfutils' libdwfl. A file of a frame is found by its path (under
 * --sysroot first), then by its GNU build-id in --debug-dir and
 * /usr/lib/debug (.build-id/xx/rest[.debug]); a file whose build-id
 * differs from the one the trace recorded is not used. Separate debug
 * information is found by libdwfl's standard search. A frame gives its
 * function, its inlined callers and source lines where DWARF has them.
 */
#ifndef STACKMAP_REPORT_SYMBOLS_H
#define STACKMAP_REPORT_SYMBOLS_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

struct tep_handle;
struct Dwfl;
struct Dwfl_Module;

namespace smr {

class KernelSyms {
public:
	/* tep: not owned; it must outlive this object */
	explicit KernelSyms(tep_handle *tep) : tep_(tep) {}
	/* "func+0xoff", or the bare address when no symbol covers it */
	std::string name_off(uint64_t ip);
	/* "func", or the bare address */
	std::string name(uint64_t ip);
	bool known(uint64_t ip);

private:
	struct Ent {
		std::string name;
		uint64_t start;
		bool found;
	};
	const Ent &lookup(uint64_t ip);
	tep_handle *tep_;
	std::unordered_map<uint64_t, Ent> cache_;
};

/* One user frame, possibly several functions when inlined. */
struct SymFrame {
	std::string func;	/* "" when unknown */
	std::string file;	/* source file, "" when unknown */
	int line = 0;
};

struct UserFrame {
	std::string where;	/* "path+0xoffset" (always) */
	std::vector<SymFrame> funcs;	/* innermost (inlined) first; may be empty */
};

/*
 * The text of a user frame after " => ", one line per function (innermost
 * inlined first): "func (file:line) (inlined) [path+0xoff]", or "path+0xoff"
 * alone when no function is known. stackmap-report report and the trace-cmd
 * plugin print the same lines.
 */
std::vector<std::string> user_frame_lines(const UserFrame &f);

class UserSyms {
public:
	UserSyms(std::string sysroot, std::vector<std::string> debug_dirs);
	~UserSyms();
	UserSyms(const UserSyms &) = delete;
	UserSyms &operator=(const UserSyms &) = delete;
	/*
	 * frame: (file id, offset | flags); path/build_id from file_map
	 * (path "" when the id has no file_map); ret: a return address
	 * (looked up at offset - 1).
	 */
	UserFrame frame(uint64_t file_id, uint64_t word, const std::string &path,
			const std::string &build_id, bool ret);
	/* e_machine of the file (EM_386, EM_ARM, ...), 0 when it is not found */
	uint16_t machine(uint64_t file_id, const std::string &path,
			 const std::string &build_id);

private:
	struct Mod {
		Dwfl *dwfl = nullptr;
		Dwfl_Module *mod = nullptr;
	};
	Mod *module(uint64_t file_id, const std::string &path,
		    const std::string &build_id);
	bool open_candidate(const std::string &file, const std::string &build_id,
			    Mod *m);
	std::string sysroot_;
	std::vector<std::string> debug_dirs_;
	std::string debuginfo_path_;
	char *debuginfo_cstr_ = nullptr;
	struct Callbacks;	/* libdwfl's, shared by every Dwfl */
	std::unique_ptr<Callbacks> cbs_;
	std::map<uint64_t, std::unique_ptr<Mod>> mods_;
	std::map<std::pair<uint64_t, uint64_t>, std::vector<SymFrame>> cache_;
};

} /* namespace smr */

#endif
