/* SPDX-License-Identifier: GPL-2.0 */
/*
 * commands.h - stackmap-ctl's commands on an opened instance (main.cpp
 * dispatches): commands.cpp has enable, disable, status, events, reset
 * and save; top.cpp has top; extract.cpp has extract. Each returns the exit status (0 done, 1
 * error, printed).
 */
#ifndef STACKMAP_CTL_COMMANDS_H
#define STACKMAP_CTL_COMMANDS_H

#include "options.h"
#include "tracefs_io.h"

namespace smctl {

int cmd_enable(Ctx &c, const Options &o);
int cmd_disable(Ctx &c, const Options &o);
int cmd_status(Ctx &c, const Options &o);
int cmd_events(Ctx &c, const Options &o);
int cmd_reset(Ctx &c, const Options &o);
int cmd_save(Ctx &c, const Options &o);
int cmd_top(Ctx &c, const Options &o);
int cmd_extract(Ctx &c, const Options &o);	/* extract.cpp */

} /* namespace smctl */

#endif
