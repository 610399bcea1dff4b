// SPDX-License-Identifier: GPL-2.0
/*
 * ctl.cpp - stackmap-ctl's formatting and delta logic (see ctl.h).
 */
#include "ctl.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>

namespace smctl {

namespace {

struct Group {
	const char *title;
	std::vector<const char *> keys;
};

/* The order of Documentation/tracing.rst ("stack_map_stat"). */
const std::vector<Group> &groups()
{
	static const std::vector<Group> g = {
		{"instance", {"instance", "inst_id", "recording", "sources"}},
		{"map", {"map_allocated", "bits", "entries", "capacity", "table_slots",
			 "max_depth", "arena_used", "arena_size", "memory_bytes",
			 "generation", "resets"}},
		{"lookups", {"requests", "hits", "inserts", "hit_rate", "lost_races", "drops"}},
		{"records", {"records", "inline_emits", "redefinitions", "fallbacks", "truncated",
			     "records_lost", "inline_lost", "nested_dropped",
			     "trigger_no_verdict"}},
	};
	return g;
}

std::string pad(const std::string &s, size_t w)
{
	return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' ');
}

} /* namespace */

std::map<std::string, std::string> stat_parse(const std::string &raw)
{
	std::map<std::string, std::string> kv;
	std::istringstream in(raw);
	std::string l;
	while (std::getline(in, l)) {
		if (l.rfind("source ", 0) == 0)
			continue;
		size_t c = l.find(": ");
		if (c == std::string::npos || c == 0)
			continue;
		kv[l.substr(0, c)] = l.substr(c + 2);
	}
	return kv;
}

std::string stat_format(const std::string &raw)
{
	std::vector<std::pair<std::string, std::string>> kv;	/* in file order */
	std::vector<std::string> sources;
	std::istringstream in(raw);
	std::string l;
	while (std::getline(in, l)) {
		if (l.rfind("source ", 0) == 0) {
			sources.push_back(l.substr(7));
			continue;
		}
		size_t c = l.find(": ");
		if (c == std::string::npos || c == 0) {
			if (!l.empty())
				kv.emplace_back("", l);	/* kept as is */
			continue;
		}
		kv.emplace_back(l.substr(0, c), l.substr(c + 2));
	}
	std::map<std::string, std::string> m(kv.begin(), kv.end());
	std::set<std::string> shown;
	std::ostringstream o;
	auto line = [&](const std::string &k, const std::string &v) {
		o << "  " << pad(k, 22) << v << "\n";
		shown.insert(k);
	};
	for (const Group &g : groups()) {
		bool any = false;
		for (const char *k : g.keys)
			any |= m.count(k) > 0;
		if (!any)
			continue;
		o << g.title << ":\n";
		for (const char *k : g.keys) {
			auto it = m.find(k);
			if (it == m.end())
				continue;
			std::string v = it->second;
			if (std::string(k) == "instance" && v.empty())
				v = "(top level)";
			line(k, v);
			if (std::string(k) == "drops") {
				/* the per-reason counts under the total */
				for (const auto &[dk, dv] : kv)
					if (dk.rfind("drops_", 0) == 0)
						line("  " + dk.substr(6), dv);
			}
		}
	}
	auto section = [&](const char *title, const char *prefix) {
		bool head = false;
		for (const auto &[k, v] : kv) {
			if (k.empty() || shown.count(k) || k.rfind(prefix, 0) != 0)
				continue;
			if (!head)
				o << title << ":\n";
			head = true;
			line(k, v);
		}
	};
	for (const auto &[k, v] : kv)	/* drops_* were printed under drops */
		if (k.rfind("drops_", 0) == 0)
			shown.insert(k);
	section("user stacks", "user_");
	section("files", "file");
	bool head = false;
	for (const auto &[k, v] : kv) {
		if (!k.empty() && shown.count(k))
			continue;
		if (!head)
			o << "other:\n";
		head = true;
		if (k.empty())
			o << "  " << v << "\n";
		else
			line(k, v);
	}
	if (!sources.empty()) {
		o << "sources:\n";
		for (const std::string &s : sources)
			o << "  " << s << "\n";
	}
	return o.str();
}

std::vector<TopRow> TopModel::update(const smr::Fsmb &snap)
{
	std::map<uint64_t, uint64_t> cur;
	std::vector<TopRow> rows;
	total_ = total_delta_ = 0;
	for (const smr::FsmbKStack &k : snap.kstacks) {
		uint64_t key = uint64_t(snap.generation) << 32 | k.stack_id;
		TopRow r{snap.record_id(k.stack_id), k.hits, 0, !have_prev_, k.ips};
		if (have_prev_) {
			auto it = prev_.find(key);
			uint64_t before = it == prev_.end() ? 0 : it->second;
			/* hits only grow within a generation; a smaller value
			 * is a new entry of the same index: count from 0 */
			r.delta = k.hits >= before ? k.hits - before : k.hits;
		}
		cur[key] = k.hits;
		total_ += r.hits;
		total_delta_ += r.delta;
		rows.push_back(std::move(r));
	}
	std::sort(rows.begin(), rows.end(), [](const TopRow &a, const TopRow &b) {
		if (a.delta != b.delta)
			return a.delta > b.delta;
		if (a.hits != b.hits)
			return a.hits > b.hits;
		return a.record_id < b.record_id;
	});
	prev_ = std::move(cur);
	have_prev_ = true;
	return rows;
}

std::string top_header()
{
	char b[96];
	snprintf(b, sizeof(b), "%10s %10s %10s  %s", "DELTA", "HITS", "ID",
		 "STACK (innermost first)");
	return b;
}

std::string top_line(const TopRow &r, const std::function<std::string(uint64_t)> &name,
		     size_t width)
{
	char b[64];
	if (r.fresh)
		snprintf(b, sizeof(b), "%10s %10llu %10u  ", "-",
			 (unsigned long long)r.hits, r.record_id);
	else
		snprintf(b, sizeof(b), "%10llu %10llu %10u  ",
			 (unsigned long long)r.delta, (unsigned long long)r.hits,
			 r.record_id);
	std::string s = b;
	for (size_t i = 0; i < r.ips.size(); i++) {
		if (i)
			s += " < ";
		s += name(r.ips[i]);
		if (width && s.size() >= width)
			break;
	}
	if (r.ips.empty())
		s += "(empty stack)";
	if (width && s.size() > width)
		s.resize(width);
	return s;
}

std::vector<std::string> kmsg_module_lines(const std::string &records)
{
	std::vector<std::string> out;
	std::istringstream in(records);
	std::string l;
	while (std::getline(in, l)) {
		if (l.empty() || l[0] == ' ')
			continue;	/* continuation (key=value) lines */
		size_t semi = l.find(';');
		if (semi == std::string::npos)
			continue;
		std::string msg = l.substr(semi + 1);
		if (msg.find("ftrace_stackmap") != std::string::npos)
			out.push_back(msg);
	}
	return out;
}

std::vector<std::string> split_events(const std::string &s)
{
	std::vector<std::string> v;
	std::string cur;
	for (char c : s) {
		if (c == ' ' || c == '\t' || c == '\n' || c == ',') {
			if (!cur.empty())
				v.push_back(cur);
			cur.clear();
		} else {
			cur += c;
		}
	}
	if (!cur.empty())
		v.push_back(cur);
	return v;
}

ExtractPaths extract_paths(const std::string &out, int ncpus)
{
	ExtractPaths p;
	p.map = out + ".fsmb";
	for (int cpu = 0; cpu < ncpus; cpu++) {
		p.cpu_files.push_back(out + ".cpu" + std::to_string(cpu));
		p.top_files.push_back(out + ".top.cpu" + std::to_string(cpu));
	}
	return p;
}

CpuStats parse_cpu_stats(const std::string &text)
{
	CpuStats st;
	std::istringstream in(text);
	std::string l;
	bool entries = false, overrun = false;
	while (std::getline(in, l)) {
		size_t c = l.find(": ");
		if (c == std::string::npos)
			continue;
		const std::string k = l.substr(0, c), v = l.substr(c + 2);
		char *end = nullptr;
		unsigned long long n = strtoull(v.c_str(), &end, 10);
		if (end == v.c_str())
			continue;
		if (k == "entries") {
			st.entries = n;
			entries = true;
		} else if (k == "overrun") {
			st.overrun = n;
			overrun = true;
		} else if (k == "bytes") {
			st.bytes = n;
		} else if (k == "read events") {
			st.read = n;
		}
	}
	st.ok = entries && overrun;
	return st;
}

std::string extract_summary(const std::string &where, const std::string &out,
			    const std::string &map, const std::vector<CpuStats> &cpus,
			    const smr::Fsmb &snap)
{
	std::ostringstream o;
	unsigned long long held = 0, lost = 0;
	bool known = true;
	for (const CpuStats &c : cpus) {
		held += c.entries;
		lost += c.overrun;
		known &= c.ok;
	}
	o << "extracted " << where << " to " << out;
	if (known)
		o << ": " << held << " events on " << cpus.size() << " CPUs ("
		  << lost << " overwritten before)";
	o << "\nits stack map to " << map << ": generation " << snap.generation << ", "
	  << snap.kstacks.size() << " kernel stacks, " << snap.ustacks.size()
	  << " user stacks, " << snap.files.size() << " files\n"
	  << where << " and its map are in place"
	  << (where == "the top level" ? "" : " (recording as before)") << "\n";
	return o.str();
}

} /* namespace smctl */
