// SPDX-License-Identifier: GPL-2.0
/*
 * progress.cpp - see progress.h.
 */
#include "progress.h"

#include <cstdio>
#include <unistd.h>

namespace smr {

bool progress_wanted(int fd, uint64_t file_bytes, uint64_t min_bytes)
{
	return file_bytes >= min_bytes && isatty(fd) == 1;
}

namespace {

void put(int fd, const std::string &s)
{
	size_t off = 0;
	while (off < s.size()) {
		ssize_t n = write(fd, s.data() + off, s.size() - off);
		if (n <= 0)
			return;		/* a progress line is not worth an error */
		off += size_t(n);
	}
}

} /* namespace */

void Progress::start(const std::string &what, uint64_t total)
{
	what_ = what;
	total_ = total ? total : 1;
	last_pct_ = -1;
	next_ = 0;
}

void Progress::print(uint64_t pos)
{
	int pct = int(pos >= total_ ? 99 : pos * 100 / total_);
	/* the first position of the next percent */
	next_ = pct >= 99 ? UINT64_MAX : (uint64_t(pct + 1) * total_ + 99) / 100;
	if (pct == last_pct_)
		return;
	last_pct_ = pct;
	char b[32];
	snprintf(b, sizeof(b), ": %3d%%", pct);
	put(fd_, "\rstackmap-report: " + what_ + b);
	shown_ = true;
}

void Progress::done()
{
	if (!shown_)
		return;
	put(fd_, "\r\033[K");
	shown_ = false;
	next_ = UINT64_MAX;
}

} /* namespace smr */
