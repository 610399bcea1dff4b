// SPDX-License-Identifier: GPL-2.0
/*
 * test_ctl.cpp - stackmap-ctl's logic without tracefs: the hit-count
 * deltas of `top` over successive snapshots (resets included), its lines,
 * the grouped stack_map_stat of `status` (nothing lost), the module's
 * lines among /dev/kmsg records, the event-list split.
 */
#include <gtest/gtest.h>

#include "abi.h"
#include "ctl.h"

using namespace smctl;

namespace {

smr::Fsmb snap(uint32_t gen, std::vector<std::pair<uint32_t, uint32_t>> id_hits)
{
	smr::Fsmb f;
	f.version = 4;
	f.generation = gen;
	f.bits = 12;
	f.flags = FSMB_F_KERNEL;
	for (auto [id, hits] : id_hits)
		f.kstacks.push_back({id, hits, {0x1000u + id, 0x2000u + id}});
	return f;
}

std::string sym(uint64_t ip)
{
	return "f" + std::to_string(ip);
}

} /* namespace */

TEST(Top, FirstSnapshotIsBaseline)
{
	TopModel m;
	auto rows = m.update(snap(1, {{0, 5}, {1, 9}}));
	ASSERT_EQ(rows.size(), 2u);
	EXPECT_TRUE(rows[0].fresh);
	EXPECT_EQ(rows[0].delta, 0u);
	EXPECT_EQ(rows[0].hits, 9u);	/* by hits when there is no delta */
	EXPECT_EQ(m.total_hits(), 14u);
	EXPECT_EQ(m.total_delta(), 0u);
}

TEST(Top, DeltaOrdersHottestFirst)
{
	TopModel m;
	m.update(snap(1, {{0, 100}, {1, 9}}));
	auto rows = m.update(snap(1, {{0, 101}, {1, 19}, {2, 3}}));
	ASSERT_EQ(rows.size(), 3u);
	EXPECT_FALSE(rows[0].fresh);
	EXPECT_EQ(rows[0].record_id, snap(1, {}).record_id(1));
	EXPECT_EQ(rows[0].delta, 10u);
	EXPECT_EQ(rows[1].delta, 3u);	/* new stack: all its hits */
	EXPECT_EQ(rows[2].delta, 1u);
	EXPECT_EQ(rows[2].hits, 101u);
	EXPECT_EQ(m.total_delta(), 14u);
}

TEST(Top, ResetStartsFromZero)
{
	TopModel m;
	m.update(snap(1, {{0, 100}}));
	/* after a reset, index 0 is another stack of generation 2 */
	auto rows = m.update(snap(2, {{0, 4}}));
	ASSERT_EQ(rows.size(), 1u);
	EXPECT_EQ(rows[0].delta, 4u);
	EXPECT_NE(rows[0].record_id, snap(1, {}).record_id(0));
}

TEST(Top, Line)
{
	TopModel m;
	m.update(snap(1, {{3, 1}}));
	auto rows = m.update(snap(1, {{3, 8}}));
	std::string l = top_line(rows[0], sym, 0);
	EXPECT_NE(l.find(" 7 "), std::string::npos) << l;
	EXPECT_NE(l.find("f4099 < f8195"), std::string::npos) << l;
	EXPECT_EQ(top_line(rows[0], sym, 20).size(), 20u);
	TopModel f;
	std::string b = top_line(f.update(snap(1, {{3, 1}}))[0], sym, 0);
	EXPECT_NE(b.find("         -          1"), std::string::npos) << b;
}

TEST(Stat, GroupedAndNothingLost)
{
	const std::string raw =
		"instance: \ninst_id: 0\nrecording: 1\nsources: 1\nmap_allocated: 1\n"
		"bits: 12\nentries: 7\ncapacity: 4096\ngeneration: 1\nrequests: 50\n"
		"hits: 43\ninserts: 7\ndrops: 0\ndrops_map_full: 0\ndrops_busy: 0\n"
		"hit_rate: 86.00%\nrecords: 50\nuser_requests: 3\nuser_entries: 2\n"
		"files: 4\nnew_key_from_newer_module: 12\n"
		"source sched:sched_switch: hits=50 filtered=0 records=50 drops=0 no_verdict=0\n";
	std::string s = stat_format(raw);
	EXPECT_NE(s.find("(top level)"), std::string::npos) << s;
	EXPECT_NE(s.find("map:\n"), std::string::npos) << s;
	EXPECT_NE(s.find("user stacks:\n  user_requests"), std::string::npos) << s;
	EXPECT_NE(s.find("    map_full"), std::string::npos) << s;
	EXPECT_NE(s.find("other:\n  new_key_from_newer_module"), std::string::npos) << s;
	EXPECT_NE(s.find("sources:\n  sched:sched_switch: hits=50"), std::string::npos) << s;
	/* every value of the input is in the output, once per key */
	for (const auto &[k, v] : stat_parse(raw))
		EXPECT_NE(s.find(v), std::string::npos) << k;
	EXPECT_EQ(stat_parse(raw).at("hit_rate"), "86.00%");
	EXPECT_EQ(stat_parse(raw).count("source sched"), 0u);
}

TEST(Kmsg, ModuleLines)
{
	const std::string rec =
		"6,1201,5000,-;ftrace_stackmap: stack_map_events: unknown event 'nosuch:x'\n"
		" SUBSYSTEM=x\n"
		"4,1202,5001,-;other: noise\n"
		"garbage without a separator\n";
	auto v = kmsg_module_lines(rec);
	ASSERT_EQ(v.size(), 1u);
	EXPECT_EQ(v[0], "ftrace_stackmap: stack_map_events: unknown event 'nosuch:x'");
}

TEST(Events, Split)
{
	auto v = split_events("sched:sched_switch, kmem:kmalloc\n\n!sched:*\t");
	ASSERT_EQ(v.size(), 3u);
	EXPECT_EQ(v[2], "!sched:*");
	EXPECT_TRUE(split_events(" \n").empty());
}

/* per_cpu/cpuN/stats as 6.1 writes it. */
TEST(Extract, CpuStats)
{
	const char *text = "entries: 1430\noverrun: 185808\ncommit overrun: 0\n"
			   "bytes: 66132\noldest event ts:    10.054771\n"
			   "now ts:    10.220556\ndropped events: 0\nread events: 12\n";
	CpuStats st = parse_cpu_stats(text);
	EXPECT_TRUE(st.ok);
	EXPECT_EQ(st.entries, 1430u);
	EXPECT_EQ(st.overrun, 185808u);	/* not "commit overrun" */
	EXPECT_EQ(st.bytes, 66132u);
	EXPECT_EQ(st.read, 12u);
	EXPECT_FALSE(parse_cpu_stats("").ok);
	EXPECT_FALSE(parse_cpu_stats("entries: x\noverrun: 3\n").ok);
}

TEST(Extract, PathsAndSummary)
{
	ExtractPaths p = extract_paths("/tmp/fr.dat", 2);
	EXPECT_EQ(p.map, "/tmp/fr.dat.fsmb");
	EXPECT_EQ(p.cpu_files, (std::vector<std::string>{"/tmp/fr.dat.cpu0", "/tmp/fr.dat.cpu1"}));
	EXPECT_EQ(p.top_files[1], "/tmp/fr.dat.top.cpu1");

	smr::Fsmb snap;
	snap.generation = 3;
	snap.kstacks.resize(5);
	CpuStats a = parse_cpu_stats("entries: 10\noverrun: 100\n");
	CpuStats b = parse_cpu_stats("entries: 20\noverrun: 0\n");
	std::string s = extract_summary("instance 'fr'", "fr.dat", "fr.dat.fsmb", {a, b}, snap);
	EXPECT_NE(s.find("extracted instance 'fr' to fr.dat: 30 events on 2 CPUs "
			 "(100 overwritten before)"), std::string::npos) << s;
	EXPECT_NE(s.find("fr.dat.fsmb: generation 3, 5 kernel stacks"), std::string::npos) << s;
	EXPECT_NE(s.find("instance 'fr' and its map are in place (recording as before)"),
		  std::string::npos) << s;
	/* stats unknown: no event counts */
	s = extract_summary("the top level", "t.dat", "t.dat.fsmb", {CpuStats{}}, snap);
	EXPECT_EQ(s.find("events on"), std::string::npos) << s;
}
