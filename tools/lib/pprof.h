/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pprof.h - a google pprof profile (profile.proto, perftools.profiles)
 * built with the message classes that protoc generates from the .proto of
 * Debian's golang-github-google-pprof-dev at build time, gzipped by zlib.
 *
 * The profile has one value per sample, type "events", unit "count": the
 * number of id records with that stack and those labels (records that
 * agree in every location and label are one sample). Locations:
 *  - kernel frames: address = ip, mapping "[kernel]", one line whose
 *    function is the kallsyms name (the bare address when none covers it);
 *  - user frames of a file: address = file offset, one mapping per file
 *    (path and build-id of its file_map record), one line per function,
 *    innermost (inlined) first as profile.proto wants, with the source
 *    file and line when DWARF has them; a frame that cannot be symbolized
 *    has one line whose function is "path+0xoffset";
 *  - pseudo frames (an unresolved id, a user stack that is not in the
 *    trace, a frame without a file): no mapping, one line whose function
 *    is the text that `folded` prints for them.
 * So the function names of a sample, outermost first, are the frames of
 * the `folded` line of the same record (kernel frames there carry _[k]).
 */
#ifndef STACKMAP_REPORT_PPROF_H
#define STACKMAP_REPORT_PPROF_H

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "profile.pb.h"
#include "symbols.h"

namespace smr {

class PprofBuilder {
public:
	PprofBuilder();

	/* Return: the location id (ids start at 1) */
	uint64_t kernel_location(uint64_t ip, const std::string &func);
	uint64_t user_location(uint64_t file_id, const std::string &path,
			       const std::string &build_id, uint64_t offset,
			       const std::vector<SymFrame> &funcs,
			       const std::string &where);
	uint64_t pseudo_location(const std::string &name);

	struct Labels {
		std::string comm;
		int64_t pid = 0;
		std::string event;
		std::string instance;	/* "" (top level): no label */
		std::string host;	/* "": no label */
	};
	/* The next trace of several: its file ids and addresses are its own
	 * (never merged with an earlier trace's locations and mappings). */
	void next_input() { input_++; }
	/* locs: innermost first; adds 1 to the sample of (locs, labels) */
	void add_sample(const std::vector<uint64_t> &locs, const Labels &l);
	/* timestamps (ns, trace clock) of the first and last record */
	void set_span(uint64_t first_ns, uint64_t last_ns);
	void add_comment(const std::string &text);

	const perftools::profiles::Profile &profile() const { return p_; }
	/* the serialized profile, gzipped. Return: "" or the error. */
	std::string gzipped(std::string *out) const;

private:
	int64_t str(const std::string &s);
	uint64_t function(const std::string &name, const std::string &file);

	perftools::profiles::Profile p_;
	std::map<std::string, int64_t> strings_;
	std::map<std::pair<std::string, std::string>, uint64_t> funcs_;
	uint64_t input_ = 0;	/* next_input() calls */
	std::map<std::pair<uint64_t, uint64_t>, uint64_t> kloc_;	/* input, ip */
	std::map<std::tuple<uint64_t, uint64_t, uint64_t>, uint64_t> uloc_;
								/* input, file, off */
	std::map<std::string, uint64_t> ploc_;
	std::map<std::pair<uint64_t, uint64_t>, uint64_t> umap_;	/* input, file id */
	std::map<std::tuple<std::vector<uint64_t>, std::string, int64_t, std::string,
			    std::string, std::string>, int> samples_;	/* -> index */
};

/* gzip (RFC 1952) of data through zlib. Return: "" or the error. */
std::string gzip_bytes(const std::string &data, std::string *out);

} /* namespace smr */

#endif
