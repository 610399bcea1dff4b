// SPDX-License-Identifier: GPL-2.0
/*
 * trace.cpp - see trace.h. The fields of our records are decoded by
 * records.cpp.
 */
#include "trace.h"
#include "abi.h"
#include "records.h"

#include <link.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstring>
/* compiled with -fpermissive: see CMakeLists.txt */
#include <trace-cmd/trace-cmd.h>
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

/* libtracecmd 3.1.6 exports it, trace-cmd.h does not declare it */
extern "C" const char *tracecmd_get_uname(struct tracecmd_input *handle);

namespace smr {

namespace {

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
	FieldCache *fields;
	bool defs;
	/*
	 * The file offset of the last record of each (buffer, CPU): a CPU's
	 * records come in file order, so an offset that does not grow means
	 * corrupted page data that libtracecmd would read round and round
	 * (seen: a flipped length sent it back 180 bytes, forever).
	 */
	std::vector<std::vector<unsigned long long>> last_off;
	bool looped = false;
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
	if (cpu >= 0) {
		auto &offs = c->last_off[size_t(x.buf)];
		if (offs.size() <= size_t(cpu))
			offs.resize(size_t(cpu) + 1, 0);
		if (r->size < 0 || (offs[size_t(cpu)] && r->offset <= offs[size_t(cpu)])) {
			c->looped = true;
			return -1; /* stops the iteration (only < 0 does) */
		}
		offs[size_t(cpu)] = r->offset;
	}
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

std::string Trace::uname() const
{
	const char *u = top_ ? tracecmd_get_uname(top_) : nullptr;
	return u ? u : "";
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
		ev_[k] = tep_find_event_by_name(tep_, "stackmap", kind_name(Kind(k)));
	return "";
}

bool Trace::has_stackmap_events() const
{
	return ev_[int(Kind::STACK_ID)] != nullptr;
}

std::string Trace::iterate(const std::function<void(Rec &)> &cb, bool defs)
{
	IterCtx c{this, &cb, tep_, ev_, &handles_, &fields_, defs, {}, false};
	c.last_off.resize(handles_.size());
	int ret = tracecmd_iterate_events_multi(handles_.data(), int(handles_.size()),
						iter_cb, &c);
	if (c.looped)
		return "corrupted data: a CPU's records do not advance through the file";
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
