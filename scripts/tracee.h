/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For the benchmark's runstat and livestat: start a command under ptrace, stopped before
 * it execs, with exit and exec stops on, so its own /proc numbers can be read at its exit.
 */
#ifndef __MP_TRACEE_H
#define __MP_TRACEE_H

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

/* argv[0] is the command; unblock (may be NULL) is unblocked in the child. The child is
 * left stopped; PTRACE_CONT starts it. Returns its pid, or -1 after a message. */
static pid_t tracee_spawn(const char *tool, char **argv, const sigset_t *unblock)
{
	pid_t pid = fork();
	int st;

	if (pid < 0) {
		fprintf(stderr, "%s: fork: %s\n", tool, strerror(errno));
		return -1;
	}
	if (pid == 0) {
		if (unblock)
			sigprocmask(SIG_UNBLOCK, unblock, NULL);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(126);
		raise(SIGSTOP);
		execvp(argv[0], argv);
		fprintf(stderr, "%s: %s: %s\n", tool, argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
		fprintf(stderr, "%s: child did not stop\n", tool);
		return -1;
	}
	ptrace(PTRACE_SETOPTIONS, pid, NULL,
	       (void *)(long)(PTRACE_O_TRACEEXIT | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL));
	return pid;
}

#endif
