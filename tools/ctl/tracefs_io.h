/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tracefs_io.h - stackmap-ctl's access to the module's tracefs files, all
 * through libtracefs: the instance (Ctx), reads, writes with the module's
 * dmesg reason when it refuses one (/dev/kmsg), stack_map_bin snapshots.
 * Errors are printed as "stackmap-ctl: ..." (fail()).
 */
#ifndef STACKMAP_CTL_TRACEFS_IO_H
#define STACKMAP_CTL_TRACEFS_IO_H

#include <string>

#include "fsmb.h"
#include "options.h"

struct tracefs_instance;

namespace smctl {

/* The opened instance (nullptr: the top level, which libtracefs takes as
 * a NULL instance). */
struct Ctx {
	tracefs_instance *inst = nullptr;
	std::string where;	/* "instance 'x'" or "the top level" */

	Ctx() = default;
	Ctx(const Ctx &) = delete;
	Ctx &operator=(const Ctx &) = delete;
	~Ctx();
};

/* "stackmap-ctl: MSG" on stderr; 1 (the exit status of an error) */
int fail(const std::string &msg);
std::string errstr(int e);

/* Open the instance of o.instance after checking that the module is
 * loaded; `create`: make it when missing (enable). 0, or the exit status
 * after printing why not. */
int open_ctx(const Options &o, bool create, Ctx *c);

/* Read a tracefs file of the instance; false with *err on failure. */
bool read_node(Ctx &c, const char *file, std::string *out, std::string *err);

/* Write TEXT to a tracefs file of the instance. On failure: false, and the
 * message (with the module's dmesg reason when it can be read) printed. */
bool write_node(Ctx &c, const char *file, const std::string &text);

/* Does the instance have this file? */
bool node_exists(Ctx &c, const char *file);

/* Enable the event SYS:NAME (exactly that one) in the instance; false
 * with *err (strerror) on failure. */
bool enable_event(Ctx &c, const std::string &sys, const std::string &name,
		  std::string *err);

/* Remove the instance (not the top level); false with *err (strerror) */
bool remove_instance(Ctx &c, std::string *err);

/* stack_map_bin, raw and decoded; false with *err on failure */
bool read_snapshot(Ctx &c, std::string *raw, smr::Fsmb *f, std::string *err);

} /* namespace smctl */

#endif
