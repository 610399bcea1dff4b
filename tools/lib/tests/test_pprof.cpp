// SPDX-License-Identifier: GPL-2.0
/*
 * test_pprof.cpp - a small profile made by PprofBuilder, gzipped, then
 * gunzipped by zlib's inflate and parsed back into the message that protoc
 * generated from profile.proto: what comes back is what pprof reads.
 */
#include <gtest/gtest.h>
#include <zlib.h>

#include <set>
#include <string>
#include <vector>

#include "pprof.h"

using namespace smr;
using perftools::profiles::Profile;

namespace {

std::string gunzip(const std::string &gz)
{
	z_stream z{};
	EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(gz.data()));
	z.avail_in = uInt(gz.size());
	std::string out;
	char buf[4096];
	int rc;
	do {
		z.next_out = reinterpret_cast<Bytef *>(buf);
		z.avail_out = sizeof(buf);
		rc = inflate(&z, Z_NO_FLUSH);
		out.append(buf, sizeof(buf) - z.avail_out);
	} while (rc == Z_OK);
	inflateEnd(&z);
	EXPECT_EQ(rc, Z_STREAM_END);
	return out;
}

Profile round_trip(const PprofBuilder &b)
{
	std::string gz;
	EXPECT_EQ(b.gzipped(&gz), "");
	EXPECT_GE(gz.size(), 18u);
	EXPECT_EQ(uint8_t(gz[0]), 0x1f);	/* gzip magic */
	EXPECT_EQ(uint8_t(gz[1]), 0x8b);
	Profile p;
	EXPECT_TRUE(p.ParseFromString(gunzip(gz)));
	return p;
}

const std::string &s(const Profile &p, int64_t i)
{
	static const std::string bad = "<bad string index>";
	return i >= 0 && i < p.string_table_size() ? p.string_table(int(i)) : bad;
}

/* the function names of a sample, innermost first (inlined first) */
std::vector<std::string> names(const Profile &p, const perftools::profiles::Sample &smp)
{
	std::vector<std::string> v;
	for (uint64_t lid : smp.location_id()) {
		const auto &l = p.location(int(lid - 1));
		EXPECT_EQ(l.id(), lid);
		for (const auto &ln : l.line()) {
			const auto &f = p.function(int(ln.function_id() - 1));
			EXPECT_EQ(f.id(), ln.function_id());
			v.push_back(s(p, f.name()));
		}
	}
	return v;
}

std::string label(const Profile &p, const perftools::profiles::Sample &smp,
		  const std::string &key, int64_t *num = nullptr)
{
	for (const auto &l : smp.label())
		if (s(p, l.key()) == key) {
			if (num)
				*num = l.num();
			return s(p, l.str());
		}
	return "<none>";
}

} /* namespace */

TEST(Pprof, RoundTrip)
{
	PprofBuilder b;
	PprofBuilder::Labels a{"chain64", 42, "raw_syscalls:sys_enter", "", ""};
	PprofBuilder::Labels c{"bash", 7, "sched:sched_switch", "tcb", ""};
	uint64_t k1 = b.kernel_location(0xffffffff81000010, "do_syscall_64");
	uint64_t k0 = b.kernel_location(0xffffffff81000100, "__schedule");
	EXPECT_EQ(b.kernel_location(0xffffffff81000010, "do_syscall_64"), k1);
	std::vector<SymFrame> inl = {{"ustack_f2", "chain.c", 12},
				     {"ustack_f1", "chain.c", 20}};
	uint64_t u1 = b.user_location(0xabc, "/bin/chain64", "00ff", 0x1134, inl,
				      "/bin/chain64+0x1134");
	uint64_t u2 = b.user_location(0xabc, "/bin/chain64", "00ff", 0x1000, {},
				      "/bin/chain64+0x1000");
	uint64_t ps = b.pseudo_location("[unresolved stack_id 5 gen 1 index 5]");
	b.add_sample({k0, k1, u1, u2}, a);
	b.add_sample({k0, k1, u1, u2}, a);	/* same stack, labels: merged */
	b.add_sample({k0, k1, u1, u2}, c);
	b.add_sample({ps}, a);
	b.set_span(1000, 5000);
	b.add_comment("test");
	Profile p = round_trip(b);

	ASSERT_GE(p.string_table_size(), 1);
	EXPECT_EQ(p.string_table(0), "");
	ASSERT_EQ(p.sample_type_size(), 1);
	EXPECT_EQ(s(p, p.sample_type(0).type()), "events");
	EXPECT_EQ(s(p, p.sample_type(0).unit()), "count");
	EXPECT_EQ(p.duration_nanos(), 4000);
	ASSERT_EQ(p.comment_size(), 1);
	EXPECT_EQ(s(p, p.comment(0)), "test");

	ASSERT_EQ(p.sample_size(), 3);
	int64_t total = 0;
	for (const auto &smp : p.sample()) {
		ASSERT_EQ(smp.value_size(), 1);
		total += smp.value(0);
	}
	EXPECT_EQ(total, 4);	/* one per add_sample() */
	EXPECT_EQ(p.sample(0).value(0), 2);
	EXPECT_EQ(names(p, p.sample(0)),
		  (std::vector<std::string>{"__schedule", "do_syscall_64", "ustack_f2",
					    "ustack_f1", "/bin/chain64+0x1000"}));
	int64_t pid = 0;
	EXPECT_EQ(label(p, p.sample(0), "comm"), "chain64");
	EXPECT_EQ(label(p, p.sample(0), "pid", &pid), "");
	EXPECT_EQ(pid, 42);
	EXPECT_EQ(label(p, p.sample(0), "event"), "raw_syscalls:sys_enter");
	EXPECT_EQ(label(p, p.sample(0), "instance"), "<none>");
	EXPECT_EQ(label(p, p.sample(1), "instance"), "tcb");
	EXPECT_EQ(label(p, p.sample(1), "comm"), "bash");
	EXPECT_EQ(names(p, p.sample(2)),
		  (std::vector<std::string>{"[unresolved stack_id 5 gen 1 index 5]"}));

	/* mappings: [kernel] and one per file; addresses */
	ASSERT_EQ(p.mapping_size(), 2);
	EXPECT_EQ(s(p, p.mapping(0).filename()), "[kernel]");
	EXPECT_EQ(s(p, p.mapping(1).filename()), "/bin/chain64");
	EXPECT_EQ(s(p, p.mapping(1).build_id()), "00ff");
	EXPECT_TRUE(p.mapping(1).has_inline_frames());
	EXPECT_TRUE(p.mapping(1).has_line_numbers());
	const auto &lk = p.location(int(k1 - 1));
	EXPECT_EQ(lk.mapping_id(), p.mapping(0).id());
	EXPECT_EQ(lk.address(), 0xffffffff81000010u);
	const auto &lu = p.location(int(u1 - 1));
	EXPECT_EQ(lu.mapping_id(), p.mapping(1).id());
	EXPECT_EQ(lu.address(), 0x1134u);
	ASSERT_EQ(lu.line_size(), 2);
	EXPECT_EQ(lu.line(0).line(), 12);
	EXPECT_EQ(s(p, p.function(int(lu.line(0).function_id() - 1)).filename()), "chain.c");
	EXPECT_EQ(p.location(int(ps - 1)).mapping_id(), 0u);

	/* every id is its 1-based position; every string index in range */
	for (int i = 0; i < p.location_size(); i++)
		EXPECT_EQ(p.location(i).id(), uint64_t(i + 1));
	for (int i = 0; i < p.function_size(); i++) {
		EXPECT_EQ(p.function(i).id(), uint64_t(i + 1));
		EXPECT_LT(p.function(i).name(), p.string_table_size());
	}
	std::set<std::string> uniq(p.string_table().begin(), p.string_table().end());
	EXPECT_EQ(uniq.size(), size_t(p.string_table_size()));	/* no duplicates */
}

TEST(Pprof, EmptyProfileIsValid)
{
	PprofBuilder b;
	Profile p = round_trip(b);
	EXPECT_EQ(p.sample_size(), 0);
	EXPECT_EQ(p.string_table(0), "");
	EXPECT_EQ(s(p, p.mapping(0).filename()), "[kernel]");
}

TEST(Pprof, GzipLargeInput)
{
	std::string data;
	for (unsigned i = 0; i < 300000; i++)
		data += char('a' + (i * 7919u) % 26);
	std::string gz;
	ASSERT_EQ(gzip_bytes(data, &gz), "");
	EXPECT_LT(gz.size(), data.size());
	EXPECT_EQ(gunzip(gz), data);
}

/*
 * Several traces in one profile: each one's addresses and file ids are its
 * own. The same kernel address or (file id, offset) in the next input is
 * another location (another kernel, another file), the host a label.
 */
TEST(Pprof, InputsNotMixed)
{
	PprofBuilder b;
	PprofBuilder::Labels h1{"bash", 1, "sched:sched_switch", "", "host1"};
	PprofBuilder::Labels h2{"bash", 1, "sched:sched_switch", "", "host2"};
	uint64_t k1 = b.kernel_location(0xffffffff81000010, "__schedule");
	uint64_t u1 = b.user_location(1, "/bin/a", "aa", 0x10, {}, "/bin/a+0x10");
	b.add_sample({k1, u1}, h1);
	b.next_input();
	uint64_t k2 = b.kernel_location(0xffffffff81000010, "do_idle");
	uint64_t u2 = b.user_location(1, "/bin/b", "bb", 0x10, {}, "/bin/b+0x10");
	EXPECT_NE(k1, k2);
	EXPECT_NE(u1, u2);
	b.add_sample({k2, u2}, h2);
	b.add_sample({k2, u2}, h2);
	Profile p = round_trip(b);
	ASSERT_EQ(p.sample_size(), 2);
	EXPECT_EQ(names(p, p.sample(0)), (std::vector<std::string>{"__schedule", "/bin/a+0x10"}));
	EXPECT_EQ(names(p, p.sample(1)), (std::vector<std::string>{"do_idle", "/bin/b+0x10"}));
	EXPECT_EQ(label(p, p.sample(0), "host"), "host1");
	EXPECT_EQ(label(p, p.sample(1), "host"), "host2");
	EXPECT_EQ(p.sample(1).value(0), 2);
	ASSERT_EQ(p.mapping_size(), 3);	/* [kernel], /bin/a, /bin/b */
	EXPECT_EQ(s(p, p.mapping(2).filename()), "/bin/b");
}
