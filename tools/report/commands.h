/* SPDX-License-Identifier: GPL-2.0 */
/*
 * commands.h - stackmap-report's commands, one file each: report, folded,
 * stats and pprof print the id records of a trace (trace_pass.cpp reads
 * it and hands them over one by one), dump decodes a snapshot.
 */
#ifndef STACKMAP_REPORT_COMMANDS_H
#define STACKMAP_REPORT_COMMANDS_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "options.h"

namespace smr::report {

class Frames;
struct Sample;

/* What the trace pass counted, for the commands' output. */
struct Totals {
	uint64_t records = 0;		/* id records that passed the filters */
	uint64_t unresolved = 0;	/* ... whose kernel stack is unresolved */
	uint64_t user_unresolved = 0;	/* ... whose user stack is unresolved */
	uint64_t file_unresolved = 0;	/* ... whose user stack names a file no
					 * file_map record describes */
	uint64_t first_ts = 0, last_ts = 0;
};

/*
 * One command on one or more traces: for each input, begin_input() and its
 * samples in trace order (named by that input's Frames: ids, kallsyms and
 * user files are per input, never mixed); then finish().
 */
class TraceCommand {
public:
	virtual ~TraceCommand() = default;
	/* the source record's text (Sample::line) is wanted */
	virtual bool wants_lines() const { return false; }
	/* before the samples of input number i (host: Sample::host) */
	virtual void begin_input(size_t i, const std::string &host, const std::string &file)
	{
		(void)i, (void)host, (void)file;
	}
	virtual void add(const Sample &s, Frames &fr) = 0;
	/* after the last sample: the output; the exit status */
	virtual int finish(const Totals &t) = 0;
};

using TraceCommandFactory = std::unique_ptr<TraceCommand> (*)(const Options &o);

/* trace_pass.cpp: read the inputs (filters, --map), run the command made
 * by `make` on their id records; the exit status */
int run_trace(const Options &o, TraceCommandFactory make);
/* the trace files of o.inputs (a directory: its *.dat, sorted), or "" and
 * the error in *err */
std::vector<std::string> input_files(const Options &o, std::string *err);
/* the options every trace command takes, for the help texts */
extern const char *const kTraceOpts;

std::unique_ptr<TraceCommand> make_report(const Options &o);
std::unique_ptr<TraceCommand> make_folded(const Options &o);
std::unique_ptr<TraceCommand> make_stats(const Options &o);
std::unique_ptr<TraceCommand> make_pprof(const Options &o);
std::unique_ptr<TraceCommand> make_flamegraph(const Options &o);

/* cmd_flamegraph.cpp: flamegraph --folded-input FILE */
int run_flamegraph_folded(const Options &o);

/* cmd_dump.cpp: decode o.dump_file */
int run_dump(const Options &o);

/* the --help text of each command */
void help_report();
void help_folded();
void help_stats();
void help_pprof();
void help_flamegraph();
void help_dump();

} /* namespace smr::report */

#endif
