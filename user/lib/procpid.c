// SPDX-License-Identifier: GPL-2.0
/* /proc/PID/stat and /proc/PID/status (see procpid.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "lib/procpid.h"

static int open_file(int dirfd, pid_t pid, const char *name)
{
	char fn[64];

	if (dirfd >= 0)
		return openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	snprintf(fn, sizeof(fn), "/proc/%d/%s", (int)pid, name);
	return open(fn, O_RDONLY | O_CLOEXEC);
}

int procpid__stat(int dirfd, pid_t pid, struct procpid_stat *out)
{
	char buf[1024], *lp, *rp;
	size_t len;
	ssize_t n;
	int fd;

	memset(out, 0, sizeof(*out));
	fd = open_file(dirfd, pid, "stat");
	if (fd < 0)
		return -ESRCH;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = '\0';
	/* "pid (comm) state ppid ...": comm may hold anything, ')' included */
	lp = strchr(buf, '(');
	rp = strrchr(buf, ')');
	if (!lp || !rp || rp < lp || rp[1] != ' ')
		return -ESRCH;
	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
	 * cutime cstime priority nice threads itrealvalue starttime */
	if (sscanf(rp + 2, "%c %d %*d %*d %*d %*d %u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
		   "%*d %*d %llu", &out->state, &out->ppid, &out->flags, &out->start) != 4)
		return -ESRCH;
	len = (size_t)(rp - lp - 1);
	if (len >= sizeof(out->comm))
		len = sizeof(out->comm) - 1;
	memcpy(out->comm, lp + 1, len);
	out->comm[len] = '\0';
	return 0;
}

int procpid__status(int dirfd, pid_t pid, const char *key, char *val, size_t len)
{
	size_t k = strlen(key);
	char line[256], *v;
	int fd, err = -ENOENT;
	FILE *f;

	fd = open_file(dirfd, pid, "status");
	f = fd >= 0 ? fdopen(fd, "re") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return -ESRCH;
	}
	while (err && fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, k) || line[k] != ':')
			continue;
		v = line + k + 1;
		v += strspn(v, " \t");
		v[strcspn(v, "\n")] = '\0';
		snprintf(val, len, "%s", v);
		err = 0;
	}
	fclose(f);
	return err;
}
