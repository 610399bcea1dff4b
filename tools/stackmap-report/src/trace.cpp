// SPDX-License-Identifier: GPL-2.0
/*
 * trace.cpp - see trace.h. The fields of our records are decoded by
 * records.cpp.
 */
#include "trace.h"
#include "abi.h"
#include "records.h"

#include <cstring>
/* compiled with -fpermissive: see CMakeLists.txt */
#include <trace-cmd/trace-cmd.h>
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

namespace smr {

namespace {

struct IterCtx {
	Trace *t;
	const std::function<void(Rec &)> *cb;
	tep_handle *tep;
	tep_event *const *ev;
	std::vector<tracecmd_input *> *handles;
	FieldCache *fields;
	bool defs;
};

int iter_cb(tracecmd_input *h, tep_record *r, int cpu, void *data)
{
	auto *c = static_cast<IterCtx *>(data);
	Rec x;
	x.buf = 0;
	for (size_t i = 0; i < c->handles->size(); i++)
		if ((*c->handles)[i] == h)
			x.buf = int(i);
	x.cpu = cpu;
	x.ts = r->ts;
	x.raw = r;
	x.kind = Kind::OTHER;
	x.pid = tep_data_pid(c->tep, r);
	int type = tep_data_type(c->tep, r);
	x.event = tep_find_event(c->tep, type);
	for (int k = 1; k < 8; k++)
		if (x.event && x.event == c->ev[k])
			x.kind = Kind(k);
	x.fields = c->fields;
	if (c->defs || x.kind == Kind::STACK_ID || x.kind == Kind::STACK_ID_USER ||
	    x.kind == Kind::FALLBACK)
		decode_stackmap(x, r);
	(*c->cb)(x);
	return 0;
}

} /* namespace */

Trace::~Trace()
{
	for (size_t i = 1; i < handles_.size(); i++)
		tracecmd_close(handles_[i]);
	if (top_)
		tracecmd_close(top_);
}

std::string Trace::open(const std::string &file)
{
	tracecmd_set_loglevel(TEP_LOG_CRITICAL);
	top_ = tracecmd_open(file.c_str(), 0);
	if (!top_)
		return file + ": cannot read as a trace-cmd data file "
			      "(missing, truncated or corrupted)";
	tep_ = tracecmd_get_tep(top_);
	if (!tep_)
		return file + ": no event formats";
	handles_.push_back(top_);
	names_.push_back("");
	int n = tracecmd_buffer_instances(top_);
	for (int i = 0; i < n; i++) {
		tracecmd_input *h = tracecmd_buffer_instance_handle(top_, i);
		if (!h)
			return file + ": cannot open instance buffer " + std::to_string(i);
		const char *name = tracecmd_buffer_instance_name(top_, i);
		handles_.push_back(h);
		names_.push_back(name ? name : "?");
	}
	for (int k = 1; k < 8; k++)
		ev_[k] = tep_find_event_by_name(tep_, "stackmap", kind_name(Kind(k)));
	return "";
}

bool Trace::has_stackmap_events() const
{
	return ev_[int(Kind::STACK_ID)] != nullptr;
}

std::string Trace::iterate(const std::function<void(Rec &)> &cb, bool defs)
{
	IterCtx c{this, &cb, tep_, ev_, &handles_, &fields_, defs};
	int ret = tracecmd_iterate_events_multi(handles_.data(), int(handles_.size()),
						iter_cb, &c);
	if (ret < 0)
		return "error while reading the records";
	return "";
}

std::string Trace::format(tep_record *r) const
{
	trace_seq s;
	trace_seq_init(&s);
	tep_print_event(tep_, &s, r, "%16s-%-5d [%03d] %6.1000d: %s: %s",
			TEP_PRINT_COMM, TEP_PRINT_PID, TEP_PRINT_CPU,
			TEP_PRINT_TIME, TEP_PRINT_NAME, TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	std::string out(s.buffer ? s.buffer : "", s.len);
	trace_seq_destroy(&s);
	return out;
}

std::string Trace::comm(int pid) const
{
	const char *c = tep_data_comm_from_pid(tep_, pid);
	return c ? c : "<...>";
}

} /* namespace smr */
