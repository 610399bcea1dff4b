/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fsmb.h - decoder of stack_map_bin snapshots (FSMB version 4,
 * include/ftrace_stackmap/abi.h, Documentation/tracing.rst).
 *
 * fsmb_decode() checks every size against the buffer before it reads; it
 * never trusts a count. A snapshot is accepted whole or refused with one
 * message: no partial result is returned on error.
 */
#ifndef STACKMAP_REPORT_FSMB_H
#define STACKMAP_REPORT_FSMB_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace smr {

struct FsmbKStack {
	uint32_t stack_id;	/* index in the map (entry's stack_id) */
	uint32_t hits;
	std::vector<uint64_t> ips;	/* innermost first */
};

struct FsmbUStack {
	uint32_t ustack_id;
	uint32_t hits;
	uint16_t flags;		/* FSM_USF_IA32, FSM_USF_TRUNCATED, FSM_USF_UNRELIABLE */
	uint8_t stop;
	uint64_t mm;
	/* (file id, offset | FSM_UFR_* << 56) pairs, innermost first */
	std::vector<std::pair<uint64_t, uint64_t>> frames;
};

struct FsmbFile {
	std::string path;
	std::string build_id;	/* lower-case hex, "" when none */
};

struct Fsmb {
	uint32_t version = 0;
	uint32_t generation = 0;
	uint32_t bits = 0;
	uint32_t flags = 0;
	uint32_t max_depth = 0;
	uint64_t ref_symbol_addr = 0;
	std::string instance;	/* "" = top level */
	uint32_t ugeneration = 0;
	uint32_t ubits = 0;
	uint32_t umax_frames = 0;
	std::vector<FsmbKStack> kstacks;
	std::vector<FsmbUStack> ustacks;
	std::map<uint64_t, FsmbFile> files;

	bool hidden() const;
	/* the 32-bit record id of kernel entry index i: gen bits | index */
	uint32_t record_id(uint32_t index) const;
};

/* Decode a whole file image. Return: true, or false with *err set. */
bool fsmb_decode(const uint8_t *data, size_t len, Fsmb *out, std::string *err);

/* Read FILE and decode it. */
bool fsmb_read_file(const std::string &path, Fsmb *out, std::string *err);

/* Little-endian encoder, for the tests (the module writes real files). */
std::vector<uint8_t> fsmb_encode(const Fsmb &f);

} /* namespace smr */

#endif
