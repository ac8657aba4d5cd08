// SPDX-License-Identifier: GPL-2.0
/* /proc/PID/maps: one parser, exact file names (see procmaps.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/procmaps.h"
#include "lib/userfs.h"

#define PM_DELETED	" (deleted)"

struct procmaps {
	pid_t pid;
	FILE *f;
	char *line;
	size_t cap;
	char path[PATH_MAX + sizeof(PM_DELETED)];
};

static bool pm_odigit(char c)
{
	return c >= '0' && c <= '7';
}

/* copies s[0..n) to buf with "\ooo" escapes undone; -ENAMETOOLONG if it does not fit */
static int pm_unescape(const char *s, size_t n, char *buf, size_t len)
{
	size_t i = 0, o = 0;
	unsigned int c;

	while (i < n) {
		if (o + 1 >= len)
			return -ENAMETOOLONG;
		c = 0;
		if (s[i] == '\\' && i + 3 < n && pm_odigit(s[i + 1]) && pm_odigit(s[i + 2]) &&
		    pm_odigit(s[i + 3]) && s[i + 1] <= '3')
			c = (s[i + 1] - '0') << 6 | (s[i + 2] - '0') << 3 | (s[i + 3] - '0');
		/* "\000" is not an escape the kernel writes: a NUL would end the name */
		if (c) {
			buf[o++] = (char)c;
			i += 4;
		} else {
			buf[o++] = s[i++];
		}
	}
	buf[o] = '\0';
	return 0;
}

static bool pm_ends_deleted(const char *s, size_t n)
{
	size_t d = strlen(PM_DELETED);

	return n >= d && !memcmp(s + n - d, PM_DELETED, d);
}

/* the exact name through map_files; 0, or -errno when it cannot be read */
static int pm_map_file(pid_t pid, const struct procmaps_entry *e, char *buf, size_t len,
		       bool *deleted)
{
	char link[64];
	struct stat st;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
		 e->start, e->end);
	n = readlink(link, buf, len);
	if (n < 0)
		return -errno;
	if ((size_t)n >= len)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	*deleted = false;
	if (!pm_ends_deleted(buf, n))
		return 0;
	/* " (deleted)" from d_path, or the end of the real name: the link count tells */
	if (stat(link, &st))
		return -errno;
	if (!st.st_nlink) {
		buf[n - strlen(PM_DELETED)] = '\0';
		*deleted = true;
	}
	return 0;
}

int procmaps__parse(const char *line, pid_t pid, struct procmaps_entry *e, char *buf,
		    size_t len)
{
	unsigned long long start, end, off, ino;
	unsigned int maj, min;
	size_t n;
	int pos = 0, err;

	if (!line || !e || !buf || !len)
		return -EINVAL;
	memset(e, 0, sizeof(*e));
	if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end, e->perms, &off, &maj,
		   &min, &ino, &pos) != 7 || !pos)
		return -EINVAL;
	e->start = start;
	e->end = end;
	e->offset = off;
	e->dev_major = maj;
	e->dev_minor = min;
	e->inode = ino;
	line += pos;
	n = strlen(line);
	if (n && line[n - 1] == '\n')
		n--;
	e->path = buf;
	if (line[0] != '/') {
		if (n >= len)
			return -ENAMETOOLONG;
		memcpy(buf, line, n);
		buf[n] = '\0';
		return 0;
	}
	/* the text is exact unless it has an escape or the " (deleted)" suffix */
	if (!memchr(line, '\\', n) && !pm_ends_deleted(line, n)) {
		if (n >= len)
			return -ENAMETOOLONG;
		memcpy(buf, line, n);
		buf[n] = '\0';
		return 0;
	}
	if (pid > 0 && !pm_map_file(pid, e, buf, len, &e->deleted))
		return 0;
	if (pm_ends_deleted(line, n)) {
		n -= strlen(PM_DELETED);
		e->deleted = true;
	}
	err = pm_unescape(line, n, buf, len);
	return err;
}

/* The reader of fd (taken over), the maps of pid. */
static struct procmaps *pm_new(pid_t pid, int fd)
{
	struct procmaps *pm;
	int err;

	if (fd < 0) {
		errno = -fd == ESRCH ? ENOENT : -fd;
		return NULL;
	}
	pm = calloc(1, sizeof(*pm));
	if (pm) {
		pm->pid = pid;
		pm->f = fdopen(fd, "re");
		if (pm->f)
			return pm;
	}
	err = errno;
	free(pm);
	close(fd);
	errno = err;
	return NULL;
}

struct procmaps *procmaps__open(pid_t pid)
{
	char fn[64];
	int fd;

	snprintf(fn, sizeof(fn), "/proc/%d/maps", (int)pid);
	fd = open(fn, O_RDONLY | O_CLOEXEC);
	return pm_new(pid, fd < 0 ? -errno : fd);
}

struct procmaps *procmaps__open_as(pid_t pid, struct userfs *fs)
{
	char fn[64];
	int dfd, fd;

	if (!fs)
		return procmaps__open(pid);
	snprintf(fn, sizeof(fn), "/proc/%d", (int)pid);
	dfd = open(fn, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return NULL;
	fd = userfs__open_proc(fs, dfd, "maps");
	close(dfd);
	return pm_new(pid, fd);
}

int procmaps__next(struct procmaps *pm, struct procmaps_entry *e)
{
	if (!pm || !e)
		return -EINVAL;
	errno = 0;
	while (getline(&pm->line, &pm->cap, pm->f) > 0) {
		if (!procmaps__parse(pm->line, pm->pid, e, pm->path, sizeof(pm->path)))
			return 1;
	}
	/* a process that exits while its maps are read gives ESRCH or an empty read */
	if (ferror(pm->f))
		return errno ? -errno : -EIO;
	return 0;
}

void procmaps__close(struct procmaps *pm)
{
	if (!pm)
		return;
	if (pm->f)
		fclose(pm->f);
	free(pm->line);
	free(pm);
}
