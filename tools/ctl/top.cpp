// SPDX-License-Identifier: GPL-2.0
/*
 * top.cpp - stackmap-ctl top: the hottest kernel stacks of successive
 * stack_map_bin snapshots (read by tracefs_io.cpp, their deltas by ctl.cpp's
 * TopModel), on a curses screen or, with --batch, as plain text.
 */
#include <curses.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
#include <event-parse.h>
}

#include "commands.h"
#include "ctl.h"
#include "fsmb.h"
#include "symbols.h"
#include "tracefs_io.h"

namespace smctl {

namespace {

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

} /* namespace */

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

} /* namespace smctl */
