// SPDX-License-Identifier: GPL-2.0
/*
 * memphase watch: find matching processes, run a `memphase attach` child for each, reap
 * them, forget them (watch.h). The children do all the observing, each with its own BPF
 * objects, model and files, exactly as `memphase attach -p PID` would; a child's failure
 * or crash touches no other process's files. Here: matching, the children's command
 * lines, the table of children, signals and the final count.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include "collect/target.h"
#include "lib/procpid.h"
#include "lib/userfs.h"
#include "lib/utf8.h"
#include "lib/util.h"
#include "preflight.h"
#include "report/outputs.h"
#include "session.h"
#include "users.h"
#include "watch.h"
#include "watch_metrics.h"
#include "watch.skel.h"

#define POLL_MS		200
#define POLL_METRICS_MS	100	/* with --metrics: a scrape waits at most this long */
#define SEEN_MAX	1024	/* processes decided lately (skipped, failed, followed) */
#define ANCESTORS_MAX	32	/* parents looked at for one that is watched already */
#define PF_KTHREAD	0x00200000

/* What /proc says about a process. */
struct pinfo {
	pid_t pid, ppid;
	unsigned long long start;	/* starttime, clock ticks since boot */
	unsigned int flags;
	char comm[MP_COMM_LEN];
};

/* One watched process and its attach child; pid 0: a free slot. */
struct proc {
	pid_t pid;
	pid_t child;
	unsigned long long start;
	bool at_exec;			/* found at its exec (not by a scan): at its start-up */
	char comm[MP_COMM_LEN];
	int metrics;			/* its metrics channel (watch_metrics.h), -1 */
	int err_fd;			/* the child's stderr, read here, -1 */
	unsigned int nline;		/* ... a line not complete yet */
	char line[512];
};

/* A process decided already, not to be counted again by a rescan. */
struct seen {
	pid_t pid;
	unsigned long long start;
};

struct watch {
	const struct env *env;
	struct watch_bpf *skel;
	struct ring_buffer *rb;
	struct proc *procs;		/* env->max_procs slots */
	unsigned int nprocs;		/* slots in use */
	struct seen seen[SEEN_MAX];	/* a ring */
	unsigned int seen_next;
	unsigned long long btime;	/* boot time, seconds since the epoch */
	long hz;			/* clock ticks per second */
	pid_t self;
	struct creds user;		/* who invoked memphase: the files are theirs */
	struct userfs *fs;		/* ... written as that user */
	struct watch_metrics *metrics;	/* --metrics, --metrics-textfile; NULL */
	/* the count printed at the end */
	unsigned long long matched, written, gone, failed, skipped;
};

static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
	stop_sig = sig;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG || !env.verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

/* ---- /proc ---- */

/* pid's comm, parent, flags and start time. 0 or -ESRCH (gone, not readable, a zombie). */
static int pinfo_read(pid_t pid, struct pinfo *p)
{
	struct procpid_stat st;

	/* a zombie has nothing left to observe: gone */
	if (procpid__stat(-1, pid, &st) || st.state == 'Z' || st.state == 'X')
		return -ESRCH;
	snprintf(p->comm, sizeof(p->comm), "%s", st.comm);
	p->pid = pid;
	p->ppid = st.ppid;
	p->flags = st.flags;
	p->start = st.start;
	return 0;
}

static int read_btime(unsigned long long *btime)
{
	char line[256];
	FILE *f = fopen("/proc/stat", "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %llu", btime) == 1) {
			err = 0;
			break;
		}
	fclose(f);
	return err;
}

static bool exe_matches(pid_t pid, const char *want)
{
	char fn[64], exe[PATH_MAX];
	ssize_t n;

	snprintf(fn, sizeof(fn), "/proc/%d/exe", pid);
	n = readlink(fn, exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = 0;
	/* a replaced binary reads "PATH (deleted)": another program */
	return !strcmp(exe, want);
}

/* Is pid's cgroup in hierarchy ctl ("" for v2) want, or below it? */
static bool cgroup_matches(pid_t pid, const char *ctl, const char *want)
{
	char fn[64], line[PATH_MAX + 256], *c, *cg;
	size_t n = strlen(want);
	bool yes = false;
	FILE *f;

	snprintf(fn, sizeof(fn), "/proc/%d/cgroup", pid);
	f = fopen(fn, "re");
	if (!f)
		return false;
	/* "ID:CONTROLLERS:PATH" */
	while (fgets(line, sizeof(line), f)) {
		c = strchr(line, ':');
		cg = c ? strchr(c + 1, ':') : NULL;
		if (!cg)
			continue;
		*cg++ = 0;
		if (strcmp(c + 1, ctl))
			continue;
		cg[strcspn(cg, "\n")] = 0;
		yes = !strcmp(want, "/") || (!strncmp(cg, want, n) && (!cg[n] || cg[n] == '/'));
		break;
	}
	fclose(f);
	return yes;
}

/* ---- the table ---- */

static struct proc *proc_find(struct watch *w, pid_t pid, unsigned long long start)
{
	unsigned int i;

	for (i = 0; i < w->env->max_procs; i++)
		if (w->procs[i].pid == pid && w->procs[i].start == start)
			return &w->procs[i];
	return NULL;
}

static struct proc *proc_by_child(struct watch *w, pid_t child)
{
	unsigned int i;

	for (i = 0; i < w->env->max_procs; i++)
		if (w->procs[i].pid && w->procs[i].child == child)
			return &w->procs[i];
	return NULL;
}

static bool watched_pid(struct watch *w, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < w->env->max_procs; i++)
		if (w->procs[i].pid == pid)
			return true;
	return false;
}

static bool seen_has(struct watch *w, pid_t pid, unsigned long long start)
{
	unsigned int i;

	for (i = 0; i < SEEN_MAX; i++)
		if (w->seen[i].pid == pid && w->seen[i].start == start)
			return true;
	return false;
}

static void seen_add(struct watch *w, pid_t pid, unsigned long long start)
{
	w->seen[w->seen_next] = (struct seen){ pid, start };
	w->seen_next = (w->seen_next + 1) % SEEN_MAX;
}

/* Is an ancestor of p watched? Its attach child follows p already. */
static bool ancestor_watched(struct watch *w, const struct pinfo *p)
{
	struct pinfo a = *p;
	int i;

	for (i = 0; i < ANCESTORS_MAX && a.ppid > 1; i++) {
		if (watched_pid(w, a.ppid))
			return true;
		if (pinfo_read(a.ppid, &a))
			return false;
	}
	return false;
}

/* ---- children ---- */

/* "COMM.PID.YYYYmmddTHHMMSS": the process's files in --out-dir, comm made a safe name. */
static void base_name(const struct watch *w, const struct proc *p, char *buf, size_t len)
{
	time_t t = w->btime + p->start / w->hz;
	char comm[MP_COMM_LEN], when[32];
	struct tm tm;
	unsigned int i;

	for (i = 0; p->comm[i] && i < sizeof(comm) - 1; i++) {
		unsigned char c = p->comm[i];

		comm[i] = c <= ' ' || c == '/' || c >= 0x7f || (!i && c == '.') ? '_' : c;
	}
	comm[i] = 0;
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y%m%dT%H%M%S", &tm);
	snprintf(buf, len, "%s.%d.%s", i ? comm : "_", p->pid, when);
}

/* A format's file name ending: ".json", ".perf.data" ('-' becomes '.'). */
static void format_ext(const char *name, char *buf, size_t len)
{
	size_t i;

	snprintf(buf, len, ".%s", name);
	for (i = 0; buf[i]; i++)
		if (buf[i] == '-')
			buf[i] = '.';
}

/*
 * In the forked child: `memphase attach -p PID --watched=START` with the options given to
 * watch and the process's files, then exec. Never returns. The one place a child's command
 * line is made.
 */
static void child_exec(const struct watch *w, const struct proc *p, pid_t parent, int err_fd,
		       int metrics_fd)
{
	const struct env *e = w->env;
	char *argv[16 + ENV_MAX_PASS + OUTPUTS_MAX], base[128], ext[32], *s;
	unsigned int i, n = 0;
	int fd;

	/* the supervisor stops its children; a dying supervisor makes them write and end */
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(TARGET_EXIT_FAILED);
	/* the summary is in the files; errors and notices go to watch's stderr */
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
	}
	/* its notices reach watch's stderr through the supervisor, [comm pid] before each */
	if (err_fd >= 0)
		dup2(err_fd, STDERR_FILENO);
	/* the metrics channel is the one descriptor it keeps across the exec */
	if (metrics_fd >= 0 && fcntl(metrics_fd, F_SETFD, 0))
		_exit(TARGET_EXIT_FAILED);
	base_name(w, p, base, sizeof(base));
	argv[n++] = (char *)"memphase";
	argv[n++] = (char *)"attach";
	if (asprintf(&argv[n++], "--pid=%d", p->pid) < 0 ||
	    asprintf(&argv[n++], "--watched=%llu", p->start) < 0)
		_exit(TARGET_EXIT_FAILED);
	argv[n++] = (char *)"--no-tui";
	if (p->at_exec)
		argv[n++] = (char *)"--watched-exec";
	if (metrics_fd >= 0 && asprintf(&argv[n++], "--metrics-fd=%d", metrics_fd) < 0)
		_exit(TARGET_EXIT_FAILED);
	for (i = 0; i < e->npass; i++)
		argv[n++] = e->pass[i];
	for (i = 0; i < outputs__nformats(); i++) {
		if (!e->out_paths[i])
			continue;
		format_ext(output_formats[i]->name, ext, sizeof(ext));
		if (asprintf(&s, "--%s=%s/%s%s", output_formats[i]->name, e->out_dir, base,
			     ext) < 0)
			_exit(TARGET_EXIT_FAILED);
		argv[n++] = s;
	}
	if (e->record && asprintf(&argv[n++], "--record=%s/%s.mprec", e->out_dir, base) < 0)
		_exit(TARGET_EXIT_FAILED);
	if (e->record && e->record_keep &&
	    asprintf(&argv[n++], "--record-keep=%u", e->record_keep) < 0)
		_exit(TARGET_EXIT_FAILED);
	argv[n] = NULL;
	execv("/proc/self/exe", argv);
	fprintf(stderr, "memphase: watch: cannot run memphase attach: %s\n", strerror(errno));
	_exit(TARGET_EXIT_FAILED);
}

static void say(const struct proc *p, const char *what)
{
	char comm[4 * MP_COMM_LEN];

	fprintf(stderr, "memphase: watch: %s (pid %d) %s\n",
		utf8__esc_term(comm, sizeof(comm), p->comm), p->pid, what);
}

/* One line of a child's stderr, with its process's [comm pid]. */
static void relay_line(const struct proc *p, const char *s, size_t n)
{
	char comm[4 * MP_COMM_LEN];

	fprintf(stderr, "[%s %d] %.*s\n", utf8__esc_term(comm, sizeof(comm), p->comm), p->pid,
		(int)n, s);
}

/* What a child wrote on stderr, line by line; at its end (last), a line not ended too. */
static void relay(struct proc *p, bool last)
{
	char *nl;
	ssize_t n;

	while (p->err_fd >= 0) {
		n = read(p->err_fd, p->line + p->nline, sizeof(p->line) - p->nline);
		if (n <= 0)
			break;
		p->nline += n;
		while ((nl = memchr(p->line, '\n', p->nline))) {
			relay_line(p, p->line, nl - p->line);
			p->nline -= nl + 1 - p->line;
			memmove(p->line, nl + 1, p->nline);
		}
		/* a line longer than the buffer goes out in pieces */
		if (p->nline == sizeof(p->line)) {
			relay_line(p, p->line, p->nline);
			p->nline = 0;
		}
	}
	if (last && p->nline) {
		relay_line(p, p->line, p->nline);
		p->nline = 0;
	}
}

static void relay_all(struct watch *w)
{
	unsigned int i;

	for (i = 0; i < w->env->max_procs; i++)
		if (w->procs[i].pid)
			relay(&w->procs[i], false);
}

static void proc_clear(struct proc *p)
{
	if (p->err_fd >= 0)
		close(p->err_fd);
	memset(p, 0, sizeof(*p));
	p->metrics = p->err_fd = -1;
}

/* A new match: a child for it, or skipped past --max-procs. */
static void proc_start(struct watch *w, const struct pinfo *pi, bool at_exec)
{
	struct proc *p = NULL;
	int errp[2], mfd = -1;
	unsigned int i;
	pid_t child;

	w->matched++;
	if (w->nprocs == w->env->max_procs) {
		struct proc tmp = { .pid = pi->pid };

		memcpy(tmp.comm, pi->comm, sizeof(tmp.comm));
		w->skipped++;
		seen_add(w, pi->pid, pi->start);
		say(&tmp, "skipped: --max-procs processes are observed already");
		return;
	}
	for (i = 0; i < w->env->max_procs && !p; i++)
		if (!w->procs[i].pid)
			p = &w->procs[i];
	p->pid = pi->pid;
	p->start = pi->start;
	p->at_exec = at_exec;
	memcpy(p->comm, pi->comm, sizeof(p->comm));
	p->metrics = watch_metrics__open(w->metrics, &mfd);
	if (w->metrics && p->metrics < 0)
		say(p, "observed without metrics: no channel for them");
	if (pipe2(errp, O_CLOEXEC))
		errp[0] = errp[1] = -1;
	child = fork();
	if (!child)
		child_exec(w, p, w->self, errp[1], mfd);
	if (errp[1] >= 0)
		close(errp[1]);
	p->err_fd = errp[0];
	if (p->err_fd >= 0)
		fcntl(p->err_fd, F_SETFL, O_NONBLOCK);
	watch_metrics__forked(w->metrics, p->metrics, child > 0);
	if (child < 0) {
		w->failed++;
		seen_add(w, pi->pid, pi->start);
		say(p, "not observed: fork failed");
		proc_clear(p);
		return;
	}
	p->child = child;
	w->nprocs++;
	if (w->env->verbose)
		say(p, "attaching");
}

/*
 * Does pid match? Starts its child if so (once per process). exec: the comm of its exec
 * event (matched in the kernel already), or NULL from a scan.
 */
static void consider(struct watch *w, pid_t pid, const char *exec_comm)
{
	const struct env *e = w->env;
	struct pinfo pi;

	if (pid == w->self)
		return;
	if (pinfo_read(pid, &pi)) {
		/* gone already: with --comm alone the exec said it matched; count it */
		if (exec_comm && e->match_comm && !e->match_exe && !e->match_cgroup) {
			struct proc tmp = { .pid = pid };

			memcpy(tmp.comm, exec_comm, sizeof(tmp.comm) - 1);
			w->matched++;
			w->gone++;
			if (e->verbose)
				say(&tmp, "ended before it could be attached");
		}
		return;
	}
	/* our own children, kernel threads, processes decided already */
	if (pi.ppid == w->self || (pi.flags & PF_KTHREAD) || proc_find(w, pid, pi.start) ||
	    seen_has(w, pid, pi.start))
		return;
	if (e->match_comm && strcmp(pi.comm, e->match_comm))
		return;
	if (e->match_exe && !exe_matches(pid, e->match_exe))
		return;
	if (e->match_cgroup && !cgroup_matches(pid, e->match_cgroup_ctl, e->match_cgroup))
		return;
	/* a child of a watched process is observed with it */
	if (ancestor_watched(w, &pi)) {
		seen_add(w, pid, pi.start);
		return;
	}
	proc_start(w, &pi, exec_comm != NULL);
}

static void scan_proc(struct watch *w)
{
	struct dirent *d;
	DIR *dir = opendir("/proc");
	char *end;
	long pid;

	if (!dir)
		return;
	while ((d = readdir(dir))) {
		pid = strtol(d->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		consider(w, pid, NULL);
	}
	closedir(dir);
}

/* One exec (bpf/watch.bpf.c): its comm passed the filter there already. */
static int on_exec(void *ctx, void *data, size_t len)
{
	struct watch *w = ctx;
	const struct mp_exec_event *e = data;
	char comm[MP_COMM_LEN];

	if (len < sizeof(*e))
		return 0;
	memcpy(comm, e->comm, sizeof(comm) - 1);
	comm[sizeof(comm) - 1] = 0;
	consider(w, e->pid, comm);
	return 0;
}

/* A child ended: count what it did, forget its process. */
static void reap(struct watch *w, pid_t child, int st)
{
	struct proc *p = proc_by_child(w, child);
	char what[64];

	if (!p)
		return;
	/* its last notices first, then what watch makes of its end */
	relay(p, true);
	watch_metrics__ended(w->metrics, p->metrics, util__now_ns());
	if (WIFEXITED(st) && !WEXITSTATUS(st)) {
		w->written++;
		if (w->env->verbose)
			say(p, "observed: files written");
	} else if (WIFEXITED(st) && WEXITSTATUS(st) == SESSION_EXIT_GONE) {
		w->gone++;
		if (w->env->verbose)
			say(p, "ended before it could be attached");
	} else {
		w->failed++;
		/* a process that stays (no rights to observe it) is not tried again */
		seen_add(w, p->pid, p->start);
		if (WIFEXITED(st))
			snprintf(what, sizeof(what), "not observed: memphase attach exited %d",
				 WEXITSTATUS(st));
		else
			snprintf(what, sizeof(what), "not observed: memphase attach killed by %s",
				 strsignal(WTERMSIG(st)));
		say(p, what);
	}
	proc_clear(p);
	w->nprocs--;
}

static void reap_all(struct watch *w)
{
	pid_t child;
	int st;

	while ((child = waitpid(-1, &st, WNOHANG)) > 0)
		reap(w, child, st);
}

/* Stop: every child writes its files; at most WATCH_STOP_S, then SIGKILL. */
static void stop_children(struct watch *w)
{
	__u64 deadline = util__now_ns() + WATCH_STOP_S * 1000000000ULL;
	unsigned int i;
	pid_t child;
	int st;

	for (i = 0; i < w->env->max_procs; i++)
		if (w->procs[i].pid)
			kill(w->procs[i].child, SIGTERM);
	while (w->nprocs && util__now_ns() < deadline) {
		child = waitpid(-1, &st, WNOHANG);
		if (child > 0)
			reap(w, child, st);
		else
			usleep(20 * 1000);
	}
	for (i = 0; i < w->env->max_procs; i++)
		if (w->procs[i].pid) {
			say(&w->procs[i], "did not write its files in time: killed");
			kill(w->procs[i].child, SIGKILL);
		}
	while (w->nprocs && (child = waitpid(-1, &st, 0)) > 0)
		reap(w, child, st);
}

/* The exec events, unless -p names the processes. */
static int bpf_setup(struct watch *w)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo);
	int err;

	if (w->env->npids)
		return 0;
	if (preflight__btf_overridden())
		oo.btf_custom_path = preflight__btf_path();
	w->skel = watch_bpf__open_opts(&oo);
	if (!w->skel) {
		err = -errno;
		fprintf(stderr, "memphase: failed to open the watch BPF object: %s\n",
			strerror(-err));
		return err;
	}
	if (w->env->match_comm) {
		w->skel->rodata->filter_comm_on = true;
		strncpy((char *)w->skel->rodata->filter_comm, w->env->match_comm,
			MP_COMM_LEN - 1);
	}
	err = watch_bpf__load(w->skel);
	if (!err)
		err = watch_bpf__attach(w->skel);
	if (err) {
		fprintf(stderr, "memphase: failed to load the exec tracepoint: %s\n",
			strerror(-err));
		return err;
	}
	w->rb = ring_buffer__new(bpf_map__fd(w->skel->maps.execs), on_exec, w, NULL);
	if (!w->rb) {
		err = -errno;
		fprintf(stderr, "memphase: exec ring buffer: %s\n", strerror(-err));
		return err;
	}
	return 0;
}

/*
 * Before anything starts: the invoking user may create files in --out-dir (each child
 * creates its own as that user; a bad directory is one line now, not one per process).
 */
static int check_out_dir(struct watch *w)
{
	const struct env *e = w->env;
	struct creds unused;
	struct userfs_file f = {};
	char path[PATH_MAX], p[256];
	int err;

	err = users__choose(e, &w->user, &unused);
	if (err)
		return err;
	w->fs = userfs__new(&w->user);
	if (!w->fs) {
		err = -errno;
		fprintf(stderr, "memphase: cannot act as uid %u for the output files: %s\n",
			(unsigned int)w->user.uid, strerror(-err));
		return err;
	}
	snprintf(path, sizeof(path), "%s/.memphase-watch-check", e->out_dir);
	err = userfs__open(w->fs, path, &f);
	if (!err && f.kind != USERFS_FILE)
		err = -EINVAL;
	if (err)
		fprintf(stderr, "memphase: --out-dir %s: %s\n",
			utf8__esc_term(p, sizeof(p), e->out_dir),
			f.why[0] ? f.why : strerror(-err));
	userfs__discard(w->fs, &f);
	return err;
}

/* -p PID...: each must exist now. */
static int start_pids(struct watch *w)
{
	struct pinfo pi;
	unsigned int i;

	for (i = 0; i < w->env->npids; i++)
		if (pinfo_read(w->env->pids[i], &pi)) {
			fprintf(stderr, "memphase: no such process: %d\n", w->env->pids[i]);
			return -ESRCH;
		}
	for (i = 0; i < w->env->npids; i++)
		consider(w, w->env->pids[i], NULL);
	return 0;
}

/* "comm NAME, exe PATH, cgroup PATH" or "3 pids", for the start line */
static void describe(const struct env *e, char *buf, size_t len)
{
	char s[3][PATH_MAX / 4];

	if (e->npids) {
		snprintf(buf, len, "%u pid%s", e->npids, e->npids > 1 ? "s" : "");
		return;
	}
	utf8__esc_term(s[0], sizeof(s[0]), e->match_comm ? e->match_comm : "");
	utf8__esc_term(s[1], sizeof(s[1]), e->match_exe ? e->match_exe : "");
	utf8__esc_term(s[2], sizeof(s[2]), e->match_cgroup ? e->match_cgroup : "");
	snprintf(buf, len, "%s%s%s%s%s%s%s%s", e->match_comm ? "comm " : "", s[0],
		 e->match_comm && (e->match_exe || e->match_cgroup) ? ", " : "",
		 e->match_exe ? "exe " : "", s[1], e->match_exe && e->match_cgroup ? ", " : "",
		 e->match_cgroup ? "cgroup " : "", s[2]);
}

static struct watch_counts counts(const struct watch *w)
{
	return (struct watch_counts){ .matched = w->matched, .written = w->written,
				      .gone = w->gone, .skipped = w->skipped,
				      .failed = w->failed, .observed = w->nprocs };
}

static void loop(struct watch *w)
{
	const struct env *e = w->env;
	__u64 now = util__now_ns(), rescan = now + WATCH_RESCAN_S * 1000000000ULL;
	__u64 deadline = e->duration > 0 ? now + (__u64)(e->duration * 1e9) : 0;
	int poll_ms = w->metrics ? POLL_METRICS_MS : POLL_MS;
	struct watch_counts c;

	while (!stop_sig) {
		if (w->rb)
			ring_buffer__poll(w->rb, poll_ms);
		else
			usleep(poll_ms * 1000);
		relay_all(w);
		reap_all(w);
		now = util__now_ns();
		c = counts(w);
		watch_metrics__tick(w->metrics, &c, now);
		if (deadline && now >= deadline)
			break;
		/* -p: nothing more can match once they are done (and the last figures served) */
		if (e->npids && !w->nprocs && !watch_metrics__lingering(w->metrics))
			break;
		if (w->rb && now >= rescan) {
			scan_proc(w);
			rescan = now + WATCH_RESCAN_S * 1000000000ULL;
		}
	}
}

int watch__run(const struct env *e, int *status)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct watch_counts c;
	struct watch *w;
	char p[256], what[PATH_MAX];
	int err;

	*status = TARGET_EXIT_FAILED;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->env = e;
	w->self = getpid();
	w->hz = sysconf(_SC_CLK_TCK);
	w->procs = calloc(e->max_procs, sizeof(*w->procs));
	libbpf_set_print(libbpf_print);
	err = w->procs ? 0 : -ENOMEM;
	if (!err)
		err = preflight__check(e);
	if (!err)
		err = read_btime(&w->btime);
	if (!err)
		err = check_out_dir(w);
	if (!err) {
		w->metrics = watch_metrics__new(e, w->fs, &w->user);
		if (!w->metrics && errno)
			err = -errno;
	}
	if (err)
		goto out;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* events first, then the scan: a process that starts in between is not missed */
	err = bpf_setup(w);
	if (!err && e->npids)
		err = start_pids(w);
	if (err)
		goto out;
	if (w->rb)
		scan_proc(w);
	/* the journal says what this memphase does */
	describe(e, what, sizeof(what));
	fprintf(stderr, "memphase: watch: started (%s; %u running now); files in %s\n", what,
		w->nprocs, utf8__esc_term(p, sizeof(p), e->out_dir));
	loop(w);
	stop_children(w);
	c = counts(w);
	/* the last figures of every observation, in the textfile */
	watch_metrics__finish(w->metrics, &c);
	*status = 0;
out:
	if (w->matched || !err)
		fprintf(stderr, "memphase: watch: %llu matched: %llu written, %llu gone before "
				"they could be attached, %llu skipped (--max-procs %u), %llu "
				"failed%s\n",
			w->matched, w->written, w->gone, w->skipped, e->max_procs, w->failed,
			w->skel && w->skel->bss->lost ? " (exec events lost: rescans found them)" :
			"");
	ring_buffer__free(w->rb);
	watch_bpf__destroy(w->skel);
	watch_metrics__free(w->metrics);
	userfs__free(w->fs);
	free(w->procs);
	free(w);
	return err;
}
