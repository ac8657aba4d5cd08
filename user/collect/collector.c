// SPDX-License-Identifier: GPL-2.0
/* The collector: ring buffer, BPF maps, /proc and system memory -> the model. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include "collect/bpfmaps.h"
#include "collect/mappings.h"
#include "collect/collector.h"
#include "collect/engine.h"
#include "collect/nvml.h"
#include "collect/phases.h"
#include "collect/presets.h"
#include "collect/probes.h"
#include "collect/record.h"
#include "collect/stacks.h"
#include "collect/target.h"
#include "collect/unwind.h"
#include "lib/procpid.h"
#include "lib/strmap.h"
#include "lib/utf8.h"
#include "lib/util.h"
#include "model/oom.h"
#include "memphase.skel.h"

#include "collect/collector_int.h"

static void notice(struct collector *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void notice(struct collector *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->hooks.notice)
		c->hooks.notice(c->hooks.ctx, msg);
	else
		fprintf(stderr, "memphase: %s\n", msg);
}

static void markers_count(struct collector *c)
{
	unsigned int n = probes__count(c->probes), na = probes__alloc_count(c->probes);

	if (n != c->m->markers_attached || na != c->m->gpu.probes)
		recorder__markers(c->rec, n, na);
	c->m->markers_attached = n;
	c->m->gpu.probes = na;
}

/* The counters bpfmaps__maps() read into the model. */
static void read_maps(struct collector *c)
{
	bpfmaps__maps(c->skel, c->maplog, c->m);
	recorder__counters(c->rec, c->m);
}

static void exec_scan(struct collector *c, __u32 pid)
{
	char link[64], name[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%u/exe", pid);
	n = readlink(link, name, sizeof(name) - 1);
	if (n <= 0)
		return;
	name[n] = '\0';
	probes__scan_file(c->probes, name, link);
	markers_count(c);
	mappings__learn_file(&c->paths, link, name);
}

/* What killed it (the BPF side saw whether a memory cgroup was at its limit) and what
 * grew just before (the per-phase counters over the last seconds). */
static void oom_forensics(struct collector *c, const struct mp_event *e)
{
	struct model *m = c->m;
	struct model_oom *o;

	if (!m->nooms || m->ooms[m->nooms - 1].ts_ns != e->ts_ns)
		return;
	o = &m->ooms[m->nooms - 1];
	o->cgroup_oom = e->cg_id != 0;
	if (e->cg_id) {
		char name[sizeof(e->cg_name) + 1];

		memcpy(name, e->cg_name, sizeof(e->cg_name));
		name[sizeof(e->cg_name)] = '\0';
		oom__cgroup_path(e->cg_id, name, NULL, o->cgroup, sizeof(o->cgroup));
		o->cgroup_limit = e->cg_limit;
	}
	/* the counters as of now hold everything up to the kill */
	bpfmaps__maps(c->skel, c->maplog, m);
	recorder__counters_all(c->rec, m);
	oom__ring_add(c->growth_ring, m, util__now_ns());
	o->have_window = !oom__ring_window(c->growth_ring, util__now_ns(), OOM_WINDOW_S,
					   o->before, &o->window_s);
	recorder__oom_info(c->rec, o);
}

/*
 * A preset's relabels, by the model's phase names (live: the preset's; a replay: the
 * recording's). A name the model lacks leaves that pair out.
 */
int collector__relabels_set(struct model *m, const struct preset *p)
{
	__u32 from[MP_MAX_PHASES], to[MP_MAX_PHASES], at;
	unsigned int k, i, n;
	int f, t, err;

	for (k = 0; p && p->relabel && p->relabel[k].at; k++) {
		const struct preset_relabel *rl = &p->relabel[k];
		int a = -1;

		for (i = 0; i < m->nphases; i++)
			if (!strcmp(m->names[i], rl->at))
				a = i;
		if (a < 0)
			continue;
		at = a;
		for (i = n = 0; rl->from[i] && rl->to[i] && n < MP_MAX_PHASES; i++) {
			for (f = t = -1; (unsigned int)++f < m->nphases;)
				if (!strcmp(m->names[f], rl->from[i]))
					break;
			while ((unsigned int)++t < m->nphases)
				if (!strcmp(m->names[t], rl->to[i]))
					break;
			if ((unsigned int)f >= m->nphases || (unsigned int)t >= m->nphases)
				continue;
			from[n] = f;
			to[n++] = t;
		}
		err = model__add_relabel(m, at, from, to, n);
		if (err)
			return err;
	}
	return 0;
}

/* What an event does to the model: the same live and in a replay. */
void collector__apply_event(struct collector *c, const struct mp_event *e)
{
	unsigned int nrelabeled = c->m->nrelabeled;
	char comm[MP_COMM_LEN + 1];

	model__on_event(c->m, e);
	/* the history sampled so far shows the relabelled phases too */
	for (; nrelabeled < c->m->nrelabeled; nrelabeled++) {
		const struct model_relabeled *w = &c->m->relabeled[nrelabeled];

		timeline__relabel(c->tl, w->from_ns, w->to_ns, c->m->relabels[w->k].to);
	}
	switch (e->type) {
	case MP_EV_EXIT:
		if (e->pid == c->m->root_pid)
			c->root_exited = true;
		break;
	case MP_EV_LEFT: {
		char path[sizeof(e->path)], esc[2 * sizeof(e->path)];

		/* attach: nothing more to observe of the root; run: the command is still
		 * waited for, unseen */
		if (e->pid == c->m->root_pid)
			c->root_exited = true;
		snprintf(comm, sizeof(comm), "%.*s", MP_COMM_LEN, e->comm);
		snprintf(path, sizeof(path), "%.*s", (int)sizeof(e->path) - 1, e->path);
		notice(c, "%s (pid %u) is no longer observed: %s%s%s; what it did before is kept",
		       utf8__esc_term(comm, sizeof(comm), comm), e->pid,
		       model__left_reason(e->arg), path[0] ? " " : "",
		       utf8__esc_term(esc, sizeof(esc), path));
		break;
	}
	case MP_EV_OOM:
		snprintf(comm, sizeof(comm), "%.*s", MP_COMM_LEN, e->comm);
		notice(c, "OOM kill of %s (pid %u)", utf8__esc_term(comm, sizeof(comm), comm),
		       e->pid);
		break;
	default:
		break;
	}
}

static void on_sample(struct collector *c, const void *data, size_t len)
{
	struct stacks_sample s;

	if (!stacks__resolve(c->stacks, data, len, &s)) {
		recorder__sample(c->rec, &s);
		stacks__apply(c->m, &s);
	}
	free((char *)s.comm);
}

static void on_origin(struct collector *c, const void *data, size_t len)
{
	struct stacks_sample s;

	if (!stacks__resolve(c->stacks, data, len, &s)) {
		recorder__origin(c->rec, &s);
		stacks__origin_apply(c->m, &s);
	}
	free((char *)s.comm);
}

/* A stack record (MP_EV_STACK or MP_EV_ORIGIN) resolved into the model. */
static void on_stack(struct collector *c, const void *data, size_t len)
{
	if (((const struct mp_event *)data)->type == MP_EV_STACK)
		on_sample(c, data, len);
	else
		on_origin(c, data, len);
}

/* The stack records held back, resolved in their order. */
static void defer_flush(struct collector *c)
{
	unsigned int i;

	for (i = 0; i < c->ndefer; i++) {
		on_stack(c, c->defer[i].data, c->defer[i].len);
		free(c->defer[i].data);
	}
	c->ndefer = 0;
}

/* A stack record held back (a copy: the ring's space is reused); resolved now when there
 * is no room. */
static void defer_stack(struct collector *c, const void *data, size_t len)
{
	void *copy = c->ndefer < DEFER_MAX ? malloc(len) : NULL;

	if (!copy) {
		defer_flush(c);
		on_stack(c, data, len);
		return;
	}
	memcpy(copy, data, len);
	c->defer[c->ndefer].data = copy;
	c->defer[c->ndefer++].len = len;
}

/* Everything in the ring buffer, the stack records held back included. */
void collector__consume(struct collector *c)
{
	ring_buffer__consume(c->rb);
	defer_flush(c);
}

/* A mark of the run, recorded. */
static void mark(struct collector *c, __u64 ts, __u32 kind, __u32 pid, const char *text)
{
	recorder__mark(c->rec, ts, kind, pid, text);
	model__add_mark(c->m, ts, kind, pid, text);
}

/* The path the BPF side read of a file just mapped, when /proc/PID/maps had it no more. */
static void file_path_learn(struct collector *c, const void *data, size_t len)
{
	const struct mp_file_event *fe = data;

	if (len >= sizeof(*fe))
		mappings__learn_fpath(&c->paths, fe->e.dev, fe->e.ino, &fe->fp);
}

/* A library (an executable file) mapped: its name, for the timeline. */
static void library_mark(struct collector *c, const struct mp_event *e)
{
	char path[PATH_MAX];

	/* the BPF side could not look the file up (ino 0): found by its address only */
	if (!e->ino)
		return;
	if (mappings__file_name(&c->paths, e->dev, e->ino, path, sizeof(path)))
		snprintf(path, sizeof(path), "[inode %llu]", (unsigned long long)e->ino);
	mark(c, e->ts_ns, HISTORY_LIBRARY, e->pid, path);
}

static void room_refresh(struct collector *c);

/*
 * The engine (the preset's: llama.cpp's settings and build flags) of the first process
 * that enters a phase of its own, read once; recorded for the report. A process that is
 * gone or not the user's to read leaves them unknown.
 */
static void engine_note(struct collector *c, __u32 pid)
{
	const struct preset *p = c->phases->preset;
	int err;

	if (!p || !p->settings)
		return;
	err = engine__read(&c->m->engine, p, pid, c->fs);
	if (err) {
		model_engine__free(&c->m->engine);
		c->m->engine.known = true;	/* not asked again */
		c->m->engine.nsettings = 0;
		return;
	}
	recorder__engine(c->rec, &c->m->engine);
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct collector *c = ctx;
	const struct mp_event *e = data;
	char comm[MP_COMM_LEN + 1];

	/*
	 * A stack record's unwinding can take ms (the first of a process reads its code's
	 * unwind tables). A file mapped only adds to what the unwinder knows, and a target
	 * that mapped code is held until it is probed: the stack records before such events
	 * wait for the next other event, or the end of the ring's batch.
	 */
	if (len >= sizeof(__u32) && e->type == MP_EV_MAPLOG) {
		if (mappings__maplog_add(c->maplog, data, len) == -ENOMEM)
			return -ENOMEM;
		return 0;
	}
	if (len >= sizeof(__u32) && (e->type == MP_EV_STACK || e->type == MP_EV_ORIGIN)) {
		if (c->stacks)
			defer_stack(c, data, len);
		return 0;
	}
	if (len < sizeof(__u32) || (e->type != MP_EV_FILE_MAP && e->type != MP_EV_EXEC_MAP))
		defer_flush(c);
	if (len >= sizeof(struct mp_alloc_event) &&
	    (e->type == MP_EV_ALLOC || e->type == MP_EV_FREE)) {
		recorder__alloc(c->rec, data, sizeof(struct mp_alloc_event));
		model__on_alloc(c->m, data);
		return 0;
	}
	if (len < sizeof(*e))
		return 0;
	/* a request may end here: its projection wants the room as of now (recorded first) */
	if (e->type == MP_EV_PHASE && (e->record == MP_REC_REQUEST ||
	    (e->arg < MP_MAX_PHASES && ((int)e->arg == c->phases->request_phase ||
					(c->phases->lead_mask & (1U << e->arg))))))
		room_refresh(c);
	recorder__event(c->rec, data, sizeof(*e));
	switch (e->type) {
	case MP_EV_FORK:
		stacks__note_process(c->stacks, e->arg);
		break;
	case MP_EV_EXEC:
		stacks__exec_process(c->stacks, e->pid);
		mappings__learn_paths(&c->paths, c->fs, e->pid);
		/* a program reached by exec (env, sh -c, a launcher): probe its markers */
		if (e->ino)
			exec_scan(c, e->pid);
		if (e->arg)
			kill(e->pid, SIGCONT);	/* held by the BPF side until now */
		break;
	case MP_EV_FILE_MAP:
		mappings__learn_paths(&c->paths, c->fs, e->pid);
		file_path_learn(c, data, len);
		break;
	case MP_EV_EXEC_MAP:
		/* a library another image mapped before is named already */
		if (!e->ino || mappings__file_name(&c->paths, e->dev, e->ino, NULL, 0))
			mappings__learn_paths(&c->paths, c->fs, e->pid);
		file_path_learn(c, data, len);
		library_mark(c, e);
		probes__scan_mapping(c->probes, e->pid, e->addr);
		/* before SIGCONT: the library is in the snapshot before it runs */
		stacks__note_process(c->stacks, e->pid);
		markers_count(c);
		/* the BPF side stopped the target until its markers are probed */
		if (c->stop_on_map)
			kill(e->pid, SIGCONT);
		break;
	case MP_EV_LEFT:
		/* nothing of it is read any more: its snapshot goes with what it knew */
		stacks__forget_process(c->stacks, e->pid);
		break;
	case MP_EV_EXIT:
		/*
		 * Its stack samples came before this in the one ring: its unwinder state (maps
		 * snapshot, ~290 KiB) goes now, not at the reap a second later (a pyenv shim
		 * chain's 41 processes held 12 MiB)
		 */
		stacks__forget_process(c->stacks, e->pid);
		/* BPF's open allocations of the process: freed with it (recorded as frees) */
		if (c->m->gpu.probes)
			bpfmaps__allocs_exit(c->skel, c->m, e->pid, e->old_phase, c->rec);
		break;
	case MP_EV_OOM:
		collector__apply_event(c, e);
		oom_forensics(c, e);
		return 0;
	case MP_EV_GUARD:
		collector__apply_event(c, e);
		snprintf(comm, sizeof(comm), "%.*s", MP_COMM_LEN, e->comm);
		if (c->hooks.max_rss)
			c->hooks.max_rss(c->hooks.ctx, e->pid, comm);
		return 0;
	case MP_EV_PHASE:
		c->phase_changed = true;
		/* the engine's first own phase: its settings and build, read while it runs */
		if (!c->m->engine.known && e->arg && e->arg < MP_MAX_PHASES)
			engine_note(c, e->pid);
		break;
	default:
		break;
	}
	collector__apply_event(c, e);
	return 0;
}

/* The model's cause rules: built in (data/causes.rules), --causes files, --allocator-frame. */
static int rules_load(struct causerules *r, const struct collector_opts *o)
{
	char err[512];
	unsigned int i;
	int ret;

	ret = causerules__parse(r, presets__causes(), "data/causes.rules", err, sizeof(err));
	for (i = 0; !ret && i < o->ncause_files; i++)
		ret = causerules__parse(r, o->cause_texts[i], o->cause_files[i], err,
					sizeof(err));
	for (i = 0; !ret && i < o->nallocators; i++)
		ret = causerules__add_allocator(r, o->allocators[i]);
	if (!ret)
		ret = causerules__use_preset(r, o->preset);
	if (ret)
		fprintf(stderr, "memphase: failed to read cause rules: %s\n",
			ret == -ENOMEM ? strerror(ENOMEM) : err);
	return ret;
}

static bool observed(void *ctx, __u32 pid)
{
	struct model *m = ctx;
	const struct model_proc *p = model__proc(m, pid, false);

	return p && model_proc__followed(p);
}

/* One NVML reading, for the phase current now. */
static void nvml_tick(struct collector *c, __u64 now)
{
	struct model_gpu_device dev[GPU_MAX_DEVICES];
	unsigned int n;

	c->phase_changed = false;
	if (!c->nvml || nvml__read(c->nvml, dev, GPU_MAX_DEVICES, &n, observed, c->m))
		return;
	recorder__vram(c->rec, now, c->m->cur_phase, dev, n);
	model__on_vram(c->m, c->m->cur_phase, now, dev, n);
}

struct collector *collector__new(struct memphase_bpf *skel, struct model *m,
				 const struct collector_opts *o)
{
	struct collector *c = calloc(1, sizeof(*c));
	int err = -ENOMEM;

	if (!c)
		goto fail;
	c->skel = skel;
	c->m = m;
	c->phases = o->phases;
	c->probes = o->probes;
	c->hooks = o->hooks;
	c->rec = o->rec;
	c->fs = o->fs;
	c->preset = o->preset;
	c->allocators = o->allocators;
	c->nallocators = o->nallocators;
	c->cause_files = o->cause_files;
	c->cause_texts = o->cause_texts;
	c->ncause_files = o->ncause_files;
	c->mappings = o->mappings;
	c->stop_on_map = o->stop_on_map;
	c->side = o->side;
	/* a recording keeps what perf.data needs: report may be asked for it */
	c->keep_raw = o->stacks && (o->keep_raw || o->rec);
	c->bpf_stats = o->bpf_stats;
	c->sample_bytes = o->stacks ? o->sample_bytes : 0;
	strmap__init(&c->paths, strmap__free_ptr);
	causerules__init(&c->rules);
	err = rules_load(&c->rules, o);
	if (err)
		goto fail;
	err = -ENOMEM;
	c->growth_ring = calloc(1, sizeof(*c->growth_ring));
	c->tl = timeline__new(COLLECTOR_TIMELINE_CAP, COLLECTOR_RATE_WINDOW_S);
	c->maplog = mappings__maplog_new();
	if (!c->growth_ring || !c->tl || !c->maplog)
		goto fail;
	if (o->stacks) {
		c->unwinder = unwinder__new(o->fs);
		c->stacks = c->unwinder ? stacks__new(c->unwinder, c->keep_raw) : NULL;
		if (!c->stacks)
			goto fail;
	}
	c->nvml = nvml__open(m->gpu.nvml_why, sizeof(m->gpu.nvml_why));
	c->rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, c, NULL);
	if (!c->rb) {
		err = -errno;
		fprintf(stderr, "memphase: failed to create ring buffer: %s\n", strerror(-err));
		goto fail;
	}
	return c;
fail:
	collector__free(c);
	errno = -err;
	return NULL;
}

void collector__free(struct collector *c)
{
	unsigned int i;

	if (!c)
		return;
	for (i = 0; i < c->ndefer; i++)
		free(c->defer[i].data);
	ring_buffer__free(c->rb);
	nvml__close(c->nvml);
	stacks__free(c->stacks);
	unwinder__free(c->unwinder);
	timeline__free(c->tl);
	free(c->growth_ring);
	strmap__free(&c->paths);
	mappings__maplog_free(c->maplog);
	free(c->base);
	causerules__free(&c->rules);
	free(c);
}

void collector__record_setup(struct collector *c)
{
	recorder__setup(c->rec, c->m, c->preset, c->allocators, c->nallocators, c->cause_files,
			c->cause_texts, c->ncause_files);
}

static int model_begin(struct collector *c, pid_t pid, char *const argv[])
{
	char why[sizeof(c->m->gpu.nvml_why)];
	unsigned int i;
	int err;

	memcpy(why, c->m->gpu.nvml_why, sizeof(why));
	/* a model never begun is all zero bytes (collector__new) but for the NVML note,
	 * written back below: its untouched pages stay untouched */
	if (!c->m->nphases)
		model__init_zeroed(c->m, pid, util__now_ns());
	else
		model__init(c->m, pid, util__now_ns());
	c->m->start_wall_ns = util__wall_ns();
	c->m->gpu.nvml = c->nvml != NULL;
	memcpy(c->m->gpu.nvml_why, why, sizeof(why));
	c->m->profile.keep_raw = c->keep_raw;
	c->m->sample_bytes = c->sample_bytes;
	/* the model owns the rules from now on */
	c->m->rules = c->rules;
	causerules__init(&c->rules);
	model__set_requests(c->m, c->phases->request_phase, c->phases->idle_mask,
			    c->phases->end_mask, c->phases->lead_mask);
	c->m->request_by_marker = c->phases->request_marker;
	for (i = 0; i < c->phases->nphases; i++) {
		err = model__set_phase_name(c->m, i, c->phases->names[i]);
		if (err)
			return err;
	}
	err = collector__relabels_set(c->m, c->phases->preset);
	if (err)
		return err;
	return argv ? model__set_argv(c->m, argv) : 0;
}

int collector__begin_run(struct collector *c, pid_t pid, char *const argv[], const char *exe)
{
	int err;

	err = model_begin(c, pid, argv);
	if (err)
		return err;
	c->rec_mode = REC_MODE_RUN;
	recorder__begin(c->rec, c->m, REC_MODE_RUN);
	collector__record_setup(c);
	snprintf(c->exe, sizeof(c->exe), "%s", exe);
	err = probes__scan_file(c->probes, exe, NULL);
	if (err < 0 && err != -ENOENT) {
		char p[256];

		notice(c, "cannot read symbols of %s: %s", utf8__esc_term(p, sizeof(p), exe),
		       strerror(-err));
	}
	mappings__learn_file(&c->paths, exe, exe);
	markers_count(c);
	return 0;
}

/* RSS per class from /proc/PID/status, as the starting point of an attached process. */
static void rss_from_proc(struct collector *c, pid_t pid)
{
	static const struct {
		const char *key;
		int cls;
	} keys[] = { { "RssAnon", MP_ANON }, { "RssFile", MP_FILE },
		     { "RssShmem", MP_SHMEM }, { "VmSwap", MP_SWAP } };
	__s64 rss[MP_NR_CLASSES] = {};
	unsigned int i;
	char v[64];

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!procpid__status(-1, pid, keys[i].key, v, sizeof(v)))
			rss[keys[i].cls] = atoll(v) * 1024;
	model__set_rss(c->m, pid, rss, rss, rss[MP_ANON] + rss[MP_FILE] + rss[MP_SHMEM]);
}

int collector__begin_attach(struct collector *c, pid_t pid, bool at_start)
{
	struct model_proc *root;
	char **argv;
	int err;

	argv = target__cmdline(pid);
	err = model_begin(c, pid, argv);
	for (char **a = argv; a && *a; a++)
		free(*a);
	free(argv);
	if (err)
		return err;
	/* phase 0 of a process found running is not its start-up, unless a phase of the
	 * user's is named so */
	if (!at_start && phases__find(c->phases, COLLECTOR_ATTACHED_PHASE) < 0) {
		err = model__set_phase_name(c->m, 0, COLLECTOR_ATTACHED_PHASE);
		if (err)
			return err;
	}
	c->rec_mode = REC_MODE_ATTACH;
	recorder__begin(c->rec, c->m, REC_MODE_ATTACH);
	collector__record_setup(c);
	root = model__root(c->m);
	if (root) {
		target__comm(pid, root->comm, sizeof(root->comm));
		recorder__root_comm(c->rec, pid, root->comm);
	}
	/* what it holds already; an idle process may not touch memory again for a while */
	rss_from_proc(c, pid);
	recorder__counters_all(c->rec, c->m);
	probes__scan_pid(c->probes, pid);
	stacks__note_process(c->stacks, pid);
	mappings__learn_paths(&c->paths, c->fs, pid);
	markers_count(c);
	return 0;
}

/* Every COLLECTOR_TICK_NS, after the counters are read: the history takes a sample. */
void collector__apply_tick(struct collector *c, __u64 now)
{
	model__note_tree(c->m);
	oom__ring_add(c->growth_ring, c->m, now);
	/* the highs since the last reading first, at their times, then this reading */
	timeline__add_peaks(c->tl, c->m, now);
	timeline__add_model(c->tl, c->m, now);
}

void collector__apply_started(struct collector *c, __u64 ts)
{
	c->m->start_ns = c->m->phase_since_ns = ts;
}

/*
 * The history's first sample is the model as begun: nothing was counted before the start
 * (a spawned command is still held). The next reading of the maps and of the mapping names
 * is a period from now, not at the first poll: the command's first events (its libraries,
 * each held until probed) would wait for it.
 */
void collector__started(struct collector *c)
{
	__u64 now = util__now_ns();

	recorder__started(c->rec, now);
	collector__apply_started(c, now);
	recorder__tick(c->rec, c->m, now);
	collector__apply_tick(c, now);
	nvml_tick(c, now);
	c->last_tick_ns = c->last_names_ns = now;
}

static void marker_notice(struct collector *c)
{
	char missing[512], p[256];

	if (c->notice_done)
		return;
	c->notice_done = true;
	/* the user's own markers that did not attach first: they are why there are none */
	probes__missing_user(c->probes, missing, sizeof(missing));
	if (missing[0])
		notice(c, "--phase/--request symbols not found so far: %s", missing);
	if (!probes__count(c->probes))
		notice(c, "no phase markers found in %s or its libraries: counting everything "
			  "under '%s'%s",
		       c->exe[0] ? utf8__esc_term(p, sizeof(p), c->exe) : "the target",
		       c->m->names[0], missing[0] ? "" : " (add markers with --phase)");
}

/*
 * System memory, the target's cgroup and PSI. A process that is gone (OOM-killed) keeps
 * the cgroup it had, for the report. Stall time since the last reading belongs to the
 * phase the root is in now.
 */
/* The room before an OOM kill, for the request projection (not after the process ended). */
void collector__room_apply(struct collector *c, bool cg_known, __s64 cg, bool sys_known,
		       __s64 sys)
{
	struct model_proc *p = model__proc(c->m, c->m->focus_pid ? c->m->focus_pid :
					   c->m->root_pid, false);

	if (!p || p->exited || p->oom_killed)
		return;
	model__set_room(c->m, cg_known, cg, sys_known, sys);
}

static void room_note(struct collector *c, const struct sysmem *sm)
{
	__s64 cg = 0;
	bool cg_known = !sysmem__headroom(sm, SYSMEM_CGROUP, &cg);

	collector__room_apply(c, cg_known, cg, sm->have_meminfo, (__s64)sm->mem_available);
}

/* At a request boundary, at most every COLLECTOR_ROOM_NS: the room read afresh. */
static void room_refresh(struct collector *c)
{
	struct sysmem sm = {};
	__u64 now = util__now_ns();

	if (now - c->last_room_ns < COLLECTOR_ROOM_NS)
		return;
	c->last_room_ns = now;
	if (!sysmem__read(&sm, NULL, NULL, c->m->root_pid)) {
		__s64 cg = 0;
		bool cg_known = !sysmem__headroom(&sm, SYSMEM_CGROUP, &cg);

		recorder__room(c->rec, now, cg_known, cg, sm.have_meminfo,
			       (__s64)sm.mem_available);
		collector__room_apply(c, cg_known, cg, sm.have_meminfo, (__s64)sm.mem_available);
	}
}

void collector__apply_sysmem(struct collector *c, struct sysmem sm, __u64 ts)
{
	struct sysmem old = c->sm;
	struct model *m = c->m;
	struct history_mem hm = { .ts_ns = ts };

	/*
	 * No cgroup named, or an unlimited one after a limited one: the target is dying (an
	 * exiting task's /proc/PID/cgroup can name the root cgroup before memphase has its
	 * exit event), so the limited cgroup's last reading stands. A target that really
	 * moves from a limited cgroup to an unlimited one keeps showing the limited one.
	 */
	if (c->have_sm && old.cg_version &&
	    (!sm.cg_version || (old.cg_limited && !sm.cg_limited))) {
		sm.cg_version = old.cg_version;
		memcpy(sm.cg_path, old.cg_path, sizeof(sm.cg_path));
		sm.cg_usage = old.cg_usage;
		sm.cg_limited = old.cg_limited;
		memcpy(sm.cg_limit_path, old.cg_limit_path, sizeof(sm.cg_limit_path));
		sm.cg_limit = old.cg_limit;
		sm.cg_limit_usage = old.cg_limit_usage;
		sm.cg_reclaimable = old.cg_reclaimable;
	}
	if (sm.have_psi && c->have_sm && old.have_psi) {
		m->have_psi = true;
		if (sm.psi_some_total_us > old.psi_some_total_us)
			m->psi_some_us[m->cur_phase] += sm.psi_some_total_us - old.psi_some_total_us;
		if (sm.psi_full_total_us > old.psi_full_total_us)
			m->psi_full_us[m->cur_phase] += sm.psi_full_total_us - old.psi_full_total_us;
	}
	c->sm = sm;
	c->have_sm = true;
	c->sm_seq++;
	hm.mem_available = sm.mem_available;
	hm.swap_free = sm.swap_free;
	if (sm.cg_version) {
		hm.cg_usage = sm.cg_limited ? sm.cg_limit_usage : sm.cg_usage;
		hm.cg_limit = sm.cg_limited ? sm.cg_limit : 0;
	}
	model__add_mem(m, &hm);
	room_note(c, &c->sm);
}

static void sysmem_tick(struct collector *c)
{
	struct sysmem sm = {};

	__u64 now;

	if (sysmem__read(&sm, NULL, NULL, c->m->root_pid))
		return;
	now = util__now_ns();
	recorder__sysmem(c->rec, &sm, now);
	collector__apply_sysmem(c, sm, now);
}

int collector__poll(struct collector *c, int timeout_ms)
{
	__u64 now;
	int err;

	err = ring_buffer__poll(c->rb, timeout_ms);
	if (err < 0 && err != -EINTR) {
		fprintf(stderr, "memphase: reading events failed: %s\n", strerror(-err));
		return err;
	}
	/* events submitted without a wakeup (phase changes) would wait for a forced one:
	 * drain them every tick so the phase shown live is the current one */
	collector__consume(c);
	now = util__now_ns();
	if (now - c->last_tick_ns >= COLLECTOR_TICK_NS) {
		read_maps(c);
		if (bpfmaps__reap(c->skel, c->m, c->stacks, now) > 0)
			recorder__forgotten(c->rec, c->m);
		recorder__tick(c->rec, c->m, now);
		collector__apply_tick(c, now);
		nvml_tick(c, now);
		c->last_tick_ns = now;
	} else if (c->phase_changed) {
		nvml_tick(c, now);
	}
	if (c->mappings && now - c->last_names_ns >= COLLECTOR_NAMES_NS) {
		mappings__read(c->skel, c->maplog, c->m, &c->paths, c->fs, c->rec);
		c->last_names_ns = now;
	}
	if (now - c->last_sysmem_ns >= COLLECTOR_SYSMEM_NS) {
		sysmem_tick(c);
		c->last_sysmem_ns = now;
	}
	if (!c->notice_done && now - c->m->start_ns >= NOTICE_AFTER_NS)
		marker_notice(c);
	recorder__poll(c->rec, now);
	return 0;
}

bool collector__root_exited(const struct collector *c)
{
	return c->root_exited;
}

const struct sysmem *collector__sysmem(const struct collector *c, unsigned int *seq)
{
	if (seq)
		*seq = c->sm_seq;
	return c->have_sm ? &c->sm : NULL;
}

const struct model *collector__model(const struct collector *c)
{
	return c->m;
}

const struct timeline *collector__timeline(const struct collector *c)
{
	return c->tl;
}

void collector__stopped_by(struct collector *c, const char *why)
{
	mark(c, util__now_ns(), HISTORY_GUARD, c->m->root_pid, why);
	recorder__stop_reason(c->rec, why);
	snprintf(c->m->stop_reason, sizeof(c->m->stop_reason), "%s", why);
}

struct model *collector__snapshot(struct collector *c)
{
	struct model *snap;

	read_maps(c);
	if (c->stacks && !stacks__finish(c->stacks, c->m))
		recorder__profile(c->rec, &c->m->profile);
	recorder__flush(c->rec);
	snap = malloc(sizeof(*snap));
	if (!snap)
		return NULL;
	*snap = *c->m;
	model__finish(snap, util__now_ns());
	return snap;
}

void collector__release(struct collector *c)
{
	unsigned int i;

	if (!c || !c->stop_on_map)
		return;
	c->skel->bss->stop_on_map = 0;
	c->stop_on_map = false;
	collector__consume(c);
	for (i = 0; i < c->m->nprocs; i++)
		if (!c->m->procs[i].exited)
			kill(c->m->procs[i].pid, SIGCONT);
}

/* The final word on the root's exit in run mode is wait(2)'s. */
void collector__root_status(struct collector *c, int st)
{
	struct model_proc *root = model__root(c->m);

	recorder__root_status(c->rec, true, st);

	if (!root)
		return;
	root->exited = true;
	if (WIFEXITED(st)) {
		root->exit_code = WEXITSTATUS(st);
		root->exit_signal = 0;
	} else if (WIFSIGNALED(st)) {
		root->exit_code = -1;
		root->exit_signal = WTERMSIG(st);
	}
}

/* --phase markers that never attached, and why */
static void unmatched_markers(struct collector *c)
{
	char why[160];
	unsigned int i;

	for (i = 0; c->probes && i < c->phases->nmarkers; i++) {
		const struct marker *mk = &c->phases->markers[i];

		if (!probes__unmatched(c->probes, i, why, sizeof(why)))
			continue;
		model__add_unmatched(c->m, mk->request ? "" : c->phases->names[mk->phase],
				     mk->binary, mk->symbol, why);
		if (c->m->nunmatched)
			recorder__unmatched(c->rec, &c->m->unmatched[c->m->nunmatched - 1]);
	}
}

void collector__finish(struct collector *c, bool reaped, int wait_status)
{
	struct model *m = c->m;
	struct model_proc *root;
	__u64 end = util__now_ns();

	/* what threads still running hold, then everything still in the ring buffer and the
	 * maps belongs to the run */
	if (c->mappings)
		bpfmaps__flush_threads(c->skel, c->side);
	collector__consume(c);
	bpfmaps__maps(c->skel, c->maplog, m);
	recorder__counters_all(c->rec, m);
	if (c->mappings)
		mappings__read(c->skel, c->maplog, m, &c->paths, c->fs, c->rec);
	if (c->stacks && !stacks__finish(c->stacks, m))
		recorder__profile(c->rec, &m->profile);
	nvml_tick(c, end);
	if (c->bpf_stats) {
		bpfmaps__bpf_stats(c->skel, c->side, m);
		recorder__bpf_stats(c->rec, &m->bpf_stats);
	}
	if (reaped)
		collector__root_status(c, wait_status);
	root = model__root(m);
	if (root && root->exited && root->exit_ns && root->exit_ns < end)
		end = root->exit_ns;
	/* a high since the last reading (the replay adds it at the same place) */
	timeline__add_peaks(c->tl, m, end);
	model__finish(m, end);
	recorder__finish(c->rec, end);
	unmatched_markers(c);
	recorder__flush(c->rec);
	marker_notice(c);
}
