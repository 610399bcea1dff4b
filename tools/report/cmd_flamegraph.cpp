// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_flamegraph.cpp - stackmap-report flamegraph: the stacks and counts
 * of `folded` (the same filters, inputs and --by-host) drawn as an
 * interactive SVG (flamegraph.cpp).
 */
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "commands.h"
#include "flamegraph.h"
#include "frames.h"

namespace smr::report {

namespace {

FlameOptions flame_options(const Options &o)
{
	FlameOptions f;
	if (!o.title.empty())
		f.title = o.title;
	else if (o.reverse)
		f.title = "Icicle Graph";
	f.width = o.width;
	f.reverse = o.reverse;
	f.minwidth = o.minwidth;
	f.task_levels = o.by_host ? 2 : 1;
	return f;
}

int write_svg(const Options &o, const std::map<std::string, uint64_t> &folded)
{
	const std::string svg = flamegraph_svg(folded, flame_options(o));
	if (o.output.empty() || o.output == "-") {
		std::cout << svg;
		std::cout.flush();
		if (!std::cout) {
			std::cerr << "stackmap-report: flamegraph: standard output: write failed\n";
			return 1;
		}
		return 0;
	}
	std::ofstream out(o.output, std::ios::binary | std::ios::trunc);
	out << svg;
	out.close();
	if (!out) {
		std::cerr << "stackmap-report: flamegraph: " << o.output
			  << ": cannot write: " << strerror(errno) << "\n";
		return 1;
	}
	return 0;
}

class Flamegraph : public TraceCommand {
public:
	explicit Flamegraph(const Options &o) : o_(o) {}

	void add(const Sample &s, Frames &fr) override { folded_[fr.folded_key(s)]++; }

	int finish(const Totals &) override { return write_svg(o_, folded_); }

private:
	const Options &o_;
	std::map<std::string, uint64_t> folded_;
};

} /* namespace */

std::unique_ptr<TraceCommand> make_flamegraph(const Options &o)
{
	return std::make_unique<Flamegraph>(o);
}

int run_flamegraph_folded(const Options &o)
{
	std::ifstream in;
	std::istream *is = &std::cin;
	if (o.folded_input != "-") {
		in.open(o.folded_input);
		if (!in) {
			std::cerr << "stackmap-report: " << o.folded_input
				  << ": cannot read: " << strerror(errno) << "\n";
			return 1;
		}
		is = &in;
	}
	std::map<std::string, uint64_t> folded;
	std::string line;
	for (size_t no = 1; std::getline(*is, line); no++) {
		if (line.empty())
			continue;
		auto sp = line.rfind(' ');
		char *end = nullptr;
		errno = 0;
		unsigned long long n = sp == std::string::npos ? 0 :
				       strtoull(line.c_str() + sp + 1, &end, 10);
		if (sp == std::string::npos || sp == 0 || !end || *end || errno ||
		    line[sp + 1] < '0' || line[sp + 1] > '9') {
			std::cerr << "stackmap-report: " << o.folded_input << ":" << no
				  << ": not a folded line 'frame;frame;... COUNT'\n";
			return 1;
		}
		folded[line.substr(0, sp)] += n;
	}
	return write_svg(o, folded);
}

void help_flamegraph()
{
	std::cout << "usage: stackmap-report flamegraph [-o FILE.svg] [OPTIONS]\n\n"
		     "An interactive SVG flame graph of the stacks and counts that\n"
		     "`folded` prints for the same options: one frame per function,\n"
		     "as wide as its share of the records; the root 'all', then the\n"
		     "task (comm; host first with --by-host), user frames (greens),\n"
		     "kernel frames (reds; '_[k]'). In a browser: hover shows a\n"
		     "frame's count and share, click zooms (click 'all' or 'Reset\n"
		     "Zoom' to go back), 'Search', '/' or Ctrl-F highlights the\n"
		     "frames matching a regular expression and prints their share\n"
		     "(FILE.svg#search=REGEX&zoom=NAME searches and zooms on load),\n"
		     "Escape resets.\n\n"
		     "  -o, --output FILE     write to FILE (default: standard output)\n"
		     "      --title TEXT      the title (default 'Flame Graph')\n"
		     "      --width PX        the image width (default 1200)\n"
		     "      --reverse         an icicle graph: the root on top, stacks\n"
		     "                        growing down\n"
		     "      --minwidth PX     leave out frames narrower than PX pixels\n"
		     "                        (default 0.1; 0: all)\n"
		     "      --by-host         a leading frame: the host of the record's trace\n"
		     "      --folded-input F  draw the folded lines of F ('-': standard\n"
		     "                        input) instead of reading traces\n"
		  << kTraceOpts;
}

} /* namespace smr::report */
