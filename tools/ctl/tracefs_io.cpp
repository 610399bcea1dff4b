// SPDX-License-Identifier: GPL-2.0
/*
 * tracefs_io.cpp - stackmap-ctl's tracefs files, through libtracefs (see
 * tracefs_io.h).
 */
#include "tracefs_io.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

extern "C" {
#include <tracefs.h>
}

#include "ctl.h"

namespace smctl {

namespace {

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

} /* namespace */

Ctx::~Ctx()
{
	if (inst)
		tracefs_instance_free(inst);
}

int fail(const std::string &msg)
{
	std::cerr << "stackmap-ctl: " << msg << "\n";
	return 1;
}

std::string errstr(int e)
{
	return std::string(strerror(e));
}

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

bool node_exists(Ctx &c, const char *file)
{
	return tracefs_file_exists(c.inst, file);
}

bool enable_event(Ctx &c, const std::string &sys, const std::string &name,
		  std::string *err)
{
	errno = 0;
	if (tracefs_event_enable(c.inst, regex_exact(sys).c_str(),
				 regex_exact(name).c_str()) < 0) {
		*err = errstr(errno ? errno : ENOENT);
		return false;
	}
	return true;
}

bool remove_instance(Ctx &c, std::string *err)
{
	errno = 0;
	if (tracefs_instance_destroy(c.inst) < 0) {
		*err = errstr(errno ? errno : EIO);
		return false;
	}
	return true;
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

} /* namespace smctl */
