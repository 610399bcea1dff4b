/* SPDX-License-Identifier: GPL-2.0 */
/*
 * frames.h - one id record of a trace, resolved (Sample), and the names of
 * its frames as the trace commands print them (Frames).
 */
#ifndef STACKMAP_REPORT_FRAMES_H
#define STACKMAP_REPORT_FRAMES_H

#include <cstdint>
#include <string>
#include <vector>

#include "options.h"
#include "resolve.h"
#include "symbols.h"
#include "trace.h"

namespace smr::report {

/* "0x..." */
std::string hex64(uint64_t v);

struct Sample {
	const Rec *id;			/* the id record */
	std::string source;		/* "system:event" of its source */
	std::string line;		/* report: the source's line */
	std::string comm;
	std::string instance;
	std::string host;		/* of its trace (uname node name or file name) */
	bool fallback = false;
	KernelResult k;
	UserResult u;
	bool has_user = false;		/* the record asked for a user stack */
};

class Frames {
public:
	Frames(const Options &o, KernelSyms &ks, UserSyms &us, const Resolver &res)
		: o_(o), ks_(ks), us_(us), res_(res) {}

	KernelSyms &kernel_syms() { return ks_; }
	const Resolver &resolver() const { return res_; }

	/* the ips of a record's kernel stack; nullptr: see kernel_frames() */
	const std::vector<uint64_t> *kernel_ips(const Sample &s);
	/* the kernel frames' names, innermost first ("func", folded, or
	 * "func+0xoff" [<addr>]), or one pseudo frame saying why there are none */
	std::vector<std::string> kernel_frames(const Sample &s, bool folded);
	/* user frames innermost first; each one or more (inlined) lines */
	std::vector<UserFrame> user_frames(const std::vector<UFrame> &frames);
	/* why a record's user stack has no frames ("" when it has) */
	std::string user_problem(const Sample &s);
	/* folded: "[host;]comm;user frames;kernel frames_[k]", outermost
	 * first (host with --by-host) */
	std::string folded_key(const Sample &s);

	/* ';' and '\n' (the folded format's separators) made ':' */
	static std::string clean(std::string s);

private:
	const Options &o_;
	KernelSyms &ks_;
	UserSyms &us_;
	const Resolver &res_;
};

} /* namespace smr::report */

#endif
