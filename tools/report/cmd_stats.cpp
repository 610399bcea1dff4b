// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_stats.cpp - stackmap-report stats: per source event, the records,
 * the unresolved ones and the top stacks with their counts and shares.
 */
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "frames.h"

namespace smr::report {

namespace {

class Stats : public TraceCommand {
public:
	explicit Stats(const Options &o) : o_(o) {}

	void add(const Sample &s, Frames &fr) override
	{
		EvStats &e = stats_[(s.instance.empty() ? "" : s.instance + ": ") + s.source];
		e.total++;
		e.unresolved += !s.fallback && s.k.status != Status::OK;
		e.stacks[fr.folded_key(s)]++;
	}

	int finish(const Totals &t) override
	{
		std::cout << "records: " << t.records << "\n"
			  << "unresolved: " << t.unresolved << "\n"
			  << "user_unresolved: " << t.user_unresolved << "\n"
			  << "file_unresolved: " << t.file_unresolved << "\n";
		for (const auto &[ev, e] : stats_) {
			std::cout << "\nevent " << ev << ": " << e.total << " records, "
				  << e.stacks.size() << " stacks, " << e.unresolved
				  << " unresolved\n";
			std::vector<std::pair<uint64_t, std::string>> v;
			for (const auto &[k, n] : e.stacks)
				v.emplace_back(n, k);
			std::stable_sort(v.begin(), v.end(), [](const auto &a, const auto &b) {
				return a.first > b.first;
			});
			size_t lim = o_.top > 0 ? size_t(o_.top) : v.size();
			for (size_t i = 0; i < v.size() && i < lim; i++) {
				char pct[32];
				snprintf(pct, sizeof(pct), "%6.2f%%",
					 100.0 * double(v[i].first) / double(e.total));
				std::cout << "  " << v[i].first << " " << pct << " " << v[i].second
					  << "\n";
			}
		}
		return 0;
	}

private:
	struct EvStats {
		uint64_t total = 0, unresolved = 0;
		std::map<std::string, uint64_t> stacks;
	};
	const Options &o_;
	std::map<std::string, EvStats> stats_;	/* "[instance: ]system:event" */
};

} /* namespace */

std::unique_ptr<TraceCommand> make_stats(const Options &o)
{
	return std::make_unique<Stats>(o);
}

void help_stats()
{
	std::cout << "usage: stackmap-report stats [OPTIONS]\n\n"
		     "Per source event: records, unresolved, and the top stacks with\n"
		     "their counts and shares; several inputs add up. The totals first:\n"
		     "records, unresolved (kernel stacks), user_unresolved (user stacks)\n"
		     "and file_unresolved (user stacks naming a file that no file_map\n"
		     "record describes).\n\n"
		  << kTraceOpts
		  << "      --top N           stacks per event (default 10, 0: all)\n"
		     "      --by-host         stacks start with the host of their trace\n";
}

} /* namespace smr::report */
