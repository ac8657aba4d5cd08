// SPDX-License-Identifier: GPL-2.0
/*
 * The file helper (see userfs.h). One SOCK_SEQPACKET socket pair: memphase sends a
 * request, the helper answers with a reply and, for opens, a file descriptor
 * (SCM_RIGHTS). The helper keeps, per file, a directory fd and the names in it, so
 * every later step (rename, unlink) happens in the directory resolved at open time.
 *
 * It also keeps an O_PATH fd on the temporary file and one on the file the last commit
 * put there: a name is that file only while it has the pinned file's (st_dev, st_ino).
 * The numbers alone are no identity: a file system reuses a freed inode's number at
 * once (ext4 gives it to the next file created in the directory), and the birth time
 * does not tell them apart either (ext4's is the coarse clock: a file created right
 * after the unlink has the same one). A pinned inode is not freed, so its number is
 * nobody else's while the fd is open (on NFS, only for unlinks made on this machine).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include "lib/fdpass.h"
#include "lib/userfs.h"
#include "lib/userfs_int.h"

struct userfs {
	int sock;
	pid_t pid;
	bool root;		/* the helper is root: it may read and trace anything */
};

/* ---- the helper ---- */

/* An O_PATH fd on name in dirfd, which must be the file open as fd (both open: no reuse). */
static int pin_file(int dirfd, const char *name, int fd)
{
	struct stat a, b;
	int pin, err;

	pin = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pin < 0)
		return -errno;
	if (fstat(pin, &a) || fstat(fd, &b)) {
		err = -errno;
		goto fail;
	}
	if (a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		err = -ESTALE;
		goto fail;
	}
	return pin;
fail:
	close(pin);
	return err;
}

/* ".NAME.memphase-XXXXXX" beside NAME, created exclusively and pinned; its fd. */
static int make_temp(struct uf_ent *e)
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char rnd[6];
	char sfx[7];
	int i, k, fd;

	for (i = 0; i < 100; i++) {
		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
			return -EIO;
		for (k = 0; k < 6; k++)
			sfx[k] = abc[rnd[k] % (sizeof(abc) - 1)];
		sfx[6] = '\0';
		snprintf(e->tmp, sizeof(e->tmp), ".%.200s.memphase-%s", e->base, sfx);
		fd = openat(e->dirfd, e->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    e->have_mode ? 0600 : 0666);
		if (fd >= 0) {
			int err = 0;

			/* the file it replaces keeps its permissions */
			if (e->have_mode && fchmod(fd, e->mode))
				err = -errno;
			if (!err) {
				e->tmp_pin = pin_file(e->dirfd, e->tmp, fd);
				if (e->tmp_pin >= 0)
					return fd;
				err = e->tmp_pin;
			}
			close(fd);
			unlinkat(e->dirfd, e->tmp, 0);
			e->tmp[0] = '\0';
			return err;
		}
		if (errno != EEXIST)
			break;
	}
	e->tmp[0] = '\0';
	return -errno;
}

static void discard_temp(struct uf_ent *e)
{
	if (e->dirfd >= 0 && e->tmp[0])
		unlinkat(e->dirfd, e->tmp, 0);
	e->tmp[0] = '\0';
	if (e->tmp_pin >= 0)
		close(e->tmp_pin);
	e->tmp_pin = -1;
}

static int commit(struct helper *h, struct uf_ent *e, struct uf_rep *r)
{
	struct stat st;

	if (e->kind != USERFS_FILE)
		return 0;
	if (!e->tmp[0])
		return -ENOENT;
	/* root: another user may have put a file there since the open */
	if (h->uid == 0 && !fstatat(e->dirfd, e->base, &st, AT_SYMLINK_NOFOLLOW) &&
	    S_ISREG(st.st_mode) && st.st_uid != 0)
		return why(r, -EPERM, "belongs to uid %u: memphase does not replace another "
				      "user's file as root", (unsigned int)st.st_uid);
	if (renameat(e->dirfd, e->tmp, e->dirfd, e->base))
		return -errno;
	e->tmp[0] = '\0';
	/* the file it replaced is no longer ours to hold */
	if (e->pin >= 0)
		close(e->pin);
	e->pin = e->tmp_pin;
	e->tmp_pin = -1;
	return 0;
}

/* Is e's name still the file its last commit put there (pinned: its number is its own)? */
static int still_ours(const struct uf_ent *e)
{
	struct stat st, pst;

	if (e->kind != USERFS_FILE || e->pin < 0)
		return -EBADF;
	if (fstatat(e->dirfd, e->base, &st, AT_SYMLINK_NOFOLLOW) || fstat(e->pin, &pst))
		return -errno;
	return st.st_dev == pst.st_dev && st.st_ino == pst.st_ino ? 0 : -ESTALE;
}

/* The committed file takes another name in its directory (never replacing one). */
static int set_aside(struct uf_ent *e, const char *name, struct uf_rep *r)
{
	int err = still_ours(e);

	if (err)
		return err == -ESTALE ? why(r, err, "was replaced since memphase wrote it") : err;
	if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..") ||
	    strlen(name) > NAME_MAX)
		return -EINVAL;
	if (renameat2(e->dirfd, e->base, e->dirfd, name, RENAME_NOREPLACE))
		return -errno;
	/* NAME_MAX fits: checked above */
	snprintf(e->base, sizeof(e->base), "%.*s", NAME_MAX, name);
	return 0;
}

/* Removes the committed file (if it is still the one written) and frees the entry. */
static int remove_file(struct uf_ent *e)
{
	int err = still_ours(e);

	if (!err && unlinkat(e->dirfd, e->base, 0))
		err = -errno;
	discard_temp(e);
	if (e->pin >= 0)
		close(e->pin);
	e->pin = -1;
	close(e->dirfd);
	e->dirfd = -1;
	return err;
}

/*
 * Has the committed file been read since its last write: its access time past its
 * modification time (the kernel's relatime sets it at the first read after a write; a
 * read in the same clock tick as the write, or a file system mounted noatime, says no).
 * 1, 0, or -errno (-ESTALE: the name holds another file now).
 */
static int read_since(const struct uf_ent *e)
{
	int err = still_ours(e);
	struct stat st;

	if (err)
		return err;
	if (fstat(e->pin, &st))
		return -errno;
	return st.st_atim.tv_sec > st.st_mtim.tv_sec ||
	       (st.st_atim.tv_sec == st.st_mtim.tv_sec &&
		st.st_atim.tv_nsec > st.st_mtim.tv_nsec);
}

/*
 * The kernel's answer for the user: can they open the file open as fd for reading
 * (reopened through /proc/self/fd, the inode's permissions and the LSMs decide)?
 */
static int may_read(int fd)
{
	char path[64];
	int nfd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	nfd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (nfd < 0)
		return -errno;
	close(nfd);
	return 0;
}

/*
 * A file of the process whose /proc directory is open as dirfd, its memory map or its
 * environment (nothing else), opened as whoever calls: the kernel checks
 * PTRACE_MODE_READ_FSCREDS (ids, capabilities, dumpability, LSMs) at the open, and the
 * file reads the address space it had then. The directory stands for that process only:
 * a reused pid is another directory. Its fd, or -errno.
 */
static int open_proc(int dirfd, const char *name)
{
	int fd;

	if (strcmp(name, "maps") && strcmp(name, "environ"))
		return -EINVAL;
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -ESRCH : -errno;
	return fd;
}

static struct uf_ent *ent_get(struct helper *h, int id)
{
	return id >= 0 && id < UF_MAX_FILES && h->ents[id].dirfd != -1 ? &h->ents[id] : NULL;
}

static void serve(struct helper *h, const struct uf_req *q, int in, struct uf_rep *r,
		  int *fd)
{
	struct uf_ent *e;
	int links = 0, id;

	switch (q->op) {
	case UF_MAY_READ:
		r->err = in >= 0 ? may_read(in) : -EBADF;
		return;
	case UF_OPEN_PROC:
		*fd = in >= 0 ? open_proc(in, q->path) : -EBADF;
		r->err = *fd < 0 ? *fd : 0;
		return;
	case UF_OPEN:
		for (id = 0; id < UF_MAX_FILES && h->ents[id].dirfd != -1; id++)
			;
		if (id == UF_MAX_FILES) {
			r->err = -EMFILE;
			return;
		}
		e = &h->ents[id];
		memset(e, 0, sizeof(*e));
		e->dirfd = -1;
		e->tmp_pin = -1;
		e->pin = -1;
		r->err = userfs_path__resolve(h, AT_FDCWD, q->path, &links, e, r, fd);
		if (r->err < 0)
			return;
		r->id = id;
		r->kind = e->kind;
		if (e->kind == USERFS_STREAM) {
			/* nothing to rename or remove later: the entry is only a number */
			e->dirfd = -2;
			return;
		}
		*fd = make_temp(e);
		r->err = *fd < 0 ? *fd : 0;
		if (r->err) {
			close(e->dirfd);
			e->dirfd = -1;
		}
		return;
	case UF_RENEW:
		e = ent_get(h, q->id);
		if (!e || e->kind != USERFS_FILE) {
			r->err = -EBADF;
			return;
		}
		discard_temp(e);
		*fd = make_temp(e);
		r->err = *fd < 0 ? *fd : 0;
		return;
	case UF_COMMIT:
		e = ent_get(h, q->id);
		r->err = e ? commit(h, e, r) : -EBADF;
		return;
	case UF_DISCARD:
		e = ent_get(h, q->id);
		if (e)
			discard_temp(e);
		return;
	case UF_SET_ASIDE:
		e = ent_get(h, q->id);
		r->err = e ? set_aside(e, q->path, r) : -EBADF;
		return;
	case UF_REMOVE:
		e = ent_get(h, q->id);
		r->err = e && e->dirfd >= 0 ? remove_file(e) : -EBADF;
		return;
	case UF_REMOVE_AT_END:
		e = ent_get(h, q->id);
		r->err = e && e->kind == USERFS_FILE ? 0 : -EBADF;
		if (!r->err)
			e->remove_at_end = true;
		return;
	case UF_READ_SINCE:
		e = ent_get(h, q->id);
		r->err = e ? read_since(e) : -EBADF;
		return;
	default:
		r->err = -EINVAL;
	}
}

static void helper_run(const struct creds *c)
{
	static const int ignored[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP };
	struct helper h = { .uid = c->uid };
	struct uf_rep r = {};
	struct uf_req q;
	unsigned int i;
	ssize_t n;
	int fd, in;

	/* memphase's signals are memphase's: this process ends when its socket does, and a
	 * kill of memphase's process group does not reach it (it removes the temporary
	 * files once memphase is gone) */
	for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		signal(ignored[i], SIG_IGN);
	setsid();
	prctl(PR_SET_NAME, "memphase-files");
	for (i = 0; i < UF_MAX_FILES; i++)
		h.ents[i].dirfd = -1;
	r.err = creds__drop(c);
	fdpass__send(UF_SOCK_FD, &r, sizeof(r), -1);
	if (r.err)
		_exit(1);
	for (;;) {
		n = fdpass__recv(UF_SOCK_FD, &q, sizeof(q), &in);
		if (n <= 0)
			break;
		memset(&r, 0, sizeof(r));
		fd = -1;
		if ((size_t)n < sizeof(q) || !memchr(q.path, '\0', sizeof(q.path)))
			r.err = -EINVAL;
		else
			serve(&h, &q, in, &r, &fd);
		if (in >= 0)
			close(in);
		fdpass__send(UF_SOCK_FD, &r, sizeof(r), fd);
		if (fd >= 0)
			close(fd);
	}
	/*
	 * memphase is gone: what it did not commit was never an output, and a file that
	 * lives only as long as the run goes with it, if its name still holds it
	 */
	for (i = 0; i < UF_MAX_FILES; i++) {
		if (h.ents[i].dirfd < 0)
			continue;
		if (h.ents[i].remove_at_end)
			remove_file(&h.ents[i]);
		else
			discard_temp(&h.ents[i]);
	}
	_exit(0);
}

/* ---- memphase's side ---- */

/* A request (with in, a descriptor for the helper, unless -1) and its reply (*fd, the one
 * the helper sent, when fd is not NULL): the reply's err, or -errno. */
static int call_fd(struct userfs *u, const struct uf_req *q, int in, struct uf_rep *r,
		   int *fd)
{
	ssize_t n;
	int got, err;

	if (fd)
		*fd = -1;
	err = fdpass__send(u->sock, q, sizeof(*q), in);
	if (err)
		return err;
	n = fdpass__recv(u->sock, r, sizeof(*r), &got);
	if (n < 0)
		return n;
	if ((size_t)n < sizeof(*r)) {
		if (got >= 0)
			close(got);
		return -EPIPE;	/* the helper died */
	}
	if (fd)
		*fd = got;
	else if (got >= 0)
		close(got);
	r->why[sizeof(r->why) - 1] = '\0';
	r->name[sizeof(r->name) - 1] = '\0';
	return r->err;
}

static int call(struct userfs *u, const struct uf_req *q, struct uf_rep *r, int *fd)
{
	return call_fd(u, q, -1, r, fd);
}

struct userfs *userfs__new(const struct creds *c)
{
	struct userfs *u;
	struct uf_rep r;
	int sv[2], err;
	ssize_t n;

	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		err = -errno;
		free(u);
		errno = -err;
		return NULL;
	}
	/* stdout only: stderr is unbuffered, and taking its lock would wait for whatever
	 * thread is writing it (the BPF load's messages, into a full pipe) */
	fflush(stdout);
	u->pid = fork();
	if (u->pid < 0) {
		err = -errno;
		close(sv[0]);
		close(sv[1]);
		free(u);
		errno = -err;
		return NULL;
	}
	if (!u->pid) {
		/* only stdio and the socket: nothing else of memphase's */
		if (dup2(sv[1], UF_SOCK_FD) < 0)
			_exit(1);
		syscall(SYS_close_range, UF_SOCK_FD + 1, ~0U, 0);
		helper_run(c);
	}
	close(sv[1]);
	u->sock = sv[0];
	u->root = c->root;
	do
		n = recv(u->sock, &r, sizeof(r), 0);
	while (n < 0 && errno == EINTR);
	if (n != sizeof(r) || r.err) {
		err = n != sizeof(r) ? -EPIPE : r.err;
		userfs__free(u);
		errno = -err;
		return NULL;
	}
	return u;
}

void userfs__free(struct userfs *u)
{
	if (!u)
		return;
	if (u->sock >= 0)
		close(u->sock);
	if (u->pid > 0)
		waitpid(u->pid, NULL, 0);
	free(u);
}

int userfs__open(struct userfs *u, const char *path, struct userfs_file *f)
{
	struct uf_req q = { .op = UF_OPEN };
	struct uf_rep r = {};
	int err;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->id = -1;
	if (strlen(path) >= sizeof(q.path))
		return -ENAMETOOLONG;
	strcpy(q.path, path);
	err = call(u, &q, &r, &f->fd);
	snprintf(f->why, sizeof(f->why), "%s", r.why);
	if (err) {
		if (f->fd >= 0)
			close(f->fd);
		f->fd = -1;
		return err;
	}
	if (f->fd < 0)
		return -EPIPE;
	f->id = r.id;
	f->kind = r.kind;
	f->seekable = r.seekable;
	f->dev = r.dev;
	f->ino = r.ino;
	f->rdev_major = r.rdev_major;
	f->rdev_minor = r.rdev_minor;
	snprintf(f->name, sizeof(f->name), "%s", r.name);
	return 0;
}

int userfs__renew(struct userfs *u, struct userfs_file *f)
{
	struct uf_req q = { .op = UF_RENEW, .id = f->id };
	struct uf_rep r = {};
	int err, fd;

	if (f->kind != USERFS_FILE)
		return 0;
	userfs__close(f);
	err = call(u, &q, &r, &fd);
	snprintf(f->why, sizeof(f->why), "%s", r.why);
	if (err)
		return err;
	if (fd < 0)
		return -EPIPE;
	f->fd = fd;
	return 0;
}

int userfs__commit(struct userfs *u, struct userfs_file *f)
{
	struct uf_req q = { .op = UF_COMMIT, .id = f->id };
	struct uf_rep r = {};
	int err;

	if (f->kind != USERFS_FILE)
		return 0;
	/* what the rename publishes must be on disk first */
	if (fsync(f->fd))
		return -errno;
	err = call(u, &q, &r, NULL);
	snprintf(f->why, sizeof(f->why), "%s", r.why);
	return err;
}

void userfs__discard(struct userfs *u, struct userfs_file *f)
{
	struct uf_req q = { .op = UF_DISCARD, .id = f->id };
	struct uf_rep r;

	userfs__close(f);
	if (f->kind == USERFS_FILE && f->id >= 0)
		call(u, &q, &r, NULL);
}

void userfs__close(struct userfs_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

bool userfs__same(const struct userfs_file *a, const struct userfs_file *b)
{
	return a->dev == b->dev && a->ino == b->ino && !strcmp(a->name, b->name);
}

int userfs__set_aside(struct userfs *u, struct userfs_file *f, const char *name)
{
	struct uf_req q = { .op = UF_SET_ASIDE, .id = f->id };
	struct uf_rep r = {};
	int err;

	if (f->kind != USERFS_FILE)
		return -EBADF;
	snprintf(q.path, sizeof(q.path), "%s", name);
	err = call(u, &q, &r, NULL);
	snprintf(f->why, sizeof(f->why), "%s", r.why);
	return err;
}

int userfs__remove(struct userfs *u, struct userfs_file *f)
{
	struct uf_req q = { .op = UF_REMOVE, .id = f->id };
	struct uf_rep r = {};
	int err;

	userfs__close(f);
	if (f->kind != USERFS_FILE || f->id < 0)
		return -EBADF;
	err = call(u, &q, &r, NULL);
	f->id = -1;
	return err;
}

int userfs__remove_at_end(struct userfs *u, struct userfs_file *f)
{
	struct uf_req q = { .op = UF_REMOVE_AT_END, .id = f->id };
	struct uf_rep r = {};

	if (f->kind != USERFS_FILE)
		return 0;
	return call(u, &q, &r, NULL);
}

int userfs__read_since(struct userfs *u, const struct userfs_file *f)
{
	struct uf_req q = { .op = UF_READ_SINCE, .id = f->id };
	struct uf_rep r = {};

	if (f->kind != USERFS_FILE || f->id < 0)
		return -EBADF;
	return call(u, &q, &r, NULL);
}

int userfs__may_read(struct userfs *u, int fd)
{
	struct uf_req q = { .op = UF_MAY_READ };
	struct uf_rep r = {};

	if (!u || u->root)
		return 0;
	return call_fd(u, &q, fd, &r, NULL);
}

int userfs__open_proc(struct userfs *u, int proc_dirfd, const char *name)
{
	struct uf_req q = { .op = UF_OPEN_PROC };
	struct uf_rep r = {};
	int fd, err;

	if (!u || u->root)
		return open_proc(proc_dirfd, name);
	snprintf(q.path, sizeof(q.path), "%s", name);
	err = call_fd(u, &q, proc_dirfd, &r, &fd);
	if (err)
		return err;
	return fd >= 0 ? fd : -EPIPE;
}
