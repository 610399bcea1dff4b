// SPDX-License-Identifier: GPL-2.0
/*
 * stackmap-ctl - control ftrace_stackmap in a tracefs instance, on
 * libtracefs (Documentation/stackmap-ctl.rst):
 *
 *   stackmap-ctl [-B INSTANCE] enable [--user] [EVENT...]
 *   stackmap-ctl [-B INSTANCE] disable [--user] [--remove]
 *   stackmap-ctl [-B INSTANCE] status [--raw]
 *   stackmap-ctl [-B INSTANCE] events [EVENT...]
 *   stackmap-ctl [-B INSTANCE] reset
 *   stackmap-ctl [-B INSTANCE] save FILE
 *   stackmap-ctl [-B INSTANCE] top [-d SECS] [-n N] [--batch [--iterations K]]
 *   stackmap-ctl [-B INSTANCE] extract -o FILE
 *
 * Every tracefs file is read and written through libtracefs
 * (tracefs_io.cpp), and the ring buffer by libtracecmd (extract.cpp); the
 * only other files are /dev/kmsg (the module's reason for a refused
 * write), /proc/kallsyms (top's kernel symbols, through libtraceevent)
 * and the files written. The commands are in commands.cpp, top.cpp (the
 * curses screen) and extract.cpp; this file parses the command line and
 * dispatches. Exit status: 0 done, 1 error, 2 bad usage.
 */
#include <getopt.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "options.h"
#include "smr_version.h"
#include "tracefs_io.h"

using namespace smctl;

namespace {

const char *const kUsage =
	"usage: stackmap-ctl [-B INSTANCE] COMMAND [ARGS]\n"
	"\n"
	"Control ftrace_stackmap in the top-level trace buffer or in the tracefs\n"
	"instance INSTANCE (-B, as trace-cmd's).\n"
	"\n"
	"commands:\n"
	"  enable [--user] [EVENT...]  turn options/stackmap on (and options/stackmap_user\n"
	"                              with --user); with EVENTs, make them the source\n"
	"                              events (stack_map_events) and enable them. With -B,\n"
	"                              creates INSTANCE when it does not exist (says so)\n"
	"  disable [--user] [--remove] turn options/stackmap and options/stackmap_user off\n"
	"                              (--user: only stackmap_user); --remove: then remove\n"
	"                              the -B instance\n"
	"  status [--raw]              options, source events and stack_map_stat\n"
	"  events [EVENT...]           show the source events, or replace them (set_event\n"
	"                              syntax: sys:event, sys:*, !pattern; a refused list\n"
	"                              changes nothing)\n"
	"  reset                       start a new generation of the map (ids restart)\n"
	"  save FILE                   write a stack_map_bin snapshot (FSMB) to FILE, for\n"
	"                              stackmap-report --map FILE\n"
	"  top [-d SECS] [-n N]        live view of the hottest kernel stacks by hits per\n"
	"                              interval (default -d 2 -n 20); q quits. --batch:\n"
	"                              plain text, --iterations K screens (default 1)\n"
	"  extract -o FILE             the flight recorder's read-out: a trace.dat FILE of\n"
	"                              what the ring buffer holds now (read, so consumed,\n"
	"                              as by trace-cmd extract; tracing_on is 0 while it\n"
	"                              is read) and its stack_map_bin in FILE.fsmb. The\n"
	"                              instance, its events, options and map stay (unlike\n"
	"                              trace-cmd extract -B, which removes the instance)\n"
	"\n"
	"options:\n"
	"  -B, --instance NAME         the tracefs instance (default: top level)\n"
	"  -o, --output FILE           (extract) the trace.dat to write\n"
	"  -h, --help                  this text\n"
	"      --version               the version (dkms.conf's, the module's) and,\n"
	"                              when built from git, 'git describe'\n"
	"\n"
	"Exit status: 0 done, 1 error (module not loaded, no such instance, a write\n"
	"the module refused: its dmesg reason is shown when /dev/kmsg is readable),\n"
	"2 bad usage.\n";

int usage_error(const std::string &msg)
{
	std::cerr << "stackmap-ctl: " << msg << " (see --help)\n";
	return 2;
}

enum { O_USER = 256, O_REMOVE, O_RAW, O_BATCH, O_ITER, O_VERSION };

} /* namespace */

int main(int argc, char **argv)
{
	static const option longopts[] = {
		{"instance", required_argument, nullptr, 'B'},
		{"help", no_argument, nullptr, 'h'},
		{"user", no_argument, nullptr, O_USER},
		{"remove", no_argument, nullptr, O_REMOVE},
		{"raw", no_argument, nullptr, O_RAW},
		{"batch", no_argument, nullptr, O_BATCH},
		{"iterations", required_argument, nullptr, O_ITER},
		{"delay", required_argument, nullptr, 'd'},
		{"rows", required_argument, nullptr, 'n'},
		{"output", required_argument, nullptr, 'o'},
		{"version", no_argument, nullptr, O_VERSION},
		{nullptr, 0, nullptr, 0},
	};
	Options o;
	std::vector<std::string> seen;	/* command-specific options given */
	int c;
	while ((c = getopt_long(argc, argv, "B:hd:n:o:", longopts, nullptr)) != -1) {
		char *end = nullptr;
		switch (c) {
		case 'B':
			o.instance = optarg;
			if (o.instance.empty())
				return usage_error("-B needs a name");
			break;
		case 'h':
			std::cout << kUsage;
			return 0;
		case O_VERSION:
			std::cout << "stackmap-ctl " << SMR_VERSION << "\n";
			return 0;
		case O_USER: o.user = true; seen.push_back("--user"); break;
		case O_REMOVE: o.remove = true; seen.push_back("--remove"); break;
		case O_RAW: o.raw = true; seen.push_back("--raw"); break;
		case O_BATCH: o.batch = true; seen.push_back("--batch"); break;
		case O_ITER:
			o.iterations = int(strtol(optarg, &end, 10));
			if (!*optarg || *end || o.iterations < 1 || o.iterations > 1000000)
				return usage_error(std::string("--iterations '") + optarg +
						   "': expected 1..1000000");
			seen.push_back("--iterations");
			break;
		case 'd':
			o.interval = strtod(optarg, &end);
			if (!*optarg || *end || !(o.interval >= 0.1 && o.interval <= 3600))
				return usage_error(std::string("-d '") + optarg +
						   "': expected seconds, 0.1..3600");
			seen.push_back("-d");
			break;
		case 'o':
			o.output = optarg;
			if (o.output.empty())
				return usage_error("-o needs a file name");
			seen.push_back("-o");
			break;
		case 'n':
			o.rows = int(strtol(optarg, &end, 10));
			if (!*optarg || *end || o.rows < 1 || o.rows > 10000)
				return usage_error(std::string("-n '") + optarg +
						   "': expected 1..10000");
			seen.push_back("-n");
			break;
		default:
			return 2;	/* getopt printed why */
		}
	}
	if (optind >= argc)
		return usage_error("no command");
	o.cmd = argv[optind++];
	for (int i = optind; i < argc; i++)
		o.args.push_back(argv[i]);

	struct Cmd {
		const char *name;
		int (*fn)(Ctx &, const Options &);
		std::vector<std::string> opts;
		int min_args, max_args;	/* -1: any */
		bool create;
	};
	static const Cmd cmds[] = {
		{"enable", cmd_enable, {"--user"}, 0, -1, true},
		{"disable", cmd_disable, {"--user", "--remove"}, 0, 0, false},
		{"status", cmd_status, {"--raw"}, 0, 0, false},
		{"events", cmd_events, {}, 0, -1, false},
		{"reset", cmd_reset, {}, 0, 0, false},
		{"save", cmd_save, {}, 1, 1, false},
		{"top", cmd_top, {"-d", "-n", "--batch", "--iterations"}, 0, 0, false},
		{"extract", cmd_extract, {"-o"}, 0, 0, false},
	};
	for (const Cmd &k : cmds) {
		if (o.cmd != k.name)
			continue;
		for (const std::string &s : seen) {
			bool okopt = false;
			for (const std::string &a : k.opts)
				okopt |= a == s;
			if (!okopt)
				return usage_error(s + " does not apply to " + o.cmd);
		}
		int n = int(o.args.size());
		if (n < k.min_args || (k.max_args >= 0 && n > k.max_args))
			return usage_error(o.cmd == "save" ? "save needs one FILE"
							   : o.cmd + " takes no arguments");
		if (o.remove && o.instance.empty())
			return usage_error("--remove needs -B INSTANCE (the top level stays)");
		if (o.cmd == "extract" && o.output.empty())
			return usage_error("extract needs -o FILE");
		Ctx ctx;
		if (int r = open_ctx(o, k.create, &ctx))
			return r;
		return k.fn(ctx, o);
	}
	return usage_error("unknown command '" + o.cmd + "'");
}
