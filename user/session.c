// SPDX-License-Identifier: GPL-2.0
/*
 * One observation, as the orchestrator of the rooms: checks -> outputs opened -> target
 * spawned stopped (run) or found (attach) -> skeleton open/configure/load/attach ->
 * marker probes -> the collector (the one writer of the model) -> poll loop with the
 * live view and the guard -> final collection -> summary and files -> teardown. Every
 * exit path goes through cleanup, so no BPF program or link outlives memphase, but for the
 * child that releases the links after a successful run (release_in_background()), which
 * holds nothing else and ends once they are released.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect/collect.h"
#include "collect/collector.h"
#include "collect/phases.h"
#include "collect/cuda.h"
#include "collect/probes.h"
#include "collect/record.h"
#include "collect/replay.h"
#include "collect/target.h"
#include "collect/watchdog.h"
#include "guard.h"
#include "kbtf.h"
#include "loader.h"
#include "lib/httpd.h"
#include "lib/userfs.h"
#include "lib/utf8.h"
#include "lib/util.h"
#include "model/model.h"
#include "preflight.h"
#include "users.h"
#include "report/live/live.h"
#include "report/metrics.h"
#include "report/outputs.h"
#include "report/summary.h"
#include "session.h"
#include "memphase.skel.h"

#define POLL_MS		100
#define TEXTFILE_NS	(5ULL * 1000000000)	/* --metrics-textfile period */
#define CHANNEL_NS	(1ULL * 1000000000)	/* under watch: the exposition sent this often */
#define CHANNEL_FINAL_MS 2000			/* the last one may wait this long for room */
/* after the run: wait for one more scrape this much past the scrape interval, at most */
#define METRICS_LINGER_SLACK_NS	(2ULL * 1000000000)
#define METRICS_LINGER_MAX_NS	(65ULL * 1000000000)

struct session {
	const struct env *env;
	struct creds user;		/* who started memphase: files are theirs */
	struct creds run_as;		/* run: who the command runs as */
	struct userfs *fs;		/* file operations as user */
	int status;			/* memphase's exit status */
	struct memphase_bpf *skel;
	struct memphase_bpf *side;	/* the side program's object (loader.h), or NULL */
	struct loader_late *late;	/* the late programs' load (loader.h), or NULL */
	bool late_said;			/* its failure said */
	/* bpf_load(), then bpf_attach(), on a thread from bpf_begin() to bpf_join() */
	pthread_t load_th;
	pthread_mutex_t load_lock;
	pthread_cond_t load_cond;
	bool loading;			/* the thread runs */
	bool loaded;			/* bpf_load() returned load_err */
	int load_err;
	int attach_err;
	struct probes *probes;
	struct phases phases;
	struct target target;
	struct model model;		/* written by the collector alone */
	struct collector *collector;
	struct guard *guard;
	struct outputs out;
	struct userfs_file rec_file;	/* --record: the recording */
	bool rec_open, rec_committed;
	struct recorder *rec;
	/* --record-keep: the older segments kept, oldest first, and the last one's number */
	struct userfs_file rec_old[RECORD_KEEP_MAX];
	unsigned int nrec_old, rec_seq;
	__u64 rec_preamble;		/* bytes the current segment began with */
	bool rec_rotate_failed;
	struct watchdog wd;		/* run mode: continues held targets if memphase dies */
	int stats_fd;			/* BPF_ENABLE_STATS while open */
	bool use_tui;
	struct live *live;
	__u64 kill_at;			/* SIGKILL the target at this time (0: no) */
	bool detached;			/* 'q': stop observing, leave the command running */
	struct httpd *httpd;		/* --metrics: served from the poll loop */
	int textfile;			/* --metrics-textfile: its registry index (-1: none) */
	__u64 textfile_next;		/* its next write while the run goes on */
	struct output_self self;	/* memphase's own cost, for the metrics */
	__u64 scrapes;			/* GET /metrics answered */
	int channel;			/* under watch: the socket to it (--metrics-fd), -1 */
	__u64 channel_next;		/* ... the next exposition sent */
	bool channel_big;		/* ... one did not fit (said once) */
	__u64 scrape_ns, scrape_gap_ns;	/* the last one, and the time since the one before */
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

/* Opens, configures and loads the object (s->skel, s->side): 0 or -errno (said). */
static int bpf_load(struct session *s)
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
		.attach = s->env->mode == MODE_ATTACH,
	};
	struct kbtf kb = { .fd = -1 };
	struct loader_opts lo = { .phases = &s->phases, .cc = &cc };
	int err;

	/* MEMPHASE_VMLINUX_BTF for the CO-RE relocations; else the build's minimal BTF when
	 * this kernel is the build's (the kernel's own is not parsed then) */
	if (preflight__btf_overridden()) {
		oo.btf_custom_path = preflight__btf_path();
	} else {
		err = kbtf__open(&kb, preflight__btf_path());
		if (!err)
			oo.btf_custom_path = kb.path;
		if (s->env->verbose)
			fprintf(stderr, "memphase: kernel BTF: %s%s\n", !err ? "the build's (its "
				"minimal BTF is used)" : err == -ESTALE ? "not the build's (parsed)"
				: err == -ENOENT ? "this build has no minimal BTF (parsed)" :
				strerror(-err), err && err != -ESTALE && err != -ENOENT ? " (parsed)"
				: "");
	}
	s->skel = memphase_bpf__open_opts(&oo);
	if (!s->skel) {
		err = -errno;
		fprintf(stderr, "memphase: failed to open BPF object: %s\n", strerror(-err));
		kbtf__close(&kb);
		return err;
	}
	err = collect__configure(s->skel, &s->phases, &cc);
	if (err) {
		kbtf__close(&kb);
		return err;
	}
	lo.oo = &oo;
	lo.split = kb.fd >= 0;
	lo.btf_fd = kb.fd;
	err = loader__load(s->skel, &lo, &s->side, &s->late);
	/* the minimal BTF is read by the load */
	kbtf__close(&kb);
	if (err) {
		fprintf(stderr, "memphase: failed to load BPF programs: %s%s\n", strerror(-err),
			err == -EPERM ? " (needs root or CAP_BPF and CAP_PERFMON)" : "");
		return err;
	}
	return 0;
}

/* After the load: the programs attached (before any target is added). 0 or -errno (said). */
static int bpf_attach(struct session *s)
{
	int err;

	s->skel->bss->stop_on_map = s->env->mode == MODE_RUN;
	collect__reserve_unknown(s->skel, s->phases.nphases);
	/* the side object's programs are attached (loader.h) */
	err = memphase_bpf__attach(s->skel);
	if (err)
		fprintf(stderr, "memphase: failed to attach tracepoints: %s\n", strerror(-err));
	return err;
}

static void *bpf_load_thread(void *arg)
{
	struct session *s = arg;
	int err = bpf_load(s);

	pthread_mutex_lock(&s->load_lock);
	s->load_err = err;
	s->loaded = true;
	pthread_cond_broadcast(&s->load_cond);
	pthread_mutex_unlock(&s->load_lock);
	/* the links (a few ms), while the main thread sets up the collector */
	if (!err)
		s->attach_err = bpf_attach(s);
	return NULL;
}

/*
 * The load (tens of ms, most of it the kernel's verifier) starts on a thread as soon as the
 * phases are known, while the users, outputs and the command's child are set up;
 * bpf_loaded() waits for it, bpf_join() for the attach that follows on the same thread.
 * Signals go to the main thread (the thread blocks them). Without a thread, both happen
 * here.
 */
static void bpf_begin(struct session *s)
{
	sigset_t all, old;

	pthread_mutex_init(&s->load_lock, NULL);
	pthread_cond_init(&s->load_cond, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	s->loading = !pthread_create(&s->load_th, NULL, bpf_load_thread, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (s->loading)
		return;
	s->load_err = bpf_load(s);
	s->loaded = true;
	if (!s->load_err)
		s->attach_err = bpf_attach(s);
}

/* The load's result (0 or -errno, said): the objects can be used, their links may still be
 * in the making. */
static int bpf_loaded(struct session *s)
{
	pthread_mutex_lock(&s->load_lock);
	while (!s->loaded)
		pthread_cond_wait(&s->load_cond, &s->load_lock);
	pthread_mutex_unlock(&s->load_lock);
	return s->load_err;
}

/* The load's and the attach's result (0 or -errno, said); idempotent. */
static int bpf_join(struct session *s)
{
	if (s->loading) {
		pthread_join(s->load_th, NULL);
		s->loading = false;
	}
	return s->load_err ? s->load_err : s->attach_err;
}

/* The program named name in one of objs[n] that loaded it, else NULL. */
static struct bpf_program *prog_loaded(struct bpf_object *const *objs, unsigned int n,
				       const char *name)
{
	struct bpf_program *prog;
	unsigned int i;

	for (i = 0; i < n; i++) {
		prog = objs[i] ? bpf_object__find_program_by_name(objs[i], name) : NULL;
		if (prog && bpf_program__fd(prog) >= 0)
			return prog;
	}
	return NULL;
}

/* The probes' programs: the first object's, or the late ones' once loaded (a failed
 * load said once). */
static int probes_progs(void *ctx, struct probes_progs *pp)
{
	struct session *s = ctx;
	struct bpf_object *objs[LOADER_LATE_OBJS] = { s->skel->obj };
	unsigned int n = 1;
	int err;

	if (s->late) {
		err = loader__late_wait(s->late, objs);
		if (err) {
			if (!s->late_said)
				fprintf(stderr, "memphase: failed to load the marker programs: %s\n",
					strerror(-err));
			s->late_said = true;
			return err;
		}
		n = LOADER_LATE_OBJS;
	}
	pp->marker = prog_loaded(objs, n, "handle_marker");
	pp->marker_ret = prog_loaded(objs, n, "handle_marker_ret");
	pp->alloc_entry = prog_loaded(objs, n, "handle_alloc_entry");
	pp->alloc_return = prog_loaded(objs, n, "handle_alloc_return");
	return 0;
}

/* After bpf_loaded(): the marker and allocation probes (their programs may still be
 * loading: the first attach waits for them). 0 or -errno. */
static int probes_start(struct session *s)
{
	s->probes = probes__new(&s->phases, probes_progs, s, s->fs, &s->user, s->env->verbose);
	if (!s->probes)
		return -ENOMEM;
	probes__set_allocs(s->probes, cuda_allocs, cuda_nallocs);
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

_Static_assert(COLLECTOR_MAX_LATE >= LOADER_LATE_OBJS, "the collector takes every late object");

static unsigned int late_objs(void *ctx, struct bpf_object **objs, unsigned int max)
{
	struct session *s = ctx;

	return max >= LOADER_LATE_OBJS ? loader__late_done(s->late, objs) : 0;
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
		.side = s->side ? s->side->obj : NULL,
		.rec = s->rec,
		.fs = s->fs,
		.preset = e->preset ? e->preset->name : NULL,
		.cause_files = e->cause_files,
		.cause_texts = e->cause_texts,
		.ncause_files = e->ncause_files,
		.allocators = e->allocators,
		.nallocators = e->nallocators,
		.hooks = { .ctx = s, .notice = on_notice, .max_rss = on_max_rss, .late = late_objs },
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

/*
 * --record FILE is opened with the other outputs, as the invoking user, as a temporary
 * file beside FILE. It takes FILE's name (rename) once the run starts, with its header
 * and first chunk in it, and grows in place from then on: a run that fails to start
 * leaves the old FILE; a reader of FILE always finds whole chunks, at worst followed by
 * the cut one a killed memphase was writing, which `memphase report` leaves out and says
 * so. (The helper removes an uncommitted temporary file when memphase dies.)
 */
static int record_open(struct session *s)
{
	/* rotated segments are not thinned out: they end at the size instead */
	struct recorder_opts ro = { .max_bytes = s->env->record_keep ? 0 : s->env->record_max };
	char p[256];
	int err;

	if (!s->env->record)
		return 0;
	err = userfs__open(s->fs, s->env->record, &s->rec_file);
	if (!err && s->rec_file.kind != USERFS_FILE)
		err = -ESPIPE;
	/* one line said: the recording would replace an output, or be replaced by it */
	if (!err && outputs__clash(&s->out, &s->rec_file, "record", s->env->record)) {
		userfs__discard(s->fs, &s->rec_file);
		return -EINVAL;
	}
	if (err) {
		fprintf(stderr, "memphase: --record %s: %s\n",
			utf8__esc_term(p, sizeof(p), s->env->record),
			err == -ESPIPE ? "a recording must be a regular file" :
			s->rec_file.why[0] ? s->rec_file.why : strerror(-err));
		if (!err || err == -ESPIPE)
			userfs__discard(s->fs, &s->rec_file);
		return err ? err : -ESPIPE;
	}
	s->rec_open = true;
	ro.fd = s->rec_file.fd;
	s->rec = recorder__new(&ro);
	if (!s->rec) {
		err = -errno;
		fprintf(stderr, "memphase: --record %s: %s\n",
			utf8__esc_term(p, sizeof(p), s->env->record), strerror(-err));
		return err;
	}
	return 0;
}

/* The run started: the recording takes its name. */
static int record_commit(struct session *s)
{
	char p[256];
	int err;

	if (!s->rec)
		return 0;
	err = recorder__flush(s->rec);
	if (!err)
		err = userfs__commit(s->fs, &s->rec_file);
	if (err) {
		fprintf(stderr, "memphase: --record %s: %s\n",
			utf8__esc_term(p, sizeof(p), s->env->record), strerror(-err));
		return err;
	}
	s->rec_committed = true;
	return 0;
}

/* An older segment's name: FILE's base name with .NNNNNN before .mprec (or at the end). */
static void segment_name(const char *record, unsigned int n, char *buf, size_t len)
{
	const char *base = strrchr(record, '/');
	size_t l;

	base = base ? base + 1 : record;
	l = strlen(base);
	if (l > 6 && !strcmp(base + l - 6, ".mprec"))
		snprintf(buf, len, "%.*s.%06u.mprec", (int)(l - 6), base, n);
	else
		snprintf(buf, len, "%s.%06u", base, n);
}

static int rotate_failed(struct session *s, const char *what, int err, const char *why)
{
	char p[256];

	s->rec_rotate_failed = true;
	fprintf(stderr, "memphase: --record-keep: %s %s: %s; the recording goes on in one "
			"file\n", what, utf8__esc_term(p, sizeof(p), s->env->record),
		why && why[0] ? why : strerror(-err));
	return err;
}

/*
 * --record-keep: once the current segment reaches --record-max (and holds at least half of
 * it past its set-up), it takes the next older segment's name and ends; a new one, opened
 * as the invoking user like every output, takes FILE's name with everything a replay
 * needs first (collector__segment_begin). Older segments past the count are removed: only
 * those this run wrote, and only while they are still the files it wrote. 0 or -errno
 * (reported; the recording goes on in the current file).
 */
static int record_rotate(struct session *s)
{
	struct userfs_file next = { .fd = -1, .id = -1 };
	struct recorder_opts ro = {};
	char name[NAME_MAX + 1], p[256];
	struct recorder *rec;
	__u64 bytes;
	int err, tries;

	if (!s->env->record_keep || !s->rec || !s->rec_committed || s->rec_rotate_failed)
		return 0;
	bytes = recorder__bytes(s->rec);
	if (bytes < s->env->record_max || bytes - s->rec_preamble < s->env->record_max / 2)
		return 0;
	err = userfs__open(s->fs, s->env->record, &next);
	if (err)
		return rotate_failed(s, "cannot open a new segment of", err, next.why);
	ro.fd = next.fd;
	rec = recorder__new(&ro);
	if (!rec) {
		err = -errno;
		userfs__discard(s->fs, &next);
		return rotate_failed(s, "cannot start a new segment of", err, NULL);
	}
	/* the file being written takes its older name first: on failure it just goes on */
	for (tries = 0; tries < 100; tries++) {
		segment_name(s->env->record, ++s->rec_seq, name, sizeof(name));
		err = userfs__set_aside(s->fs, &s->rec_file, name);
		if (err != -EEXIST)
			break;
	}
	if (err) {
		recorder__free(rec);
		userfs__discard(s->fs, &next);
		return rotate_failed(s, "cannot rename", err, s->rec_file.why);
	}
	collector__segment_end(s->collector);
	err = recorder__free(s->rec);
	if (!err && fsync(s->rec_file.fd))
		err = -errno;
	if (err)
		fprintf(stderr, "memphase: writing the recording segment %s failed: %s\n",
			utf8__esc_term(p, sizeof(p), name), strerror(-err));
	userfs__close(&s->rec_file);
	s->rec_old[s->nrec_old++] = s->rec_file;
	s->rec = rec;
	s->rec_file = next;
	collector__segment_begin(s->collector, rec);
	err = recorder__flush(rec);
	if (!err)
		err = userfs__commit(s->fs, &s->rec_file);
	if (err)
		fprintf(stderr, "memphase: --record %s: %s\n",
			utf8__esc_term(p, sizeof(p), s->env->record),
			s->rec_file.why[0] ? s->rec_file.why : strerror(-err));
	s->rec_preamble = recorder__bytes(rec);
	while (s->nrec_old && s->nrec_old > s->env->record_keep - 1) {
		err = userfs__remove(s->fs, &s->rec_old[0]);
		if (err && err != -ENOENT)
			fprintf(stderr, "memphase: --record-keep: an old segment was left: %s\n",
				strerror(-err));
		memmove(&s->rec_old[0], &s->rec_old[1], --s->nrec_old * sizeof(s->rec_old[0]));
	}
	return 0;
}

/* The end: the last chunk written. 0 or -errno (reported). */
static int record_close(struct session *s)
{
	char p[256];
	int err = recorder__free(s->rec);

	s->rec = NULL;
	if (err)
		fprintf(stderr, "memphase: writing the recording %s failed: %s\n",
			utf8__esc_term(p, sizeof(p), s->env->record), strerror(-err));
	if (!s->rec_open)
		return err;
	s->rec_open = false;
	if (s->rec_committed && !err && fsync(s->rec_file.fd))
		err = -errno;
	if (s->rec_committed)
		userfs__close(&s->rec_file);
	else
		userfs__discard(s->fs, &s->rec_file);
	return err;
}

/* ---- targets ---- */

/*
 * Before any target is added: whose reach the observation stays within. Under sudo a
 * target the invoking user could no longer ptrace (a setuid exec...) stops being followed
 * (MP_EV_LEFT); root itself may observe anything.
 */
static void observer_set(struct session *s)
{
	struct mp_observer *o = &s->skel->bss->observer;

	o->uid = s->user.uid;
	o->gid = s->user.gid;
	o->check = !s->user.root;
}

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
	err = bpf_loaded(s);
	if (!err) {
		observer_set(s);
		err = probes_start(s);
	}
	if (!err)
		err = collector_start(s);
	if (!err)
		err = collector__begin_run(s->collector, s->target.pid, e->argv, s->target.exe);
	if (!err)
		err = watchdog__start(&s->wd, s->skel);
	/* the links are made before the command is one of the targets */
	if (!err)
		err = bpf_join(s);
	/* ignore the forked copy of memphase until it execs the command */
	if (!err)
		err = collect__add_target(s->skel, s->target.pid, MP_T_WAIT_EXEC);
	if (err)
		return err;
	/* scanned already: its exec need not hold the target */
	collect__seen_file(s->skel, s->target.exe);
	collector__started(s->collector);
	err = record_commit(s);
	if (err)
		return err;
	err = target__resume(&s->target);
	if (err)
		return err;
	/* the marker programs, now that the command runs (its first new code waits for
	 * them, held, if they have markers to probe) */
	loader__late_begin(s->late);
	/* it runs: its log is a log now */
	outputs__log_commit(&s->out);
	return 0;
}

static int setup_attach(struct session *s)
{
	const struct env *e = s->env;
	int err;

	err = target__attach(&s->target, e->pid);
	/* watch: the pid must still be the process that matched */
	if (!err && e->watched && s->target.start_time != e->watched_start)
		err = -ESRCH;
	if (!err)
		err = target__may_observe(&s->target, s->fs, &s->user);
	if (err == -ESRCH || err == -ECHILD) {
		/* watch counts these itself: a match that ended before its attach */
		if (!e->watched && err == -ECHILD)
			fprintf(stderr, "memphase: process %d has exited (a zombie its parent has "
					"not reaped): nothing to observe\n", e->pid);
		else if (!e->watched)
			fprintf(stderr, "memphase: no such process: %d\n", e->pid);
		return -ESRCH;
	}
	if (err)
		return err;
	if (target__is_kthread(e->pid)) {
		fprintf(stderr, "memphase: pid %d is a kernel thread: it has no user memory\n",
			e->pid);
		return -EINVAL;
	}
	err = bpf_loaded(s);
	if (!err) {
		observer_set(s);
		err = probes_start(s);
	}
	if (!err)
		err = collector_start(s);
	if (!err)
		err = bpf_join(s);
	/* its events count once its sizes are read: the first of each class is growth */
	if (!err)
		err = collect__add_target(s->skel, e->pid, MP_T_SEEDING);
	if (!err) {
		int serr = collect__seed_attach(s->skel, s->side ? s->side->obj : NULL, e->pid);

		if (serr && s->env->verbose)
			fprintf(stderr, "memphase: sizes of %d not read at attach (%s): its first "
				"event of each class is its baseline\n", e->pid, strerror(-serr));
	}
	if (!err)
		err = collector__begin_attach(s->collector, e->pid);
	if (err)
		return err;
	if (!target__alive(&s->target)) {
		if (!e->watched)
			fprintf(stderr, "memphase: process %d exited while attaching\n", e->pid);
		return -ESRCH;
	}
	collector__started(s->collector);
	/* a library with markers it loads later */
	loader__late_begin(s->late);
	return record_commit(s);
}

/* ---- metrics ---- */

/* The model as things stand, with the system's memory and memphase's own cost. */
static struct output_ctx metrics_ctx(struct session *s, __u64 now)
{
	struct output_ctx oc = {
		.m = &s->model,
		.tl = collector__timeline(s->collector),
		.sm = collector__sysmem(s->collector, NULL),
		.now_ns = s->model.finished ? 0 : now,
		.self = &s->self,
	};

	util__self_usage(&s->self.cpu_s, &s->self.rss_bytes);
	return oc;
}

/* GET /metrics: OpenMetrics when the client asks for it, else text format 0.0.4. */
static int metrics_get(void *ctx, const struct httpd_request *rq, FILE *body,
		       const char **content_type)
{
	struct session *s = ctx;
	__u64 t0 = util__now_ns();
	struct output_ctx oc = metrics_ctx(s, t0);
	double om = httpd__accept_q(rq->accept, "application/openmetrics-text", false);
	/* no Accept header: the text format, as Prometheus's own exporters answer */
	bool use_om = rq->accept[0] && om > 0 &&
		      om >= httpd__accept_q(rq->accept, "text/plain", true);
	int err;

	if (s->scrape_ns)
		s->scrape_gap_ns = t0 - s->scrape_ns;
	s->scrape_ns = t0;
	s->scrapes++;

	err = metrics__render(body, &oc, 1, use_om ? METRICS_OPENMETRICS : METRICS_TEXT);
	*content_type = use_om ? METRICS_CT_OPENMETRICS : METRICS_CT_TEXT;
	s->self.render_s = (util__now_ns() - t0) / 1e9;
	s->self.render_bytes = ftell(body) > 0 ? (__u64)ftell(body) : 0;
	return err;
}

/* --metrics: listen before the target starts (a port in use fails the run at once). */
static int metrics_open(struct session *s)
{
	char why[256];
	int k = outputs__find(metrics_textfile_format.name);

	s->textfile = k >= 0 && s->env->out_paths[k] ? k : -1;
	if (!s->env->metrics)
		return 0;
	s->httpd = httpd__new(s->env->metrics, "/metrics", metrics_get, s, &s->user, why,
			      sizeof(why));
	if (!s->httpd) {
		fprintf(stderr, "memphase: --metrics %s: %s\n", s->env->metrics, why);
		return -errno;
	}
	if (s->env->verbose)
		fprintf(stderr, "memphase: metrics on http://%s/metrics\n",
			httpd__addr(s->httpd));
	return 0;
}

/*
 * Under watch (--metrics-fd): the exposition (OpenMetrics) to the supervisor as one
 * message of its socket (SOCK_SEQPACKET: it gets whole ones or none). One it has no room
 * for is skipped (the next follows in CHANNEL_NS), except the last (final), which waits for
 * room a little. A supervisor gone ends the sending.
 */
static void metrics_send(struct session *s, __u64 now, bool final)
{
	int fd = s->channel;
	struct output_ctx oc;
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	__u64 t0 = util__now_ns();
	char *buf = NULL;
	size_t len = 0;
	ssize_t n;
	FILE *f;
	int err;

	if (fd < 0)
		return;
	f = open_memstream(&buf, &len);
	if (!f)
		return;
	oc = metrics_ctx(s, now);
	err = metrics__render(f, &oc, 1, METRICS_OPENMETRICS);
	if (fclose(f) || err) {
		free(buf);
		return;
	}
	s->self.render_s = (util__now_ns() - t0) / 1e9;
	s->self.render_bytes = len;
	for (;;) {
		n = send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n >= 0 || errno != EAGAIN || !final ||
		    poll(&pfd, 1, CHANNEL_FINAL_MS) <= 0)
			break;
	}
	if (n < 0 && errno == EMSGSIZE && !s->channel_big) {
		s->channel_big = true;
		fprintf(stderr, "memphase: the metrics (%zu bytes) do not fit the channel to "
				"watch: left out until they do\n", len);
	}
	if (n < 0 && (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN)) {
		close(fd);
		s->channel = -1;
	}
	free(buf);
}

/* From the poll loop: scrapes answered, the textfile rewritten every TEXTFILE_NS. */
static void metrics_tick(struct session *s, __u64 now)
{
	struct output_ctx oc;

	httpd__serve(s->httpd, now);
	if (s->channel >= 0 && now >= s->channel_next) {
		s->channel_next = now + CHANNEL_NS;
		metrics_send(s, now, false);
	}
	if (s->textfile < 0 || now < s->textfile_next)
		return;
	s->textfile_next = now + TEXTFILE_NS;
	oc = metrics_ctx(s, now);
	outputs__write_one(&s->out, s->textfile, &oc);
}

/*
 * The run is over and the model final: a scraper has not seen its last figures (the
 * growth at the end, an OOM kill). Serve them until the next scrape, at most one scrape
 * interval as measured (capped), unless nothing ever scraped or a signal comes.
 */
static void metrics_linger(struct session *s)
{
	__u64 now = util__now_ns(), seen = s->scrapes, until;

	if (!s->httpd || !s->scrape_gap_ns)
		return;
	until = s->scrape_ns + s->scrape_gap_ns + METRICS_LINGER_SLACK_NS;
	if (until > now + METRICS_LINGER_MAX_NS)
		until = now + METRICS_LINGER_MAX_NS;
	if (until <= now)
		return;
	if (s->env->verbose || until - now > 2000000000ULL)
		fprintf(stderr, "memphase: serving the final metrics until the next scrape "
				"(at most %.0f s)\n", (until - now) / 1e9);
	while (!exiting_sig && now < until) {
		httpd__serve(s->httpd, now);
		/* the answer to a scrape after the end is out: done */
		if (s->scrapes > seen && !httpd__writing(s->httpd))
			return;
		usleep(POLL_MS * 1000 / 4);
		now = util__now_ns();
	}
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
	int err;

	if (s->env->duration > 0)
		deadline = s->model.start_ns + (__u64)(s->env->duration * 1e9);
	for (;;) {
		err = collector__poll(s->collector, POLL_MS);
		if (err)
			return err;
		record_rotate(s);
		now = util__now_ns();
		metrics_tick(s, now);
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
	summary__print(s->out.to_stdout ? stderr : stdout, &s->model);
	/* memphase's own cost, from the kernel's per-program run-time statistics */
	if (s->env->bpf_stats)
		summary__bpf_stats(stderr, &s->model);
	if (s->rec && recorder__thinned(s->rec))
		fprintf(stderr, "memphase: --record-max: %llu RSS samples, counter snapshots "
				"and stack samples were left out of the recording\n",
			(unsigned long long)recorder__thinned(s->rec));
	err = record_close(s);
	oc = metrics_ctx(s, 0);
	err2 = outputs__write(&s->out, &oc, true);
	return err ? err : err2;
}

/* Whether fd is a BPF object or a perf event (what a BPF link may hold). */
static bool fd_is_bpf(int fd)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = 0;
	return !strncmp(target, "anon_inode:bpf", 14) ||
	       !strcmp(target, "anon_inode:[perf_event]");
}

/*
 * Releasing the links takes the kernel an RCU grace period per uprobe link and per
 * tracepoint (hundreds of ms in all, in whatever process closes the last descriptor). Once
 * the outputs are written and the summary printed, a child that keeps a copy of the BPF
 * descriptors only (no terminal, pipe, file or watchdog descriptor: nothing waits for it)
 * closes them after memphase has exited, so the shell gets control back at once. It is
 * named memphase-detach; no program or link outlives it.
 */
static void release_in_background(struct memphase_bpf *skel)
{
	pid_t parent = getpid();
	sigset_t usr1, old;
	struct dirent *de;
	int fd, dfd, sig;
	DIR *d;

	fflush(stdout);
	fflush(stderr);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &old);
	switch (fork()) {
	case 0:
		break;
	default:
		/* memphase (or no child: the release stays in memphase) */
		sigprocmask(SIG_SETMASK, &old, NULL);
		return;
	}
	/* told when memphase has exited (checked after asking: it may be gone already) */
	prctl(PR_SET_PDEATHSIG, SIGUSR1, 0, 0, 0);
	prctl(PR_SET_NAME, "memphase-detach", 0, 0, 0);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	d = opendir("/proc/self/fd");
	if (!d)
		_exit(0);
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		fd = atoi(de->d_name);
		if (de->d_name[0] != '.' && fd != dfd && !fd_is_bpf(fd))
			close(fd);
	}
	closedir(d);
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	if (getppid() == parent)
		sigwait(&usr1, &sig);
	/* memphase's watchdog has let held targets go by then; nothing more to hold or count
	 * until the links are gone, which exiting closes */
	if (skel)
		collect__drop_targets(skel);
	_exit(0);
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
	s->textfile = -1;
	s->channel = e->metrics_fd;
	s->use_tui = !e->no_tui && isatty(STDOUT_FILENO);
	libbpf_set_print(libbpf_print);

	err = preflight__check(e);
	if (!err)
		err = phases__setup(&s->phases, e->preset, e->specs, e->nspecs,
				    e->request.symbol[0] ? &e->request : NULL);
	if (err)
		goto cleanup;
	bpf_begin(s);
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
		err = record_open(s);
	if (!err)
		err = metrics_open(s);
	if (err)
		goto cleanup;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	err = e->mode == MODE_RUN ? setup_run(s) : setup_attach(s);
	if (!err)
		err = live_start(s);
	if (!err)
		err = poll_loop(s);
	if (!err)
		err = finish(s);
	/* the final figures, for watch to serve one scrape interval more */
	if (!err)
		metrics_send(s, 0, true);
	if (!err)
		metrics_linger(s);
	if (!err)
		*status = s->status;
	/* not after an error: its message and status come after the teardown */
	if (!err)
		release_in_background(s->skel);
cleanup:
	bpf_join(s);
	if (err && s->target.fail_status)
		*status = s->target.fail_status;
	if (err == -ESRCH && e->watched)
		*status = SESSION_EXIT_GONE;
	live__free(s->live);
	/* a run that failed after it started still leaves what it recorded */
	record_close(s);
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
	loader__late_free(s->late);
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

int session__report(const struct env *e, int *status)
{
	struct replay_opts ro = { .from_s = e->report_from, .to_s = e->report_to,
				  .phase = e->report_phase };
	struct output_ctx oc = {};
	struct replay_result res;
	struct outputs out = {};
	struct collector *c = NULL;
	struct userfs *fs = NULL;
	struct creds user;
	struct model *m;
	char why[256], p[256];
	struct stat st;
	FILE *f;
	int err;

	*status = TARGET_EXIT_FAILED;
	/* a report needs no privilege: all of it runs as the invoking user, who must be
	 * able to read the recording and write the files */
	err = users__invoking(&user);
	if (err)
		return err;
	err = creds__drop(&user);
	if (err) {
		fprintf(stderr, "memphase: cannot become uid %u: %s\n", (unsigned int)user.uid,
			strerror(-err));
		return err;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	utf8__esc_term(p, sizeof(p), e->report_file);
	f = fopen(e->report_file, "rbe");
	if (!f) {
		err = -errno;
		fprintf(stderr, "memphase: cannot open %s: %s\n", p, strerror(-err));
		free(m);
		return err;
	}
	if (!fstat(fileno(f), &st) && S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		fprintf(stderr, "memphase: %s: %s\n", p, strerror(EISDIR));
		goto out;
	}
	fs = userfs__new(&user);
	if (!fs) {
		err = -errno;
		fprintf(stderr, "memphase: cannot act as uid %u for the output files: %s\n",
			(unsigned int)user.uid, strerror(-err));
		goto out;
	}
	err = outputs__open(&out, e->out_paths, NULL, fs, false);
	if (err)
		goto out;
	ro.keep_raw = outputs__needs(&out) & OUTPUT_NEEDS_RAW;
	c = replay__file(f, m, &ro, &res, why, sizeof(why));
	if (!c) {
		err = -errno;
		fprintf(stderr, "memphase: %s: %s\n", p, why);
		goto out;
	}
	if (res.truncated)
		fprintf(stderr, "memphase: %s is truncated: read up to the last whole chunk "
				"(%u chunks, %llu bytes cut off): the run was not finished by "
				"memphase\n",
			p, res.chunks, (unsigned long long)res.tail_bytes);
	else if (!res.finished)
		fprintf(stderr, "memphase: %s ends without the end of the run (%u whole chunks): "
				"the run was not finished by memphase\n", p, res.chunks);
	if (res.unknown)
		fprintf(stderr, "memphase: %s: %llu records of kinds this memphase does not know "
				"were skipped (a newer memphase wrote it)\n", p,
			(unsigned long long)res.unknown);
	/* a recording cut short ends where its last record does */
	if (!m->finished)
		model__finish(m, m->phase_since_ns > m->end_ns ? m->phase_since_ns : m->end_ns);
	oc.m = m;
	oc.tl = collector__timeline(c);
	summary__print(out.to_stdout ? stderr : stdout, m);
	err = outputs__write(&out, &oc, true);
	if (!err)
		*status = 0;
out:
	outputs__close(&out);
	userfs__free(fs);
	collector__free(c);
	if (c)
		model__free(m);
	free(m);
	fclose(f);
	return err;
}
