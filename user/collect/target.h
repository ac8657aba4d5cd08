/* SPDX-License-Identifier: GPL-2.0 */
/* The observed process: spawn it stopped (run) or check a running one (attach). */
#ifndef __MP_TARGET_H
#define __MP_TARGET_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

struct creds;
struct userfs;

/* memphase's own exit codes (as env(1) and timeout(1) have them) */
#define TARGET_EXIT_FAILED	125	/* memphase itself failed (usage included) */
#define TARGET_EXIT_CANNOT_RUN	126	/* the command was found but could not be run */
#define TARGET_EXIT_NOT_FOUND	127	/* the command was not found */

struct target {
	pid_t pid;
	bool spawned;
	bool reaped;		/* spawned child waited for */
	int status;		/* wait(2) status once reaped */
	int exec_fd;		/* read end of the exec-error pipe (spawned), -1 */
	char exe[PATH_MAX];	/* resolved executable */
	unsigned long long start_time;	/* /proc/PID/stat starttime, attach identity */
	int fail_status;	/* spawn/resume failed: TARGET_EXIT_CANNOT_RUN or _NOT_FOUND */
};

/*
 * Forks a child that becomes run_as (NULL: stays as memphase is), resolves argv[0] like
 * execvp with that user's rights and PATH, stops itself and waits for target__resume()
 * to exec. Until then it dies with memphase (a memphase killed during set-up leaves no
 * stopped child). stdio: NULL to inherit memphase's stdin/stdout/stderr, else the fds the
 * child gets as 0, 1, 2 (-1 to inherit that one). Returns 0 or -errno; a command that
 * cannot be executed fails here with one line on stderr and t->fail_status set.
 */
int target__spawn(struct target *t, char *const argv[], const struct creds *run_as,
		  const int stdio[3]);
/* Lets a spawned child exec. Returns 0, or -errno if exec failed (message printed,
 * t->fail_status set). */
int target__resume(struct target *t);
/* Checks that pid exists and records its identity. 0, -ESRCH or -errno. */
int target__attach(struct target *t, pid_t pid);
/*
 * May user c observe the process t attached to? Root may; anyone else as the kernel lets
 * them read its /proc/PID/maps (PTRACE_MODE_READ_FSCREDS: its ids theirs, no capability
 * they lack, dumpable), asked through fs, the helper that is c. 0, -ESRCH (gone, or the
 * pid reused), -ECHILD (it exited: a zombie), or -EPERM after one line on stderr.
 */
int target__may_observe(const struct target *t, struct userfs *fs, const struct creds *c);
/* Is the process still the one we attached to / still running? */
bool target__alive(struct target *t);
/* Reaps a spawned child without blocking; true once it has exited. */
bool target__poll_exit(struct target *t);
/* Sends sig to the target (spawned only). */
void target__signal(struct target *t, int sig);
/* Kills and reaps a spawned child that never ran; NULL-safe. */
void target__abort(struct target *t);
/* The first 15 bytes of the process name, from /proc/PID/comm. */
int target__comm(pid_t pid, char *buf, size_t len);
/* argv of a running process from /proc/PID/cmdline, NULL-terminated, malloc'd. */
char **target__cmdline(pid_t pid);

/* Is pid a kernel thread (no user memory)? false if it cannot tell. */
bool target__is_kthread(pid_t pid);

/*
 * The command's stdio. With the live view on the terminal (tui) its output would garble
 * it: its stdin is /dev/null, its stdout and stderr go to the log (log: its fd) or, when
 * there is none, to /dev/null. Without the view they go to the log if there is one; and
 * when an output file is memphase's stdout (out_is_stdout), the command's stdout goes to
 * stderr so as not to mix with it. Returns whether fds apply; *devnull is an fd to close
 * after the spawn (-1: none).
 */
bool target__stdio(int log, bool tui, bool out_is_stdout, int fds[3], int *devnull);

#endif
