// SPDX-License-Identifier: GPL-2.0
/*
 * test_progress.cpp - progress goes to a terminal only (a pty here), never
 * to a pipe, and only for a large enough file.
 */
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <unistd.h>

#include <string>

#include "progress.h"

using smr::Progress;
using smr::progress_wanted;

namespace {

/* everything readable on fd now */
std::string drain(int fd)
{
	std::string out;
	char b[4096];
	pollfd p{fd, POLLIN, 0};
	while (poll(&p, 1, 100) > 0 && (p.revents & POLLIN)) {
		ssize_t n = read(fd, b, sizeof(b));
		if (n <= 0)
			break;
		out.append(b, size_t(n));
	}
	return out;
}

struct Pty {
	int master = -1, slave = -1;
	Pty()
	{
		if (openpty(&master, &slave, nullptr, nullptr, nullptr) != 0)
			master = slave = -1;
	}
	~Pty()
	{
		if (master >= 0)
			close(master);
		if (slave >= 0)
			close(slave);
	}
};

void run(Progress &p)
{
	p.start("pass 1/2 (definitions), bytes", 1000);
	for (uint64_t i = 0; i <= 1000; i += 10)
		p.at(i);
	p.done();
}

} /* namespace */

TEST(Progress, WantedOnlyOnATerminalAndLargeFile)
{
	Pty t;
	ASSERT_GE(t.slave, 0) << "openpty";
	int pp[2];
	ASSERT_EQ(pipe(pp), 0);
	EXPECT_TRUE(progress_wanted(t.slave, 100 << 20, 32 << 20));
	EXPECT_FALSE(progress_wanted(t.slave, 1 << 20, 32 << 20));
	EXPECT_FALSE(progress_wanted(pp[1], 100 << 20, 32 << 20));
	int null = open("/dev/null", O_WRONLY);
	ASSERT_GE(null, 0);
	EXPECT_FALSE(progress_wanted(null, 100 << 20, 0));
	close(null);
	close(pp[0]);
	close(pp[1]);
}

TEST(Progress, PrintsPercentOnATerminal)
{
	Pty t;
	ASSERT_GE(t.slave, 0) << "openpty";
	Progress p(t.slave, progress_wanted(t.slave, 1000, 0));
	run(p);
	std::string out = drain(t.master);
	EXPECT_NE(out.find("\rstackmap-report: pass 1/2 (definitions), bytes:   0%"),
		  std::string::npos) << out;
	EXPECT_NE(out.find(":  50%"), std::string::npos) << out;
	EXPECT_NE(out.find(":  99%"), std::string::npos) << out;
	EXPECT_EQ(out.find("100%"), std::string::npos) << out;
	/* erased at the end */
	ASSERT_GE(out.size(), 4u);
	EXPECT_EQ(out.substr(out.size() - 4), "\r\033[K");
	/* one write per percent, not per step */
	size_t lines = 0;
	for (char c : out)
		lines += c == '\r';
	EXPECT_LE(lines, 101u + 1u);
}

TEST(Progress, NothingOnAPipe)
{
	int pp[2];
	ASSERT_EQ(pipe(pp), 0);
	{
		Progress p(pp[1], progress_wanted(pp[1], 1000, 0));
		run(p);
	}
	close(pp[1]);
	EXPECT_EQ(drain(pp[0]), "");
	close(pp[0]);
}
