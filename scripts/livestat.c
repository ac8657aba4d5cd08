// SPDX-License-Identifier: GPL-2.0
/*
 * livestat OUTFILE SAMPLES -- CMD [ARGS...]: run CMD (memphase) and record the cost of CMD's own
 * process over time, for the live-view section of scripts/bench.sh.
 *
 * OUTFILE gets key=value lines, taken at CMD's exit stop (the same ptrace approach as runstat.c:
 * PTRACE_O_TRACEEXIT, so the mm still exists and VmHWM is final):
 *   wall_ms          exec of CMD to its exit stop (CLOCK_MONOTONIC)
 *   reap_ms          exec of CMD to its reap
 *   stat_cpu_ms      utime+stime of CMD's whole process (all its threads, exited ones too; its
 *                    children excluded), /proc/PID/stat, clock-tick resolution
 *   sched_cpu_ms     sum of /proc/PID/task/ * /schedstat run times of the threads still alive (ns)
 *   threads, self_maxrss_kib (VmHWM), polled_maxrss_kib (max VmHWM seen while polling)
 *   exit_code / exit_signal
 * SAMPLES gets one tab-separated line every SAMPLE_MS (100 ms) while CMD runs, and a last one at
 * its exit stop:
 *   t_ms stat_cpu_ms sched_cpu_ms threads hwm_kib rss_kib child_pid child_state
 * child_* = CMD's first child (from /proc/PID/task/ * /children) and its state letter from
 * /proc/CHILD/stat ('T' stopped, 'Z' zombie...), "0 -" when it has none: memphase spawns the
 * observed command stopped, loads and attaches BPF, then resumes it, so the samples tell when the
 * workload ran and the benchmark can take a steady-state window inside that span.
 *
 * Only CMD's main thread is traced; its children are not. Signals CMD gets while traced (SIGCHLD,
 * SIGWINCH...) are passed on at once (SIGCHLD is waited for with sigtimedwait, so no ptrace stop
 * waits for the next sample). Reading another process's /proc files costs CMD nothing measurable.
 * Built by scripts/bench.sh (cc -O2).
 */
#define _GNU_SOURCE
#include <dirent.h>
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

#define SAMPLE_MS 100

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct snap {
	int ok;
	double stat_cpu_ms, sched_cpu_ms;
	long threads, hwm_kib, rss_kib;
	int child;
	char child_state;
};

static int read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	return 0;
}

/* state letter and utime+stime (ms) of PID from /proc/PID/stat; 0 when it is gone */
static char proc_stat(int pid, double *cpu_ms, long *threads)
{
	char path[64], buf[4096], *p, state;
	unsigned long long ut, st;
	long nth;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_file(path, buf, sizeof(buf)))
		return 0;
	/* comm may hold spaces: the fields after the last ')' start with field 3 (state) */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %ld",
			 &state, &ut, &st, &nth) != 4)
		return 0;
	if (cpu_ms)
		*cpu_ms = (ut + st) * 1e3 / sysconf(_SC_CLK_TCK);
	if (threads)
		*threads = nth;
	return state;
}

static void take_snapshot(int pid, struct snap *s)
{
	char path[300], buf[4096];
	unsigned long long ns;
	struct dirent *de;
	DIR *d;

	memset(s, 0, sizeof(*s));
	s->hwm_kib = s->rss_kib = -1;
	if (!proc_stat(pid, &s->stat_cpu_ms, &s->threads))
		return;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (d) {
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", pid, de->d_name);
			if (!read_file(path, buf, sizeof(buf)) && sscanf(buf, "%llu", &ns) == 1)
				s->sched_cpu_ms += ns / 1e6;
			snprintf(path, sizeof(path), "/proc/%d/task/%s/children", pid, de->d_name);
			if (!s->child && !read_file(path, buf, sizeof(buf)))
				s->child = atoi(buf);
		}
		closedir(d);
	}
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (!read_file(path, buf, sizeof(buf))) {
		char *l;

		for (l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
			sscanf(l, "VmHWM: %ld", &s->hwm_kib);
			sscanf(l, "VmRSS: %ld", &s->rss_kib);
		}
	}
	s->child_state = s->child ? proc_stat(s->child, NULL, NULL) : 0;
	s->ok = 1;
}

static void write_sample(FILE *f, double t, const struct snap *s)
{
	if (s->ok)
		fprintf(f, "%.1f\t%.1f\t%.3f\t%ld\t%ld\t%ld\t%d\t%c\n", t, s->stat_cpu_ms,
			s->sched_cpu_ms, s->threads, s->hwm_kib, s->rss_kib, s->child,
			s->child_state ? s->child_state : '-');
}

int main(int argc, char **argv)
{
	struct snap s = { 0 }, last = { .hwm_kib = -1 };
	double t0, t_exit = -1, t_next;
	long polled_hwm = -1;
	int st, code = -1, sig = 0, done = 0;
	struct timespec ts;
	sigset_t chld;
	FILE *out, *samples;
	pid_t pid, w;

	if (argc < 5 || strcmp(argv[3], "--")) {
		fprintf(stderr, "usage: livestat OUTFILE SAMPLES -- CMD [ARGS...]\n");
		return 2;
	}
	out = fopen(argv[1], "w");
	samples = fopen(argv[2], "w");
	if (!out || !samples) {
		fprintf(stderr, "livestat: %s: %s\n", out ? argv[2] : argv[1], strerror(errno));
		return 2;
	}
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	pid = tracee_spawn("livestat", argv + 4, &chld);
	if (pid < 0)
		return 2;
	t0 = now_ms();
	t_next = t0 + SAMPLE_MS;
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	while (!done) {
		double wait = t_next - now_ms();

		if (wait > 0) {
			ts.tv_sec = (time_t)(wait / 1e3);
			ts.tv_nsec = (long)((wait - ts.tv_sec * 1e3) * 1e6);
			sigtimedwait(&chld, NULL, &ts);
		}
		while (!done && (w = waitpid(pid, &st, WNOHANG)) != 0) {
			if (w < 0) {
				if (errno == EINTR)
					continue;
				perror("livestat: waitpid");
				return 2;
			}
			if (WIFEXITED(st) || WIFSIGNALED(st)) {
				done = 1;
				break;
			}
			if (!WIFSTOPPED(st))
				continue;
			if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
				t_exit = now_ms();
				take_snapshot(pid, &last);
				write_sample(samples, t_exit - t0, &last);
				ptrace(PTRACE_CONT, pid, NULL, NULL);
			} else if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8))) {
				ptrace(PTRACE_CONT, pid, NULL, NULL);
			} else {
				/* a signal for CMD: deliver it */
				ptrace(PTRACE_CONT, pid, NULL, (void *)(long)WSTOPSIG(st));
			}
		}
		if (!done && t_exit < 0 && now_ms() >= t_next) {
			double t = now_ms();

			take_snapshot(pid, &s);
			write_sample(samples, t - t0, &s);
			if (s.ok && s.hwm_kib > polled_hwm)
				polled_hwm = s.hwm_kib;
			while (t_next <= t)
				t_next += SAMPLE_MS;
		}
	}
	if (WIFEXITED(st))
		code = WEXITSTATUS(st);
	else
		sig = WTERMSIG(st);

	if (t_exit >= 0)
		fprintf(out, "wall_ms=%.1f\n", t_exit - t0);
	fprintf(out, "reap_ms=%.1f\n", now_ms() - t0);
	if (last.ok) {
		fprintf(out, "stat_cpu_ms=%.1f\nsched_cpu_ms=%.3f\nthreads=%ld\n", last.stat_cpu_ms,
			last.sched_cpu_ms, last.threads);
		fprintf(out, "self_maxrss_kib=%ld\n", last.hwm_kib);
	}
	fprintf(out, "polled_maxrss_kib=%ld\nsample_ms=%d\n", polled_hwm, SAMPLE_MS);
	fprintf(out, "exit_code=%d\nexit_signal=%d\n", code, sig);
	fclose(out);
	fclose(samples);
	return WIFEXITED(st) ? code : 128 + sig;
}
