// SPDX-License-Identifier: GPL-2.0
/*
 * The file helper's path resolution (see userfs_int.h): a path walked a directory at a
 * time as the user, a link followed only when it is the user's own or root's, /proc's
 * links to open files opened as what they name, streams (FIFOs, sockets, ttys) opened
 * as they are.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include "lib/userfs.h"
#include "lib/userfs_int.h"

/* A link is followed only when it is the invoking user's own, or root's. */
static bool may_follow(const struct helper *h, const struct stat *link)
{
	return link->st_uid == h->uid || link->st_uid == 0;
}

/* The target of the link opened (O_PATH) as lfd, if it may be followed. */
static int read_link(const struct helper *h, int lfd, const char *name, char *buf, size_t len,
		     int *links, struct uf_rep *r)
{
	struct stat st;
	ssize_t n;

	if (fstat(lfd, &st))
		return -errno;
	if (!may_follow(h, &st))
		return why(r, -EPERM, "'%.60s' is a symbolic link of uid %u: memphase follows "
				      "only yours or root's", name, (unsigned int)st.st_uid);
	if (++*links > UF_MAX_LINKS)
		return -ELOOP;
	n = readlinkat(lfd, "", buf, len - 1);
	if (n < 0)
		return -errno;
	if (!n)
		return -ENOENT;
	buf[n] = '\0';
	return 0;
}

/* Opens directory path (relative to at) as O_PATH, one component at a time. */
static int walk_dir(const struct helper *h, int at, const char *path, int *links,
		    struct uf_rep *r)
{
	char buf[PATH_MAX], target[PATH_MAX], *save = NULL, *c;
	int fd, nfd, err;
	struct stat st;

	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	fd = openat(at, path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		nfd = openat(fd, c, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 || fstat(nfd, &st)) {
			err = -errno;
			goto fail;
		}
		if (S_ISLNK(st.st_mode)) {
			err = read_link(h, nfd, c, target, sizeof(target), links, r);
			close(nfd);
			if (err)
				goto fail;
			/* a relative target is relative to the directory holding the link */
			nfd = walk_dir(h, fd, target, links, r);
			if (nfd < 0) {
				err = nfd;
				goto fail;
			}
		} else if (!S_ISDIR(st.st_mode)) {
			close(nfd);
			err = -ENOTDIR;
			goto fail;
		}
		close(fd);
		fd = nfd;
	}
	return fd;
fail:
	close(fd);
	return err;
}

/* The last component must not be empty, "." or "..". */
static int split(const char *path, char *dir, size_t dlen, const char **base)
{
	const char *s = strrchr(path, '/');

	if (!s) {
		snprintf(dir, dlen, ".");
		*base = path;
	} else {
		if ((size_t)(s - path) + 2 > dlen)
			return -ENAMETOOLONG;
		snprintf(dir, dlen, "%.*s", s == path ? 1 : (int)(s - path), path);
		*base = s + 1;
	}
	if (!**base || !strcmp(*base, ".") || !strcmp(*base, ".."))
		return -EISDIR;
	if (strlen(*base) > NAME_MAX)
		return -ENAMETOOLONG;
	return 0;
}

static int stream_open(int dirfd, const char *base, const struct stat *st, struct uf_rep *r)
{
	int fd, fl;

	if (S_ISSOCK(st->st_mode))
		return why(r, -ENXIO, "is a socket");
	/* a FIFO without a reader would block the open for good */
	fd = openat(dirfd, base, O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENXIO && S_ISFIFO(st->st_mode))
			return why(r, -ENXIO, "is a FIFO that nobody reads");
		return -errno;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

static void identify_stream(int fd, struct uf_rep *r)
{
	struct stat st;

	if (fstat(fd, &st))
		return;
	r->dev = st.st_dev;
	r->ino = st.st_ino;
	r->rdev_major = major(st.st_rdev);
	r->rdev_minor = minor(st.st_rdev);
	r->seekable = lseek(fd, 0, SEEK_CUR) >= 0;
}

/*
 * A link in /proc (/dev/stdout is /proc/self/fd/1) names an open file, not a path: the
 * kernel follows it. What it names is written in place; one of memphase's own stdio
 * files is shared with memphase (same offset, same append mode).
 */
static int open_magic(const struct helper *h, int dirfd, const char *base, struct uf_ent *e,
		      struct uf_rep *r, int *sfd)
{
	struct stat st, io;
	int lfd, fd, i, k, acc;

	lfd = openat(dirfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (lfd < 0 || fstat(lfd, &st)) {
		if (lfd >= 0)
			close(lfd);
		return -errno;
	}
	close(lfd);
	if (!may_follow(h, &st))
		return why(r, -EPERM, "'%.60s' is a link of uid %u", base, (unsigned int)st.st_uid);
	fd = openat(dirfd, base, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode) &&
	    !S_ISSOCK(st.st_mode)) {
		close(fd);
		return why(r, -EINVAL, "names a block device or another special file");
	}
	/* stdout, then stderr, then stdin, of those open for writing (a terminal is often
	 * all three, and stdin read-only) */
	for (k = 0; k < 3; k++) {
		i = (k + 1) % 3;
		acc = fcntl(i, F_GETFL);
		if (acc < 0 || (acc & O_ACCMODE) == O_RDONLY)
			continue;
		if (!fstat(i, &io) && io.st_dev == st.st_dev && io.st_ino == st.st_ino) {
			close(fd);
			fd = fcntl(i, F_DUPFD_CLOEXEC, 3);
			if (fd < 0)
				return -errno;
			break;
		}
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	e->kind = USERFS_STREAM;
	identify_stream(fd, r);
	*sfd = fd;
	return 0;
}

/*
 * Resolves path (relative to at) into e's directory and name; a link at the end is
 * followed under the same rule as in the directories. Streams: *sfd is the open stream.
 * 0 or -errno.
 */
int userfs_path__resolve(struct helper *h, int at, const char *path, int *links,
			 struct uf_ent *e, struct uf_rep *r, int *sfd)
{
	char dir[PATH_MAX], target[PATH_MAX];
	const char *base;
	struct stat st, dst;
	struct statfs sfs;
	int dirfd, lfd, fd, err;

	if (!strcmp(path, "-")) {
		fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return -errno;
		e->kind = USERFS_STREAM;
		identify_stream(fd, r);
		*sfd = fd;
		return 0;
	}
	err = split(path, dir, sizeof(dir), &base);
	if (err)
		return err;
	dirfd = walk_dir(h, at, dir, links, r);
	if (dirfd < 0)
		return dirfd;
	if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW)) {
		err = -errno;
		if (err != -ENOENT)
			goto fail;
		/* a new file */
		if (fstat(dirfd, &dst)) {
			err = -errno;
			goto fail;
		}
		e->kind = USERFS_FILE;
		e->dirfd = dirfd;
		snprintf(e->base, sizeof(e->base), "%s", base);
		r->dev = dst.st_dev;
		r->ino = dst.st_ino;
		snprintf(r->name, sizeof(r->name), "%s", base);
		r->seekable = 1;
		return 0;
	}
	if (S_ISLNK(st.st_mode) && !fstatfs(dirfd, &sfs) && sfs.f_type == UF_PROC_MAGIC) {
		err = open_magic(h, dirfd, base, e, r, sfd);
		close(dirfd);
		return err;
	}
	if (S_ISLNK(st.st_mode)) {
		lfd = openat(dirfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		err = lfd < 0 ? -errno : read_link(h, lfd, base, target, sizeof(target), links, r);
		if (lfd >= 0)
			close(lfd);
		if (!err)
			err = userfs_path__resolve(h, dirfd, target, links, e, r, sfd);
		close(dirfd);
		return err;
	}
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto fail;
	}
	if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode)) {
		/* as with links: a FIFO another user made is theirs to read, not an output */
		if (st.st_uid != h->uid && st.st_uid != 0) {
			err = why(r, -EPERM, "is a %s of uid %u: memphase writes only to yours or "
					     "root's", S_ISFIFO(st.st_mode) ? "FIFO" :
					     S_ISCHR(st.st_mode) ? "device" : "socket",
				  (unsigned int)st.st_uid);
			goto fail;
		}
		fd = stream_open(dirfd, base, &st, r);
		close(dirfd);
		if (fd < 0)
			return fd;
		e->kind = USERFS_STREAM;
		identify_stream(fd, r);
		*sfd = fd;
		return 0;
	}
	if (!S_ISREG(st.st_mode)) {
		err = why(r, -EINVAL, "is a block device or another special file");
		goto fail;
	}
	/* an existing regular file: replaced by rename, only where its owner could */
	if (fstat(dirfd, &dst)) {
		err = -errno;
		goto fail;
	}
	if (h->uid == 0 && st.st_uid != 0) {
		err = why(r, -EPERM, "belongs to uid %u: memphase does not replace another "
				     "user's file as root", (unsigned int)st.st_uid);
		goto fail;
	}
	if (h->uid != 0) {
		if (faccessat(dirfd, base, W_OK, AT_SYMLINK_NOFOLLOW)) {
			err = -errno;
			goto fail;
		}
		if ((dst.st_mode & S_ISVTX) && st.st_uid != h->uid && dst.st_uid != h->uid) {
			err = why(r, -EPERM, "belongs to uid %u in a sticky directory",
				  (unsigned int)st.st_uid);
			goto fail;
		}
	}
	e->kind = USERFS_FILE;
	e->dirfd = dirfd;
	e->mode = st.st_mode & 0777;
	e->have_mode = true;
	snprintf(e->base, sizeof(e->base), "%s", base);
	r->dev = st.st_dev;
	r->ino = st.st_ino;
	r->seekable = 1;
	return 0;
fail:
	close(dirfd);
	return err;
}
