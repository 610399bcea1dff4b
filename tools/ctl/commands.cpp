// SPDX-License-Identifier: GPL-2.0
/*
 * commands.cpp - stackmap-ctl enable, disable, status, events, reset and
 * save (see commands.h); their tracefs files through tracefs_io.h.
 */
#include "commands.h"

#include <errno.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "ctl.h"
#include "fsmb.h"
#include "tracefs_io.h"

namespace smctl {

namespace {

bool set_events(Ctx &c, const std::vector<std::string> &events)
{
	std::string text;
	for (const std::string &e : events)
		text += e + "\n";	/* each token complete in this write */
	if (text.empty())
		text = "\n";	/* clears the set */
	return write_node(c, "stack_map_events", text);
}

} /* namespace */

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
			if (!enable_event(c, sys, name, &err))
				return fail("cannot enable event " + ev + " in " + c.where + ": " +
					    err);
		}
	}
	if (o.user) {
		if (!node_exists(c, "options/stackmap_user"))
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
	if (node_exists(c, "options/stackmap_user") &&
	    !write_node(c, "options/stackmap_user", "0"))
		return 1;
	if (!o.user && !write_node(c, "options/stackmap", "0"))
		return 1;
	if (o.remove) {
		std::string err;
		if (!remove_instance(c, &err))
			return fail("cannot remove " + c.where + ": " + err);
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
	if (node_exists(c, "options/stackmap_user") &&
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

} /* namespace smctl */
