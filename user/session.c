// SPDX-License-Identifier: GPL-2.0
/*
 * One observation, as the orchestrator of the rooms: checks -> outputs opened -> target
 * spawned stopped (run) or found (attach) -> skeleton open/configure/load/attach ->
 * marker probes -> the collector (the one writer of the model) -> poll loop with the
 * live view and the guard -> final collection -> summary and files -> teardown. Every
 * exit path goes through cleanup, so no BPF program or link outlives memphase, but for the
 * child that releases the links after a successful run (session_bpf__release()), which
 * holds nothing else and ends once they are released.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect/collector.h"
#include "collect/phases.h"
#include "collect/probes.h"
#include "collect/record.h"
#include "collect/target.h"
#include "collect/watchdog.h"
#include "guard.h"
#include "lib/httpd.h"
#include "lib/userfs.h"
#include "lib/utf8.h"
#include "lib/util.h"
#include "loader.h"
#include "model/model.h"
#include "preflight.h"
#include "report/live/live.h"
#include "report/outputs.h"
#include "report/summary.h"
#include "users.h"
#include "session.h"
#include "session_int.h"
#include "memphase.skel.h"

volatile sig_atomic_t session_exiting_sig;
static volatile sig_atomic_t nsignals;

static void on_signal(int sig)
{
	session_exiting_sig = sig;
	nsignals++;
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

int session__start_collector(struct session *s)
{
	const struct env *e = s->env;
	struct collector_opts co = {
		.phases = &s->phases,
		.probes = s->probes,
		.mappings = !e->no_mappings,
		.stacks = e->stack_mode != MP_STACKS_NONE,
		.keep_raw = outputs__needs(&s->out) & OUTPUT_NEEDS_RAW,
		.sample_bytes = e->sample_bytes,
		.stop_on_map = e->mode == MODE_RUN,
		.bpf_stats = e->bpf_stats,
		.side = s->side ? s->side->obj : NULL,
		.rec = s->rec,
		.fs = s->fs,
		.preset = e->preset ? e->preset->name : NULL,
		.cause_files = e->cause_files,
		.cause_texts = e->cause_texts,
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

/* ---- the recording ---- */

/* ---- targets ---- */

/* ---- metrics ---- */

/* ---- loop ---- */

static void handle_signal(struct session *s)
{
	int sig = session_exiting_sig;
	char exe[256];

	session_exiting_sig = 0;
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
		/* watch's children print no status lines: their files say it all */
		.interval_s = s->env->watched ? 1e9 : s->env->interval,
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
	int err, wait_ms = POLL_MS;

	if (s->env->duration > 0)
		deadline = s->model.start_ns + (__u64)(s->env->duration * 1e9);
	for (;;) {
		err = collector__poll(s->collector, wait_ms);
		if (err)
			return err;
		session_record__rotate(s);
		now = util__now_ns();
		session_metrics__tick(s, now);
		if (session_exiting_sig)
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
			/* its exit event comes before it can be reaped (exit_mm(), exit_notify()):
			 * the reap is near, not a tick away */
			if (collector__root_exited(s->collector))
				wait_ms = REAP_POLL_MS;
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
	struct output_ctx oc;
	int st = s->target.status;
	bool reaped = s->target.spawned && s->target.reaped;
	int err, err2;

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
	summary__print(s->out.to_stdout ? stderr : stdout, &s->model, s->env->hists);
	/* memphase's own cost, from the kernel's per-program run-time statistics */
	if (s->env->bpf_stats)
		summary__bpf_stats(stderr, &s->model);
	if (s->rec && recorder__thinned(s->rec))
		fprintf(stderr, "memphase: --record-max: %llu RSS samples, counter snapshots "
				"and stack samples were left out of the recording\n",
			(unsigned long long)recorder__thinned(s->rec));
	err = session_record__close(s);
	oc = session_metrics__ctx(s, 0);
	err2 = outputs__write(&s->out, &oc, true);
	return err ? err : err2;
}

int session__run(const struct env *e, int *status)
{
	struct session *s;
	struct sigaction sa = { .sa_handler = on_signal };
	int err;

	/*
	 * First: a SIGTERM during the set-up (watch ends its children so, the moment it stops)
	 * is handled once it is done, as later: the outputs are written, not lost to the
	 * default action
	 */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	*status = TARGET_EXIT_FAILED;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->env = e;
	s->target.exec_fd = -1;
	s->stats_fd = -1;
	s->wd.pid = s->wd.fd = -1;
	s->textfile = -1;
	s->channel = e->metrics_fd;
	s->use_tui = !e->no_tui && isatty(STDOUT_FILENO);
	libbpf_set_print(session_bpf__print);

	err = preflight__check(e);
	if (!err)
		err = phases__setup(&s->phases, e->preset, e->specs, e->nspecs,
				    e->request.symbol[0] ? &e->request : NULL);
	if (err)
		goto cleanup;
	session_bpf__begin(s);
	/*
	 * Now: turning the stats on patches every BPF run site in the kernel (~12 ms here),
	 * and a program load waits for it; the load thread loads none during its first ms
	 * (the BTF check, the object's open)
	 */
	if (e->bpf_stats) {
		s->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (s->stats_fd < 0)
			fprintf(stderr, "memphase: cannot enable BPF run-time stats: %s\n",
				strerror(-s->stats_fd));
	}
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
	err = outputs__open(&s->out, e->out_paths, e->target_log, s->fs,
			    e->mode == MODE_RUN && (s->use_tui || e->target_log));
	if (!err)
		err = session_record__open(s);
	if (!err)
		err = session_metrics__open(s);
	if (err)
		goto cleanup;

	/* run: interrupted before the command started, it is not started at all */
	if (e->mode == MODE_RUN && session_exiting_sig) {
		fprintf(stderr, "memphase: %s before the command started: not started\n",
			strsignal(session_exiting_sig));
		err = -EINTR;
		goto cleanup;
	}
	err = e->mode == MODE_RUN ? session_target__run(s) : session_target__attach(s);
	if (!err)
		err = live_start(s);
	if (!err)
		err = poll_loop(s);
	if (!err)
		err = finish(s);
	/* the final figures, for watch to serve one scrape interval more */
	if (!err)
		session_metrics__send(s, 0, true);
	if (!err)
		session_metrics__linger(s);
	if (!err)
		*status = s->status;
	/* not after an error: its message and status come after the teardown */
	if (!err)
		session_bpf__release(s->skel);
cleanup:
	session_bpf__join(s);
	if (err && s->target.fail_status)
		*status = s->target.fail_status;
	if (err == -ESRCH && e->watched)
		*status = SESSION_EXIT_GONE;
	live__free(s->live);
	/* a run that failed after it started still leaves what it recorded */
	session_record__close(s);
	/* a command that never ran, or that memphase stops observing (not after 'q') */
	if (!s->detached)
		target__abort(&s->target);
	httpd__free(s->httpd);
	outputs__close(&s->out);
	userfs__free(s->fs);
	collector__release(s->collector);
	watchdog__stop(&s->wd);
	guard__free(s->guard);
	collector__free(s->collector);
	probes__free(s->probes);
	memphase_bpf__destroy(s->side);
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

/* ---- memphase report FILE ---- */

