/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace.h - a trace.dat through libtracecmd: the top buffer and every -B
 * instance buffer, read in timestamp order (tracecmd_iterate_events_multi),
 * and the fields of the stackmap records through libtraceevent.
 */
#ifndef STACKMAP_REPORT_TRACE_H
#define STACKMAP_REPORT_TRACE_H

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "resolve.h"

struct tracecmd_input;
struct tep_handle;
struct tep_record;
struct tep_event;

namespace smr {

enum class Kind {
	OTHER,		/* any other event: a possible source event */
	STACK_ID,
	STACK_ID_USER,
	FALLBACK,
	DEF,
	RESET,
	USER_STACK,
	FILE_MAP,
};

/*
 * The fields of our events found by name (tep_find_field), kept per
 * (event, field name literal). Owned by whoever owns the tep (Trace, the
 * plugin's state): it must not outlive the tep.
 */
struct FieldCache {
	struct Hash {
		size_t operator()(const std::pair<const void *, const char *> &k) const
		{
			return std::hash<const void *>()(k.first) * 31 +
			       std::hash<const void *>()(k.second);
		}
	};
	std::unordered_map<std::pair<const void *, const char *>, void *, Hash> fields;
};

/* One record, decoded as far as it is ours. */
struct Rec {
	int buf;		/* index in Trace::buffers() */
	int cpu;
	uint64_t ts;
	int pid;
	Kind kind;
	tep_event *event;	/* nullptr: unknown event id */
	tep_record *raw;	/* valid during the callback only */
	FieldCache *fields = nullptr;	/* optional: speeds up decoding */
	/* ours (by kind) */
	uint32_t stack_id = 0;
	uint32_t flags = 0;
	uint32_t reason = 0;
	uint32_t generation = 0;
	uint64_t cookie = 0;
	std::vector<uint64_t> ips;
	UserStackRec user;
	uint64_t file_id = 0;
	std::string path;
	std::string build_id;
	bool bad = false;	/* a field of ours did not decode */
	std::string bad_why;
};

class Trace {
public:
	~Trace();
	/* Return: "" or the error. */
	std::string open(const std::string &file);
	const std::vector<std::string> &buffers() const { return names_; }
	tep_handle *tep() const { return tep_; }
	bool has_stackmap_events() const;
	/*
	 * Every record of every buffer in timestamp order. defs: decode the
	 * definitions (stack_def, stack_reset, user_stack, file_map) too;
	 * without, their kind is set but their fields are not read.
	 */
	std::string iterate(const std::function<void(Rec &)> &cb, bool defs = true);
	/* trace-cmd report's line for a record (without the newline) */
	std::string format(tep_record *r) const;
	std::string comm(int pid) const;
	/* the uname trace-cmd stored ("sysname nodename release version
	 * machine"), "" when none */
	std::string uname() const;

private:
	tracecmd_input *top_ = nullptr;
	std::vector<tracecmd_input *> handles_;	/* [0] = top_ */
	std::vector<std::string> names_;	/* "" = top level */
	tep_handle *tep_ = nullptr;
	tep_event *ev_[8] = {};
	FieldCache fields_;
};

} /* namespace smr */

#endif
