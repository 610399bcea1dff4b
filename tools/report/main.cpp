// SPDX-License-Identifier: GPL-2.0
/*
 * stackmap-report - read the stack ids of ftrace_stackmap out of a
 * trace-cmd recording (Documentation/stackmap-report.rst).
 *
 *   stackmap-report [report|folded|stats] [-i trace.dat] [filters] [--map F]
 *   stackmap-report pprof [-o FILE] [-i trace.dat] [filters] [--map F]
 *   stackmap-report flamegraph [-o FILE.svg] [-i trace.dat]... [filters]
 *   stackmap-report dump FILE.fsmb [--kallsyms F | --system-map F] [--json]
 *
 * Layers: tools/lib reads the file (trace.cpp: libtracecmd,
 * libtraceevent), turns ids into stacks (resolve.cpp, no library), names
 * the frames (symbols.cpp: libtraceevent's kallsyms, libdwfl) and builds
 * the profile.proto message (pprof.cpp). Here: trace_pass.cpp reads a
 * trace for the commands cmd_report.cpp, cmd_folded.cpp, cmd_stats.cpp and
 * cmd_pprof.cpp, which print (frames.cpp names the frames); cmd_dump.cpp
 * decodes a snapshot; this file parses the command line and dispatches.
 */
#include <getopt.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "commands.h"
#include "smr_version.h"
#include "options.h"

using namespace smr::report;

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
	"  flamegraph        an interactive SVG flame graph (-o FILE.svg)\n"
	"  dump FILE.fsmb    decode a stack_map_bin snapshot\n"
	"\n"
	"Several inputs (-i A -i B, or -i DIR for its *.dat) add up, each\n"
	"trace resolved on its own; --by-host starts stacks with the host.\n"
	"\n"
	"Run 'stackmap-report COMMAND --help' for the options of a command;\n"
	"'stackmap-report --version' prints the version (dkms.conf's, the\n"
	"module's) and, when built from git, 'git describe'.\n"
	"Exit status: 0 ok, 1 bad input (the message says why), 2 bad usage.\n";

int usage_error(const std::string &msg)
{
	std::cerr << "stackmap-report: " << msg << "\n"
		  << "Try 'stackmap-report --help'.\n";
	return 2;
}

struct Command {
	const char *name;
	void (*help)();
	TraceCommandFactory make;	/* nullptr: dump */
};

/* the first one is the default */
const Command kCommands[] = {
	{"report", help_report, make_report},
	{"folded", help_folded, make_folded},
	{"stats", help_stats, make_stats},
	{"pprof", help_pprof, make_pprof},
	{"flamegraph", help_flamegraph, make_flamegraph},
	{"dump", help_dump, nullptr},
};

} /* namespace */

int main(int argc, char **argv)
{
	/* only iostreams write stdout: no need to sync with stdio */
	std::ios::sync_with_stdio(false);
	Options o;
	int first = 1;
	const Command *cmd = &kCommands[0];	/* report */
	if (argc > 1 && argv[1][0] != '-') {
		cmd = nullptr;
		for (const Command &k : kCommands)
			if (strcmp(argv[1], k.name) == 0)
				cmd = &k;
		if (!cmd)
			return usage_error(std::string("unknown command '") + argv[1] + "'");
		o.cmd = argv[1];
		first = 2;
	}
	enum { O_MAP = 256, O_EVENT, O_INSTANCE, O_PID, O_COMM, O_SINCE, O_UNTIL,
	       O_SYSROOT, O_DEBUGDIR, O_TOP, O_ADDR, O_JSON, O_KALLSYMS, O_SYSMAP,
	       O_PROGRESS, O_BYHOST, O_TITLE, O_WIDTH, O_REVERSE, O_MINWIDTH,
	       O_FOLDEDIN, O_VERSION };
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
		{"by-host", no_argument, nullptr, O_BYHOST},
		{"title", required_argument, nullptr, O_TITLE},
		{"width", required_argument, nullptr, O_WIDTH},
		{"reverse", no_argument, nullptr, O_REVERSE},
		{"minwidth", required_argument, nullptr, O_MINWIDTH},
		{"folded-input", required_argument, nullptr, O_FOLDEDIN},
		{"version", no_argument, nullptr, O_VERSION},
		{nullptr, 0, nullptr, 0},
	};
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
		case 'i': o.inputs.push_back(optarg); break;
		case 'o': o.output = optarg; break;
		case 'h':
			if (first == 2)
				cmd->help();
			else
				std::cout << kUsage;
			return 0;
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
		case O_SYSMAP: o.kallsyms = optarg; o.system_map = true; break;
		case O_PROGRESS:
			if (!number(optarg, &o.progress_min_mb))
				return usage_error(std::string("--progress-min: not MiB: ") + optarg);
			break;
		case O_BYHOST: o.by_host = true; break;
		case O_TITLE: o.title = optarg; break;
		case O_WIDTH:
			if (!number(optarg, &d) || d != int(d) || d < 100 || d > 100000)
				return usage_error(std::string("--width: not 100..100000 pixels: ") +
						   optarg);
			o.width = int(d);
			break;
		case O_REVERSE: o.reverse = true; break;
		case O_MINWIDTH:
			if (!number(optarg, &o.minwidth))
				return usage_error(std::string("--minwidth: not pixels: ") + optarg);
			break;
		case O_FOLDEDIN: o.folded_input = optarg; break;
		case O_VERSION:
			std::cout << "stackmap-report " << SMR_VERSION << "\n";
			return 0;
		default: return usage_error("bad option");
		}
	}
	if (o.cmd == "dump") {
		if (optind != argc - 1)
			return usage_error("dump needs one FILE.fsmb");
		o.dump_file = argv[optind];
		return run_dump(o);
	}
	if (optind != argc)
		return usage_error(std::string("unexpected argument '") + argv[optind] + "'");
	if (!o.output.empty() && o.cmd != "pprof" && o.cmd != "flamegraph")
		return usage_error("-o is an option of pprof and flamegraph only");
	if (o.cmd == "pprof" && o.output.empty() && isatty(STDOUT_FILENO))
		return usage_error("pprof: not writing a gzipped profile to a terminal (use -o FILE)");
	const bool fg_opts = !o.title.empty() || o.width != Options().width || o.reverse ||
			     o.minwidth != Options().minwidth || !o.folded_input.empty();
	if (fg_opts && o.cmd != "flamegraph")
		return usage_error("--title, --width, --reverse, --minwidth and "
				   "--folded-input are options of flamegraph only");
	if (o.by_host && o.cmd != "folded" && o.cmd != "flamegraph" && o.cmd != "stats")
		return usage_error("--by-host is an option of folded, flamegraph and stats "
				   "(pprof always has a host label)");
	if (!o.folded_input.empty()) {
		if (!o.inputs.empty() || !o.maps.empty() || !o.events.empty() ||
		    !o.instances.empty() || !o.pids.empty() || !o.comms.empty() ||
		    o.since >= 0 || o.until >= 0 || o.by_host)
			return usage_error("flamegraph --folded-input draws the lines as they "
					   "are: no -i, --map, filters or --by-host");
		return run_flamegraph_folded(o);
	}
	return run_trace(o, cmd->make);
}
