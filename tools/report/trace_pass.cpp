// SPDX-License-Identifier: GPL-2.0
/*
 * trace_pass.cpp - the trace commands' reading of a trace (commands.h):
 * pass 1 collects the definitions (stack, user stack and file records,
 * resets) into the Resolver and adds the --map snapshots; pass 2 pairs
 * each id record with the source event before it on its CPU, applies the
 * filters and hands the resolved sample to the command.
 */
#include <dirent.h>
#include <sys/stat.h>
#include <traceevent/event-parse.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "abi.h"
#include "commands.h"
#include "frames.h"
#include "fsmb.h"
#include "progress.h"
#include "resolve.h"
#include "symbols.h"
#include "trace.h"

namespace smr::report {

const char *const kTraceOpts =
	"  -i, --input FILE|DIR  trace.dat to read (default: trace.dat); repeatable,\n"
	"                        a directory means its *.dat: the traces are read\n"
	"                        one after the other, each with its own ids and\n"
	"                        symbols, and their records add up (host: the\n"
	"                        trace's uname node name, else its file name)\n"
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

namespace {

std::string event_name(tep_event *ev)
{
	if (!ev)
		return "[unknown]";
	return std::string(ev->system) + ":" + ev->name;
}

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

} /* namespace */

std::vector<std::string> input_files(const Options &o, std::string *err)
{
	std::vector<std::string> out;
	if (o.inputs.empty())
		return {"trace.dat"};
	for (const auto &in : o.inputs) {
		struct stat sb;
		if (stat(in.c_str(), &sb) != 0 || !S_ISDIR(sb.st_mode)) {
			out.push_back(in);	/* open() says what is wrong */
			continue;
		}
		std::vector<std::string> dats;
		if (DIR *d = opendir(in.c_str())) {
			while (dirent *e = readdir(d)) {
				std::string n = e->d_name;
				if (n.size() > 4 && n.compare(n.size() - 4, 4, ".dat") == 0)
					dats.push_back(in + "/" + n);
			}
			closedir(d);
		}
		if (dats.empty()) {
			*err = in + ": a directory without *.dat files";
			return {};
		}
		std::sort(dats.begin(), dats.end());
		out.insert(out.end(), dats.begin(), dats.end());
	}
	return out;
}

namespace {

/* The host of a trace: the node name of its uname (trace-cmd stores
 * "sysname nodename release ..."), else the file's name. */
std::string host_of(const Trace &t, const std::string &file)
{
	std::string u = t.uname();
	auto a = u.find(' ');
	if (a != std::string::npos) {
		auto b = u.find(' ', a + 1);
		std::string node = u.substr(a + 1, b == std::string::npos ? b : b - a - 1);
		if (!node.empty())
			return node;
	}
	auto slash = file.rfind('/');
	return slash == std::string::npos ? file : file.substr(slash + 1);
}

/* One input: both passes, its samples to cmd, its counts into tot. */
int run_one(const Options &o, const std::string &input, size_t index, TraceCommand &cmd,
	    Totals &tot)
{
	Resolver res;
	size_t bad = 0, ours = 0;
	std::string first_bad;
	/* progress: pass 1 by record bytes over the file size, pass 2 by records */
	struct stat sb;
	uint64_t fsize = stat(input.c_str(), &sb) == 0 ? uint64_t(sb.st_size) : 0;
	Progress prog(2, progress_wanted(2, fsize, uint64_t(o.progress_min_mb * 1048576)));
	uint64_t nrec = 0, nbytes = 0;
	{
		Trace t;
		std::string err = t.open(input);
		if (!err.empty()) {
			std::cerr << "stackmap-report: " << err << "\n";
			return 1;
		}
		if (!t.has_stackmap_events()) {
			std::cerr << "stackmap-report: " << input
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
			std::cerr << "stackmap-report: " << input << ": " << err << "\n";
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
				      input;
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
								inst + " in " + input))
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
	std::string err = t.open(input);
	if (!err.empty()) {
		std::cerr << "stackmap-report: " << err << "\n";
		return 1;
	}
	KernelSyms ks(t.tep());
	UserSyms us(o.sysroot, o.debug_dirs);
	Frames frames(o, ks, us, res);
	const std::string host = host_of(t, input);
	cmd.begin_input(index, host, input);

	struct Src {
		std::string event;
		std::string line;
		bool valid = false;
	};
	std::map<std::pair<int, int>, Src> last;	/* (buf, cpu) -> source */
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
			if (cmd.wants_lines())
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
		s.host = host;
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
		tot.records++;
		tot.unresolved += !s.fallback && s.k.status != Status::OK;
		tot.user_unresolved += s.has_user && s.u.status == Status::UNRESOLVED;
		tot.file_unresolved += s.has_user && s.u.status == Status::OK &&
				       res.missing_files(*s.u.frames) > 0;
		if (!tot.first_ts || x.ts < tot.first_ts)
			tot.first_ts = x.ts;
		tot.last_ts = std::max(tot.last_ts, x.ts);
		cmd.add(s, frames);
	}, false);
	prog.done();
	if (!err.empty()) {
		std::cerr << "stackmap-report: " << input << ": " << err << "\n";
		return 1;
	}
	return 0;
}

} /* namespace */

int run_trace(const Options &o, TraceCommandFactory make)
{
	std::string err;
	std::vector<std::string> files = input_files(o, &err);
	if (!err.empty()) {
		std::cerr << "stackmap-report: " << err << "\n";
		return 1;
	}
	if (files.size() > 1 && !o.maps.empty()) {
		std::cerr << "stackmap-report: --map needs a single input (a snapshot "
			     "belongs to one trace)\n";
		return 1;
	}
	std::unique_ptr<TraceCommand> cmd = make(o);
	Totals tot;
	for (size_t i = 0; i < files.size(); i++)
		if (int rc = run_one(o, files[i], i, *cmd, tot))
			return rc;
	if (int rc = cmd->finish(tot))
		return rc;
	std::cerr << "stackmap-report: " << tot.records << " id records, " << tot.unresolved
		  << " unresolved kernel stacks, " << tot.user_unresolved
		  << " unresolved user stacks, " << tot.file_unresolved
		  << " user stacks naming an undescribed file\n";
	return 0;
}

} /* namespace smr::report */
