// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_report.cpp - stackmap-report report: each source event followed by
 * its kernel stack and, when recorded, its user stack.
 */
#include <sys/stat.h>

#include <iostream>
#include <memory>

#include "abi.h"
#include "commands.h"
#include "frames.h"

namespace smr::report {

namespace {

const char *const kReasons[] = {
	"", "map_full", "arena_full", "probe_limit", "busy", "resetting",
	"invalid", "nested",
};

class Report : public TraceCommand {
public:
	explicit Report(const Options &o) : o_(o) {}

	bool wants_lines() const override { return true; }

	/* several inputs: one section each, headed by its host */
	void begin_input(size_t i, const std::string &host, const std::string &file) override
	{
		if (o_.inputs.size() < 2 && (o_.inputs.empty() || !is_dir(o_.inputs[0])))
			return;
		std::cout << (i ? "\n" : "") << "# host " << host << " (" << file << ")\n";
	}

	void add(const Sample &s, Frames &fr_) override
	{
		std::string pre = s.instance.empty() ? "" : s.instance + ": ";
		if (s.line.empty())
			std::cout << pre << "[no source event before this record on its CPU]\n";
		else
			std::cout << pre << s.line << "\n";
		if (s.fallback)
			std::cout << " <fallback: no id, reason " << s.id->reason << " "
				  << (s.id->reason <= 7 ? kReasons[s.id->reason] : "?") << ">\n";
		for (const auto &f : fr_.kernel_frames(s, false))
			std::cout << " => " << f << "\n";
		if ((s.fallback ? s.id->flags : 0) & FSM_SID_F_TRUNCATED || s.k.truncated)
			std::cout << " => [truncated]\n";
		if (!s.has_user)
			return;
		std::cout << " <user stack trace>\n";
		if (s.u.status != Status::OK) {
			std::cout << " => " << fr_.user_problem(s) << "\n";
			return;
		}
		for (const auto &uf : fr_.user_frames(*s.u.frames))
			for (const auto &l : user_frame_lines(uf))
				std::cout << " => " << l << "\n";
		if (s.u.truncated)
			std::cout << " => [truncated]\n";
		if (s.u.unreliable)
			std::cout << " => [unreliable: frames past the first may be wrong or missing]\n";
	}

	int finish(const Totals &) override { return 0; }

private:
	static bool is_dir(const std::string &p)
	{
		struct stat sb;
		return stat(p.c_str(), &sb) == 0 && S_ISDIR(sb.st_mode);
	}
	const Options &o_;
};

} /* namespace */

std::unique_ptr<TraceCommand> make_report(const Options &o)
{
	return std::make_unique<Report>(o);
}

void help_report()
{
	std::cout << "usage: stackmap-report report [OPTIONS]\n\n"
		     "Each source event followed by its kernel stack (' => ' lines,\n"
		     "innermost first) and, when recorded, its user stack after a\n"
		     "' <user stack trace>' line. Unresolved ids say so. Several\n"
		     "inputs: one section each, headed '# host HOST (FILE)'.\n\n"
		  << kTraceOpts
		  << "      --addr            also print each kernel frame's address\n";
}

} /* namespace smr::report */
