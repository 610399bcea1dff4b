/* SPDX-License-Identifier: GPL-2.0 */
/*
 * commands.h - stackmap-report's commands, one file each: report, folded,
 * stats and pprof print the id records of a trace (trace_pass.cpp reads
 * it and hands them over one by one), dump decodes a snapshot.
 */
#ifndef STACKMAP_REPORT_COMMANDS_H
#define STACKMAP_REPORT_COMMANDS_H

#include <cstdint>
#include <memory>

#include "options.h"

namespace smr::report {

class Frames;
struct Sample;

/* What the trace pass counted, for the commands' output. */
struct Totals {
	uint64_t records = 0;		/* id records that passed the filters */
	uint64_t unresolved = 0;	/* ... whose kernel stack is unresolved */
	uint64_t user_unresolved = 0;	/* ... whose user stack is unresolved */
	uint64_t first_ts = 0, last_ts = 0;
};

/* One command on a trace: the samples in trace order, then finish(). */
class TraceCommand {
public:
	virtual ~TraceCommand() = default;
	/* the source record's text (Sample::line) is wanted */
	virtual bool wants_lines() const { return false; }
	virtual void add(const Sample &s) = 0;
	/* after the last sample: the output; the exit status */
	virtual int finish(const Totals &t) = 0;
};

using TraceCommandFactory = std::unique_ptr<TraceCommand> (*)(const Options &o,
							       Frames &frames);

/* trace_pass.cpp: read o.input (filters, --map), run the command made by
 * `make` on its id records; the exit status */
int run_trace(const Options &o, TraceCommandFactory make);
/* the options every trace command takes, for the help texts */
extern const char *const kTraceOpts;

std::unique_ptr<TraceCommand> make_report(const Options &o, Frames &frames);
std::unique_ptr<TraceCommand> make_folded(const Options &o, Frames &frames);
std::unique_ptr<TraceCommand> make_stats(const Options &o, Frames &frames);
std::unique_ptr<TraceCommand> make_pprof(const Options &o, Frames &frames);

/* cmd_dump.cpp: decode o.dump_file */
int run_dump(const Options &o);

/* the --help text of each command */
void help_report();
void help_folded();
void help_stats();
void help_pprof();
void help_dump();

} /* namespace smr::report */

#endif
