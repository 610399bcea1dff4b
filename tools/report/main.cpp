// SPDX-License-Identifier: GPL-2.0
/*
 * stackmap-report - read the stack ids of ftrace_stackmap out of a
 * trace-cmd recording (Documentation/stackmap-report.rst).
 *
 *   stackmap-report [report|folded|stats] [-i trace.dat] [filters] [--map F]
 *   stackmap-report pprof [-o FILE] [-i trace.dat] [filters] [--map F]
 *   stackmap-report dump FILE.fsmb [--kallsyms F | --system-map F] [--json]
 *
 * Layers: trace.cpp reads the file (libtracecmd, libtraceevent),
 * resolve.cpp turns ids into stacks (no library), symbols.cpp names the
 * frames (libtraceevent's kallsyms, libdwfl), pprof.cpp builds the
 * profile.proto message, this file prints.
 */
#include <getopt.h>
#include <unistd.h>
#include <sys/stat.h>
#include <traceevent/event-parse.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "abi.h"
#include "fsmb.h"
#include "pprof.h"
#include "progress.h"
#include "resolve.h"
#include "symbols.h"
#include "trace.h"

using namespace smr;

namespace {

const char *const kUsage =
	"usage: stackmap-report [COMMAND] [OPTIONS]\n"
	"\n"
	"Stacks of ftrace_stackmap recordings (trace-cmd record -e stackmap ...).\n"
	"\n"
	"Commands:\n"
	"  report            each source event with its kernel and user stack (default)\n"
	"  folded            'comm;user frames;kernel frames count' (flamegraph.pl, speedscope)\n"
	"  stats             top stacks per source event, with counts and shares\n"
	"  pprof             a gzipped profile.proto for pprof (-o FILE)\n"
	"  dump FILE.fsmb    decode a stack_map_bin snapshot\n"
	"\n"
	"Run 'stackmap-report COMMAND --help' for the options of a command.\n"
	"Exit status: 0 ok, 1 bad input (the message says why), 2 bad usage.\n";

const char *const kTraceOpts =
	"  -i, --input FILE      trace.dat to read (default: trace.dat)\n"
	"      --map FILE.fsmb   add a stack_map_bin snapshot of the same boot,\n"
	"                        module load, instance and generation (repeatable)\n"
	"      --event NAME      only source events NAME (system:event or event; repeatable)\n"
	"      --instance NAME   only the buffer of instance NAME ('top': top level; repeatable)\n"
	"      --pid PID         only records of task PID (repeatable)\n"
	"      --comm COMM       only records of tasks named COMM (repeatable)\n"
	"      --since SEC       only records at or after SEC (trace seconds)\n"
	"      --until SEC       only records at or before SEC\n"
	"      --sysroot DIR     look user files up under DIR first\n"
	"      --debug-dir DIR   separate debug info / .build-id tree (repeatable;\n"
	"                        /usr/lib/debug is always searched)\n"
	"      --progress-min MB progress on stderr when it is a terminal and the\n"
	"                        file has at least MB MiB (default 32)\n"
	"  -h, --help            this text\n";

struct Options {
	std::string cmd = "report";
	std::string input = "trace.dat";
	std::vector<std::string> maps;
	std::vector<std::string> events;
	std::vector<std::string> instances;
	std::vector<int> pids;
	std::vector<std::string> comms;
	double since = -1, until = -1;
	std::string sysroot;
	std::vector<std::string> debug_dirs;
	int top = 10;
	bool addr = false;
	bool json = false;
	std::string kallsyms = "/proc/kallsyms";
	std::string dump_file;
	std::string output;	/* pprof: "" = stdout */
	double progress_min_mb = 32;
};

int usage_error(const std::string &msg)
{
	std::cerr << "stackmap-report: " << msg << "\n"
		  << "Try 'stackmap-report --help'.\n";
	return 2;
}

void help(const std::string &cmd)
{
	if (cmd == "report")
		std::cout << "usage: stackmap-report report [OPTIONS]\n\n"
			     "Each source event followed by its kernel stack (' => ' lines,\n"
			     "innermost first) and, when recorded, its user stack after a\n"
			     "' <user stack trace>' line. Unresolved ids say so.\n\n"
			  << kTraceOpts
			  << "      --addr            also print each kernel frame's address\n";
	else if (cmd == "folded")
		std::cout << "usage: stackmap-report folded [OPTIONS]\n\n"
			     "One line per distinct stack: comm;user frames (outermost\n"
			     "first);kernel frames (suffixed _[k]) COUNT. The counts add up\n"
			     "to the number of id records (stack_id, stack_id_user,\n"
			     "stack_fallback) that pass the filters.\n\n"
			  << kTraceOpts;
	else if (cmd == "stats")
		std::cout << "usage: stackmap-report stats [OPTIONS]\n\n"
			     "Per source event: records, unresolved, and the top stacks with\n"
			     "their counts and shares.\n\n"
			  << kTraceOpts
			  << "      --top N           stacks per event (default 10, 0: all)\n";
	else if (cmd == "pprof")
		std::cout << "usage: stackmap-report pprof [-o FILE] [OPTIONS]\n\n"
			     "A gzipped google pprof profile (profile.proto): one sample\n"
			     "value 'events/count' per stack and labels comm, pid, event\n"
			     "(and instance); the values add up to the id records that pass\n"
			     "the filters. Kernel frames are in mapping '[kernel]', user\n"
			     "frames in one mapping per file (path, build-id, address =\n"
			     "file offset). View with 'pprof -http=: FILE'.\n\n"
			     "  -o, --output FILE     write to FILE (default: standard output,\n"
			     "                        refused when it is a terminal)\n"
			  << kTraceOpts;
	else if (cmd == "dump")
		std::cout << "usage: stackmap-report dump FILE.fsmb [OPTIONS]\n\n"
			     "Decode a stack_map_bin snapshot (FSMB version 4).\n\n"
			     "      --kallsyms FILE   kernel symbols (default /proc/kallsyms)\n"
			     "      --system-map FILE kernel symbols from a System.map (relocated\n"
			     "                        by the snapshot's ref_symbol_addr)\n"
			     "      --json            JSON instead of text\n"
			     "      --sysroot DIR, --debug-dir DIR   as for the other commands\n"
			     "  -h, --help            this text\n";
	else
		std::cout << kUsage;
}

std::string slurp(const std::string &path, bool *ok)
{
	std::ifstream in(path, std::ios::binary);
	std::stringstream ss;
	ss << in.rdbuf();
	*ok = bool(in);
	return ss.str();
}

std::string hex64(uint64_t v)
{
	char b[24];
	snprintf(b, sizeof(b), "0x%" PRIx64, v);
	return b;
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

std::string event_name(tep_event *ev)
{
	if (!ev)
		return "[unknown]";
	return std::string(ev->system) + ":" + ev->name;
}

/* ---- one id record, resolved ---- */

struct Sample {
	const Rec *id;			/* the id record */
	std::string source;		/* "system:event" of its source */
	std::string line;		/* report: the source's line */
	std::string comm;
	std::string instance;
	bool fallback = false;
	KernelResult k;
	UserResult u;
	bool has_user = false;		/* the record asked for a user stack */
};

const char *const kReasons[] = {
	"", "map_full", "arena_full", "probe_limit", "busy", "resetting",
	"invalid", "nested",
};

class Printer {
public:
	Printer(const Options &o, const Trace &t, KernelSyms &ks, UserSyms &us,
		const Resolver &res)
		: o_(o), t_(t), ks_(ks), us_(us), res_(res) {}

	/* the ips of a record's kernel stack; nullptr: see kernel_frames() */
	const std::vector<uint64_t> *kernel_ips(const Sample &s)
	{
		if (s.fallback)
			return s.id->reason == FSM_SID_REASON_NESTED ? nullptr : &s.id->ips;
		return s.k.status == Status::OK ? s.k.ips : nullptr;
	}

	/* one record into the profile: the locations of folded_key() */
	void pprof(const Sample &s, PprofBuilder &b)
	{
		std::vector<uint64_t> locs;	/* innermost first */
		if (const std::vector<uint64_t> *ips = kernel_ips(s)) {
			for (uint64_t ip : *ips)
				locs.push_back(b.kernel_location(ip, clean(ks_.name(ip))));
		} else {
			for (const auto &f : kernel_frames(s, true))
				locs.push_back(b.pseudo_location(clean(f)));
		}
		if (s.has_user && s.u.status != Status::OK) {
			locs.push_back(b.pseudo_location(clean(user_problem(s))));
		} else if (s.has_user) {
			const auto &fr = *s.u.frames;
			auto ufs = user_frames(fr);
			for (size_t i = 0; i < fr.size(); i++) {
				const FileInfo *f = res_.file(fr[i].first);
				uint64_t w = fr[i].second;
				const uint64_t nofile = FSM_UFR_ANON | FSM_UFR_VDSO |
							FSM_UFR_NOVMA | FSM_UFR_SPECIAL;
				if (!f || f->path.empty() || (w & nofile)) {
					locs.push_back(b.pseudo_location(clean(ufs[i].where)));
					continue;
				}
				std::vector<SymFrame> funcs = ufs[i].funcs;
				for (auto &sf : funcs)
					sf.func = clean(sf.func);
				locs.push_back(b.user_location(fr[i].first, f->path, f->build_id,
							       w & FSM_UFR_OFFSET_MASK, funcs,
							       clean(ufs[i].where)));
			}
		}
		PprofBuilder::Labels l;
		l.comm = s.comm.empty() ? "[unknown]" : s.comm;
		l.pid = s.id->pid;
		l.event = s.source;
		l.instance = s.instance;
		b.add_sample(locs, l);
	}

	std::vector<std::string> kernel_frames(const Sample &s, bool folded)
	{
		std::vector<std::string> out;
		const std::vector<uint64_t> *ips = nullptr;
		if (s.fallback) {
			if (s.id->reason == FSM_SID_REASON_NESTED) {
				out.push_back("[no stack: nested]");
				return out;
			}
			ips = &s.id->ips;
		} else if (s.k.status == Status::OK) {
			ips = s.k.ips;
		} else {
			out.push_back("[unresolved stack_id " + std::to_string(s.id->stack_id) +
				      " gen " + std::to_string(s.k.generation) + " index " +
				      std::to_string(FSM_SID_INDEX(s.id->stack_id)) + "]");
			return out;
		}
		for (uint64_t ip : *ips) {
			if (folded)
				out.push_back(ks_.name(ip));
			else if (o_.addr)
				out.push_back(ks_.name_off(ip) + " <" + hex64(ip) + ">");
			else
				out.push_back(ks_.name_off(ip));
		}
		return out;
	}

	/* user frames innermost first; each one or more (inlined) lines */
	std::vector<UserFrame> user_frames(const std::vector<UFrame> &frames)
	{
		std::vector<UserFrame> out;
		for (size_t i = 0; i < frames.size(); i++) {
			const FileInfo *f = res_.file(frames[i].first);
			out.push_back(us_.frame(frames[i].first, frames[i].second,
						f ? f->path : "", f ? f->build_id : "",
						i > 0));
		}
		return out;
	}

	std::string user_problem(const Sample &s)
	{
		switch (s.u.status) {
		case Status::MISSING:
			return "[user stack not in the trace: cookie " +
			       hex64(s.id->cookie) + "]";
		case Status::UNRESOLVED:
			return "[unresolved ustack_id " + std::to_string(s.u.rec->ustack_id) +
			       " gen " + std::to_string(s.u.rec->gen) + "]";
		case Status::NONE:
			return "[no user stack: reason " + std::to_string(s.u.rec->reason) + "]";
		default:
			return "";
		}
	}

	void report(const Sample &s)
	{
		std::string pre = s.instance.empty() ? "" : s.instance + ": ";
		if (s.line.empty())
			std::cout << pre << "[no source event before this record on its CPU]\n";
		else
			std::cout << pre << s.line << "\n";
		if (s.fallback)
			std::cout << " <fallback: no id, reason " << s.id->reason << " "
				  << (s.id->reason <= 7 ? kReasons[s.id->reason] : "?") << ">\n";
		for (const auto &f : kernel_frames(s, false))
			std::cout << " => " << f << "\n";
		if ((s.fallback ? s.id->flags : 0) & FSM_SID_F_TRUNCATED || s.k.truncated)
			std::cout << " => [truncated]\n";
		if (!s.has_user)
			return;
		std::cout << " <user stack trace>\n";
		if (s.u.status != Status::OK) {
			std::cout << " => " << user_problem(s) << "\n";
			return;
		}
		for (const auto &uf : user_frames(*s.u.frames))
			for (const auto &l : user_frame_lines(uf))
				std::cout << " => " << l << "\n";
		if (s.u.truncated)
			std::cout << " => [truncated]\n";
		if (s.u.unreliable)
			std::cout << " => [unreliable: AArch32 frames may be wrong or missing]\n";
	}

	std::string folded_key(const Sample &s)
	{
		std::string k = clean(s.comm.empty() ? "[unknown]" : s.comm);
		if (s.has_user) {
			if (s.u.status != Status::OK) {
				k += ";" + clean(user_problem(s));
			} else {
				auto ufs = user_frames(*s.u.frames);
				for (auto it = ufs.rbegin(); it != ufs.rend(); ++it) {
					if (it->funcs.empty()) {
						k += ";" + clean(it->where);
						continue;
					}
					for (auto f = it->funcs.rbegin(); f != it->funcs.rend(); ++f)
						k += ";" + clean(f->func.empty() ? it->where : f->func);
				}
			}
		}
		auto kf = kernel_frames(s, true);
		for (auto it = kf.rbegin(); it != kf.rend(); ++it)
			k += ";" + clean(*it) + "_[k]";
		return k;
	}

private:
	static std::string clean(std::string s)
	{
		for (char &c : s)
			if (c == ';' || c == '\n')
				c = ':';
		return s;
	}
	const Options &o_;
	const Trace &t_;
	KernelSyms &ks_;
	UserSyms &us_;
	const Resolver &res_;
};

bool want_event(const Options &o, const std::string &name)
{
	if (o.events.empty())
		return true;
	for (const auto &e : o.events) {
		if (e == name)
			return true;
		auto c = name.find(':');
		if (e.find(':') == std::string::npos && c != std::string::npos &&
		    name.compare(c + 1, std::string::npos, e) == 0)
			return true;
	}
	return false;
}

bool want_instance(const Options &o, const std::string &inst)
{
	if (o.instances.empty())
		return true;
	for (const auto &i : o.instances)
		if (i == inst || (inst.empty() && i == "top"))
			return true;
	return false;
}

/* ---- the commands on a trace ---- */

int run_trace(const Options &o)
{
	Resolver res;
	size_t bad = 0, ours = 0;
	std::string first_bad;
	/* progress: pass 1 by record bytes over the file size, pass 2 by records */
	struct stat sb;
	uint64_t fsize = stat(o.input.c_str(), &sb) == 0 ? uint64_t(sb.st_size) : 0;
	Progress prog(2, progress_wanted(2, fsize, uint64_t(o.progress_min_mb * 1048576)));
	uint64_t nrec = 0, nbytes = 0;
	{
		Trace t;
		std::string err = t.open(o.input);
		if (!err.empty()) {
			std::cerr << "stackmap-report: " << err << "\n";
			return 1;
		}
		if (!t.has_stackmap_events()) {
			std::cerr << "stackmap-report: " << o.input
				  << ": no stackmap events in this trace (record with "
				     "'trace-cmd record -e stackmap -e SOURCE ...')\n";
			return 1;
		}
		prog.start("pass 1/2 (definitions), bytes", fsize);
		err = t.iterate([&](Rec &x) {
			nrec++;
			nbytes += uint64_t(x.raw->record_size);
			prog.at(nbytes);
			if (x.kind == Kind::OTHER)
				return;
			ours++;
			if (x.bad) {
				if (!bad++)
					first_bad = x.bad_why;
				return;
			}
			switch (x.kind) {
			case Kind::DEF:
				res.add_def(x.buf, x.ts, x.stack_id, x.flags, std::move(x.ips));
				break;
			case Kind::RESET:
				res.add_reset(x.buf, x.ts, x.generation);
				break;
			case Kind::USER_STACK:
				res.add_user_stack(x.buf, x.ts, std::move(x.user));
				break;
			case Kind::FILE_MAP:
				res.add_file_map(x.buf, x.ts, x.file_id, x.path, x.build_id);
				break;
			case Kind::STACK_ID:
			case Kind::STACK_ID_USER:
				res.add_id(x.buf, x.stack_id);
				break;
			default:
				break;
			}
		});
		if (!err.empty()) {
			std::cerr << "stackmap-report: " << o.input << ": " << err << "\n";
			return 1;
		}
		prog.done();
		res.finish();
		for (const auto &m : o.maps) {
			Fsmb f;
			if (!fsmb_read_file(m, &f, &err)) {
				std::cerr << "stackmap-report: --map " << err << "\n";
				return 1;
			}
			int buf = -1;
			for (size_t i = 0; i < t.buffers().size(); i++)
				if (t.buffers()[i] == f.instance)
					buf = int(i);
			std::string why;
			const std::string inst = f.instance.empty() ? "the top level" :
					"instance '" + f.instance + "'";
			if (buf < 0)
				why = "it is a snapshot of " + inst + ", which has no buffer in " +
				      o.input;
			else if (f.hidden())
				why = "its kernel addresses are hidden (taken without "
				      "CAP_SYSLOG): it cannot be matched to the trace";
			else if (!(f.flags & FSMB_F_KERNEL))
				why = "it has no kernel addresses";
			else if (!tep_find_function(t.tep(), f.ref_symbol_addr) ||
				 strcmp(tep_find_function(t.tep(), f.ref_symbol_addr),
					FSMB_REF_SYMBOL) ||
				 tep_find_function_address(t.tep(), f.ref_symbol_addr) !=
					 f.ref_symbol_addr)
				why = "it is from another boot (its '" FSMB_REF_SYMBOL "' at " +
				      hex64(f.ref_symbol_addr) +
				      " is not the trace's kallsyms')";
			else if ((why = res.snapshot_generation(buf, f.generation,
								inst + " in " + o.input))
					 .empty())
				why = res.add_snapshot(buf, f);
			if (!why.empty()) {
				std::cerr << "stackmap-report: --map " << m << " refused: " << why
					  << "\n";
				return 1;
			}
		}
	}
	if (bad)
		std::cerr << "stackmap-report: warning: " << bad
			  << " stackmap records did not decode (first: " << first_bad
			  << "): they are skipped\n";

	Trace t;
	std::string err = t.open(o.input);
	if (!err.empty()) {
		std::cerr << "stackmap-report: " << err << "\n";
		return 1;
	}
	KernelSyms ks(t.tep());
	UserSyms us(o.sysroot, o.debug_dirs);
	Printer pr(o, t, ks, us, res);

	struct Src {
		std::string event;
		std::string line;
		bool valid = false;
	};
	std::map<std::pair<int, int>, Src> last;	/* (buf, cpu) -> source */
	std::map<std::string, uint64_t> folded;
	struct EvStats {
		uint64_t total = 0, unresolved = 0;
		std::map<std::string, uint64_t> stacks;
	};
	std::map<std::string, EvStats> stats;
	uint64_t records = 0, unresolved = 0, user_unresolved = 0;
	PprofBuilder prof;
	uint64_t first_ts = 0, last_ts = 0;

	uint64_t seen = 0;
	prog.start("pass 2/2 (" + o.cmd + "), records", nrec);
	err = t.iterate([&](Rec &x) {
		prog.at(++seen);
		if (x.kind == Kind::OTHER) {
			/*
			 * The kernel's own stack records (options/stacktrace,
			 * the stacktrace trigger) come between a source record
			 * and its id record: never a source.
			 */
			if (x.event && !strcmp(x.event->system, "ftrace") &&
			    (!strcmp(x.event->name, "kernel_stack") ||
			     !strcmp(x.event->name, "user_stack")))
				return;
			Src &s = last[{x.buf, x.cpu}];
			s.event = event_name(x.event);
			s.valid = true;
			if (o.cmd == "report")
				s.line = t.format(x.raw);
			return;
		}
		if (x.kind != Kind::STACK_ID && x.kind != Kind::STACK_ID_USER &&
		    x.kind != Kind::FALLBACK)
			return;
		if (x.bad)
			return;
		const std::string &inst = t.buffers()[x.buf];
		if (!want_instance(o, inst))
			return;
		Src &src = last[{x.buf, x.cpu}];
		std::string ev = src.valid ? src.event : "[unknown]";
		if (!want_event(o, ev))
			return;
		double sec = double(x.ts) / 1e9;
		if ((o.since >= 0 && sec < o.since) || (o.until >= 0 && sec > o.until))
			return;
		if (!o.pids.empty() &&
		    std::find(o.pids.begin(), o.pids.end(), x.pid) == o.pids.end())
			return;
		Sample s;
		s.id = &x;
		s.source = ev;
		s.comm = t.comm(x.pid);
		if (!o.comms.empty() &&
		    std::find(o.comms.begin(), o.comms.end(), s.comm) == o.comms.end())
			return;
		s.instance = inst;
		s.line = src.valid ? src.line : "";
		s.fallback = x.kind == Kind::FALLBACK;
		if (!s.fallback)
			s.k = res.kernel(x.buf, x.ts, x.stack_id);
		if (x.cookie) {
			s.has_user = true;
			s.u = res.user(x.buf, x.cookie);
		}
		/* the source is used: the next id record on this CPU has none */
		src.valid = false;
		records++;
		bool unres = !s.fallback && s.k.status != Status::OK;
		unresolved += unres;
		user_unresolved += s.has_user && s.u.status == Status::UNRESOLVED;
		if (!first_ts)
			first_ts = x.ts;
		last_ts = x.ts;
		if (o.cmd == "report") {
			pr.report(s);
		} else if (o.cmd == "pprof") {
			pr.pprof(s, prof);
		} else if (o.cmd == "folded") {
			folded[pr.folded_key(s)]++;
		} else {
			EvStats &e = stats[(inst.empty() ? "" : inst + ": ") + ev];
			e.total++;
			e.unresolved += unres;
			e.stacks[pr.folded_key(s)]++;
		}
	}, false);
	prog.done();
	if (!err.empty()) {
		std::cerr << "stackmap-report: " << o.input << ": " << err << "\n";
		return 1;
	}
	if (o.cmd == "pprof") {
		prof.set_span(first_ts, last_ts);
		prof.add_comment("stackmap-report pprof -i " + o.input);
		std::string gz;
		err = prof.gzipped(&gz);
		if (err.empty() && o.output.empty()) {
			std::cout.write(gz.data(), std::streamsize(gz.size()));
			std::cout.flush();
			if (!std::cout)
				err = "standard output: write failed";
		} else if (err.empty()) {
			std::ofstream out(o.output, std::ios::binary | std::ios::trunc);
			out.write(gz.data(), std::streamsize(gz.size()));
			out.close();
			if (!out)
				err = o.output + ": cannot write: " + strerror(errno);
		}
		if (!err.empty()) {
			std::cerr << "stackmap-report: pprof: " << err << "\n";
			return 1;
		}
	} else if (o.cmd == "folded") {
		for (const auto &[k, n] : folded)
			std::cout << k << " " << n << "\n";
	} else if (o.cmd == "stats") {
		std::cout << "records: " << records << "\n"
			  << "unresolved: " << unresolved << "\n"
			  << "user_unresolved: " << user_unresolved << "\n";
		for (const auto &[ev, e] : stats) {
			std::cout << "\nevent " << ev << ": " << e.total << " records, "
				  << e.stacks.size() << " stacks, " << e.unresolved
				  << " unresolved\n";
			std::vector<std::pair<uint64_t, std::string>> v;
			for (const auto &[k, n] : e.stacks)
				v.emplace_back(n, k);
			std::stable_sort(v.begin(), v.end(), [](const auto &a, const auto &b) {
				return a.first > b.first;
			});
			size_t lim = o.top > 0 ? size_t(o.top) : v.size();
			for (size_t i = 0; i < v.size() && i < lim; i++) {
				char pct[32];
				snprintf(pct, sizeof(pct), "%6.2f%%",
					 100.0 * double(v[i].first) / double(e.total));
				std::cout << "  " << v[i].first << " " << pct << " " << v[i].second
					  << "\n";
			}
		}
	}
	std::cerr << "stackmap-report: " << records << " id records, " << unresolved
		  << " unresolved kernel stacks, " << user_unresolved
		  << " unresolved user stacks\n";
	return 0;
}

/* ---- dump ---- */

int run_dump(const Options &o, bool system_map)
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
		} else if (ref != f.ref_symbol_addr && !system_map) {
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
		std::cout << "stack_id " << k.stack_id << " (id " << f.record_id(k.stack_id)
			  << ") [hits " << k.hits << ", depth " << k.ips.size() << "]\n";
		for (size_t j = 0; j < k.ips.size(); j++)
			std::cout << "  [" << j << "] " << ksym(k.ips[j]) << "\n";
	}
	for (const auto &u : f.ustacks) {
		std::cout << "ustack_id " << u.ustack_id << " [hits " << u.hits << ", depth "
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

} /* namespace */

int main(int argc, char **argv)
{
	/* only iostreams write stdout: no need to sync with stdio */
	std::ios::sync_with_stdio(false);
	Options o;
	int first = 1;
	static const char *const cmds[] = {"report", "folded", "stats", "pprof", "dump"};
	if (argc > 1 && argv[1][0] != '-') {
		bool known = false;
		for (const char *c : cmds)
			known |= strcmp(argv[1], c) == 0;
		if (!known)
			return usage_error(std::string("unknown command '") + argv[1] + "'");
		o.cmd = argv[1];
		first = 2;
	}
	enum { O_MAP = 256, O_EVENT, O_INSTANCE, O_PID, O_COMM, O_SINCE, O_UNTIL,
	       O_SYSROOT, O_DEBUGDIR, O_TOP, O_ADDR, O_JSON, O_KALLSYMS, O_SYSMAP,
	       O_PROGRESS };
	static const struct option lo[] = {
		{"input", required_argument, nullptr, 'i'},
		{"output", required_argument, nullptr, 'o'},
		{"help", no_argument, nullptr, 'h'},
		{"map", required_argument, nullptr, O_MAP},
		{"event", required_argument, nullptr, O_EVENT},
		{"instance", required_argument, nullptr, O_INSTANCE},
		{"pid", required_argument, nullptr, O_PID},
		{"comm", required_argument, nullptr, O_COMM},
		{"since", required_argument, nullptr, O_SINCE},
		{"until", required_argument, nullptr, O_UNTIL},
		{"sysroot", required_argument, nullptr, O_SYSROOT},
		{"debug-dir", required_argument, nullptr, O_DEBUGDIR},
		{"top", required_argument, nullptr, O_TOP},
		{"addr", no_argument, nullptr, O_ADDR},
		{"json", no_argument, nullptr, O_JSON},
		{"kallsyms", required_argument, nullptr, O_KALLSYMS},
		{"system-map", required_argument, nullptr, O_SYSMAP},
		{"progress-min", required_argument, nullptr, O_PROGRESS},
		{nullptr, 0, nullptr, 0},
	};
	bool system_map = false;
	auto number = [](const char *s, double *d) {
		char *e;
		*d = strtod(s, &e);
		return *s && !*e && *d >= 0;
	};
	optind = first;
	int c;
	while ((c = getopt_long(argc, argv, "i:o:h", lo, nullptr)) != -1) {
		double d;
		switch (c) {
		case 'i': o.input = optarg; break;
		case 'o': o.output = optarg; break;
		case 'h': help(first == 2 ? o.cmd : ""); return 0;
		case O_MAP: o.maps.push_back(optarg); break;
		case O_EVENT: o.events.push_back(optarg); break;
		case O_INSTANCE: o.instances.push_back(optarg); break;
		case O_PID:
			if (!number(optarg, &d) || d != int(d))
				return usage_error(std::string("--pid: not a pid: ") + optarg);
			o.pids.push_back(int(d));
			break;
		case O_COMM: o.comms.push_back(optarg); break;
		case O_SINCE:
			if (!number(optarg, &o.since))
				return usage_error(std::string("--since: not seconds: ") + optarg);
			break;
		case O_UNTIL:
			if (!number(optarg, &o.until))
				return usage_error(std::string("--until: not seconds: ") + optarg);
			break;
		case O_SYSROOT: o.sysroot = optarg; break;
		case O_DEBUGDIR: o.debug_dirs.push_back(optarg); break;
		case O_TOP:
			if (!number(optarg, &d) || d != int(d))
				return usage_error(std::string("--top: not a number: ") + optarg);
			o.top = int(d);
			break;
		case O_ADDR: o.addr = true; break;
		case O_JSON: o.json = true; break;
		case O_KALLSYMS: o.kallsyms = optarg; break;
		case O_SYSMAP: o.kallsyms = optarg; system_map = true; break;
		case O_PROGRESS:
			if (!number(optarg, &o.progress_min_mb))
				return usage_error(std::string("--progress-min: not MiB: ") + optarg);
			break;
		default: return usage_error("bad option");
		}
	}
	if (o.cmd == "dump") {
		if (optind != argc - 1)
			return usage_error("dump needs one FILE.fsmb");
		o.dump_file = argv[optind];
		return run_dump(o, system_map);
	}
	if (optind != argc)
		return usage_error(std::string("unexpected argument '") + argv[optind] + "'");
	if (!o.output.empty() && o.cmd != "pprof")
		return usage_error("-o is an option of pprof only");
	if (o.cmd == "pprof" && o.output.empty() && isatty(STDOUT_FILENO))
		return usage_error("pprof: not writing a gzipped profile to a terminal (use -o FILE)");
	return run_trace(o);
}
