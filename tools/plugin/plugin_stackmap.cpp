// SPDX-License-Identifier: GPL-2.0
/*
 * plugin_stackmap.cpp - a libtraceevent plugin: plain `trace-cmd report`
 * prints the stacks of ftrace_stackmap's records (Documentation/plugin.rst).
 *
 * trace-cmd report prints the records of a trace.dat one by one in
 * timestamp order and asks libtraceevent for each record's text; for our
 * events libtraceevent calls handler() below. It prints the record's own
 * text (the event's print format, unchanged), then:
 *
 *   stack_id, stack_id_user  " => func+0xoff" per kernel frame, innermost
 *                            first, when the id's stack_def was printed
 *                            before; else " => [stack_id N: defined later]"
 *   stack_fallback           the frames the record carries
 *   user_stack               " => " user frames (as stackmap-report report
 *                            prints them: function, source line, inlined
 *                            callers, [path+0xoff]); " => [ustack_id N:
 *                            defined later]" when its inline record is not
 *                            printed yet
 *   stack_def, stack_reset,  nothing more: they feed the state
 *   file_map
 *
 * The state is smr::Resolver (the resolution code of stackmap-report),
 * fed one record at a time in the order trace-cmd report prints them: a
 * stack is shown only from definitions printed before it, never guessed.
 * Kernel names come from the kallsyms saved in trace.dat (the tep
 * function resolver, smr::KernelSyms); user frames from file_map records
 * and libdwfl (smr::UserSyms).
 *
 * Keys. One tep handle serves every buffer of a trace.dat: libtracecmd's
 * tracecmd_buffer_instance_handle() copies the top handle, tep included,
 * and the plugin is loaded once, for that tep. The records of two buffers
 * use the same ids for different stacks, so the buffer must come from the
 * record itself: libtracecmd sets record->priv to its page descriptor,
 * whose third member is the tracecmd_input of the buffer the record was
 * read from (trace-cmd 3.1.6, lib/trace-cmd/trace-input.c, struct page).
 * That layout is private: it is used only when the descriptor's mapped
 * page contains the record's data; otherwise every record counts as one
 * buffer (a trace.dat with one buffer stays correct; with -B instances a
 * stack could be another buffer's, see Documentation/plugin.rst).
 * Within a buffer, ids carry 12 generation bits and the stack_reset
 * records give the full generation (smr::Resolver::full_generation).
 *
 * Calling context: libtraceevent calls the handler from the reader's
 * thread, one record at a time; trace-cmd report is single-threaded.
 */
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include <cinttypes>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "abi.h"
#include "records.h"
#include "resolve.h"
#include "symbols.h"
#include "trace.h"

#define SMR_EXPORT __attribute__((visibility("default")))

extern "C" {
SMR_EXPORT int TEP_PLUGIN_LOADER(struct tep_handle *tep);
SMR_EXPORT void TEP_PLUGIN_UNLOADER(struct tep_handle *tep);
SMR_EXPORT extern struct tep_plugin_option TEP_PLUGIN_OPTIONS[];
SMR_EXPORT extern const char *TEP_PLUGIN_ALIAS;
}

/* trace-cmd report -O stackmap:sysroot=DIR -O stackmap:debug_dir=DIR[:DIR] */
struct tep_plugin_option TEP_PLUGIN_OPTIONS[] = {
	{nullptr, nullptr, nullptr, const_cast<char *>("sysroot"),
	 const_cast<char *>("stackmap"),
	 const_cast<char *>("look user files up under this directory first"),
	 nullptr, nullptr, 0},
	{nullptr, nullptr, nullptr, const_cast<char *>("debug_dir"),
	 const_cast<char *>("stackmap"),
	 const_cast<char *>("separate debug info / .build-id trees, ':' separated"),
	 nullptr, nullptr, 0},
	{nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0},
};
const char *TEP_PLUGIN_ALIAS = "stackmap";

namespace {

using namespace smr;

/*
 * The head of libtracecmd's struct page (trace-cmd 3.1.6,
 * lib/trace-cmd/trace-input.c), what tep_record::priv points to.
 */
struct TcPage {
	void *list_next;
	void *list_prev;
	off_t offset;
	void *handle;		/* struct tracecmd_input * of the buffer */
	void *page_map;
	void *map;		/* the sub-buffer the record's data lies in */
};

/* a sub-buffer is a page (4 KiB on x86-64) or a few: a generous bound */
constexpr uintptr_t kMaxSubbuf = 1u << 20;

struct State {
	explicit State(tep_handle *t) : tep(t), ks(t) {}
	tep_handle *tep;
	Resolver res;
	KernelSyms ks;
	std::unique_ptr<UserSyms> us;	/* made at the first user_stack */
	std::map<const void *, int> bufs;	/* buffer key -> Resolver buf */
	FieldCache fields;	/* of this tep's events */

	int buffer(const tep_record *r)
	{
		const void *key = nullptr;
		const auto *p = static_cast<const TcPage *>(r->priv);
		if (p && p->handle && p->map) {
			auto m = reinterpret_cast<uintptr_t>(p->map);
			auto d = reinterpret_cast<uintptr_t>(r->data);
			if (d >= m && d - m < kMaxSubbuf)
				key = p->handle;
		}
		return bufs.emplace(key, int(bufs.size())).first->second;
	}

	UserSyms &user_syms()
	{
		if (!us) {
			const char *root = TEP_PLUGIN_OPTIONS[0].value;
			const char *dd = TEP_PLUGIN_OPTIONS[1].value;
			std::vector<std::string> dirs;
			std::string all = dd ? dd : "";
			size_t a = 0;
			while (a < all.size()) {
				size_t b = all.find(':', a);
				if (b == std::string::npos)
					b = all.size();
				if (b > a)
					dirs.push_back(all.substr(a, b - a));
				a = b + 1;
			}
			us = std::make_unique<UserSyms>(root ? root : "", dirs);
		}
		return *us;
	}
};

std::map<tep_handle *, std::unique_ptr<State>> g_states;

void line(trace_seq *s, const std::string &text)
{
	trace_seq_printf(s, "\n => %s", text.c_str());
}

void kernel_frames(State *st, trace_seq *s, const std::vector<uint64_t> &ips,
		   bool truncated)
{
	for (uint64_t ip : ips)
		line(s, st->ks.name_off(ip));
	if (truncated)
		line(s, "[truncated]");
}

void user_frames(State *st, trace_seq *s, const UserResult &u)
{
	const std::vector<UFrame> &frames = *u.frames;
	for (size_t i = 0; i < frames.size(); i++) {
		const FileInfo *f = st->res.file(frames[i].first);
		UserFrame uf = st->user_syms().frame(frames[i].first, frames[i].second,
						     f ? f->path : "",
						     f ? f->build_id : "", i > 0);
		for (const auto &l : user_frame_lines(uf))
			line(s, l);
	}
	if (u.truncated)
		line(s, "[truncated]");
}

int handler(trace_seq *s, tep_record *r, tep_event *ev, void *ctx)
{
	auto *st = static_cast<State *>(ctx);

	/* the record's own text: the print format, by libtraceevent */
	int saved = ev->flags;
	ev->flags |= TEP_EVENT_FL_NOHANDLE;
	tep_print_event(ev->tep, s, r, "%s", TEP_PRINT_INFO);
	ev->flags = saved;

	Rec x;
	x.buf = st->buffer(r);
	x.cpu = r->cpu;
	x.ts = r->ts;
	x.pid = 0;
	x.event = ev;
	x.raw = r;
	x.kind = kind_of(ev);
	x.fields = &st->fields;
	decode_stackmap(x, r);
	if (x.bad) {
		line(s, "[record does not decode: " + x.bad_why + "]");
		return 0;
	}
	switch (x.kind) {
	case Kind::DEF:
		st->res.add_def(x.buf, x.ts, x.stack_id, x.flags, std::move(x.ips));
		st->res.finish();	/* keys the new definition; see resolve.h */
		break;
	case Kind::RESET:
		st->res.add_reset(x.buf, x.ts, x.generation);
		break;
	case Kind::FILE_MAP:
		st->res.add_file_map(x.buf, x.ts, x.file_id, x.path, x.build_id);
		break;
	case Kind::STACK_ID:
	case Kind::STACK_ID_USER: {
		KernelResult k = st->res.kernel(x.buf, x.ts, x.stack_id);
		if (k.status == Status::OK)
			kernel_frames(st, s, *k.ips, k.truncated);
		else
			line(s, "[stack_id " + std::to_string(x.stack_id) +
				": defined later]");
		break;
	}
	case Kind::FALLBACK:
		if (x.reason == FSM_SID_REASON_NESTED)
			line(s, "[no stack: nested]");
		else
			kernel_frames(st, s, x.ips, x.flags & FSM_SID_F_TRUNCATED);
		break;
	case Kind::USER_STACK: {
		UserStackRec u = x.user;
		if (u.flags & FSM_USF_RESET)
			break;	/* a marker: no stack */
		uint64_t cookie = u.cookie;
		st->res.add_user_stack(x.buf, x.ts, std::move(u));
		UserResult ur;
		if (cookie) {
			ur = st->res.user(x.buf, cookie);
		} else if (!x.user.frames.empty()) {
			ur.status = Status::OK;
			ur.frames = &x.user.frames;
			ur.truncated = x.user.flags & FSM_USF_TRUNCATED;
		} else {
			ur.status = Status::NONE;
		}
		if (ur.status == Status::OK)
			user_frames(st, s, ur);
		else if (ur.status == Status::UNRESOLVED)
			line(s, "[ustack_id " + std::to_string(x.user.ustack_id) +
				": defined later]");
		else if (ur.status == Status::NONE && x.user.ustack_id == FSM_USTACK_ID_NONE)
			line(s, "[no user stack: reason " + std::to_string(x.user.reason) + "]");
		break;
	}
	default:
		return 1;	/* not ours: libtraceevent prints it */
	}
	return 0;
}

} /* namespace */

int TEP_PLUGIN_LOADER(struct tep_handle *tep)
{
	auto st = std::make_unique<State>(tep);
	for (int k = 1; k < 8; k++)
		tep_register_event_handler(tep, -1, "stackmap", kind_name(Kind(k)),
					   handler, st.get());
	g_states[tep] = std::move(st);
	return 0;
}

void TEP_PLUGIN_UNLOADER(struct tep_handle *tep)
{
	auto it = g_states.find(tep);
	if (it == g_states.end())
		return;
	for (int k = 1; k < 8; k++)
		tep_unregister_event_handler(tep, -1, "stackmap", kind_name(Kind(k)),
					     handler, it->second.get());
	g_states.erase(it);
}
