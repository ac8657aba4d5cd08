// SPDX-License-Identifier: GPL-2.0
/* Spawning (stopped, as the invoking user) and attaching to the observed process. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "lib/procpid.h"
#include "lib/creds.h"
#include "lib/userfs.h"
#include "collect/target.h"
#include "lib/utf8.h"
#include "lib/util.h"

/* What the child tells memphase through its pipe before it stops, or when it fails. */
enum spawn_stage {
	SPAWN_READY = 1,	/* exe resolved; stopping now */
	SPAWN_DROP,		/* could not become the user */
	SPAWN_RESOLVE,		/* no such command, or not executable */
	SPAWN_EXEC,		/* execv failed */
};

struct spawn_msg {
	int stage;
	int err;
	char exe[PATH_MAX];
};

/* argv[0] -> an absolute path, like execvp, with the rights of whoever calls it. */
static int resolve_exe(const char *cmd, char *out)
{
	const char *path = getenv("PATH"), *p, *e;
	char buf[PATH_MAX];
	struct stat st;
	int err = -ENOENT;

	if (strchr(cmd, '/')) {
		if (stat(cmd, &st))
			return -errno;
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		if (access(cmd, X_OK))
			return -errno;
		return realpath(cmd, out) ? 0 : -errno;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, ':');
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)(e - p), e == p ? "." : p, cmd);
		if (stat(buf, &st) || S_ISDIR(st.st_mode))
			continue;
		if (access(buf, X_OK)) {
			err = -EACCES;
			continue;
		}
		return realpath(buf, out) ? 0 : -errno;
	}
	return err;
}

static void child_say(int wfd, int stage, int err, const char *exe)
{
	struct spawn_msg msg = { .stage = stage, .err = err };

	if (exe)
		snprintf(msg.exe, sizeof(msg.exe), "%s", exe);
	if (write(wfd, &msg, sizeof(msg)) < 0)
		_exit(126);
}

/* Child side: become the user, find the command, wait to be resumed, exec. */
static void child_run(char *const argv[], const struct creds *run_as, pid_t parent, int wfd,
		      const int stdio[3])
{
	struct passwd *pw;
	char exe[PATH_MAX];
	int err, i;

	for (i = 0; stdio && i < 3; i++)
		if (stdio[i] >= 0 && dup2(stdio[i], i) < 0)
			_exit(126);
	/* only stdio and the message pipe: none of memphase's files, sockets or maps */
	if (wfd != 3 && dup3(wfd, 3, O_CLOEXEC) < 0)
		_exit(126);
	/* close-on-exec: the parent reads EOF when the exec succeeded */
	wfd = 3;
	fcntl(wfd, F_SETFD, FD_CLOEXEC);
	syscall(SYS_close_range, 4, ~0U, 0);
	if (run_as) {
		err = creds__drop(run_as);
		if (err) {
			child_say(wfd, SPAWN_DROP, -err, NULL);
			_exit(126);
		}
		pw = run_as->root ? NULL : getpwuid(run_as->uid);
		if (pw) {
			setenv("HOME", pw->pw_dir, 1);
			setenv("USER", pw->pw_name, 1);
			setenv("LOGNAME", pw->pw_name, 1);
		}
	}
	/* the command is looked up with the rights it will run with */
	err = resolve_exe(argv[0], exe);
	if (err) {
		child_say(wfd, SPAWN_RESOLVE, -err, NULL);
		_exit(127);
	}
	/* memphase ignores SIGPIPE; an ignored signal would survive exec */
	signal(SIGPIPE, SIG_DFL);
	/* die with memphase until it lets us go (set after the credentials changed:
	 * a change of credentials clears it) */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(126);
	child_say(wfd, SPAWN_READY, 0, exe);
	/* stopped until the probes are attached */
	raise(SIGSTOP);
	/* released: from here on the command lives its own life */
	prctl(PR_SET_PDEATHSIG, 0);
	if (getppid() != parent)
		_exit(126);
	execv(exe, argv);
	child_say(wfd, SPAWN_EXEC, errno, NULL);
	_exit(126);
}

static void say_failure(struct target *t, const char *cmd, const struct spawn_msg *msg,
			const struct creds *run_as)
{
	char c[256];

	utf8__esc_term(c, sizeof(c), cmd);
	switch (msg->stage) {
	case SPAWN_DROP:
		fprintf(stderr, "memphase: cannot run '%s' as uid %u: %s\n", c,
			run_as ? (unsigned int)run_as->uid : 0, strerror(msg->err));
		t->fail_status = TARGET_EXIT_CANNOT_RUN;
		break;
	case SPAWN_RESOLVE:
		fprintf(stderr, "memphase: cannot execute '%s': %s\n", c, strerror(msg->err));
		t->fail_status = msg->err == ENOENT ? TARGET_EXIT_NOT_FOUND :
						      TARGET_EXIT_CANNOT_RUN;
		break;
	default:
		fprintf(stderr, "memphase: cannot execute '%s': %s\n", c, strerror(msg->err));
		t->fail_status = TARGET_EXIT_CANNOT_RUN;
	}
}

int target__spawn(struct target *t, char *const argv[], const struct creds *run_as,
		  const int stdio[3])
{
	struct spawn_msg msg = {};
	pid_t pid, parent = getpid();
	int pfd[2], st, err;
	ssize_t n;

	memset(t, 0, sizeof(*t));
	t->exec_fd = -1;
	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	/* stdout only: stderr is unbuffered, and taking its lock would wait for whatever
	 * thread is writing it (the BPF load's messages, into a full pipe) */
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return err;
	}
	if (pid == 0) {
		close(pfd[0]);
		child_run(argv, run_as, parent, pfd[1], stdio);
	}
	close(pfd[1]);
	t->pid = pid;
	t->spawned = true;
	t->exec_fd = pfd[0];
	if (waitpid(pid, &st, WUNTRACED) < 0 || !WIFSTOPPED(st)) {
		/* it failed before stopping: the pipe says why */
		n = read(t->exec_fd, &msg, sizeof(msg));
		if (n == sizeof(msg) && msg.stage != SPAWN_READY) {
			say_failure(t, argv[0], &msg, run_as);
		} else {
			fprintf(stderr, "memphase: the child for '%s' did not start\n", argv[0]);
			t->fail_status = TARGET_EXIT_CANNOT_RUN;
		}
		close(t->exec_fd);
		t->exec_fd = -1;
		t->reaped = true;
		return -ECHILD;
	}
	n = read(t->exec_fd, &msg, sizeof(msg));
	if (n != sizeof(msg) || msg.stage != SPAWN_READY) {
		fprintf(stderr, "memphase: the child for '%s' did not start\n", argv[0]);
		t->fail_status = TARGET_EXIT_CANNOT_RUN;
		target__abort(t);
		return -ECHILD;
	}
	msg.exe[sizeof(msg.exe) - 1] = '\0';
	snprintf(t->exe, sizeof(t->exe), "%s", msg.exe);
	return 0;
}

int target__resume(struct target *t)
{
	struct spawn_msg msg;
	ssize_t n;

	kill(t->pid, SIGCONT);
	/* EOF: exec succeeded (the pipe is close-on-exec); a message: why it failed */
	do
		n = read(t->exec_fd, &msg, sizeof(msg));
	while (n < 0 && errno == EINTR);
	close(t->exec_fd);
	t->exec_fd = -1;
	if (n == sizeof(msg)) {
		say_failure(t, t->exe, &msg, NULL);
		waitpid(t->pid, &t->status, 0);
		t->reaped = true;
		return -msg.err;
	}
	return 0;
}

static int read_starttime(pid_t pid, unsigned long long *out)
{
	struct procpid_stat st;
	int err = procpid__stat(-1, pid, &st);

	*out = st.start;
	return err;
}

static int read_starttime_at(int dirfd, unsigned long long *out)
{
	struct procpid_stat st;
	int err = procpid__stat(dirfd, 0, &st);

	*out = st.start;
	return err;
}

int target__attach(struct target *t, pid_t pid)
{
	char fn[64];
	int err;

	memset(t, 0, sizeof(*t));
	t->exec_fd = -1;
	t->pid = pid;
	if (pid <= 0)
		return -ESRCH;
	err = read_starttime(pid, &t->start_time);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	snprintf(fn, sizeof(fn), "/proc/%d/exe", pid);
	if (readlink(fn, t->exe, sizeof(t->exe) - 1) < 0)
		t->exe[0] = '\0';
	return 0;
}

bool target__alive(struct target *t)
{
	struct procpid_stat st;

	if (t->spawned)
		return !target__poll_exit(t);
	/* the same process (its start time), and not a zombie: one that has exited */
	if (procpid__stat(-1, t->pid, &st) || st.start != t->start_time)
		return false;
	return st.state != 'Z' && st.state != 'X';
}

bool target__poll_exit(struct target *t)
{
	pid_t r;

	if (!t->spawned || t->reaped)
		return true;
	r = waitpid(t->pid, &t->status, WNOHANG);
	if (r == t->pid || (r < 0 && errno == ECHILD))
		t->reaped = true;
	return t->reaped;
}

void target__signal(struct target *t, int sig)
{
	if (t->pid > 0 && !t->reaped)
		kill(t->pid, sig);
}

void target__abort(struct target *t)
{
	if (!t || !t->spawned || t->reaped)
		return;
	kill(t->pid, SIGKILL);
	waitpid(t->pid, &t->status, 0);
	t->reaped = true;
	if (t->exec_fd >= 0)
		close(t->exec_fd);
	t->exec_fd = -1;
}

int target__comm(pid_t pid, char *buf, size_t len)
{
	char fn[64];
	ssize_t n;
	int fd;

	snprintf(fn, sizeof(fn), "/proc/%d/comm", pid);
	fd = open(fn, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	if (buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

char **target__cmdline(pid_t pid)
{
	char fn[64], *data = NULL, **argv = NULL, *p;
	size_t cap = 0, len = 0, n = 0, i;
	ssize_t r;
	int fd;

	snprintf(fn, sizeof(fn), "/proc/%d/cmdline", pid);
	fd = open(fn, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	for (;;) {
		if (util__reserve((void **)&data, &cap, len + 4096, 1))
			goto out;
		r = read(fd, data + len, cap - len - 1);
		if (r <= 0)
			break;
		len += r;
	}
	if (!data)
		goto out;
	data[len] = '\0';
	for (i = 0; i < len; i++)
		if (!data[i])
			n++;
	argv = calloc(n + 2, sizeof(char *));
	if (!argv)
		goto out;
	for (i = 0, p = data; p < data + len && i <= n; p += strlen(p) + 1)
		argv[i++] = strdup(p);
out:
	close(fd);
	free(data);
	return argv;
}

/* Why the kernel said no to c for the process (what ptrace(2) checks), on stderr. */
static void say_why_not(pid_t pid, int dirfd, const struct creds *c)
{
	unsigned int uid[4] = {}, gid[4] = {};
	unsigned long long caps = 0;
	char v[128];

	if (!procpid__status(dirfd, 0, "Uid", v, sizeof(v)))
		sscanf(v, "%u %u %u %u", &uid[0], &uid[1], &uid[2], &uid[3]);
	if (!procpid__status(dirfd, 0, "Gid", v, sizeof(v)))
		sscanf(v, "%u %u %u %u", &gid[0], &gid[1], &gid[2], &gid[3]);
	if (!procpid__status(dirfd, 0, "CapPrm", v, sizeof(v)))
		caps = strtoull(v, NULL, 16);
	if (uid[0] != c->uid || uid[1] != c->uid || uid[2] != c->uid || gid[0] != c->gid ||
	    gid[1] != c->gid || gid[2] != c->gid)
		fprintf(stderr, "memphase: pid %d runs as uid %u gid %u: you (uid %u) may observe "
				"only processes you could ptrace yourself\n", pid, uid[1], gid[1],
			c->uid);
	else if (caps)
		fprintf(stderr, "memphase: pid %d holds capabilities (%#llx) that you do not: you "
				"(uid %u) may observe only processes you could ptrace yourself\n",
			pid, caps, c->uid);
	else
		fprintf(stderr, "memphase: pid %d is not dumpable (setuid, an unreadable program, "
				"or it said so): you (uid %u) may observe only processes you could "
				"ptrace yourself\n", pid, c->uid);
}

int target__may_observe(const struct target *t, struct userfs *fs, const struct creds *c)
{
	unsigned long long st;
	char fn[64], state[64];
	int dirfd, err;

	snprintf(fn, sizeof(fn), "/proc/%d", t->pid);
	dirfd = open(fn, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -ESRCH;
	/* the directory is the process attached to, or the pid was reused: gone */
	err = read_starttime_at(dirfd, &st);
	if (err || st != t->start_time) {
		err = -ESRCH;
		goto cleanup;
	}
	if (!procpid__status(dirfd, 0, "State", state, sizeof(state)) && strchr(state, 'Z')) {
		err = -ECHILD;
		goto cleanup;
	}
	if (c->root)
		goto cleanup;
	/* the kernel's own rule, asked as the user: /proc/PID/maps opens for them */
	err = userfs__open_proc(fs, dirfd, "maps");
	if (err >= 0) {
		close(err);
		err = 0;
	} else if (err == -EACCES || err == -EPERM) {
		say_why_not(t->pid, dirfd, c);
		err = -EPERM;
	}
cleanup:
	close(dirfd);
	return err;
}

bool target__is_kthread(pid_t pid)
{
	char v[16];

	return !procpid__status(-1, pid, "Kthread", v, sizeof(v)) && !strcmp(v, "1");
}

bool target__stdio(int log, bool tui, bool out_is_stdout, int fds[3], int *devnull)
{
	fds[0] = fds[1] = fds[2] = -1;
	*devnull = -1;
	if (!tui) {
		if (log >= 0)
			fds[1] = fds[2] = log;
		else if (out_is_stdout)
			fds[1] = STDERR_FILENO;
		return fds[1] >= 0;
	}
	*devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	fds[0] = *devnull;
	if (log < 0) {
		fprintf(stderr, "memphase: cannot create memphase-target.log here: the command's "
				"output goes to /dev/null (--target-log FILE puts it elsewhere)\n");
		log = *devnull;
	}
	fds[1] = fds[2] = log;
	return true;
}
