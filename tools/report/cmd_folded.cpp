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
	void add(const Sample &s, Frames &fr) override { folded_[fr.folded_key(s)]++; }

	int finish(const Totals &) override
	{
		for (const auto &[k, n] : folded_)
			std::cout << k << " " << n << "\n";
		return 0;
	}

private:
	std::map<std::string, uint64_t> folded_;
};

} /* namespace */

std::unique_ptr<TraceCommand> make_folded(const Options &)
{
	return std::make_unique<Folded>();
}

void help_folded()
{
	std::cout << "usage: stackmap-report folded [OPTIONS]\n\n"
		     "One line per distinct stack: comm;user frames (outermost\n"
		     "first);kernel frames (suffixed _[k]) COUNT. The counts add up\n"
		     "to the number of id records (stack_id, stack_id_user,\n"
		     "stack_fallback) that pass the filters. Several inputs: their\n"
		     "counts add up.\n\n"
		  << kTraceOpts
		  << "      --by-host         a leading frame: the host of the record's trace\n";
}

} /* namespace smr::report */
