// SPDX-License-Identifier: GPL-2.0
/*
 * extract.cpp - stackmap-ctl extract: the flight recorder's read-out. A
 * trace.dat of what the instance's ring buffer holds now, and the
 * instance's stack_map_bin beside it, leaving the instance, its events,
 * its options and its map as they are (Documentation/flight-recorder.rst).
 *
 * Why not `trace-cmd extract -B NAME`: at its end (3.1.6) it disables the
 * events of every instance it touched, leaves tracing off, and removes the
 * instance, with the module's map (measured; tools_ctl.sh shows it). Here
 * the same writer is used (libtracecmd: the per-CPU raw pages of the
 * buffer into files, then trace.dat from them, tracecmd_write.h) and
 * nothing else is changed, but for tracing_on: it is 0 while the buffer
 * is read, so that the buffer is read as it stands (with the sources
 * recording, reading would chase the records the reading itself makes),
 * then back to what it was. As with trace-cmd extract, reading consumes
 * the buffer: the records are in FILE, no longer in the buffer.
 *
 * The snapshot is read after the buffer: every id the records name was
 * handed out before it, and nothing resets the map meanwhile unless the
 * user does. Then the buffer, read to its end, is emptied (its reader
 * page, see step 4) and the module is told that it was read (a write of
 * `redefine` to stack_map): the ids used after this read get their
 * definitions again, so that the next extract stands on its own too.
 */
#include <errno.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

extern "C" {
#include <tracefs.h>
}

#include "commands.h"
#include "ctl.h"
#include "tracecmd_write.h"

namespace smctl {

namespace {

/* Puts tracing_on back to its value, whatever happens. */
class TracingPause {
public:
	explicit TracingPause(Ctx &c) : c_(c) {}
	~TracingPause()
	{
		if (paused_)
			write_node(c_, "tracing_on", "1");
	}
	TracingPause(const TracingPause &) = delete;
	TracingPause &operator=(const TracingPause &) = delete;

	/* 0 and tracing_on 0 now, or the exit status after saying why not */
	int pause()
	{
		std::string v, err;
		if (!read_node(c_, "tracing_on", &v, &err))
			return fail(err);
		if (v.rfind("1", 0) != 0)
			return 0;	/* off already: leave it so */
		if (!write_node(c_, "tracing_on", "0"))
			return 1;
		paused_ = true;
		return 0;
	}
	/* tracing_on back to 1 now, if pause() turned it off */
	void resume()
	{
		if (paused_)
			write_node(c_, "tracing_on", "1");
		paused_ = false;
	}

private:
	Ctx &c_;
	bool paused_ = false;
};

/* Removes the temporary per-CPU files however extract ends. */
struct TempFiles {
	std::vector<std::string> paths;
	~TempFiles()
	{
		for (const std::string &p : paths)
			unlink(p.c_str());
	}
	std::vector<char *> argv()
	{
		std::vector<char *> v;
		for (std::string &p : paths)
			v.push_back(p.data());
		return v;
	}
};

bool write_file(const std::string &path, const std::string &data, std::string *err)
{
	std::string tmp = path + ".tmp";
	{
		std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
		out.write(data.data(), std::streamsize(data.size()));
		out.close();
		if (!out) {
			*err = "cannot write " + tmp + ": " + errstr(errno ? errno : EIO);
			unlink(tmp.c_str());
			return false;
		}
	}
	if (rename(tmp.c_str(), path.c_str()) < 0) {
		*err = "cannot write " + path + ": " + errstr(errno);
		unlink(tmp.c_str());
		return false;
	}
	return true;
}

} /* namespace */

int cmd_extract(Ctx &c, const Options &o)
{
	const std::string &out = o.output;
	const std::string name = o.instance;	/* "" = the top level */
	const long ncpus = sysconf(_SC_NPROCESSORS_CONF);	/* as trace-cmd */
	std::string err;

	if (ncpus < 1)
		return fail("cannot count the CPUs: " + errstr(errno));
	ExtractPaths paths = extract_paths(out, int(ncpus));

	TracingPause pause(c);
	if (int r = pause.pause())
		return r;

	/* what each CPU's buffer holds and lost, for the summary */
	std::vector<CpuStats> stats;
	for (long cpu = 0; cpu < ncpus; cpu++) {
		std::string text;
		std::string file = "per_cpu/cpu" + std::to_string(cpu) + "/stats";
		stats.push_back(read_node(c, file.c_str(), &text, &err) ? parse_cpu_stats(text)
									: CpuStats{});
	}

	/* 1. the buffer's raw pages, per CPU, as trace-cmd extract reads them */
	TempFiles data;
	for (long cpu = 0; cpu < ncpus; cpu++) {
		data.paths.push_back(paths.cpu_files[size_t(cpu)]);
		errno = 0;
		tracecmd_recorder *rec = tracecmd_create_buffer_recorder(
			data.paths.back().c_str(), int(cpu), 0, c.inst);
		if (!rec)
			return fail("cannot read the buffer of CPU " + std::to_string(cpu) + " of " +
				    c.where + ": " + errstr(errno ? errno : EIO));
		long n = tracecmd_flush_recording(rec, true);
		tracecmd_free_recorder(rec);
		if (n < 0)
			return fail("reading the buffer of CPU " + std::to_string(cpu) + " of " +
				    c.where + " failed");
	}

	/* 2. the map, after the buffer: every id of its records is in it */
	std::string raw;
	smr::Fsmb snap;
	if (!read_snapshot(c, &raw, &snap, &err))
		return fail(err);

	/* 3. trace.dat: the top level's data (empty files for an instance) */
	TempFiles top;
	if (!name.empty()) {
		for (long cpu = 0; cpu < ncpus; cpu++) {
			top.paths.push_back(paths.top_files[size_t(cpu)]);
			std::ofstream f(top.paths.back(), std::ios::trunc);
			if (!f)
				return fail("cannot write " + top.paths.back() + ": " +
					    errstr(errno ? errno : EIO));
		}
	}
	errno = 0;
	tracecmd_output *h = tracecmd_output_create(out.c_str());
	if (!h)
		return fail("cannot create " + out + ": " + errstr(errno ? errno : EIO));
	bool ok = tracecmd_output_write_headers(h, nullptr) == 0;
	if (ok && !name.empty())
		ok = tracecmd_add_buffer_info(h, name.c_str(), 0) == 0;
	ok = ok && tracecmd_write_cmdlines(h) == 0;
	if (ok && name.empty()) {
		ok = tracecmd_append_cpu_data(h, int(ncpus), data.argv().data()) == 0;
	} else if (ok) {
		ok = tracecmd_append_cpu_data(h, int(ncpus), top.argv().data()) == 0 &&
		     tracecmd_append_buffer_cpu_data(h, name.c_str(), int(ncpus),
						     data.argv().data()) == 0;
	}
	tracecmd_output_close(h);
	if (!ok) {
		unlink(out.c_str());
		return fail("writing " + out + " failed (libtracecmd)");
	}
	if (!write_file(paths.map, raw, &err))
		return fail(err);

	/*
	 * 4. Empty what is left of the buffer: the read leaves the writer on
	 * the page it took for the reader, a page that stays out of the ring
	 * until the next read, so the first records written after this one
	 * would be kept apart from the rest, without the definitions that
	 * follow them (tracing is off and everything was read: nothing is
	 * lost). Then tell the module the buffer was read: ids used from
	 * now on get their definitions again (an older module refuses the
	 * word: say so).
	 */
	if (tracefs_instance_file_clear(c.inst, "trace") < 0)
		std::cerr << "stackmap-ctl: warning: cannot empty the trace of " << c.where
			  << ": " << errstr(errno) << "\n";
	bool told = !node_exists(c, "stack_map") ||
		    tracefs_instance_file_write(c.inst, "stack_map", "redefine\n") > 0;
	pause.resume();

	std::cout << extract_summary(c.where, out, paths.map, stats, snap);
	if (!told)
		std::cerr << "stackmap-ctl: warning: the module did not take 'redefine' (an "
			     "older module?): the next extract may lack definitions of ids "
			     "used before this one (its map snapshot has them)\n";
	if (snap.hidden())
		std::cerr << "stackmap-ctl: warning: kernel addresses are hidden in the "
			     "snapshot (reader without CAP_SYSLOG / kptr_restrict)\n";
	return 0;
}

} /* namespace smctl */
