// SPDX-License-Identifier: GPL-2.0
/*
 * One observation, as the orchestrator of the rooms: checks -> outputs opened -> target
 * spawned stopped (run) or found (attach) -> skeleton open/configure/load/attach ->
 * marker probes -> the collector (the one writer of the model) -> poll loop with the
 * live view and the guard -> final collection -> summary and files -> teardown. Every
 * exit path goes through cleanup, so no BPF program or link outlives memphase.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect/collect.h"
#include "collect/collector.h"
#include "collect/phases.h"
#include "collect/cuda.h"
#include "collect/probes.h"
#include "collect/target.h"
#include "collect/watchdog.h"
#include "guard.h"
#include "lib/userfs.h"
#include "lib/utf8.h"
#include "lib/util.h"
#include "model/model.h"
#include "preflight.h"
#include "users.h"
#include "report/live/live.h"
#include "report/outputs.h"
#include "report/summary.h"
#include "session.h"
#include "memphase.skel.h"

#define POLL_MS		100

struct session {
	const struct env *env;
	struct creds user;		/* who started memphase: files are theirs */
	struct creds run_as;		/* run: who the command runs as */
	struct userfs *fs;		/* file operations as user */
	int status;			/* memphase's exit status */
	struct memphase_bpf *skel;
	struct probes *probes;
	struct phases phases;
	struct target target;
	struct model model;		/* written by the collector alone */
	struct collector *collector;
	struct guard *guard;
	struct outputs out;
	struct watchdog wd;		/* run mode: continues held targets if memphase dies */
	int stats_fd;			/* BPF_ENABLE_STATS while open */
	bool use_tui;
	struct live *live;
	__u64 kill_at;			/* SIGKILL the target at this time (0: no) */
	bool detached;			/* 'q': stop observing, leave the command running */
};

/* origins of mappings under --origin-min: this many a second, and in all */

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

static int bpf_setup(struct session *s)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo);
	struct collect_config cc = {
		.stack_mode = s->env->stack_mode,
		.sample_bytes = s->env->sample_bytes,
		.max_samples = s->env->max_samples,
		.mappings = !s->env->no_mappings,
		.max_rss = s->env->max_rss,
		.ringbuf_kib = s->env->ringbuf_kib,
		/* origins are symbolized with the stacks: none without them */
		.origin_min = s->env->stack_mode != MP_STACKS_NONE ? s->env->origin_min : 0,
	};
	int err;

	if (preflight__btf_overridden())
		oo.btf_custom_path = preflight__btf_path();
	s->skel = memphase_bpf__open_opts(&oo);
	if (!s->skel) {
		err = -errno;
		fprintf(stderr, "memphase: failed to open BPF object: %s\n", strerror(-err));
		return err;
	}
	err = collect__configure(s->skel, &s->phases, &cc);
	if (err)
		return err;
	err = memphase_bpf__load(s->skel);
	if (err) {
		fprintf(stderr, "memphase: failed to load BPF programs: %s%s\n", strerror(-err),
			err == -EPERM ? " (needs root or CAP_BPF and CAP_PERFMON)" : "");
		return err;
	}
	s->skel->bss->stop_on_map = s->env->mode == MODE_RUN;
	collect__reserve_unknown(s->skel, s->phases.nphases);
	err = memphase_bpf__attach(s->skel);
	if (err) {
		fprintf(stderr, "memphase: failed to attach tracepoints: %s\n", strerror(-err));
		return err;
	}
	s->probes = probes__new(s->skel->progs.handle_marker, s->skel->progs.handle_marker_ret,
				&s->phases, s->env->verbose);
	if (!s->probes)
		return -ENOMEM;
	probes__set_allocs(s->probes, s->skel->progs.handle_alloc_entry,
			   s->skel->progs.handle_alloc_return, cuda_allocs, cuda_nallocs);
	return 0;
}

/* ---- the collector's and the guard's hooks ---- */

static void on_notice(void *ctx, const char *msg)
{
	struct session *s = ctx;

	live__notice(s->live, "%s", msg);
}

static void on_max_rss(void *ctx, pid_t pid, const char *comm)
{
	struct session *s = ctx;

	guard__max_rss(s->guard, pid, comm);
}

/* The guard's snapshot: every regular output file as things stand. */
static void on_snapshot(void *ctx)
{
	struct session *s = ctx;
	struct output_ctx oc = { .tl = collector__timeline(s->collector) };
	struct model *snap = collector__snapshot(s->collector);

	if (!snap)
		return;
	oc.m = snap;
	outputs__write(&s->out, &oc, false);
	free(snap);
}

static int collector_start(struct session *s)
{
	const struct env *e = s->env;
	struct collector_opts co = {
		.phases = &s->phases,
		.probes = s->probes,
		.mappings = !e->no_mappings,
		.stacks = e->stack_mode != MP_STACKS_NONE,
		.keep_raw = outputs__needs(&s->out) & OUTPUT_NEEDS_RAW,
		.stop_on_map = e->mode == MODE_RUN,
		.bpf_stats = e->bpf_stats,
		.preset = e->preset ? e->preset->name : NULL,
		.cause_files = e->cause_files,
		.ncause_files = e->ncause_files,
		.allocators = e->allocators,
		.nallocators = e->nallocators,
		.hooks = { .ctx = s, .notice = on_notice, .max_rss = on_max_rss },
	};
	struct guard_opts go = {
		.max_rss = e->max_rss,
		.min_available = e->min_available,
		.grace_s = e->grace,
		.snapshot = on_snapshot,
		.notice = on_notice,
		.ctx = s,
	};

	s->collector = collector__new(s->skel, &s->model, &co);
	if (!s->collector)
		return -errno;
	s->guard = guard__new(s->collector, &go);
	return s->guard ? 0 : -ENOMEM;
}

/* ---- targets ---- */

static int setup_run(struct session *s)
{
	const struct env *e = s->env;
	int fds[3], devnull, err;
	bool redirect;

	redirect = target__stdio(outputs__log_fd(&s->out), s->use_tui, s->out.to_stdout, fds,
				 &devnull);
	err = target__spawn(&s->target, e->argv, &s->run_as, redirect ? fds : NULL);
	/* the child has its copies */
	if (devnull >= 0)
		close(devnull);
	if (err)
		return err;
	err = bpf_setup(s);
	if (!err)
		err = collector_start(s);
	if (!err)
		err = collector__begin_run(s->collector, s->target.pid, e->argv, s->target.exe);
	if (!err)
		err = watchdog__start(&s->wd, s->skel);
	/* ignore the forked copy of memphase until it execs the command */
	if (!err)
		err = collect__add_target(s->skel, s->target.pid, MP_T_WAIT_EXEC);
	if (err)
		return err;
	/* scanned already: its exec need not hold the target */
	collect__seen_file(s->skel, s->target.exe);
	collector__started(s->collector);
	err = target__resume(&s->target);
	if (err)
		return err;
	/* it runs: its log is a log now */
	outputs__log_commit(&s->out);
	return 0;
}

static int setup_attach(struct session *s)
{
	const struct env *e = s->env;
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
	if (target__is_kthread(e->pid)) {
		fprintf(stderr, "memphase: pid %d is a kernel thread: it has no user memory\n",
			e->pid);
		return -EINVAL;
	}
	err = bpf_setup(s);
	if (!err)
		err = collector_start(s);
	if (!err)
		err = collect__add_target(s->skel, e->pid, 0);
	if (!err)
		err = collector__begin_attach(s->collector, e->pid);
	if (err)
		return err;
	if (!target__alive(&s->target)) {
		fprintf(stderr, "memphase: process %d exited while attaching\n", e->pid);
		return -ESRCH;
	}
	collector__started(s->collector);
	return 0;
}

/* ---- loop ---- */

static void handle_signal(struct session *s)
{
	int sig = exiting_sig;
	char exe[256];

	exiting_sig = 0;
	if (!s->target.spawned || nsignals > 1) {
		s->kill_at = 1;	/* now */
		return;
	}
	/* run: pass it on, give the command a grace period to end on its own */
	live__notice(s->live, "%s: stopping %s (pid %d)", strsignal(sig),
		     utf8__esc_term(exe, sizeof(exe), s->target.exe), s->target.pid);
	target__signal(&s->target, sig == SIGINT ? SIGINT : SIGTERM);
	/* a guard's SIGKILL already due stays due */
	if (!s->kill_at)
		s->kill_at = util__now_ns() + (__u64)(s->env->grace * 1e9) + 1;
}

static int live_start(struct session *s)
{
	struct live_opts o = {
		.use_tui = s->use_tui,
		.interval_s = s->env->interval,
		.oom_warn_s = s->env->oom_warn,
		.argv = s->model.argv,
		.pid = s->model.root_pid,
	};
	const char *log = outputs__log_path(&s->out);
	char p[256];

	s->live = live__new(&o);
	if (!s->live)
		return -ENOMEM;
	if (live__tui(s->live) && s->target.spawned)
		live__notice(s->live, "the command's output goes to %s",
			     utf8__esc_term(p, sizeof(p), log ? log : "/dev/null"));
	return 0;
}

/* The command ended, or memphase stops observing: 0. -errno on a failure. */
static int poll_loop(struct session *s)
{
	__u64 now, deadline = 0;
	int err;

	if (s->env->duration > 0)
		deadline = s->model.start_ns + (__u64)(s->env->duration * 1e9);
	for (;;) {
		err = collector__poll(s->collector, POLL_MS);
		if (err)
			return err;
		now = util__now_ns();
		if (exiting_sig)
			handle_signal(s);
		guard__tick(s->guard, now);
		/* 'q' in the live view: write everything, leave the command running */
		if (live__update(s->live, &s->model, collector__timeline(s->collector),
				 collector__sysmem(s->collector, NULL), now) == LIVE_QUIT) {
			s->detached = true;
			return 0;
		}
		if (s->target.spawned) {
			if (target__poll_exit(&s->target))
				return 0;
		} else if (collector__root_exited(s->collector) || !target__alive(&s->target)) {
			return 0;
		}
		/* --duration: stop observing (not while the guard is ending a process); a
		 * command memphase started keeps running */
		if (deadline && now >= deadline && !guard__ending(s->guard, now)) {
			s->detached = true;
			return 0;
		}
		if (s->kill_at && now >= s->kill_at) {
			/* run: the command is ended; attach: Ctrl-C detaches */
			if (s->target.spawned)
				target__abort(&s->target);
			return 0;
		}
	}
}

static int finish(struct session *s)
{
	struct output_ctx oc = { .m = &s->model, .tl = collector__timeline(s->collector) };
	int st = s->target.status;
	bool reaped = s->target.spawned && s->target.reaped;

	collector__release(s->collector);
	/* the summary and the last notices go to the restored terminal */
	live__free(s->live);
	s->live = NULL;
	collector__finish(s->collector, reaped, st);
	/* memphase exits with the command's status, as a shell would (128 + signal) */
	if (reaped && WIFEXITED(st))
		s->status = WEXITSTATUS(st);
	else if (reaped && WIFSIGNALED(st))
		s->status = 128 + WTERMSIG(st);
	/* stdout may be an output file's: then the summary goes to stderr */
	summary__print(s->out.to_stdout ? stderr : stdout, &s->model);
	/* memphase's own cost, from the kernel's per-program run-time statistics */
	if (s->env->bpf_stats)
		summary__bpf_stats(stderr, &s->model);
	return outputs__write(&s->out, &oc, true);
}

int session__run(const struct env *e, int *status)
{
	struct session *s;
	struct sigaction sa = { .sa_handler = on_signal };
	int err;

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
		err = users__choose(e, &s->user, &s->run_as);
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
	err = phases__setup(&s->phases, e->preset, e->specs, e->nspecs,
			    e->request.symbol[0] ? &e->request : NULL);
	if (!err)
		err = outputs__open(&s->out, e->out_paths, e->target_log, s->fs,
			    e->mode == MODE_RUN && (s->use_tui || e->target_log));
	if (err)
		goto cleanup;

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
	if (!err)
		err = live_start(s);
	if (!err)
		err = poll_loop(s);
	if (!err)
		err = finish(s);
	if (!err)
		*status = s->status;
cleanup:
	if (err && s->target.fail_status)
		*status = s->target.fail_status;
	live__free(s->live);
	/* a command that never ran, or that memphase stops observing (not after 'q') */
	if (!s->detached)
		target__abort(&s->target);
	outputs__close(&s->out);
	userfs__free(s->fs);
	collector__release(s->collector);
	watchdog__stop(&s->wd);
	guard__free(s->guard);
	collector__free(s->collector);
	probes__free(s->probes);
	memphase_bpf__destroy(s->skel);
	/* a detached command must not stay stopped by a library-load stop in flight */
	if (s->detached)
		target__signal(&s->target, SIGCONT);
	if (s->stats_fd >= 0)
		close(s->stats_fd);
	model__free(&s->model);
	free(s);
	return err;
}
