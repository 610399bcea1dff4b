// SPDX-License-Identifier: GPL-2.0
/*
 * stackmap-ctl - control ftrace_stackmap in a tracefs instance, on
 * libtracefs (Documentation/stackmap-ctl.rst):
 *
 *   stackmap-ctl [-B INSTANCE] enable [--user] [EVENT...]
 *   stackmap-ctl [-B INSTANCE] disable [--user] [--remove]
 *   stackmap-ctl [-B INSTANCE] status [--raw]
 *   stackmap-ctl [-B INSTANCE] events [EVENT...]
 *   stackmap-ctl [-B INSTANCE] reset
 *   stackmap-ctl [-B INSTANCE] save FILE
 *   stackmap-ctl [-B INSTANCE] top [-d SECS] [-n N] [--batch [--iterations K]]
 *
 * Every tracefs file is read and written through libtracefs; the only
 * other files are /dev/kmsg (the module's reason for a refused write),
 * /proc/kallsyms (top's kernel symbols, through libtraceevent) and the
 * snapshot FILE. Exit status: 0 done, 1 error, 2 bad usage.
 */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
#include <event-parse.h>
#include <tracefs.h>
}

#include "ctl.h"
#include "fsmb.h"
#include "symbols.h"

using namespace smctl;

namespace {

const char *const kUsage =
	"usage: stackmap-ctl [-B INSTANCE] COMMAND [ARGS]\n"
	"\n"
	"Control ftrace_stackmap in the top-level trace buffer or in the tracefs\n"
	"instance INSTANCE (-B, as trace-cmd's).\n"
	"\n"
	"commands:\n"
	"  enable [--user] [EVENT...]  turn options/stackmap on (and options/stackmap_user\n"
	"                              with --user); with EVENTs, make them the source\n"
	"                              events (stack_map_events) and enable them. With -B,\n"
	"                              creates INSTANCE when it does not exist (says so)\n"
	"  disable [--user] [--remove] turn options/stackmap and options/stackmap_user off\n"
	"                              (--user: only stackmap_user); --remove: then remove\n"
	"                              the -B instance\n"
	"  status [--raw]              options, source events and stack_map_stat\n"
	"  events [EVENT...]           show the source events, or replace them (set_event\n"
	"                              syntax: sys:event, sys:*, !pattern; a refused list\n"
	"                              changes nothing)\n"
	"  reset                       start a new generation of the map (ids restart)\n"
	"  save FILE                   write a stack_map_bin snapshot (FSMB) to FILE, for\n"
	"                              stackmap-report --map FILE\n"
	"  top [-d SECS] [-n N]        live view of the hottest kernel stacks by hits per\n"
	"                              interval (default -d 2 -n 20); q quits. --batch:\n"
	"                              plain text, --iterations K screens (default 1)\n"
	"\n"
	"options:\n"
	"  -B, --instance NAME         the tracefs instance (default: top level)\n"
	"  -h, --help                  this text\n"
	"\n"
	"Exit status: 0 done, 1 error (module not loaded, no such instance, a write\n"
	"the module refused: its dmesg reason is shown when /dev/kmsg is readable),\n"
	"2 bad usage.\n";

int usage_error(const std::string &msg)
{
	std::cerr << "stackmap-ctl: " << msg << " (see --help)\n";
	return 2;
}

int fail(const std::string &msg)
{
	std::cerr << "stackmap-ctl: " << msg << "\n";
	return 1;
}

/*
 * The module's reason for a refused write: its dmesg line. Opened before
 * the write, positioned at the end of the log; after the write, the new
 * records that name the module. /dev/kmsg gives every reader its own
 * position, so other readers are not disturbed.
 */
class KmsgWatch {
public:
	KmsgWatch()
	{
		fd_ = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd_ >= 0 && lseek(fd_, 0, SEEK_END) < 0) {
			close(fd_);
			fd_ = -1;
		}
	}
	~KmsgWatch()
	{
		if (fd_ >= 0)
			close(fd_);
	}
	KmsgWatch(const KmsgWatch &) = delete;
	KmsgWatch &operator=(const KmsgWatch &) = delete;

	bool readable() const { return fd_ >= 0; }

	std::vector<std::string> lines()
	{
		std::string all;
		char buf[8192];
		if (fd_ < 0)
			return {};
		for (int i = 0; i < 1000; i++) {	/* bounded: one record per read */
			ssize_t n = read(fd_, buf, sizeof(buf));
			if (n < 0 && errno == EPIPE)
				continue;	/* overwritten records: skip on */
			if (n <= 0)
				break;
			all.append(buf, size_t(n));
		}
		return kmsg_module_lines(all);
	}

private:
	int fd_ = -1;
};

struct Options {
	std::string instance;	/* "" = top level */
	std::string cmd;
	std::vector<std::string> args;
	bool user = false, remove = false, raw = false, batch = false;
	double interval = 2.0;
	int rows = 20;
	int iterations = 1;
};

/* The opened instance (nullptr: the top level, which libtracefs takes as
 * a NULL instance). */
struct Ctx {
	tracefs_instance *inst = nullptr;
	std::string where;	/* "instance 'x'" or "the top level" */

	~Ctx()
	{
		if (inst)
			tracefs_instance_free(inst);
	}
};

std::string errstr(int e)
{
	return std::string(strerror(e));
}

/* Read a tracefs file of the instance; false with *err on failure. */
bool read_node(Ctx &c, const char *file, std::string *out, std::string *err)
{
	int size = 0;
	errno = 0;
	char *p = tracefs_instance_file_read(c.inst, file, &size);
	if (!p) {
		if (errno == 0 && tracefs_file_exists(c.inst, file)) {
			out->clear();	/* an empty file */
			return true;
		}
		*err = std::string("cannot read ") + file + " of " + c.where + ": " +
		       errstr(errno ? errno : ENOENT);
		return false;
	}
	out->assign(p, size_t(size));
	free(p);
	return true;
}

/* Write TEXT to a tracefs file of the instance. On failure: false, and the
 * message (with the module's dmesg reason when it can be read) printed. */
bool write_node(Ctx &c, const char *file, const std::string &text)
{
	KmsgWatch kmsg;
	errno = 0;
	int r = tracefs_instance_file_write(c.inst, file, text.c_str());
	if (r == int(text.size()))
		return true;
	int e = errno ? errno : EIO;
	std::string shown = text;
	while (!shown.empty() && shown.back() == '\n')
		shown.pop_back();
	std::cerr << "stackmap-ctl: " << file << " of " << c.where << " refused '" << shown
		  << "': " << errstr(e) << "\n";
	std::vector<std::string> why = kmsg.lines();
	for (const std::string &l : why)
		std::cerr << "stackmap-ctl:   dmesg: " << l << "\n";
	if (why.empty())
		std::cerr << "stackmap-ctl:   (the reason is in dmesg"
			  << (kmsg.readable() ? "" : "; /dev/kmsg is not readable here")
			  << ")\n";
	return false;
}

/* The tracing directory exists and the module's nodes are in it. */
int check_module()
{
	const char *dir = tracefs_tracing_dir();
	if (!dir)
		return fail("tracefs not found (mount -t tracefs nodev /sys/kernel/tracing)");
	struct stat st;
	std::string stat_path = std::string(dir) + "/stack_map_stat";
	if (stat(stat_path.c_str(), &st) == 0)
		return 0;
	if (errno == EACCES)
		return fail(std::string("permission denied in ") + dir + " (run as root)");
	return fail(std::string("ftrace_stackmap is not loaded (no stack_map_stat in ") + dir +
		    "): modprobe ftrace_stackmap");
}

/* Open the instance; `create`: make it when missing (enable). */
int open_ctx(const Options &o, bool create, Ctx *c)
{
	if (int r = check_module())
		return r;
	if (o.instance.empty()) {
		c->where = "the top level";
		return 0;
	}
	c->where = "instance '" + o.instance + "'";
	if (o.instance.find('/') != std::string::npos || o.instance == "." ||
	    o.instance == "..")
		return fail("bad instance name '" + o.instance + "'");
	if (create) {
		errno = 0;
		c->inst = tracefs_instance_create(o.instance.c_str());
		if (!c->inst)
			return fail("cannot create " + c->where + ": " + errstr(errno ? errno : EIO));
		if (tracefs_instance_is_new(c->inst))
			std::cerr << "stackmap-ctl: created " << c->where << "\n";
	} else {
		if (!tracefs_instance_exists(o.instance.c_str()))
			return fail("no such instance '" + o.instance + "' (stackmap-ctl -B " +
				    o.instance + " enable creates it)");
		c->inst = tracefs_instance_alloc(nullptr, o.instance.c_str());
		if (!c->inst)
			return fail("cannot open " + c->where + ": " + errstr(errno ? errno : EIO));
	}
	if (!tracefs_file_exists(c->inst, "stack_map_events"))
		return fail(c->where + " has no stack_map_events (was it made before the "
			    "module was loaded, or by another tool while it was loading?)");
	return 0;
}

std::string regex_exact(const std::string &s)
{
	std::string r = "^";
	for (char ch : s) {
		if (strchr(".[]{}()\\*+?|^$", ch))
			r += '\\';
		r += ch;
	}
	return r + "$";
}

bool set_events(Ctx &c, const std::vector<std::string> &events)
{
	std::string text;
	for (const std::string &e : events)
		text += e + "\n";	/* each token complete in this write */
	if (text.empty())
		text = "\n";	/* clears the set */
	return write_node(c, "stack_map_events", text);
}

int cmd_events(Ctx &c, const Options &o)
{
	std::string s, err;
	if (!o.args.empty() && !set_events(c, o.args))
		return 1;
	if (!read_node(c, "stack_map_events", &s, &err))
		return fail(err);
	std::cout << s;
	return 0;
}

int cmd_enable(Ctx &c, const Options &o)
{
	std::string s, err;
	if (!o.args.empty()) {
		if (!set_events(c, o.args))
			return 1;
		if (!read_node(c, "stack_map_events", &s, &err))
			return fail(err);
		/* the concrete events the patterns resolved to */
		for (const std::string &ev : split_events(s)) {
			size_t colon = ev.find(':');
			if (colon == std::string::npos)
				continue;
			std::string sys = ev.substr(0, colon), name = ev.substr(colon + 1);
			errno = 0;
			if (tracefs_event_enable(c.inst, regex_exact(sys).c_str(),
						 regex_exact(name).c_str()) < 0)
				return fail("cannot enable event " + ev + " in " + c.where + ": " +
					    errstr(errno ? errno : ENOENT));
		}
	}
	if (o.user) {
		if (!tracefs_file_exists(c.inst, "options/stackmap_user"))
			return fail("no options/stackmap_user in " + c.where +
				    " (module without user stacks?)");
		if (!write_node(c, "options/stackmap_user", "1"))
			return 1;
	}
	if (!write_node(c, "options/stackmap", "1"))
		return 1;
	if (!read_node(c, "stack_map_events", &s, &err))
		return fail(err);
	std::vector<std::string> ev = split_events(s);
	std::cout << "stackmap on in " << c.where << (o.user ? ", user stacks on" : "")
		  << "; source events:";
	for (const std::string &e : ev)
		std::cout << " " << e;
	std::cout << (ev.empty() ? " none (stackmap-ctl events EVENT...)\n" : "\n");
	return 0;
}

int cmd_disable(Ctx &c, const Options &o)
{
	if (tracefs_file_exists(c.inst, "options/stackmap_user") &&
	    !write_node(c, "options/stackmap_user", "0"))
		return 1;
	if (!o.user && !write_node(c, "options/stackmap", "0"))
		return 1;
	if (o.remove) {
		errno = 0;
		if (tracefs_instance_destroy(c.inst) < 0)
			return fail("cannot remove " + c.where + ": " + errstr(errno ? errno : EIO));
		std::cout << "removed " << c.where << "\n";
		return 0;
	}
	std::cout << (o.user ? "user stacks off in " : "stackmap off in ") << c.where << "\n";
	return 0;
}

int cmd_status(Ctx &c, const Options &o)
{
	std::string stat, ev, opt, uopt, err;
	if (!read_node(c, "stack_map_stat", &stat, &err))
		return fail(err);
	if (o.raw) {
		std::cout << stat;
		return 0;
	}
	if (!read_node(c, "stack_map_events", &ev, &err) ||
	    !read_node(c, "options/stackmap", &opt, &err))
		return fail(err);
	if (tracefs_file_exists(c.inst, "options/stackmap_user") &&
	    !read_node(c, "options/stackmap_user", &uopt, &err))
		return fail(err);
	auto onoff = [](const std::string &v) {
		return v.empty() ? "n/a" : v[0] == '1' ? "on" : "off";
	};
	std::vector<std::string> evs = split_events(ev);
	std::cout << "stackmap-ctl status: " << c.where << "\n"
		  << "  options/stackmap       " << onoff(opt) << "\n"
		  << "  options/stackmap_user  " << onoff(uopt) << "\n"
		  << "  source events          ";
	for (size_t i = 0; i < evs.size(); i++)
		std::cout << (i ? " " : "") << evs[i];
	std::cout << (evs.empty() ? "none\n" : "\n") << stat_format(stat);
	return 0;
}

int cmd_reset(Ctx &c, const Options &)
{
	if (!write_node(c, "stack_map", "reset\n"))
		return 1;
	std::cout << "reset the stack map of " << c.where << "\n";
	return 0;
}

/* stack_map_bin, decoded; a reset between open and read gives ESTALE:
 * read again (a few times). */
bool read_snapshot(Ctx &c, std::string *raw, smr::Fsmb *f, std::string *err)
{
	for (int i = 0; i < 5; i++) {
		if (!read_node(c, "stack_map_bin", raw, err)) {
			if (errno == ESTALE)
				continue;
			return false;
		}
		*f = smr::Fsmb();
		std::string e;
		if (smr::fsmb_decode(reinterpret_cast<const uint8_t *>(raw->data()),
				     raw->size(), f, &e))
			return true;
		*err = "stack_map_bin of " + c.where + ": " + e;
		return false;
	}
	*err = "stack_map_bin of " + c.where + ": reset during every read (ESTALE)";
	return false;
}

int cmd_save(Ctx &c, const Options &o)
{
	std::string raw, err;
	smr::Fsmb f;
	if (!read_snapshot(c, &raw, &f, &err))
		return fail(err);
	const std::string &path = o.args[0];
	std::string tmp = path + ".tmp";
	{
		std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
		out.write(raw.data(), std::streamsize(raw.size()));
		out.close();
		if (!out)
			return fail("cannot write " + tmp + ": " + errstr(errno ? errno : EIO));
	}
	if (rename(tmp.c_str(), path.c_str()) < 0) {
		int e = errno;
		unlink(tmp.c_str());
		return fail("cannot write " + path + ": " + errstr(e));
	}
	std::cout << "saved " << c.where << " to " << path << ": generation " << f.generation
		  << ", " << f.kstacks.size() << " kernel stacks, " << f.ustacks.size()
		  << " user stacks, " << f.files.size() << " files, " << raw.size()
		  << " bytes\n";
	if (f.hidden())
		std::cerr << "stackmap-ctl: warning: kernel addresses are hidden in this "
			     "snapshot (reader without CAP_SYSLOG / kptr_restrict): kernel "
			     "frames cannot be symbolized from it\n";
	return 0;
}

/* ---- top ---- */

volatile sig_atomic_t g_stop = 0;

void on_signal(int)
{
	g_stop = 1;
}

class KSyms {
public:
	KSyms() : tep_(tep_alloc(), tep_free)
	{
		std::ifstream in("/proc/kallsyms");
		std::stringstream ss;
		ss << in.rdbuf();
		std::string s = ss.str();
		ok_ = tep_ && !s.empty() && tep_parse_kallsyms(tep_.get(), s.c_str()) == 0;
		if (ok_)
			ks_ = std::make_unique<smr::KernelSyms>(tep_.get());
	}
	std::string name(uint64_t ip, bool hidden)
	{
		char b[24];
		if (!hidden && ok_)
			return ks_->name(ip);
		snprintf(b, sizeof(b), "0x%llx", (unsigned long long)ip);
		return b;
	}

private:
	std::unique_ptr<tep_handle, void (*)(tep_handle *)> tep_;
	std::unique_ptr<smr::KernelSyms> ks_;
	bool ok_ = false;
};

struct Screen {
	std::string title;
	std::vector<TopRow> rows;
};

bool top_sample(Ctx &c, TopModel &m, Screen *s, std::string *err, bool *hidden)
{
	std::string raw;
	smr::Fsmb f;
	if (!read_snapshot(c, &raw, &f, err))
		return false;
	bool first = m.first();
	s->rows = m.update(f);
	*hidden = f.hidden();
	char b[256];
	snprintf(b, sizeof(b),
		 "stackmap-ctl top: %s  generation %u  stacks %zu  hits %llu (%s%llu)",
		 c.where.c_str(), f.generation, f.kstacks.size(),
		 (unsigned long long)m.total_hits(), first ? "baseline, +" : "+",
		 (unsigned long long)m.total_delta());
	s->title = b;
	return true;
}

int cmd_top(Ctx &c, const Options &o)
{
	TopModel m;
	KSyms ks;
	Screen s;
	std::string err;
	bool hidden = false;
	auto name = [&](uint64_t ip) { return ks.name(ip, hidden); };
	auto ms = std::chrono::milliseconds(long(o.interval * 1000));

	struct sigaction sa = {};
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, nullptr);
	sigaction(SIGTERM, &sa, nullptr);
	sigaction(SIGHUP, &sa, nullptr);

	if (o.batch) {
		if (!top_sample(c, m, &s, &err, &hidden))	/* the baseline */
			return fail(err);
		for (int i = 0; i < o.iterations && !g_stop; i++) {
			auto until = std::chrono::steady_clock::now() + ms;
			while (!g_stop && std::chrono::steady_clock::now() < until)
				usleep(20000);
			if (!top_sample(c, m, &s, &err, &hidden))
				return fail(err);
			std::cout << s.title << "  interval " << o.interval << " s\n"
				  << top_header() << "\n";
			for (size_t r = 0; r < s.rows.size() && int(r) < o.rows; r++)
				std::cout << top_line(s.rows[r], name, 0) << "\n";
			std::cout << std::flush;
		}
		return 0;
	}
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return fail("top needs a terminal (or --batch for plain text)");
	if (!top_sample(c, m, &s, &err, &hidden))
		return fail(err);
	if (!initscr())
		return fail("cannot initialise the terminal (TERM?)");
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	int rc = 0;
	while (!g_stop) {
		erase();
		int lines = LINES, cols = COLS;
		mvaddnstr(0, 0, s.title.c_str(), cols);
		char b[96];
		snprintf(b, sizeof(b), "every %.1f s, q quits", o.interval);
		mvaddnstr(1, 0, b, cols);
		attron(A_REVERSE);
		mvaddnstr(3, 0, top_header().c_str(), cols);
		attroff(A_REVERSE);
		for (size_t r = 0; r < s.rows.size() && int(r) < o.rows && int(r) + 4 < lines; r++)
			mvaddnstr(int(r) + 4, 0, top_line(s.rows[r], name, size_t(cols)).c_str(),
				  cols);
		refresh();
		auto until = std::chrono::steady_clock::now() + ms;
		bool quit = false;
		while (!g_stop) {
			auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
				until - std::chrono::steady_clock::now()).count();
			if (left <= 0)
				break;
			timeout(int(left));
			int ch = getch();
			if (ch == 'q' || ch == 'Q') {
				quit = true;
				break;
			}
		}
		if (quit || g_stop)
			break;
		if (!top_sample(c, m, &s, &err, &hidden)) {
			rc = 1;
			break;
		}
	}
	endwin();
	if (rc)
		return fail(err);
	return 0;
}

enum { O_USER = 256, O_REMOVE, O_RAW, O_BATCH, O_ITER };

} /* namespace */

int main(int argc, char **argv)
{
	static const option longopts[] = {
		{"instance", required_argument, nullptr, 'B'},
		{"help", no_argument, nullptr, 'h'},
		{"user", no_argument, nullptr, O_USER},
		{"remove", no_argument, nullptr, O_REMOVE},
		{"raw", no_argument, nullptr, O_RAW},
		{"batch", no_argument, nullptr, O_BATCH},
		{"iterations", required_argument, nullptr, O_ITER},
		{"delay", required_argument, nullptr, 'd'},
		{"rows", required_argument, nullptr, 'n'},
		{nullptr, 0, nullptr, 0},
	};
	Options o;
	std::vector<std::string> seen;	/* command-specific options given */
	int c;
	while ((c = getopt_long(argc, argv, "B:hd:n:", longopts, nullptr)) != -1) {
		char *end = nullptr;
		switch (c) {
		case 'B':
			o.instance = optarg;
			if (o.instance.empty())
				return usage_error("-B needs a name");
			break;
		case 'h':
			std::cout << kUsage;
			return 0;
		case O_USER: o.user = true; seen.push_back("--user"); break;
		case O_REMOVE: o.remove = true; seen.push_back("--remove"); break;
		case O_RAW: o.raw = true; seen.push_back("--raw"); break;
		case O_BATCH: o.batch = true; seen.push_back("--batch"); break;
		case O_ITER:
			o.iterations = int(strtol(optarg, &end, 10));
			if (!*optarg || *end || o.iterations < 1 || o.iterations > 1000000)
				return usage_error(std::string("--iterations '") + optarg +
						   "': expected 1..1000000");
			seen.push_back("--iterations");
			break;
		case 'd':
			o.interval = strtod(optarg, &end);
			if (!*optarg || *end || !(o.interval >= 0.1 && o.interval <= 3600))
				return usage_error(std::string("-d '") + optarg +
						   "': expected seconds, 0.1..3600");
			seen.push_back("-d");
			break;
		case 'n':
			o.rows = int(strtol(optarg, &end, 10));
			if (!*optarg || *end || o.rows < 1 || o.rows > 10000)
				return usage_error(std::string("-n '") + optarg +
						   "': expected 1..10000");
			seen.push_back("-n");
			break;
		default:
			return 2;	/* getopt printed why */
		}
	}
	if (optind >= argc)
		return usage_error("no command");
	o.cmd = argv[optind++];
	for (int i = optind; i < argc; i++)
		o.args.push_back(argv[i]);

	struct Cmd {
		const char *name;
		int (*fn)(Ctx &, const Options &);
		std::vector<std::string> opts;
		int min_args, max_args;	/* -1: any */
		bool create;
	};
	static const Cmd cmds[] = {
		{"enable", cmd_enable, {"--user"}, 0, -1, true},
		{"disable", cmd_disable, {"--user", "--remove"}, 0, 0, false},
		{"status", cmd_status, {"--raw"}, 0, 0, false},
		{"events", cmd_events, {}, 0, -1, false},
		{"reset", cmd_reset, {}, 0, 0, false},
		{"save", cmd_save, {}, 1, 1, false},
		{"top", cmd_top, {"-d", "-n", "--batch", "--iterations"}, 0, 0, false},
	};
	for (const Cmd &k : cmds) {
		if (o.cmd != k.name)
			continue;
		for (const std::string &s : seen) {
			bool okopt = false;
			for (const std::string &a : k.opts)
				okopt |= a == s;
			if (!okopt)
				return usage_error(s + " does not apply to " + o.cmd);
		}
		int n = int(o.args.size());
		if (n < k.min_args || (k.max_args >= 0 && n > k.max_args))
			return usage_error(o.cmd == "save" ? "save needs one FILE"
							   : o.cmd + " takes no arguments");
		if (o.remove && o.instance.empty())
			return usage_error("--remove needs -B INSTANCE (the top level stays)");
		Ctx ctx;
		if (int r = open_ctx(o, k.create, &ctx))
			return r;
		return k.fn(ctx, o);
	}
	return usage_error("unknown command '" + o.cmd + "'");
}
