// SPDX-License-Identifier: GPL-2.0
/*
 * test_fsmb.cpp - the FSMB v4 decoder on snapshots made here: round trip,
 * every refusal has its message, and every truncation and every single-bit
 * flip of a snapshot decodes or is refused without reading outside the
 * buffer (run under ASan+UBSan by scripts/check).
 */
#include <gtest/gtest.h>

#include "abi.h"
#include "fsmb.h"

using namespace smr;

namespace {

Fsmb sample()
{
	Fsmb f;
	f.version = 4;
	f.generation = 4097;
	f.bits = 12;
	f.flags = FSMB_F_KERNEL | FSMB_F_USER;
	f.ref_symbol_addr = 0xffffffff81000000ull;
	f.instance = "inst1";
	f.ugeneration = 2;
	f.ubits = 12;
	f.kstacks.push_back({0, 5, {0xffffffff81000010ull, 0xffffffff81000020ull}});
	f.kstacks.push_back({7, 1, {0xffffffff81000030ull}});
	f.ustacks.push_back({3, 9, FSM_USF_IA32, 1, 0x1234, {{0xabc, 0x1139}, {0xabc, 0x1197}}});
	f.files[0xabc] = {"/tmp/chain64", "7068dbaf5acc349b136a65c4928a1b81ab12349c"};
	f.files[0xdef] = {"/usr/lib/x86_64-linux-gnu/libc.so.6", ""};
	return f;
}

} /* namespace */

TEST(Fsmb, RoundTrip)
{
	Fsmb f = sample(), g;
	auto b = fsmb_encode(f);
	std::string err;
	ASSERT_TRUE(fsmb_decode(b.data(), b.size(), &g, &err)) << err;
	EXPECT_EQ(g.version, 4u);
	EXPECT_EQ(g.generation, 4097u);
	EXPECT_EQ(g.instance, "inst1");
	EXPECT_EQ(g.ref_symbol_addr, f.ref_symbol_addr);
	ASSERT_EQ(g.kstacks.size(), 2u);
	EXPECT_EQ(g.kstacks[1].stack_id, 7u);
	EXPECT_EQ(g.kstacks[0].ips, f.kstacks[0].ips);
	EXPECT_EQ(g.kstacks[0].hits, 5u);
	/* record id: low 12 bits of the generation above the index */
	EXPECT_EQ(g.record_id(7), (1u << 20) | 7u);
	ASSERT_EQ(g.ustacks.size(), 1u);
	EXPECT_EQ(g.ustacks[0].frames, f.ustacks[0].frames);
	EXPECT_EQ(g.ustacks[0].flags, FSM_USF_IA32);
	EXPECT_EQ(g.ustacks[0].mm, 0x1234u);
	ASSERT_EQ(g.files.size(), 2u);
	EXPECT_EQ(g.files[0xabc].path, "/tmp/chain64");
	EXPECT_EQ(g.files[0xabc].build_id, "7068dbaf5acc349b136a65c4928a1b81ab12349c");
	EXPECT_EQ(g.files[0xdef].build_id, "");
	EXPECT_FALSE(g.hidden());
}

TEST(Fsmb, Hidden)
{
	Fsmb f = sample(), g;
	f.flags |= FSMB_F_HIDDEN;
	auto b = fsmb_encode(f);
	std::string err;
	ASSERT_TRUE(fsmb_decode(b.data(), b.size(), &g, &err)) << err;
	EXPECT_TRUE(g.hidden());
}

TEST(Fsmb, Refusals)
{
	Fsmb g;
	std::string err;
	auto b = fsmb_encode(sample());

	auto bad = b;
	bad[0] ^= 1;
	EXPECT_FALSE(fsmb_decode(bad.data(), bad.size(), &g, &err));
	EXPECT_NE(err.find("magic"), std::string::npos) << err;

	bad = b;
	bad[4] = 3;	/* version 3 */
	EXPECT_FALSE(fsmb_decode(bad.data(), bad.size(), &g, &err));
	EXPECT_NE(err.find("version 3"), std::string::npos) << err;

	bad = b;
	bad[8] = 0xff;	/* nr_stacks far beyond the file */
	bad[9] = 0xff;
	EXPECT_FALSE(fsmb_decode(bad.data(), bad.size(), &g, &err));
	EXPECT_NE(err.find("nr_stacks"), std::string::npos) << err;

	bad = b;
	bad.push_back(0);	/* trailing garbage */
	EXPECT_FALSE(fsmb_decode(bad.data(), bad.size(), &g, &err));
	EXPECT_NE(err.find("after the file table"), std::string::npos) << err;

	EXPECT_FALSE(fsmb_decode(b.data(), 0, &g, &err));
	EXPECT_FALSE(fsmb_decode(nullptr, 0, &g, &err));
	EXPECT_FALSE(err.empty());
}

TEST(Fsmb, PathWithoutNul)
{
	Fsmb f = sample(), g;
	f.files.erase(0xdef);
	f.files[0xabc].build_id = "";
	auto b = fsmb_encode(f);
	/* the path's NUL is the byte before padding: file record at the end */
	size_t end = b.size() - sizeof(struct fsmb_file);
	size_t rec = end - 16 - 16;	/* 16-byte header + "/tmp/chain64\0" padded to 16 */
	ASSERT_EQ(b[rec], 0xbc);
	b[rec + 16 + 12] = 'x';
	std::string err;
	EXPECT_FALSE(fsmb_decode(b.data(), b.size(), &g, &err));
	EXPECT_NE(err.find("NUL"), std::string::npos) << err;
}

/* Every prefix of a valid snapshot is refused, none read past its end. */
TEST(Fsmb, EveryTruncationRefused)
{
	auto b = fsmb_encode(sample());
	for (size_t n = 0; n < b.size(); n++) {
		std::vector<uint8_t> t(b.begin(), b.begin() + n);	/* exact size: ASan sees overreads */
		Fsmb g;
		std::string err;
		EXPECT_FALSE(fsmb_decode(t.data(), t.size(), &g, &err)) << "prefix " << n;
		EXPECT_FALSE(err.empty());
	}
}

/* Every single-bit flip: decoded or refused, never a crash or overread. */
TEST(Fsmb, EveryBitFlip)
{
	auto b = fsmb_encode(sample());
	size_t refused = 0, accepted = 0;
	for (size_t i = 0; i < b.size() * 8; i++) {
		auto t = b;
		t[i / 8] ^= uint8_t(1u << (i % 8));
		Fsmb g;
		std::string err;
		if (fsmb_decode(t.data(), t.size(), &g, &err)) {
			accepted++;
		} else {
			refused++;
			EXPECT_FALSE(err.empty());
		}
	}
	/* flips of counts, sizes and magic must be caught */
	EXPECT_GT(refused, 100u);
	EXPECT_GT(accepted, 100u);	/* flips of ips, hits, names decode */
}
