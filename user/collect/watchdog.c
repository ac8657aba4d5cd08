// SPDX-License-Identifier: GPL-2.0
/* The watchdog: continues held targets when memphase itself is gone. */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>
#include "memphase.h"
#include "collect/watchdog.h"
#include "memphase.skel.h"

/* Closes every descriptor but the ones listed: no link or program outlives memphase. */
static void close_others(const int *keep, int n)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int fd, i, dfd;

	if (!d)
		return;
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		bool kept = false;

		if (de->d_name[0] == '.')
			continue;
		fd = atoi(de->d_name);
		for (i = 0; i < n; i++)
			kept |= fd == keep[i];
		if (!kept && fd != dfd)
			close(fd);
	}
	closedir(d);
}

static void release(const struct mp_target *t)
{
	if (t->tgid && (t->flags & MP_T_HELD) && !(t->flags & MP_T_EXITED))
		kill(t->tgid, SIGCONT);
}

static void watchdog_run(int rfd, int bss_fd, size_t stop_off, size_t bss_size, int slots_fd)
{
	__u32 key = 0;
	struct mp_target t;
	char c, *bss;

	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	/* a session of its own: a kill of memphase's process group (kill -9 -PGID) leaves
	 * it to let the held targets go */
	setsid();
	prctl(PR_SET_NAME, "memphase-watchdog");
	while (read(rfd, &c, 1) < 0 && errno == EINTR)
		;
	/* memphase is gone (or done): no new holds, then let every held target go */
	bss = calloc(1, bss_size);
	if (bss && !bpf_map_lookup_elem(bss_fd, &key, bss)) {
		memset(bss + stop_off, 0, sizeof(__u32));
		bpf_map_update_elem(bss_fd, &key, bss, BPF_ANY);
	}
	for (key = 0; key < MP_TSLOTS; key++)
		if (!bpf_map_lookup_elem(slots_fd, &key, &t))
			release(&t);
	_exit(0);
}

int watchdog__start(struct watchdog *w, struct memphase_bpf *skel)
{
	int pfd[2], keep[3];
	size_t stop_off, bss_size;
	pid_t pid;

	w->pid = -1;
	w->fd = -1;
	stop_off = (char *)&skel->bss->stop_on_map - (char *)skel->bss;
	bss_size = bpf_map__value_size(skel->maps.bss);
	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (!pid) {
		keep[0] = pfd[0];
		keep[1] = bpf_map__fd(skel->maps.bss);
		keep[2] = bpf_map__fd(skel->maps.tslots);
		close_others(keep, 3);
		watchdog_run(keep[0], keep[1], stop_off, bss_size, keep[2]);
	}
	close(pfd[0]);
	w->pid = pid;
	w->fd = pfd[1];
	return 0;
}

void watchdog__stop(struct watchdog *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	if (w->pid > 0)
		waitpid(w->pid, NULL, 0);
	w->pid = -1;
}
