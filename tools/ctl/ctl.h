/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ctl.h - the parts of stackmap-ctl that do not touch tracefs or the
 * terminal, unit-tested (tests/test_ctl.cpp):
 *
 *  - stat_format(): stack_map_stat ("key: value" lines, then "source ..."
 *    lines) as grouped, aligned text for `stackmap-ctl status`;
 *  - TopModel: hit-count deltas of the kernel stacks of successive
 *    stack_map_bin snapshots (decoded by smr::fsmb_decode), ordered hottest
 *    first, for `stackmap-ctl top`;
 *  - kmsg_module_lines(): the module's lines among /dev/kmsg records, the
 *    reason shown when the module refuses a write;
 *  - extract's file names, the ring buffer's per_cpu/cpuN/stats, and its
 *    summary (`stackmap-ctl extract`).
 */
#ifndef STACKMAP_CTL_CTL_H
#define STACKMAP_CTL_CTL_H

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "fsmb.h"

namespace smctl {

/* Grouped, aligned text of a stack_map_stat read. Unknown keys are kept
 * (in an "other" group), so a newer module loses nothing. */
std::string stat_format(const std::string &raw);

/* "key: value" lines of stack_map_stat as a map (the source lines are not
 * included). */
std::map<std::string, std::string> stat_parse(const std::string &raw);

struct TopRow {
	uint32_t record_id;	/* the id as the trace shows it (gen | index) */
	uint64_t hits;		/* cumulative, from the snapshot */
	uint64_t delta;		/* hits since the previous snapshot */
	bool fresh;		/* no previous value (first snapshot) */
	std::vector<uint64_t> ips;	/* innermost first */
};

/*
 * Successive snapshots of one instance. update() takes the next snapshot
 * and returns its kernel stacks with their delta against the previous
 * one, ordered by delta, then hits, then id (hottest first). A stack of a
 * new generation (after a reset) counts from 0. The first snapshot has no
 * previous one: its rows are `fresh` (delta 0), ordered by hits.
 */
class TopModel {
public:
	std::vector<TopRow> update(const smr::Fsmb &snap);
	uint64_t total_hits() const { return total_; }
	uint64_t total_delta() const { return total_delta_; }
	bool first() const { return !have_prev_; }

private:
	std::map<uint64_t, uint64_t> prev_;	/* (generation << 32 | id) -> hits */
	bool have_prev_ = false;
	uint64_t total_ = 0, total_delta_ = 0;
};

/* One line of a top row: delta, hits, id, then the frames by `name` joined
 * by " < " (innermost first), cut to `width` columns (0: no limit). */
std::string top_line(const TopRow &r, const std::function<std::string(uint64_t)> &name,
		     size_t width);
std::string top_header();

/* The messages of /dev/kmsg records ("prio,seq,ts,flags;message\n",
 * continuation lines start with a blank) that name the module. */
std::vector<std::string> kmsg_module_lines(const std::string &records);

/* Split an event list (blanks, commas, newlines) into tokens. */
std::vector<std::string> split_events(const std::string &s);

/* The files of `extract -o OUT`: the snapshot beside OUT (OUT.fsmb), and
 * the temporary per-CPU data files (OUT.cpuN; OUT.top.cpuN, the empty top
 * level of an instance's trace.dat). */
struct ExtractPaths {
	std::string map;
	std::vector<std::string> cpu_files, top_files;
};
ExtractPaths extract_paths(const std::string &out, int ncpus);

/* per_cpu/cpuN/stats of a ring buffer: what it holds and lost. */
struct CpuStats {
	unsigned long long entries = 0;	/* records held */
	unsigned long long overrun = 0;	/* overwritten (overwrite mode) */
	unsigned long long bytes = 0;
	unsigned long long read = 0;	/* "read events": consumed */
	bool ok = false;		/* entries and overrun were there */
};
CpuStats parse_cpu_stats(const std::string &text);

/* What extract says it did. */
std::string extract_summary(const std::string &where, const std::string &out,
			    const std::string &map, const std::vector<CpuStats> &cpus,
			    const smr::Fsmb &snap);

} /* namespace smctl */

#endif
