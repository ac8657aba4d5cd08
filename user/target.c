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
#include <sys/stat.h>
#include <sys/wait.h>
#include "target.h"

static int resolve_exe(const char *cmd, char *out, size_t len)
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
		if (!realpath(cmd, out))
			return -errno;
		return 0;
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
		if (!realpath(buf, out))
			return -errno;
		(void)len;
		return 0;
	}
	return err;
}

/* Child side: become the invoking user, wait to be resumed, exec. */
static void child_run(char *const argv[], const char *exe, bool drop, uid_t uid, gid_t gid,
		      int wfd, const int stdio[3])
{
	struct passwd *pw;
	int err, i;

	for (i = 0; stdio && i < 3; i++)
		if (stdio[i] >= 0 && dup2(stdio[i], i) < 0)
			goto fail;
	if (drop) {
		pw = getpwuid(uid);
		if ((pw && initgroups(pw->pw_name, gid)) || (!pw && setgroups(0, NULL)) ||
		    setgid(gid) || setuid(uid))
			goto fail;
		if (pw) {
			setenv("HOME", pw->pw_dir, 1);
			setenv("USER", pw->pw_name, 1);
			setenv("LOGNAME", pw->pw_name, 1);
		}
	}
	/* memphase ignores SIGPIPE; an ignored signal would survive exec */
	signal(SIGPIPE, SIG_DFL);
	/* stopped until the probes are attached */
	raise(SIGSTOP);
	execv(exe, argv);
fail:
	err = errno;
	if (write(wfd, &err, sizeof(err)) < 0)
		_exit(126);
	_exit(127);
}

int target__spawn(struct target *t, char *const argv[], bool drop, uid_t uid, gid_t gid,
		  const int stdio[3])
{
	int pfd[2], st, err;
	pid_t pid;

	memset(t, 0, sizeof(*t));
	t->exec_fd = -1;
	err = resolve_exe(argv[0], t->exe, sizeof(t->exe));
	if (err) {
		fprintf(stderr, "memphase: cannot execute '%s': %s\n", argv[0], strerror(-err));
		return err;
	}
	if (access(t->exe, X_OK)) {
		err = -errno;
		fprintf(stderr, "memphase: cannot execute '%s': %s\n", argv[0], strerror(-err));
		return err;
	}
	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return err;
	}
	if (pid == 0) {
		close(pfd[0]);
		child_run(argv, t->exe, drop, uid, gid, pfd[1], stdio);
	}
	close(pfd[1]);
	t->pid = pid;
	t->spawned = true;
	t->exec_fd = pfd[0];
	if (waitpid(pid, &st, WUNTRACED) < 0 || !WIFSTOPPED(st)) {
		/* the child failed before stopping (privilege drop) */
		if (read(t->exec_fd, &err, sizeof(err)) == sizeof(err))
			fprintf(stderr, "memphase: cannot run '%s' as uid %u: %s\n", argv[0],
				(unsigned int)uid, strerror(err));
		else
			fprintf(stderr, "memphase: child for '%s' did not start\n", argv[0]);
		close(t->exec_fd);
		t->exec_fd = -1;
		t->reaped = true;
		return -ECHILD;
	}
	return 0;
}

int target__resume(struct target *t)
{
	ssize_t n;
	int err = 0;

	kill(t->pid, SIGCONT);
	/* EOF: exec succeeded (the pipe is close-on-exec); an int: its errno */
	do
		n = read(t->exec_fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(t->exec_fd);
	t->exec_fd = -1;
	if (n == sizeof(err)) {
		fprintf(stderr, "memphase: cannot execute '%s': %s\n", t->exe, strerror(err));
		waitpid(t->pid, &t->status, 0);
		t->reaped = true;
		return -err;
	}
	return 0;
}

static int read_starttime(pid_t pid, unsigned long long *out)
{
	char fn[64], buf[1024], *p;
	ssize_t n;
	int fd, i;

	snprintf(fn, sizeof(fn), "/proc/%d/stat", pid);
	fd = open(fn, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = '\0';
	/* comm may hold spaces and parens: fields resume after the last ')' */
	p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	/* starttime is field 22; after ')' comes field 3 */
	for (i = 3; i < 22 && p; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", out) != 1)
		return -EINVAL;
	return 0;
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
	unsigned long long st;
	char fn[64], state = 0;
	FILE *f;

	if (t->spawned)
		return !target__poll_exit(t);
	if (read_starttime(t->pid, &st) || st != t->start_time)
		return false;
	/* a zombie has exited */
	snprintf(fn, sizeof(fn), "/proc/%d/stat", t->pid);
	f = fopen(fn, "re");
	if (f) {
		if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
			state = 0;
		fclose(f);
	}
	return state != 'Z' && state != 'X';
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
		if (len + 4096 > cap) {
			cap = cap ? cap * 2 : 8192;
			p = realloc(data, cap);
			if (!p)
				goto out;
			data = p;
		}
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
