/* SPDX-License-Identifier: GPL-2.0 */
/*
 * options.h - stackmap-report's command line (main.cpp parses it), as the
 * commands read it.
 */
#ifndef STACKMAP_REPORT_OPTIONS_H
#define STACKMAP_REPORT_OPTIONS_H

#include <string>
#include <vector>

namespace smr::report {

struct Options {
	std::string cmd = "report";
	/* -i (repeatable; a directory: its *.dat); empty: trace.dat */
	std::vector<std::string> inputs;
	bool by_host = false;	/* folded, flamegraph, stats: host as a frame */
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
	bool system_map = false;	/* dump: kallsyms is a System.map */
	std::string dump_file;
	std::string output;	/* pprof, flamegraph: "" = stdout */
	/* flamegraph */
	std::string title;
	int width = 1200;
	bool reverse = false;	/* icicle: roots on top */
	double minwidth = 0.1;	/* pixels: narrower frames are left out */
	std::string folded_input;	/* render a folded file instead of traces */
	double progress_min_mb = 32;
};

} /* namespace smr::report */

#endif
