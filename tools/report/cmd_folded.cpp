// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_folded.cpp - stackmap-report folded: one line per distinct stack
 * with its count (flamegraph.pl, speedscope).
 */
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "commands.h"
#include "frames.h"

namespace smr::report {

namespace {

class Folded : public TraceCommand {
public:
	explicit Folded(Frames &frames) : fr_(frames) {}

	void add(const Sample &s) override { folded_[fr_.folded_key(s)]++; }

	int finish(const Totals &) override
	{
		for (const auto &[k, n] : folded_)
			std::cout << k << " " << n << "\n";
		return 0;
	}

private:
	Frames &fr_;
	std::map<std::string, uint64_t> folded_;
};

} /* namespace */

std::unique_ptr<TraceCommand> make_folded(const Options &, Frames &frames)
{
	return std::make_unique<Folded>(frames);
}

void help_folded()
{
	std::cout << "usage: stackmap-report folded [OPTIONS]\n\n"
		     "One line per distinct stack: comm;user frames (outermost\n"
		     "first);kernel frames (suffixed _[k]) COUNT. The counts add up\n"
		     "to the number of id records (stack_id, stack_id_user,\n"
		     "stack_fallback) that pass the filters.\n\n"
		  << kTraceOpts;
}

} /* namespace smr::report */
