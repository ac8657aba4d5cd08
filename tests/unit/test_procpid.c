// SPDX-License-Identifier: GPL-2.0
/* The /proc/PID/stat and status reader (lib/procpid), on this process itself. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sys/prctl.h>

#include "harness.h"
#include "lib/procpid.h"

static void prctl_name(char *buf, size_t len)
{
	char name[17] = "";

	prctl(PR_GET_NAME, name, 0, 0, 0);
	snprintf(buf, len, "%s", name);
}

static int set_comm(const char *name)
{
	return prctl(PR_SET_NAME, name, 0, 0, 0) ? -errno : 0;
}

TEST(procpid_stat_and_status_of_self)
{
	struct procpid_stat st, at;
	char v[64], name[64];
	int dirfd;

	if (!ASSERT_OK(procpid__stat(-1, getpid(), &st), "stat"))
		return;
	ASSERT_EQ(st.ppid, getppid(), "ppid");
	ASSERT_TRUE(st.state == 'R', "running");
	ASSERT_TRUE(st.start > 0, "start time");
	ASSERT_OK(procpid__status(-1, getpid(), "Name", name, sizeof(name)), "Name");
	ASSERT_STREQ(st.comm, name, "comm as status says");
	ASSERT_OK(procpid__status(-1, getpid(), "Kthread", v, sizeof(v)), "Kthread");
	ASSERT_STREQ(v, "0", "not a kernel thread");
	ASSERT_EQ(procpid__status(-1, getpid(), "NoSuchKey", v, sizeof(v)), -ENOENT, "no line");
	/* a prefix of a key is not the key */
	ASSERT_EQ(procpid__status(-1, getpid(), "Nam", v, sizeof(v)), -ENOENT, "a prefix");
	/* at an open /proc/PID: the same */
	dirfd = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!ASSERT_TRUE(dirfd >= 0, "open /proc/self"))
		return;
	ASSERT_OK(procpid__stat(dirfd, 0, &at), "stat at");
	ASSERT_EQ(at.start, st.start, "the same process");
	close(dirfd);
	ASSERT_EQ(procpid__stat(-1, 0, &st), -ESRCH, "no process 0");
	ASSERT_EQ(procpid__status(-1, 0, "Name", v, sizeof(v)), -ESRCH, "nor its status");
}

TEST(procpid_comm_with_parentheses_and_spaces)
{
	struct procpid_stat st;
	char old[17] = "";

	prctl_name(old, sizeof(old));
	if (!ASSERT_OK(set_comm("a) b (c"), "set comm"))
		return;
	ASSERT_OK(procpid__stat(-1, getpid(), &st), "stat");
	ASSERT_STREQ(st.comm, "a) b (c", "comm kept whole");
	ASSERT_EQ(st.ppid, getppid(), "fields after it");
	set_comm(old);
}
