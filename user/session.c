// SPDX-License-Identifier: GPL-2.0
/*
 * One observation: checks -> outputs opened -> target spawned stopped (run) or found
 * (attach) -> skeleton open/configure/load/attach -> marker probes -> poll loop ->
 * final collection -> summary and files -> teardown. Every exit path goes through
 * cleanup, so no BPF program or link outlives memphase.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect/collect.h"
#include "lib/creds.h"
#include "report/live.h"
#include "model/model.h"
#include "model/oom.h"
#include "report/outputs.h"
#include "collect/phases.h"
#include "preflight.h"
#include "collect/probes.h"
#include "session.h"
#include "collect/stacks.h"
#include "lib/strmap.h"
#include "report/summary.h"
#include "collect/sysmem.h"
#include "collect/target.h"
#include "model/timeline.h"
#include "collect/unwind.h"
#include "lib/userfs.h"
#include "lib/utf8.h"
#include "lib/util.h"
#include "collect/watchdog.h"
#include "memphase.skel.h"

#define POLL_MS		100
#define NOTICE_AFTER_NS	1000000000ULL
#define SYSMEM_EVERY_NS	500000000ULL	/* /proc/meminfo, cgroup, PSI */
#define TIMELINE_CAP	4096		/* RSS history samples (thinned, whole run) */

struct session {
	const struct env *env;
	struct creds user;		/* who started memphase: files are theirs */
	struct creds run_as;		/* run: who the command runs as */
	struct userfs *fs;		/* file operations as user */
	int status;			/* memphase's exit status */
	struct memphase_bpf *skel;
	struct ring_buffer *rb;
	struct probes *probes;
	struct phases phases;
	struct target target;
	struct model model;
	struct outputs out;
	struct watchdog wd;		/* run mode: continues held targets if memphase dies */
	struct unwinder *unwinder;
	struct stacks *stacks;
	struct strmap paths;		/* mapping "dev:ino" -> path */
	__u64 last_mappings_ns;
	int stats_fd;			/* BPF_ENABLE_STATS while open */
	bool stop_on_map;
	bool root_exited;
	bool notice_done;
	/* live view */
	bool use_tui;
	struct live *live;
	struct timeline *tl;
	struct sysmem sm;
	bool have_sm;
	__u64 last_sysmem_ns;
	/* OOM forensics and the guard */
	struct oom_ring *growth_ring;	/* recent per-phase growth, for OOM reports */
	__u64 kill_at;			/* SIGKILL the target at this time (0: no) */
	pid_t guard_pid;		/* the process the guard is ending */
	__u64 guard_kill_at;		/* SIGKILL it at this time (0: no) */
	bool detached;			/* 'q': stop observing, leave the command running */
};

static volatile sig_atomic_t exiting_sig;
static volatile sig_atomic_t nsignals;

static void on_signal(int sig)
{
	exiting_sig = sig;
	nsignals++;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && env.verbose < 2)
		return 0;
	if (!env.verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

/* ---- BPF ---- */

/* A full mapping map must still take growth: every phase's "unknown" rows exist. */
static void unknown_mappings_reserve(struct session *s)
{
	struct mp_map_val zero = {};
	struct mp_map_key key;
	unsigned int id;
	int c;

	for (id = 0; id < s->phases.nphases; id++) {
		for (c = 0; c < MP_NR_CLASSES; c++) {
			memset(&key, 0, sizeof(key));
			key.phase = id;
			key.cls = c;
			bpf_map__update_elem(s->skel->maps.mappings, &key, sizeof(key), &zero,
					     sizeof(zero), BPF_NOEXIST);
		}
	}
}

static int bpf_setup(struct session *s)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo);
	struct mp_config *cfg;
	int err;

	if (preflight__btf_overridden())
		oo.btf_custom_path = preflight__btf_path();
	s->skel = memphase_bpf__open_opts(&oo);
	if (!s->skel) {
		err = -errno;
		fprintf(stderr, "memphase: failed to open BPF object: %s\n", strerror(-err));
		return err;
	}
	cfg = (struct mp_config *)&s->skel->rodata->cfg;
	cfg->phase_prompt = s->phases.prompt;
	cfg->phase_generate = s->phases.generate;
	cfg->phase_checkpoint = s->phases.checkpoint;
	cfg->stack_mode = s->env->stack_mode;
	cfg->sample_bytes = s->env->sample_bytes;
	cfg->sample_interval_ns = s->env->max_samples ? 1000000000ULL / s->env->max_samples : 0;
	cfg->map_tracking = !s->env->no_mappings;
	cfg->max_rss_bytes = s->env->max_rss;
	/* dwarf samples are 16 KiB each: give them room between two polls */
	err = bpf_map__set_max_entries(s->skel->maps.events,
				       (s->env->stack_mode == MP_STACKS_DWARF &&
					s->env->ringbuf_kib < 8192 ? 8192 : s->env->ringbuf_kib) * 1024);
	if (err)
		goto fail;
	err = memphase_bpf__load(s->skel);
	if (err) {
		fprintf(stderr, "memphase: failed to load BPF programs: %s%s\n", strerror(-err),
			err == -EPERM ? " (needs root or CAP_BPF and CAP_PERFMON)" : "");
		return err;
	}
	s->skel->bss->stop_on_map = s->stop_on_map;
	unknown_mappings_reserve(s);
	err = memphase_bpf__attach(s->skel);
	if (err) {
		fprintf(stderr, "memphase: failed to attach tracepoints: %s\n", strerror(-err));
		return err;
	}
	s->probes = probes__new(s->skel->progs.handle_marker, &s->phases, s->env->verbose);
	if (!s->probes)
		return -ENOMEM;
	return 0;
fail:
	fprintf(stderr, "memphase: failed to configure BPF object: %s\n", strerror(-err));
	return err;
}

static void exec_scan(struct session *s, __u32 pid)
{
	char link[64], name[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%u/exe", pid);
	n = readlink(link, name, sizeof(name) - 1);
	if (n <= 0)
		return;
	name[n] = '\0';
	probes__scan_file(s->probes, name, link);
	s->model.markers_attached = probes__count(s->probes);
	collect__learn_file(&s->paths, link, name);
}

/* What killed it (the BPF side saw whether a memory cgroup was at its limit) and what
 * grew just before (the per-phase counters over the last seconds). */
static void oom_forensics(struct session *s, const struct mp_event *e)
{
	struct model_oom *o;

	if (!s->model.nooms || s->model.ooms[s->model.nooms - 1].ts_ns != e->ts_ns)
		return;
	o = &s->model.ooms[s->model.nooms - 1];
	o->cgroup_oom = e->cg_id != 0;
	if (e->cg_id) {
		char name[sizeof(e->cg_name) + 1];

		memcpy(name, e->cg_name, sizeof(e->cg_name));
		name[sizeof(e->cg_name)] = '\0';
		oom__cgroup_path(e->cg_id, name, NULL, o->cgroup, sizeof(o->cgroup));
		o->cgroup_limit = e->cg_limit;
	}
	/* the counters as of now hold everything up to the kill */
	collect__maps(s->skel, &s->model);
	if (s->growth_ring) {
		oom__ring_add(s->growth_ring, &s->model, util__now_ns());
		o->have_window = !oom__ring_window(s->growth_ring, util__now_ns(), OOM_WINDOW_S,
						   o->before, &o->window_s);
	}
}

static void guard_stop(struct session *s, pid_t victim, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int on_event(void *ctx, void *data, size_t len)
{
	struct session *s = ctx;
	const struct mp_event *e = data;
	char sz[24];

	if (len >= sizeof(__u32) && e->type == MP_EV_STACK) {
		if (s->stacks)
			stacks__add(s->stacks, &s->model, data, len);
		return 0;
	}
	if (len < sizeof(*e))
		return 0;
	switch (e->type) {
	case MP_EV_FORK:
		stacks__note_process(s->stacks, e->arg);
		break;
	case MP_EV_EXEC:
		stacks__note_process(s->stacks, e->pid);
		collect__learn_paths(&s->paths, e->pid);
		/* a program reached by exec (env, sh -c, a launcher): probe its markers */
		if (e->ino)
			exec_scan(s, e->pid);
		if (e->arg)
			kill(e->pid, SIGCONT);	/* held by the BPF side until now */
		break;
	case MP_EV_FILE_MAP:
		collect__learn_paths(&s->paths, e->pid);
		break;
	case MP_EV_EXEC_MAP:
		collect__learn_paths(&s->paths, e->pid);
		probes__scan_mapping(s->probes, e->pid, e->addr);
		/* before SIGCONT: the library is in the snapshot before it runs */
		stacks__note_process(s->stacks, e->pid);
		s->model.markers_attached = probes__count(s->probes);
		/* the BPF side stopped the target until its markers are probed */
		if (s->stop_on_map)
			kill(e->pid, SIGCONT);
		break;
	case MP_EV_EXIT:
		if (e->pid == s->model.root_pid)
			s->root_exited = true;
		break;
	case MP_EV_OOM:
		live__notice(s->live, "OOM kill of %.16s (pid %u)", e->comm, e->pid);
		model__on_event(&s->model, e);
		oom_forensics(s, e);
		return 0;
	case MP_EV_GUARD:
		guard_stop(s, e->pid, "RSS of %.16s (pid %u) crossed --max-rss %s", e->comm, e->pid,
			   util__fmt_bytes(sz, sizeof(sz), s->env->max_rss));
		break;
	default:
		break;
	}
	model__on_event(&s->model, e);
	return 0;
}

/* ---- targets ---- */

/*
 * The command's stdio. With the live view on the terminal its output would garble it:
 * its stdin is /dev/null, its stdout and stderr go to --target-log (created as the
 * invoking user) or, if the default log cannot be created, to /dev/null. Without the
 * view they go to --target-log if one was given; and when an output file is memphase's
 * stdout, the command's stdout goes to stderr so as not to mix with it. Returns whether
 * fds apply; *devnull is an fd to close after the spawn.
 */
static bool target_stdio(struct session *s, int fds[3], int *devnull)
{
	int log = outputs__log_fd(&s->out);

	fds[0] = fds[1] = fds[2] = -1;
	*devnull = -1;
	if (!s->use_tui) {
		if (log >= 0)
			fds[1] = fds[2] = log;
		else if (s->out.to_stdout)
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

/* Marks an executable as probed for the BPF side (key: inode, kernel dev_t, exec). */
static void seen_file_add(struct session *s, const char *path)
{
	struct {
		__u64 ino, dev, exec;
	} key;
	struct stat st;
	__u8 one = 1;

	if (stat(path, &st))
		return;
	key.ino = st.st_ino;
	key.dev = ((__u64)major(st.st_dev) << 20) | minor(st.st_dev);
	key.exec = 1;
	bpf_map__update_elem(s->skel->maps.seen_files, &key, sizeof(key), &one, sizeof(one),
			     BPF_ANY);
}

static int setup_run(struct session *s)
{
	const struct env *e = s->env;
	int fds[3], devnull, err;
	bool redirect;

	redirect = target_stdio(s, fds, &devnull);
	err = target__spawn(&s->target, e->argv, &s->run_as, redirect ? fds : NULL);
	/* the child has its copies */
	if (devnull >= 0)
		close(devnull);
	if (err)
		return err;
	model__init(&s->model, s->target.pid, util__now_ns());
	err = model__set_argv(&s->model, e->argv);
	if (err)
		return err;
	s->stop_on_map = true;
	err = bpf_setup(s);
	if (err)
		return err;
	err = watchdog__start(&s->wd, s->skel);
	if (err)
		return err;
	/* ignore the forked copy of memphase until it execs the command */
	err = collect__add_target(s->skel, s->target.pid, MP_T_WAIT_EXEC);
	if (err)
		return err;
	err = probes__scan_file(s->probes, s->target.exe, NULL);
	if (err < 0 && err != -ENOENT)
		live__notice(NULL, "cannot read symbols of %s: %s", s->target.exe, strerror(-err));
	/* scanned already: its exec need not hold the target */
	seen_file_add(s, s->target.exe);
	collect__learn_file(&s->paths, s->target.exe, s->target.exe);
	s->model.markers_attached = probes__count(s->probes);
	s->model.start_ns = s->model.phase_since_ns = util__now_ns();
	err = target__resume(&s->target);
	if (err)
		return err;
	/* it runs: its log is a log now */
	outputs__log_commit(&s->out);
	return 0;
}

/* RSS per class from /proc/PID/status, as the starting point of an attached process. */
static void rss_from_proc(struct session *s, pid_t pid)
{
	static const struct {
		const char *key;
		int cls;
	} keys[] = { { "RssAnon:", MP_ANON }, { "RssFile:", MP_FILE },
		     { "RssShmem:", MP_SHMEM }, { "VmSwap:", MP_SWAP } };
	__s64 rss[MP_NR_CLASSES] = {};
	char fn[64], line[128];
	unsigned int i;
	FILE *f;

	snprintf(fn, sizeof(fn), "/proc/%d/status", pid);
	f = fopen(fn, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (!strncmp(line, keys[i].key, strlen(keys[i].key)))
				rss[keys[i].cls] = atoll(line + strlen(keys[i].key)) * 1024;
	fclose(f);
	model__set_rss(&s->model, pid, rss, rss, rss[MP_ANON] + rss[MP_FILE] + rss[MP_SHMEM]);
}

static bool is_kthread(pid_t pid)
{
	char fn[64], line[128];
	bool k = false;
	FILE *f;

	snprintf(fn, sizeof(fn), "/proc/%d/status", pid);
	f = fopen(fn, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Kthread:", 8))
			k = atoi(line + 8) == 1;
	fclose(f);
	return k;
}

static int setup_attach(struct session *s)
{
	const struct env *e = s->env;
	struct model_proc *root;
	char **argv;
	int err;

	err = target__attach(&s->target, e->pid);
	if (!err)
		err = target__may_observe(e->pid, &s->user);
	if (err == -ESRCH) {
		fprintf(stderr, "memphase: no such process: %d\n", e->pid);
		return err;
	}
	if (err)
		return err;
	if (is_kthread(e->pid)) {
		fprintf(stderr, "memphase: pid %d is a kernel thread: it has no user memory\n",
			e->pid);
		return -EINVAL;
	}
	model__init(&s->model, e->pid, util__now_ns());
	argv = target__cmdline(e->pid);
	if (argv) {
		err = model__set_argv(&s->model, argv);
		for (char **a = argv; *a; a++)
			free(*a);
		free(argv);
		if (err)
			return err;
	}
	root = model__root(&s->model);
	if (root)
		target__comm(e->pid, root->comm, sizeof(root->comm));
	/* what it holds already; an idle process may not touch memory again for a while */
	rss_from_proc(s, e->pid);
	s->stop_on_map = false;
	err = bpf_setup(s);
	if (err)
		return err;
	err = collect__add_target(s->skel, e->pid, 0);
	if (err)
		return err;
	probes__scan_pid(s->probes, e->pid);
	stacks__note_process(s->stacks, e->pid);
	collect__learn_paths(&s->paths, e->pid);
	s->model.markers_attached = probes__count(s->probes);
	if (!target__alive(&s->target)) {
		fprintf(stderr, "memphase: process %d exited while attaching\n", e->pid);
		return -ESRCH;
	}
	s->model.start_ns = s->model.phase_since_ns = util__now_ns();
	return 0;
}

static void marker_notice(struct session *s)
{
	char missing[512];

	if (s->notice_done)
		return;
	s->notice_done = true;
	if (!probes__count(s->probes))
		live__notice(s->live, "no phase markers found in %s or its libraries: "
				      "counting everything under 'startup' (add markers with --phase)",
			     s->target.exe[0] ? s->target.exe : "the target");
	probes__missing_user(s->probes, missing, sizeof(missing));
	if (missing[0])
		live__notice(s->live, "--phase symbols not found so far: %s", missing);
}

/* ---- loop ---- */

static void handle_signal(struct session *s)
{
	int sig = exiting_sig;

	exiting_sig = 0;
	if (!s->target.spawned || nsignals > 1) {
		s->kill_at = 1;	/* now */
		return;
	}
	/* run: pass it on, give the command a grace period to end on its own */
	char exe[256];

	live__notice(s->live, "%s: stopping %s (pid %d)", strsignal(sig),
		     utf8__esc_term(exe, sizeof(exe), s->target.exe), s->target.pid);
	target__signal(&s->target, sig == SIGINT ? SIGINT : SIGTERM);
	/* a guard's SIGKILL already due stays due */
	if (!s->kill_at)
		s->kill_at = util__now_ns() + (__u64)(s->env->grace * 1e9) + 1;
}

/* The live observed process holding the most: what --min-available ends. */
static pid_t largest_process(struct session *s)
{
	pid_t best = s->model.root_pid;
	__s64 most = -1;
	unsigned int i;

	for (i = 0; i < s->model.nprocs; i++) {
		const struct model_proc *p = &s->model.procs[i];
		__s64 rss = p->rss[MP_ANON] + p->rss[MP_FILE] + p->rss[MP_SHMEM];

		if (!p->exited && rss > most) {
			most = rss;
			best = p->pid;
		}
	}
	return best;
}

/*
 * --min-available: the memory left to the command is the system's MemAvailable, or its
 * memory cgroup's room below the limit (inactive file pages count as room) when that is
 * less.
 */
static void guard_available(struct session *s, const struct sysmem *sm)
{
	__u64 min = s->env->min_available;
	char b[3][24], cg[80];
	__s64 room;

	if (!min)
		return;
	if (!sysmem__headroom(sm, SYSMEM_CGROUP, &room) &&
	    (!sm->have_meminfo || room < (__s64)sm->mem_available) && room < (__s64)min) {
		guard_stop(s, largest_process(s), "the room left in memory cgroup %s (%s below "
			   "its limit %s) fell below --min-available %s",
			   utf8__esc_term(cg, sizeof(cg), sm->cg_limit_path),
			   util__fmt_bytes(b[0], sizeof(b[0]), room > 0 ? room : 0),
			   util__fmt_bytes(b[1], sizeof(b[1]), sm->cg_limit),
			   util__fmt_bytes(b[2], sizeof(b[2]), min));
		return;
	}
	if (sm->have_meminfo && sm->mem_available < min)
		guard_stop(s, largest_process(s), "MemAvailable %s fell below --min-available %s",
			   util__fmt_bytes(b[0], sizeof(b[0]), sm->mem_available),
			   util__fmt_bytes(b[1], sizeof(b[1]), min));
}

/*
 * System memory, the target's cgroup and PSI, every SYSMEM_EVERY_NS. A process that is
 * gone (OOM-killed) keeps the cgroup it had, for the report.
 */
static void sysmem_tick(struct session *s)
{
	struct sysmem sm = {}, old = s->sm;

	if (sysmem__read(&sm, NULL, NULL, s->model.root_pid))
		return;
	if (!sm.cg_version && s->have_sm && old.cg_version) {
		sm.cg_version = old.cg_version;
		memcpy(sm.cg_path, old.cg_path, sizeof(sm.cg_path));
		sm.cg_usage = old.cg_usage;
		sm.cg_limited = old.cg_limited;
		memcpy(sm.cg_limit_path, old.cg_limit_path, sizeof(sm.cg_limit_path));
		sm.cg_limit = old.cg_limit;
		sm.cg_limit_usage = old.cg_limit_usage;
		sm.cg_reclaimable = old.cg_reclaimable;
	}
	/* stall time since the last reading belongs to the phase the root is in now */
	if (sm.have_psi && s->have_sm && old.have_psi) {
		s->model.have_psi = true;
		if (sm.psi_some_total_us > old.psi_some_total_us)
			s->model.psi_some_us[s->model.cur_phase] +=
				sm.psi_some_total_us - old.psi_some_total_us;
		if (sm.psi_full_total_us > old.psi_full_total_us)
			s->model.psi_full_us[s->model.cur_phase] +=
				sm.psi_full_total_us - old.psi_full_total_us;
	}
	s->sm = sm;
	s->have_sm = true;
	guard_available(s, &sm);
}

/* Feeds the live view: system memory every SYSMEM_EVERY_NS, then redraw, keys, status. */
static int live_tick(struct session *s, __u64 now)
{
	if (!s->live)
		return 0;
	if (!s->last_sysmem_ns || now - s->last_sysmem_ns >= SYSMEM_EVERY_NS) {
		sysmem_tick(s);
		s->last_sysmem_ns = now;
	}
	return live__update(s->live, &s->model, s->tl, s->have_sm ? &s->sm : NULL, now);
}

static int live_start(struct session *s)
{
	struct live_opts o = {
		.use_tui = s->use_tui,
		.interval_s = s->env->interval,
		.oom_warn_s = s->env->oom_warn,
	};
	char cmd[160] = "?", title[200], arg[160];
	size_t used = 0;
	char **a;
	int n;

	for (a = s->model.argv; a && *a && used < sizeof(cmd) - 1; a++) {
		n = snprintf(cmd + used, sizeof(cmd) - used, "%s%s", used ? " " : "",
			     utf8__esc_term(arg, sizeof(arg), *a));
		used = n < 0 || used + n >= sizeof(cmd) ? sizeof(cmd) - 1 : used + n;
	}
	snprintf(title, sizeof(title), "%s (pid %u)", cmd, s->model.root_pid);
	o.title = title;
	s->tl = timeline__new(TIMELINE_CAP, LIVE_RATE_WINDOW_S);
	if (!s->tl)
		return -ENOMEM;
	s->live = live__new(&o);
	if (!s->live)
		return -ENOMEM;
	if (live__tui(s->live) && s->target.spawned) {
		const char *log = s->out.out[OUT_LOG].open ? s->out.out[OUT_LOG].path : "/dev/null";
		char p[256];

		live__notice(s->live, "the command's output goes to %s",
			     utf8__esc_term(p, sizeof(p), log));
	}
	return 0;
}

static int poll_loop(struct session *s)
{
	__u64 now, deadline = 0, last_collect = 0;
	int err;

	if (s->env->duration > 0)
		deadline = s->model.start_ns + (__u64)(s->env->duration * 1e9);
	for (;;) {
		err = ring_buffer__poll(s->rb, POLL_MS);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "memphase: reading events failed: %s\n", strerror(-err));
			return err;
		}
		/* events submitted without a wakeup (phase changes) would wait for a forced
		 * one: drain them every tick so the phase shown live is the current one */
		ring_buffer__consume(s->rb);
		now = util__now_ns();
		if (exiting_sig)
			handle_signal(s);
		if (now - last_collect >= POLL_MS * 1000000ULL) {
			collect__maps(s->skel, &s->model);
			collect__reap(s->skel, &s->model, s->stacks, now);
			last_collect = now;
			if (s->growth_ring)
				oom__ring_add(s->growth_ring, &s->model, now);
			if (s->tl)
				timeline__add_model(s->tl, &s->model, now);
		}
		/* mapping names need their process alive: look at new ones every second */
		if (!s->env->no_mappings && now - s->last_mappings_ns >= 1000000000ULL) {
			collect__mappings(s->skel, &s->model, &s->paths);
			s->last_mappings_ns = now;
		}
		if (!s->notice_done && now - s->model.start_ns >= NOTICE_AFTER_NS)
			marker_notice(s);
		/* 'q' in the live view: write everything, leave the command running */
		if (live_tick(s, now) == LIVE_QUIT) {
			s->detached = true;
			return 0;
		}
		if (s->target.spawned) {
			if (target__poll_exit(&s->target))
				return 0;
		} else if (s->root_exited || !target__alive(&s->target)) {
			return 0;
		}
		/* the guard's SIGKILL after --grace, whatever else is going on */
		if (s->guard_kill_at && now >= s->guard_kill_at) {
			kill(s->guard_pid, SIGKILL);
			s->guard_kill_at = 0;
		}
		/* --duration: stop observing (not while the guard is ending a process); a
		 * command memphase started keeps running */
		if (deadline && now >= deadline && !s->guard_kill_at) {
			s->detached = true;
			return 0;
		}
		if (s->kill_at && now >= s->kill_at) {
			if (s->target.spawned) {
				target__abort(&s->target);
				return 0;
			}
			/* attach: Ctrl-C detaches */
			return 0;
		}
	}
}

/*
 * The final word on the root's exit in run mode is wait(2)'s; memphase exits with it as
 * a shell would (128 + signal).
 */
static void record_wait_status(struct session *s)
{
	struct model_proc *root = model__root(&s->model);
	int st = s->target.status;

	if (!root || !s->target.spawned || !s->target.reaped)
		return;
	root->exited = true;
	if (WIFEXITED(st)) {
		root->exit_code = WEXITSTATUS(st);
		root->exit_signal = 0;
		s->status = WEXITSTATUS(st);
	} else if (WIFSIGNALED(st)) {
		root->exit_code = -1;
		root->exit_signal = WTERMSIG(st);
		s->status = 128 + WTERMSIG(st);
	}
}

/* memphase's own cost, from the kernel's per-program run-time statistics */
static void print_bpf_stats(struct session *s)
{
	struct bpf_program *prog;
	__u64 cnt = 0, ns = 0;

	fprintf(stderr, "\nBPF program        RUNS      TOTAL_MS   NS/RUN\n");
	bpf_object__for_each_program(prog, s->skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (bpf_program__fd(prog) < 0 ||
		    bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			continue;
		fprintf(stderr, "%-18s %10llu %10.2f %8.0f\n", bpf_program__name(prog),
			(unsigned long long)info.run_cnt, info.run_time_ns / 1e6,
			info.run_cnt ? (double)info.run_time_ns / info.run_cnt : 0.0);
		cnt += info.run_cnt;
		ns += info.run_time_ns;
	}
	fprintf(stderr, "%-18s %10llu %10.2f\n", "total", (unsigned long long)cnt, ns / 1e6);
}

static void stacks_to_model(struct session *s)
{
	unsigned int i;

	for (i = 0; s->stacks && i < MP_MAX_PHASES; i++) {
		s->model.samples[i] = stacks__samples(s->stacks, i);
		s->model.sampled_bytes[i] = stacks__sampled_bytes(s->stacks, i);
	}
	s->model.unwind_failures = stacks__unwind_failures(s->stacks);
}

/*
 * Stop holding targets at new code, then let go of any that a hold caught while
 * memphase stopped listening (the ring buffer is not read after this).
 */
static void release_holds(struct session *s)
{
	unsigned int i;

	if (!s->skel || !s->stop_on_map)
		return;
	s->skel->bss->stop_on_map = 0;
	if (s->rb)
		ring_buffer__consume(s->rb);
	for (i = 0; i < s->model.nprocs; i++)
		if (!s->model.procs[i].exited)
			kill(s->model.procs[i].pid, SIGCONT);
}

/* --phase markers that never attached, and why, for the summary and the JSON */
static void unmatched_markers(struct session *s)
{
	char why[160];
	unsigned int i;

	for (i = 0; s->probes && i < s->phases.nmarkers; i++) {
		const struct marker *mk = &s->phases.markers[i];

		if (probes__unmatched(s->probes, i, why, sizeof(why)))
			model__add_unmatched(&s->model, s->phases.names[mk->phase], mk->binary,
					     mk->symbol, why);
	}
}

static int finish(struct session *s)
{
	struct model_proc *root;
	__u64 end = util__now_ns();
	int err = 0;

	release_holds(s);

	/* the summary and the last notices go to the restored terminal */
	live__free(s->live);
	s->live = NULL;
	/* everything still in the ring buffer and the maps belongs to the run */
	ring_buffer__consume(s->rb);
	collect__maps(s->skel, &s->model);
	if (!s->env->no_mappings)
		collect__mappings(s->skel, &s->model, &s->paths);
	stacks_to_model(s);
	record_wait_status(s);
	root = model__root(&s->model);
	if (root && root->exited && root->exit_ns && root->exit_ns < end)
		end = root->exit_ns;
	model__finish(&s->model, end);
	unmatched_markers(s);
	marker_notice(s);
	/* stdout may be an output file's: then the summary goes to stderr */
	summary__print(s->out.to_stdout ? stderr : stdout, &s->model);
	if (s->env->bpf_stats)
		print_bpf_stats(s);
	err = outputs__write(&s->out, &s->model, s->stacks, true);
	return err;
}

/*
 * The guard: freeze the target, write every output as things stand (so a machine that
 * goes down anyway keeps them), then SIGTERM and, after --grace, SIGKILL. The final
 * outputs replace these at the end.
 */
static void guard_stop(struct session *s, pid_t victim, const char *fmt, ...)
{
	struct model_proc *p = model__proc(&s->model, victim, false);
	struct model *snap;
	va_list ap;

	if (s->model.stop_reason[0])
		return;
	va_start(ap, fmt);
	vsnprintf(s->model.stop_reason, sizeof(s->model.stop_reason), fmt, ap);
	va_end(ap);
	s->guard_pid = victim;
	kill(victim, SIGSTOP);
	live__notice(s->live, "%s: ending %s (pid %d)", s->model.stop_reason,
		     p && p->comm[0] ? p->comm : "the target", victim);
	collect__maps(s->skel, &s->model);
	stacks_to_model(s);
	snap = malloc(sizeof(*snap));
	if (snap) {
		*snap = s->model;
		model__finish(snap, util__now_ns());
		outputs__write(&s->out, snap, s->stacks, false);
		free(snap);
	}
	kill(victim, SIGTERM);
	kill(victim, SIGCONT);
	s->guard_kill_at = util__now_ns() + (__u64)(s->env->grace * 1e9) + 1;
}

/*
 * Who the files and the command belong to. The command never runs as root unless root
 * itself started memphase and said so (--allow-root), or named a user (--user).
 */
static int choose_users(struct session *s)
{
	const struct env *e = s->env;
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	bool explicit = e->mode == MODE_RUN && (e->allow_root || e->user);
	char u[64];
	int err;

	err = creds__invoking(&s->user);
	if (err && !explicit) {
		fprintf(stderr, "memphase: SUDO_UID='%s' and SUDO_GID='%s' are not both valid ids: "
				"cannot tell who started memphase (unset them, or pass --user NAME "
				"or --allow-root)\n", utf8__esc_term(u, 24, su ? su : ""),
			utf8__esc_term(u + 32, 24, sg ? sg : ""));
		return err;
	}
	if (err)
		creds__root(&s->user);
	if (e->mode != MODE_RUN)
		return 0;
	if (e->user) {
		if (creds__lookup(&s->run_as, e->user)) {
			fprintf(stderr, "memphase: --user: no such user '%s'\n",
				utf8__esc_term(u, sizeof(u), e->user));
			return -EINVAL;
		}
		return 0;
	}
	if (!s->user.root) {
		s->run_as = s->user;
		return 0;
	}
	if (e->allow_root) {
		s->run_as = s->user;
		return 0;
	}
	fprintf(stderr, "memphase: refusing to run the command as root: start memphase with sudo "
			"from your own account, or pass --user NAME or --allow-root\n");
	return -EPERM;
}

int session__run(const struct env *e, int *status)
{
	struct session *s;
	struct sigaction sa = { .sa_handler = on_signal };
	int err, i;

	*status = TARGET_EXIT_FAILED;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->env = e;
	s->target.exec_fd = -1;
	s->stats_fd = -1;
	s->wd.pid = s->wd.fd = -1;
	s->use_tui = !e->no_tui && isatty(STDOUT_FILENO);
	libbpf_set_print(libbpf_print);

	err = preflight__check(e);
	if (!err)
		err = choose_users(s);
	if (err)
		goto cleanup;
	/* every file from here on is created, renamed and removed as the user */
	s->fs = userfs__new(&s->user);
	if (!s->fs) {
		err = -errno;
		fprintf(stderr, "memphase: cannot act as uid %u for the output files: %s\n",
			(unsigned int)s->user.uid, strerror(-err));
		goto cleanup;
	}
	err = phases__init(&s->phases, !e->no_preset);
	for (i = 0; !err && i < (int)e->nspecs; i++)
		err = phases__add_spec(&s->phases, &e->specs[i]);
	if (err) {
		fprintf(stderr, "memphase: too many phases (max %d)\n", MP_MAX_PHASES);
		goto cleanup;
	}
	err = outputs__open(&s->out, e, s->fs, e->mode == MODE_RUN && (s->use_tui || e->target_log));
	if (err)
		goto cleanup;
	strmap__init(&s->paths, strmap__free_ptr);
	s->growth_ring = calloc(1, sizeof(*s->growth_ring));
	if (!s->growth_ring) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (e->stack_mode != MP_STACKS_NONE) {
		s->unwinder = unwinder__new();
		s->stacks = stacks__new(s->unwinder, e->perf_path != NULL);
		if (!s->unwinder || !s->stacks) {
			err = -ENOMEM;
			goto cleanup;
		}
	}

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (e->bpf_stats) {
		s->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (s->stats_fd < 0)
			fprintf(stderr, "memphase: cannot enable BPF run-time stats: %s\n",
				strerror(-s->stats_fd));
	}
	err = e->mode == MODE_RUN ? setup_run(s) : setup_attach(s);
	if (err)
		goto cleanup;
	for (i = 0; i < (int)s->phases.nphases; i++)
		model__set_phase_name(&s->model, i, s->phases.names[i]);
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_event, s, NULL);
	if (!s->rb) {
		err = -errno;
		fprintf(stderr, "memphase: failed to create ring buffer: %s\n", strerror(-err));
		goto cleanup;
	}
	err = live_start(s);
	if (err)
		goto cleanup;
	err = poll_loop(s);
	if (!err)
		err = finish(s);
	if (!err)
		*status = s->status;
cleanup:
	if (err && s->target.fail_status)
		*status = s->target.fail_status;
	live__free(s->live);
	s->live = NULL;
	timeline__free(s->tl);
	free(s->growth_ring);
	/* a command that never ran, or that memphase stops observing (not after 'q') */
	if (!s->detached)
		target__abort(&s->target);
	outputs__close(&s->out);
	userfs__free(s->fs);
	release_holds(s);
	watchdog__stop(&s->wd);
	ring_buffer__free(s->rb);
	probes__free(s->probes);
	memphase_bpf__destroy(s->skel);
	/* a detached command must not stay stopped by a library-load stop in flight */
	if (s->detached)
		target__signal(&s->target, SIGCONT);
	if (s->stats_fd >= 0)
		close(s->stats_fd);
	stacks__free(s->stacks);
	unwinder__free(s->unwinder);
	strmap__free(&s->paths);
	model__free(&s->model);
	free(s);
	return err;
}
