// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_pprof.cpp - stackmap-report pprof: a gzipped google pprof profile
 * (profile.proto, built by tools/lib's PprofBuilder) of the id records.
 */
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "abi.h"
#include "commands.h"
#include "frames.h"
#include "pprof.h"

namespace smr::report {

namespace {

class Pprof : public TraceCommand {
public:
	explicit Pprof(const Options &o) : o_(o) {}

	void begin_input(size_t, const std::string &, const std::string &file) override
	{
		files_ += (files_.empty() ? "" : " -i ") + file;
		prof_.next_input();
	}

	/* one record into the profile: the locations of Frames::folded_key() */
	void add(const Sample &s, Frames &fr_) override
	{
		std::vector<uint64_t> locs;	/* innermost first */
		if (const std::vector<uint64_t> *ips = fr_.kernel_ips(s)) {
			for (uint64_t ip : *ips)
				locs.push_back(prof_.kernel_location(
					ip, Frames::clean(fr_.kernel_syms().name(ip))));
		} else {
			for (const auto &f : fr_.kernel_frames(s, true))
				locs.push_back(prof_.pseudo_location(Frames::clean(f)));
		}
		if (s.has_user && s.u.status != Status::OK) {
			locs.push_back(prof_.pseudo_location(Frames::clean(fr_.user_problem(s))));
		} else if (s.has_user) {
			const auto &fr = *s.u.frames;
			auto ufs = fr_.user_frames(fr);
			for (size_t i = 0; i < fr.size(); i++) {
				const FileInfo *f = fr_.resolver().file(fr[i].first);
				uint64_t w = fr[i].second;
				const uint64_t nofile = FSM_UFR_ANON | FSM_UFR_VDSO |
							FSM_UFR_NOVMA | FSM_UFR_SPECIAL;
				if (!f || f->path.empty() || (w & nofile)) {
					locs.push_back(prof_.pseudo_location(
						Frames::clean(ufs[i].where)));
					continue;
				}
				std::vector<SymFrame> funcs = ufs[i].funcs;
				for (auto &sf : funcs)
					sf.func = Frames::clean(sf.func);
				locs.push_back(prof_.user_location(fr[i].first, f->path, f->build_id,
								   w & FSM_UFR_OFFSET_MASK, funcs,
								   Frames::clean(ufs[i].where)));
			}
		}
		PprofBuilder::Labels l;
		l.comm = s.comm.empty() ? "[unknown]" : s.comm;
		l.pid = s.id->pid;
		l.event = s.source;
		l.instance = s.instance;
		l.host = s.host;
		prof_.add_sample(locs, l);
	}

	int finish(const Totals &t) override
	{
		prof_.set_span(t.first_ts, t.last_ts);
		prof_.add_comment("stackmap-report pprof -i " + files_);
		std::string gz;
		std::string err = prof_.gzipped(&gz);
		if (err.empty() && o_.output.empty()) {
			std::cout.write(gz.data(), std::streamsize(gz.size()));
			std::cout.flush();
			if (!std::cout)
				err = "standard output: write failed";
		} else if (err.empty()) {
			std::ofstream out(o_.output, std::ios::binary | std::ios::trunc);
			out.write(gz.data(), std::streamsize(gz.size()));
			out.close();
			if (!out)
				err = o_.output + ": cannot write: " + strerror(errno);
		}
		if (!err.empty()) {
			std::cerr << "stackmap-report: pprof: " << err << "\n";
			return 1;
		}
		return 0;
	}

private:
	const Options &o_;
	std::string files_;
	PprofBuilder prof_;
};

} /* namespace */

std::unique_ptr<TraceCommand> make_pprof(const Options &o)
{
	return std::make_unique<Pprof>(o);
}

void help_pprof()
{
	std::cout << "usage: stackmap-report pprof [-o FILE] [OPTIONS]\n\n"
		     "A gzipped google pprof profile (profile.proto): one sample\n"
		     "value 'events/count' per stack and labels comm, pid, event,\n"
		     "host (and instance); several inputs go into one profile; the values add up to the id records that pass\n"
		     "the filters. Kernel frames are in mapping '[kernel]', user\n"
		     "frames in one mapping per file (path, build-id, address =\n"
		     "file offset). View with 'pprof -http=: FILE'.\n\n"
		     "  -o, --output FILE     write to FILE (default: standard output,\n"
		     "                        refused when it is a terminal)\n"
		  << kTraceOpts;
}

} /* namespace smr::report */
