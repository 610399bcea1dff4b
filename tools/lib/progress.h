/* SPDX-License-Identifier: GPL-2.0 */
/*
 * progress.h - a percentage on stderr while a large file is read, only
 * when stderr is a terminal: a pipe, a file or /dev/null get nothing, so
 * scripts and logs see only the tool's own messages.
 *
 * One line, rewritten in place ("\r"), and erased when done. The cost per
 * step is one comparison; the line is written only when the percentage
 * changes (at most 100 writes per phase).
 */
#ifndef STACKMAP_REPORT_PROGRESS_H
#define STACKMAP_REPORT_PROGRESS_H

#include <cstdint>
#include <string>

namespace smr {

/*
 * Whether to show progress for a file of file_bytes on fd: fd is a
 * terminal and the file has at least min_bytes.
 */
bool progress_wanted(int fd, uint64_t file_bytes, uint64_t min_bytes);

class Progress {
public:
	/* fd: where to write (stderr); enabled: progress_wanted()'s answer */
	Progress(int fd, bool enabled) : fd_(fd), on_(enabled) {}
	~Progress() { done(); }
	Progress(const Progress &) = delete;
	Progress &operator=(const Progress &) = delete;

	/* a new phase of total units ("pass 1/2: bytes") */
	void start(const std::string &what, uint64_t total);
	/* the phase is at unit pos (monotonic; clamped to 99% until done()) */
	void at(uint64_t pos)
	{
		if (on_ && pos >= next_)
			print(pos);
	}
	/* erase the line */
	void done();

private:
	void print(uint64_t pos);
	int fd_;
	bool on_;
	bool shown_ = false;
	std::string what_;
	uint64_t total_ = 0;
	uint64_t next_ = UINT64_MAX;
	int last_pct_ = -1;
};

} /* namespace smr */

#endif
