// SPDX-License-Identifier: GPL-2.0
/*
 * trace.cpp - see trace.h. Every __data_loc field is taken from
 * tep_get_field_raw() and its length checked against the record before
 * use: a corrupted record is reported, not read past its end.
 */
#include "trace.h"
#include "abi.h"

#include <link.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstring>
/* compiled with -fpermissive: see CMakeLists.txt */
#include <trace-cmd/trace-cmd.h>
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

namespace smr {

namespace {

const char *const kNames[] = {
	nullptr, "stack_id", "stack_id_user", "stack_fallback", "stack_def",
	"stack_reset", "user_stack", "file_map",
};

bool num(tep_event *ev, tep_record *r, const char *name, uint64_t *v)
{
	tep_format_field *f = tep_find_field(ev, name);
	unsigned long long x;
	/* the field must lie inside the record before it is read */
	if (!f || f->offset < 0 || f->size <= 0 || f->offset + f->size > r->size ||
	    tep_read_number_field(f, r->data, &x))
		return false;
	*v = x;
	return true;
}

/* a dynamic array: pointer and length in bytes, inside the record */
bool dyn(tep_event *ev, tep_record *r, const char *name, const uint8_t **p,
	 size_t *len)
{
	tep_format_field *f = tep_find_field(ev, name);
	if (!f || !(f->flags & TEP_FIELD_IS_DYNAMIC) || f->offset < 0 ||
	    f->size <= 0 || f->offset + f->size > r->size)
		return false;
	trace_seq s;
	trace_seq_init(&s);
	int l = 0;
	void *d = tep_get_field_raw(&s, ev, name, r, &l, 0);
	trace_seq_destroy(&s);
	if (!d || l < 0)
		return false;
	const uint8_t *b = static_cast<const uint8_t *>(r->data);
	const uint8_t *q = static_cast<const uint8_t *>(d);
	if (q < b || q > b + r->size || size_t(l) > size_t(b + r->size - q))
		return false;
	*p = q;
	*len = size_t(l);
	return true;
}

bool u64s(tep_event *ev, tep_record *r, const char *name, std::vector<uint64_t> *out)
{
	const uint8_t *p;
	size_t len;
	if (!dyn(ev, r, name, &p, &len) || len % 8)
		return false;
	out->resize(len / 8);
	if (len)
		std::memcpy(out->data(), p, len);
	return true;
}

void decode(Rec &x, tep_record *r)
{
	tep_event *ev = x.event;
	uint64_t v = 0;
	auto need = [&](const char *name, uint64_t *dst) {
		if (!num(ev, r, name, dst)) {
			x.bad = true;
			x.bad_why = std::string("field ") + name;
		}
	};
	need("stack_id", &v);
	x.stack_id = uint32_t(v);
	switch (x.kind) {
	case Kind::STACK_ID:
		break;
	case Kind::STACK_ID_USER: {
		uint64_t lo = 0, hi = 0;
		need("cookie_lo", &lo);
		need("cookie_hi", &hi);
		x.cookie = (hi << 32) | (lo & 0xffffffffu);
		break;
	}
	case Kind::FALLBACK: {
		need("flags", &v);
		x.flags = uint32_t(v);
		need("reason", &v);
		x.reason = uint32_t(v);
		std::vector<uint64_t> c;
		if (!u64s(ev, r, "cookie", &c) || c.size() > 1 ||
		    !u64s(ev, r, "ips", &x.ips)) {
			x.bad = true;
			x.bad_why = "stack_fallback arrays";
		}
		x.cookie = c.empty() ? 0 : c[0];
		break;
	}
	case Kind::DEF:
		need("flags", &v);
		x.flags = uint32_t(v);
		if (!u64s(ev, r, "ips", &x.ips) || x.ips.empty()) {
			x.bad = true;
			x.bad_why = "stack_def ips";
		}
		break;
	case Kind::RESET:
		need("generation", &v);
		x.generation = uint32_t(v);
		break;
	default:
		break;
	}
}

void decode_user(Rec &x, tep_record *r)
{
	tep_event *ev = x.event;
	uint64_t v = 0;
	auto need = [&](const char *name) {
		if (!num(ev, r, name, &v)) {
			x.bad = true;
			x.bad_why = std::string("field ") + name;
			return uint64_t(0);
		}
		return v;
	};
	if (x.kind == Kind::USER_STACK) {
		UserStackRec &u = x.user;
		u.cookie = need("cookie");
		u.ustack_id = uint32_t(need("ustack_id"));
		u.gen = uint32_t(need("gen"));
		u.flags = uint16_t(need("flags"));
		u.reason = uint8_t(need("reason"));
		u.id_reason = uint8_t(need("id_reason"));
		uint64_t nr = need("nr");
		std::vector<uint64_t> w;
		if (!u64s(ev, r, "frames", &w) || w.size() != 2 * nr) {
			x.bad = true;
			x.bad_why = "user_stack frames";
			return;
		}
		for (size_t i = 0; i + 1 < w.size(); i += 2)
			u.frames.emplace_back(w[i], w[i + 1]);
		return;
	}
	/* file_map */
	x.file_id = need("file_id");
	const uint8_t *p;
	size_t len;
	if (!dyn(ev, r, "path", &p, &len) || len == 0) {
		x.bad = true;
		x.bad_why = "file_map path";
		return;
	}
	x.path.assign(reinterpret_cast<const char *>(p), strnlen(reinterpret_cast<const char *>(p), len));
	if (!dyn(ev, r, "build_id", &p, &len) || len > 64) {
		x.bad = true;
		x.bad_why = "file_map build_id";
		return;
	}
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < len; i++) {
		x.build_id += digits[p[i] >> 4];
		x.build_id += digits[p[i] & 15];
	}
}

/*
 * Containment of the readers' crashes. libtraceevent 1.7.1 trusts the
 * commit size of a data page (kbuffer_load_subbuffer reads as far as it
 * says) and libtracecmd 3.1.6 closes a half-made handle when an instance
 * buffer does not open (a NULL dereference): a corrupted trace.dat can make
 * them fault. Pages of a compressed file are only decompressed inside
 * libtracecmd, so they cannot be checked before. A fault whose instruction
 * lies in one of these two libraries ends the program with exit status 1
 * and a message; any other fault goes to the handler that was there before
 * (the default one, or a sanitizer's), so our own bugs still crash loudly.
 * The handler uses only async-signal-safe calls: the library ranges and
 * the message are made in advance.
 */
struct Range {
	uintptr_t lo, hi;
};
Range g_libs[8];
int g_nlibs;
char g_msg[512];
size_t g_msg_len;
struct sigaction g_old[3];
const int kSigs[3] = {SIGSEGV, SIGBUS, SIGFPE};

int find_libs(dl_phdr_info *info, size_t, void *)
{
	const char *n = info->dlpi_name;
	if (!n || (!strstr(n, "/libtracecmd.so") && !strstr(n, "/libtraceevent.so")))
		return 0;
	for (int i = 0; i < info->dlpi_phnum && g_nlibs < 8; i++) {
		const ElfW(Phdr) &ph = info->dlpi_phdr[i];
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		g_libs[g_nlibs].lo = info->dlpi_addr + ph.p_vaddr;
		g_libs[g_nlibs].hi = info->dlpi_addr + ph.p_vaddr + ph.p_memsz;
		g_nlibs++;
	}
	return 0;
}

uintptr_t fault_pc(void *ctx)
{
	auto *uc = static_cast<ucontext_t *>(ctx);
#if defined(__x86_64__)
	return uintptr_t(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
	return uintptr_t(uc->uc_mcontext.pc);
#else
	(void)uc;
	return 0;	/* unknown: never taken for a library fault */
#endif
}

void on_fault(int sig, siginfo_t *, void *ctx)
{
	uintptr_t pc = fault_pc(ctx);
	for (int i = 0; i < g_nlibs; i++) {
		if (pc >= g_libs[i].lo && pc < g_libs[i].hi) {
			ssize_t w = write(STDERR_FILENO, g_msg, g_msg_len);
			(void)w;
			_exit(1);
		}
	}
	/* not theirs: the previous handler gets the fault when it recurs */
	for (int i = 0; i < 3; i++)
		if (kSigs[i] == sig)
			sigaction(sig, &g_old[i], nullptr);
}

void contain_library_faults(const std::string &file)
{
	static bool installed;
	std::string m = "stackmap-report: " + file +
			": corrupted data: the trace reader (libtracecmd/libtraceevent) "
			"faulted on it\n";
	if (m.size() >= sizeof(g_msg))
		m = "stackmap-report: corrupted data: the trace reader faulted on it\n";
	memcpy(g_msg, m.data(), m.size());
	g_msg_len = m.size();
	if (installed)
		return;
	installed = true;
	dl_iterate_phdr(find_libs, nullptr);
	struct sigaction sa = {};
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(kSigs[i], &sa, &g_old[i]);
}

struct IterCtx {
	Trace *t;
	const std::function<void(Rec &)> *cb;
	tep_handle *tep;
	tep_event *const *ev;
	std::vector<tracecmd_input *> *handles;
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
	if (x.kind == Kind::USER_STACK || x.kind == Kind::FILE_MAP)
		decode_user(x, r);
	else if (x.kind != Kind::OTHER)
		decode(x, r);
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
	contain_library_faults(file);
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
		ev_[k] = tep_find_event_by_name(tep_, "stackmap", kNames[k]);
	return "";
}

bool Trace::has_stackmap_events() const
{
	return ev_[int(Kind::STACK_ID)] != nullptr;
}

std::string Trace::iterate(const std::function<void(Rec &)> &cb)
{
	IterCtx c{this, &cb, tep_, ev_, &handles_};
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
