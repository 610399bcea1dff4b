/* SPDX-License-Identifier: GPL-2.0 */
/*
 * options.h - stackmap-ctl's command line (main.cpp parses it), as the
 * commands read it.
 */
#ifndef STACKMAP_CTL_OPTIONS_H
#define STACKMAP_CTL_OPTIONS_H

#include <string>
#include <vector>

namespace smctl {

struct Options {
	std::string instance;	/* "" = top level */
	std::string cmd;
	std::string output;	/* extract -o FILE */
	std::vector<std::string> args;
	bool user = false, remove = false, raw = false, batch = false;
	double interval = 2.0;
	int rows = 20;
	int iterations = 1;
};

} /* namespace smctl */

#endif
