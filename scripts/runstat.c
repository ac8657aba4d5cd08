// SPDX-License-Identifier: GPL-2.0
/*
 * runstat OUTFILE -- CMD [ARGS...]: run CMD and write its cost, as key=value, to OUTFILE.
 *
 *   wall_ms          fork to reap (CLOCK_MONOTONIC)
 *   start_ms, end_ms the fork and the reap on CLOCK_MONOTONIC (comparable between two
 *                    runstats: the tool's start-up and exit around its target's)
 *   self_cpu_ms      CPU time (user+sys) of CMD's own process, its children excluded
 *   self_utime_ms, self_stime_ms   the same split (clock-tick resolution)
 *   children_cpu_ms  CPU time of the children CMD waited for (cutime+cstime)
 *   self_maxrss_kib  peak RSS (VmHWM) of CMD's own process, its children excluded
 *   threads          threads alive at exit
 *   exit_code / exit_signal
 *
 * /usr/bin/time cannot give the "own process only" numbers when CMD waits for a child (the
 * rusage it reports folds the children in, and the child here touches 1 GiB), so CMD is
 * traced with PTRACE_O_TRACEEXIT: at its exit stop the mm still exists, and /proc/PID/status
 * (VmHWM), /proc/PID/stat (utime, stime, cutime, cstime) and /proc/PID/schedstat (run time in
 * ns) are read. Only CMD's main thread is traced; its children are not. The signals it gets
 * while traced (SIGCHLD...) are passed on unchanged. Built by scripts/bench.sh (cc -O2).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tracee.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct snap {
	int ok;
	double utime_ms, stime_ms, cutime_ms, cstime_ms, sched_ms;
	long hwm_kib, threads;
};

static void take_snapshot(pid_t pid, struct snap *s)
{
	char path[64], buf[4096], *p;
	unsigned long long ut, st, sched_ns;
	long long cut, cst;
	double tick = sysconf(_SC_CLK_TCK);
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* comm may hold spaces: fields after the last ')' start with field 3 (state) */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld",
			 &ut, &st, &cut, &cst) != 4)
		return;
	s->utime_ms = ut * 1e3 / tick;
	s->stime_ms = st * 1e3 / tick;
	s->cutime_ms = cut * 1e3 / tick;
	s->cstime_ms = cst * 1e3 / tick;
	s->sched_ms = -1;
	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%llu", &sched_ns) == 1)
			s->sched_ms = sched_ns / 1e6;
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (f) {
		while (fgets(buf, sizeof(buf), f)) {
			sscanf(buf, "VmHWM: %ld", &s->hwm_kib);
			sscanf(buf, "Threads: %ld", &s->threads);
		}
		fclose(f);
	}
	s->ok = 1;
}

int main(int argc, char **argv)
{
	struct snap s = { .hwm_kib = -1 };
	double t0, t1;
	int st, code = -1, sig = 0;
	pid_t pid;
	FILE *out;

	if (argc < 4 || strcmp(argv[2], "--")) {
		fprintf(stderr, "usage: runstat OUTFILE -- CMD [ARGS...]\n");
		return 2;
	}
	out = fopen(argv[1], "w");
	if (!out) {
		fprintf(stderr, "runstat: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	pid = tracee_spawn("runstat", argv + 3, NULL);
	if (pid < 0)
		return 2;
	t0 = now_ms();
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	for (;;) {
		if (waitpid(pid, &st, 0) < 0) {
			if (errno == EINTR)
				continue;
			perror("runstat: waitpid");
			return 2;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st))
			break;
		if (!WIFSTOPPED(st))
			continue;
		if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
			take_snapshot(pid, &s);
			ptrace(PTRACE_CONT, pid, NULL, NULL);
		} else if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8))) {
			ptrace(PTRACE_CONT, pid, NULL, NULL);
		} else {
			/* a signal for CMD: deliver it */
			ptrace(PTRACE_CONT, pid, NULL, (void *)(long)WSTOPSIG(st));
		}
	}
	t1 = now_ms();
	if (WIFEXITED(st))
		code = WEXITSTATUS(st);
	else
		sig = WTERMSIG(st);

	fprintf(out, "wall_ms=%.1f\nstart_ms=%.1f\nend_ms=%.1f\n", t1 - t0, t0, t1);
	if (s.ok) {
		/* schedstat is ns-exact but per thread: use it when CMD is single-threaded */
		double cpu = (s.threads == 1 && s.sched_ms >= 0) ? s.sched_ms
								 : s.utime_ms + s.stime_ms;
		fprintf(out, "self_cpu_ms=%.1f\nself_utime_ms=%.0f\nself_stime_ms=%.0f\n", cpu,
			s.utime_ms, s.stime_ms);
		fprintf(out, "children_cpu_ms=%.0f\nself_maxrss_kib=%ld\nthreads=%ld\n",
			s.cutime_ms + s.cstime_ms, s.hwm_kib, s.threads);
	}
	fprintf(out, "exit_code=%d\nexit_signal=%d\n", code, sig);
	fclose(out);
	return WIFEXITED(st) ? code : 128 + sig;
}
