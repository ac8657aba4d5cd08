/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one reader of /proc/PID/stat and /proc/PID/status: by pid, or at a /proc/PID
 * directory already open (dirfd >= 0: the same process, however its pid is reused).
 */
#ifndef __MP_PROCPID_H
#define __MP_PROCPID_H

#include <stddef.h>
#include <sys/types.h>

struct procpid_stat {
	char comm[16];		/* as the kernel keeps it (it may hold any byte but NUL) */
	char state;		/* R, S, D, Z, X, ... */
	int ppid;
	unsigned int flags;	/* PF_* */
	unsigned long long start;	/* start time, clock ticks after boot */
};

/* /proc/PID/stat parsed (comm may hold spaces and parentheses). 0 or -ESRCH. */
int procpid__stat(int dirfd, pid_t pid, struct procpid_stat *out);
/* The value after "key:" on its line of /proc/PID/status into val (blanks before it
 * skipped, the newline dropped). 0, -ENOENT (no such line) or -ESRCH. */
int procpid__status(int dirfd, pid_t pid, const char *key, char *val, size_t len);

#endif
