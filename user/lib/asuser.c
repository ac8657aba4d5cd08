// SPDX-License-Identifier: GPL-2.0
/*
 * Descriptors obtained as the invoking user (see asuser.h). One SOCK_SEQPACKET pair per
 * call: the child sends one reply, with the descriptor (SCM_RIGHTS) on success, and
 * exits; memphase waits for it at most ASUSER_TIMEOUT_MS, then kills it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/types.h>
#include "lib/asuser.h"
#include "lib/fdpass.h"

struct as_rep {
	int err;		/* 0 or -errno */
	char why[160];
};

typedef int (*as_fn)(const void *arg, int *fd, struct as_rep *r);

static int say(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return 0;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return 0;
}

static __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The reply, within the time left: its err, *fd when it carried one. */
static int recv_rep(int sock, struct as_rep *r, int *fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	ssize_t n;
	int p;

	*fd = -1;
	do
		p = poll(&pfd, 1, timeout_ms);
	while (p < 0 && errno == EINTR);
	if (p == 0)
		return -ETIMEDOUT;
	if (p < 0)
		return -errno;
	n = fdpass__recv(sock, r, sizeof(*r), fd);
	if (n < 0)
		return (int)n;
	if ((size_t)n < sizeof(*r)) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -EPIPE;	/* the child died before it said anything */
	}
	r->why[sizeof(r->why) - 1] = '\0';
	return 0;
}

/* Runs fn(arg) as c in a child (in place when there is nothing to drop): its fd. */
static int as_user(const struct creds *c, as_fn fn, const void *arg, int *fd, char *why,
		   size_t whylen)
{
	struct as_rep r = {};
	int sv[2], err, st;
	pid_t pid;

	*fd = -1;
	if (c->root || geteuid() != 0) {
		err = fn(arg, fd, &r);
		say(why, whylen, "%s", r.why);
		return err;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	/* stdout only: stderr is unbuffered (see userfs.c) */
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(sv[0]);
		close(sv[1]);
		return err;
	}
	if (!pid) {
		int cfd = -1;

		close(sv[0]);
		signal(SIGPIPE, SIG_DFL);
		r.err = creds__drop(c);
		if (!r.err)
			r.err = fn(arg, &cfd, &r);
		fdpass__send(sv[1], &r, sizeof(r), r.err ? -1 : cfd);
		_exit(0);
	}
	close(sv[1]);
	err = recv_rep(sv[0], &r, fd, ASUSER_TIMEOUT_MS);
	close(sv[0]);
	if (err == -ETIMEDOUT)
		say(why, whylen, "did not open within %u s (a FIFO that nobody writes?)",
		    ASUSER_TIMEOUT_MS / 1000);
	if (err)
		kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (err)
		return err;
	say(why, whylen, "%s", r.why);
	if (r.err && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	if (!r.err && *fd < 0)
		return -EPIPE;
	return r.err;
}

/* ---- opening ---- */

struct open_arg {
	const char *path;
	int flags;
};

static int do_open(const void *arg, int *fd, struct as_rep *r)
{
	const struct open_arg *a = arg;

	*fd = open(a->path, a->flags | O_CLOEXEC | O_NOCTTY);
	return *fd < 0 ? -errno : 0;
}

int asuser__open(const struct creds *c, const char *path, int flags, int *fd, char *why,
		 size_t whylen)
{
	struct open_arg a = { .path = path, .flags = flags };

	say(why, whylen, "%s", "");
	return as_user(c, do_open, &a, fd, why, whylen);
}

int asuser__read(const struct creds *c, const char *path, size_t max, char **text,
		 size_t *len, char *why, size_t whylen)
{
	__u64 deadline = now_ms() + ASUSER_TIMEOUT_MS, t;
	size_t cap = 0, n = 0;
	struct pollfd pfd;
	char *buf = NULL, *p;
	struct stat st;
	int fd, err, fl;
	ssize_t got;

	*text = NULL;
	*len = 0;
	err = asuser__open(c, path, O_RDONLY, &fd, why, whylen);
	if (err)
		return err;
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode)) {
		err = -EINVAL;
		say(why, whylen, "not a regular file, a FIFO or a character device");
		goto cleanup;
	}
	/* our own open file description: waiting is poll's */
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	pfd.fd = fd;
	pfd.events = POLLIN;
	for (;;) {
		if (n + 1 >= cap) {
			cap = cap ? cap * 2 : 65536;
			if (cap > max + 2)
				cap = max + 2;
			p = realloc(buf, cap);
			if (!p) {
				err = -ENOMEM;
				goto cleanup;
			}
			buf = p;
		}
		got = read(fd, buf + n, cap - 1 - n);
		if (got > 0) {
			n += got;
			if (n > max) {
				err = -EFBIG;
				say(why, whylen, "larger than %zu bytes", max);
				goto cleanup;
			}
			continue;
		}
		if (!got)
			break;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN) {
			err = -errno;
			goto cleanup;
		}
		t = now_ms();
		if (t >= deadline || poll(&pfd, 1, deadline - t) == 0) {
			err = -ETIMEDOUT;
			say(why, whylen, "not read to its end within %u s",
			    ASUSER_TIMEOUT_MS / 1000);
			goto cleanup;
		}
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	buf = NULL;
	err = 0;
cleanup:
	free(buf);
	close(fd);
	return err;
}

/* ---- listening ---- */

struct listen_arg {
	const struct sockaddr *sa;
	socklen_t salen;
	int backlog;
};

static int do_listen(const void *arg, int *fd, struct as_rep *r)
{
	const struct listen_arg *a = arg;
	int one = 1, err;

	*fd = socket(a->sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (*fd < 0)
		return -errno;
	setsockopt(*fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (a->sa->sa_family == AF_INET6)
		setsockopt(*fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(*fd, a->sa, a->salen) || listen(*fd, a->backlog)) {
		err = -errno;
		close(*fd);
		*fd = -1;
		return err;
	}
	return 0;
}

int asuser__listen(const struct creds *c, const struct sockaddr *sa, socklen_t salen,
		   int backlog, int *fd)
{
	struct listen_arg a = { .sa = sa, .salen = salen, .backlog = backlog };

	return as_user(c, do_listen, &a, fd, NULL, 0);
}
