// SPDX-License-Identifier: GPL-2.0
/* A recording fed back through the collector. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "collect/collector.h"
#include "collect/record.h"
#include "collect/replay.h"
#include "collect/stacks.h"
#include "lib/recfile.h"
#include "lib/strmap.h"
#include "lib/util.h"

#define MAX_STRINGS	(1U << 24)
#define MAX_ARGS	4096

enum window_state {
	WIN_BEFORE,		/* records before --from: the state, not the counts */
	WIN_IN,
	WIN_AFTER,		/* past --to: the rest is not read */
};

struct replay {
	struct collector *c;
	struct model *m;
	const struct replay_opts *o;
	bool windowed;
	int phase;		/* --phase: its id, or -1 */
	__u64 from_ns, to_ns;	/* the window, CLOCK_MONOTONIC (0 until the start is known) */
	enum window_state win;
	struct strmap base_maps;	/* mapping bytes where the window opened */
	char **strings;		/* REC_STRING ids */
	__u32 nstrings;
	size_t capstrings;
	bool begun;
	char why[160];
};

static int fail(struct replay *r, const char *what, __u16 type)
{
	snprintf(r->why, sizeof(r->why), "corrupt recording: %s (record type %u)", what, type);
	return -EBADMSG;
}

static const char *string(struct replay *r, __u32 id)
{
	return id < r->nstrings ? r->strings[id] : NULL;
}

static int on_string(struct replay *r, struct reccur *cur)
{
	__u32 id = reccur__u32(cur), n;
	const char *s = reccur__strref(cur, &n);
	char *copy;

	if (cur->bad || !s || id != r->nstrings || id >= MAX_STRINGS)
		return -EBADMSG;
	if (util__grow((void **)&r->strings, &r->capstrings, r->nstrings, sizeof(*r->strings)))
		return -ENOMEM;
	copy = strndup(s, n);
	if (!copy)
		return -ENOMEM;
	r->strings[r->nstrings++] = copy;
	return 0;
}

static int on_begin(struct replay *r, struct reccur *cur)
{
	static char names[MP_MAX_PHASES][PHASE_NAME_MAX];
	__u32 pid, nphases, argc, i;
	char **argv = NULL;
	__u64 init, wall = 0;
	int err = -EBADMSG;

	if (r->begun)
		return -EBADMSG;
	r->phase = -1;
	pid = reccur__u32(cur);
	reccur__u32(cur);	/* mode */
	init = reccur__u64(cur);
	nphases = reccur__u32(cur);
	if (cur->bad || !nphases || nphases > MP_MAX_PHASES)
		return -EBADMSG;
	for (i = 0; i < nphases; i++)
		reccur__str(cur, names[i], sizeof(names[i]));
	argc = reccur__u32(cur);
	if (cur->bad || argc > MAX_ARGS)
		return -EBADMSG;
	argv = calloc(argc + 1, sizeof(*argv));
	if (!argv)
		return -ENOMEM;
	for (i = 0; i < argc; i++) {
		__u32 n;
		const char *s = reccur__strref(cur, &n);

		if (!s || !(argv[i] = strndup(s, n)))
			goto out;
	}
	/* the wall clock at init (older recordings end at argv: unknown) */
	if (!cur->bad && cur->left >= sizeof(__u64))
		wall = reccur__u64(cur);
	if (cur->bad)
		goto out;
	err = collector__replay_begin(r->c, pid, init, wall, names, nphases, argc ? argv : NULL);
	r->begun = !err;
	if (!err && r->o->phase) {
		for (i = 0; i < nphases && strcmp(names[i], r->o->phase); i++)
			;
		if (i == nphases) {
			snprintf(r->why, sizeof(r->why),
				 "--phase %.*s: no such phase in the recording", PHASE_NAME_MAX,
				 r->o->phase);
			err = -ENOENT;
		}
		r->phase = i;
	}
out:
	for (i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
	return err;
}

static int on_sample(struct replay *r, struct reccur *cur)
{
	struct stacks_sample s;
	__u32 i;

	memset(&s, 0, offsetof(struct stacks_sample, frames));
	s.pid = reccur__u32(cur);
	s.tid = reccur__u32(cur);
	s.phase = reccur__u32(cur);
	s.ts_ns = reccur__u64(cur);
	s.weight = reccur__u64(cur);
	s.unwind_failed = reccur__u8(cur);
	s.comm = string(r, reccur__u32(cur));
	s.nframes = reccur__u32(cur);
	if (cur->bad || !s.comm || !s.nframes || s.nframes > STACKS_MAX_FRAMES + 1 ||
	    s.phase >= r->m->nphases)
		return -EBADMSG;
	for (i = 0; i < s.nframes; i++)
		if (!(s.frames[i] = string(r, reccur__u32(cur))))
			return -EBADMSG;
	s.nips = reccur__u32(cur);
	if (cur->bad || s.nips > STACKS_MAX_FRAMES)
		return -EBADMSG;
	for (i = 0; i < s.nips; i++)
		s.ips[i] = reccur__u64(cur);
	if (cur->left >= sizeof(__u32) + sizeof(__u64)) {
		/* recorded since origins and allocation probes: its class and address */
		s.cls = reccur__u32(cur);
		s.addr = reccur__u64(cur);
	}
	if (cur->left >= sizeof(__u32))
		s.cpu = reccur__u32(cur);	/* recorded since perf.data's CPU */
	if (cur->bad)
		return -EBADMSG;
	/* samples carry their time: outside the window (or the phase) they are left out */
	if (r->windowed && (s.ts_ns < r->from_ns || s.ts_ns > r->to_ns ||
			    (r->phase >= 0 && s.phase != (__u32)r->phase)))
		return 0;
	return collector__replay_sample(r->c, &s);
}

/*
 * Mapping counters are totals too: before the window their bytes are noted, inside it
 * what a mapping had at the start is taken off.
 */
static int window_mapping(struct replay *r, __u32 phase, struct model_mapping *mm)
{
	struct strmap_entry *e;
	char key[MODEL_PATH_MAX + 96];

	snprintf(key, sizeof(key), "%u|%u|%u|%llx|%s", phase, mm->cls, mm->kind,
		 (unsigned long long)mm->start, mm->path);
	if (r->win == WIN_BEFORE) {
		e = strmap__get(&r->base_maps, key);
		if (!e)
			return -ENOMEM;
		e->value = mm->bytes;
		mm->bytes = 0;
		return 0;
	}
	e = strmap__find(&r->base_maps, key);
	if (e)
		mm->bytes = mm->bytes > e->value ? mm->bytes - e->value : 0;
	if (r->phase >= 0 && phase != (__u32)r->phase)
		mm->bytes = 0;
	return 0;
}

static int on_origin(struct replay *r, struct reccur *cur)
{
	struct stacks_sample s;
	__u32 i;

	memset(&s, 0, offsetof(struct stacks_sample, frames));
	s.ts_ns = reccur__u64(cur);
	s.pid = reccur__u32(cur);
	s.tid = reccur__u32(cur);
	s.phase = reccur__u32(cur);
	s.addr = reccur__u64(cur);
	s.weight = reccur__u64(cur);
	s.map_how = reccur__u32(cur);
	s.map_prot = reccur__u32(cur);
	s.comm = string(r, reccur__u32(cur));
	s.nframes = reccur__u32(cur);
	if (cur->bad || !s.comm || s.nframes > STACKS_MAX_FRAMES + 1 ||
	    s.phase >= r->m->nphases)
		return -EBADMSG;
	for (i = 0; i < s.nframes; i++)
		if (!(s.frames[i] = string(r, reccur__u32(cur))))
			return -EBADMSG;
	if (cur->bad)
		return -EBADMSG;
	/* origins before the window are kept (the mappings they name may grow inside it);
	 * the window's counts start at its start (origins__counted) */
	return collector__replay_origin(r->c, &s);
}

/* REC_ENGINE: the engine's settings and flags, into the model as the run had them. */
static int on_engine(struct replay *r, struct reccur *cur)
{
	struct model_engine *e = &r->m->engine;
	const char *p;
	__u32 n, i, len;

	model_engine__free(e);
	e->pid = reccur__u32(cur);
	reccur__str(cur, e->program, sizeof(e->program));
	n = reccur__u32(cur);
	if (cur->bad || n > ENGINE_MAX_SETTINGS)
		return -EBADMSG;
	for (i = 0; i < n; i++) {
		struct engine_setting *s = &e->settings[i];

		reccur__str(cur, s->name, sizeof(s->name));
		reccur__str(cur, s->value, sizeof(s->value));
		s->src = reccur__u32(cur);
		reccur__str(cur, s->from, sizeof(s->from));
		reccur__str(cur, s->what, sizeof(s->what));
		reccur__str(cur, s->flag, sizeof(s->flag));
	}
	e->nsettings = n;
	n = reccur__u32(cur);
	if (cur->bad || n > ENGINE_MAX_UNKNOWN)
		return -EBADMSG;
	for (i = 0; i < n; i++)
		reccur__str(cur, e->unknown[i], sizeof(e->unknown[i]));
	e->nunknown = n;
	p = reccur__strref(cur, &len);
	if (p && len && !(e->flags = strndup(p, len)))
		return -ENOMEM;
	p = reccur__strref(cur, &len);
	if (p && len && !(e->deprecated = strndup(p, len)))
		return -ENOMEM;
	reccur__str(cur, e->slots_setting, sizeof(e->slots_setting));
	reccur__str(cur, e->shared_setting, sizeof(e->shared_setting));
	if (cur->bad)
		return -EBADMSG;
	for (i = 0; e->flags && e->flags[i]; i++)
		e->nflags += e->flags[i] == '\n';
	e->nflags -= e->nflags > 0;
	e->known = true;
	return 0;
}

static int on_setup(struct replay *r, struct reccur *cur)
{
	static const char *allocs[64], *names[64], *texts[64];
	static char preset[64];
	__u32 phase = reccur__u32(cur), idle = reccur__u32(cur), end = reccur__u32(cur);
	__u32 lead = reccur__u32(cur), na, nf, i, len;
	bool by_marker = reccur__u8(cur);
	char *own[192], why[160];
	unsigned int nown = 0;
	bool nvml;
	int err = -EBADMSG;

	reccur__str(cur, preset, sizeof(preset));
	na = reccur__u32(cur);
	if (cur->bad || na > 64)
		return -EBADMSG;
	for (i = 0; i < na; i++) {
		const char *p = reccur__strref(cur, &len);

		if (!p || !(own[nown++] = strndup(p, len)))
			goto out;
		allocs[i] = own[nown - 1];
	}
	nf = reccur__u32(cur);
	if (cur->bad || nf > 64)
		goto out;
	for (i = 0; i < nf; i++) {
		const char *p = reccur__strref(cur, &len);

		if (!p || !(own[nown++] = strndup(p, len)))
			goto out;
		names[i] = own[nown - 1];
		p = reccur__strref(cur, &len);
		if (!p || !(own[nown++] = strndup(p, len)))
			goto out;
		texts[i] = own[nown - 1];
	}
	nvml = reccur__u8(cur);
	reccur__str(cur, why, sizeof(why));
	if (cur->bad)
		goto out;
	collector__replay_nvml(r->c, nvml, why);
	err = collector__replay_setup(r->c, (int)phase, idle, end, lead, by_marker, preset,
				      allocs, na, names, texts, nf);
	if (err)
		err = -EBADMSG;
	/* recorded since pprof's period: --sample-bytes */
	else if (cur->left >= sizeof(__u64))
		r->m->sample_bytes = reccur__u64(cur);
out:
	while (nown)
		free(own[--nown]);
	return err;
}

static int on_vram(struct replay *r, struct reccur *cur)
{
	static struct model_gpu_device dev[GPU_MAX_DEVICES];
	__u64 ts = reccur__u64(cur);
	__u32 phase = reccur__u32(cur), size = reccur__u32(cur), n = reccur__u32(cur), i;

	if (cur->bad || size != sizeof(dev[0]) || n > GPU_MAX_DEVICES || phase >= MP_MAX_PHASES)
		return -EBADMSG;
	reccur__get(cur, dev, n * sizeof(dev[0]));
	if (cur->bad)
		return -EBADMSG;
	for (i = 0; i < n; i++)
		dev[i].name[sizeof(dev[i].name) - 1] = '\0';
	collector__replay_vram(r->c, ts, phase, dev, n);
	return 0;
}

static int on_mappings(struct replay *r, struct reccur *cur)
{
	static struct model_mapping mm;
	__u32 n = reccur__u32(cur), i, phase;
	const char *path;

	struct reccur origins;

	if (cur->bad || n > cur->left / 41)
		return -EBADMSG;
	/* after the n entries of 41 bytes, when recorded: each one's origin id */
	reccur__init(&origins, cur->p + (size_t)n * 41, cur->left - (size_t)n * 41);
	if (origins.left < (size_t)n * sizeof(__u32))
		origins.bad = true;
	collector__replay_mappings_clear(r->c);
	for (i = 0; i < n; i++) {
		memset(&mm, 0, sizeof(mm));
		phase = reccur__u32(cur);
		mm.cls = reccur__u32(cur);
		mm.kind = reccur__u32(cur);
		mm.deleted = reccur__u8(cur);
		mm.bytes = reccur__u64(cur);
		mm.start = reccur__u64(cur);
		mm.size = reccur__u64(cur);
		path = string(r, reccur__u32(cur));
		if (cur->bad || !path || phase >= r->m->nphases || mm.cls >= MP_NR_CLASSES ||
		    mm.kind >= MP_NR_MAP_KINDS)
			return -EBADMSG;
		snprintf(mm.path, sizeof(mm.path), "%s", path);
		mm.origin = origins.bad ? 0 : reccur__u32(&origins);
		if (r->windowed && window_mapping(r, phase, &mm))
			return -ENOMEM;
		collector__replay_mapping(r->c, phase, &mm);
	}
	return 0;
}

static int on_sysmem(struct replay *r, struct reccur *cur)
{
	struct sysmem sm = {};
	__u64 ts = reccur__u64(cur);

	sm.have_meminfo = reccur__u8(cur);
	sm.mem_total = reccur__u64(cur);
	sm.mem_available = reccur__u64(cur);
	sm.swap_total = reccur__u64(cur);
	sm.swap_free = reccur__u64(cur);
	sm.cg_version = reccur__u32(cur);
	reccur__str(cur, sm.cg_path, sizeof(sm.cg_path));
	sm.cg_usage = reccur__u64(cur);
	sm.cg_limited = reccur__u8(cur);
	reccur__str(cur, sm.cg_limit_path, sizeof(sm.cg_limit_path));
	sm.cg_limit = reccur__u64(cur);
	sm.cg_limit_usage = reccur__u64(cur);
	sm.cg_reclaimable = reccur__u64(cur);
	sm.have_psi = reccur__u8(cur);
	sm.psi_some_avg10 = reccur__f64(cur);
	sm.psi_full_avg10 = reccur__f64(cur);
	sm.psi_some_total_us = reccur__u64(cur);
	sm.psi_full_total_us = reccur__u64(cur);
	if (cur->bad)
		return -EBADMSG;
	collector__replay_sysmem(r->c, &sm, ts);
	return 0;
}

static int on_oom_info(struct replay *r, struct reccur *cur)
{
	static struct model_oom o;
	__u32 n, i, k;

	memset(&o, 0, sizeof(o));
	o.ts_ns = reccur__u64(cur);
	o.cgroup_oom = (int)reccur__u32(cur);
	reccur__str(cur, o.cgroup, sizeof(o.cgroup));
	o.cgroup_limit = reccur__u64(cur);
	o.have_window = reccur__u8(cur);
	o.window_s = reccur__f64(cur);
	n = reccur__u32(cur);
	if (cur->bad || n > MP_MAX_PHASES)
		return -EBADMSG;
	for (i = 0; i < n; i++)
		for (k = 0; k < MP_NR_CLASSES; k++)
			o.before[i][k] = reccur__u64(cur);
	if (cur->bad)
		return -EBADMSG;
	collector__replay_oom_info(r->c, &o);
	return 0;
}

static int on_profile(struct replay *r, struct reccur *cur)
{
	char comm[MP_COMM_LEN + 1];
	unsigned char bid[20];
	__u32 n, i, pid, len;
	__u64 start, end, pgoff;
	const char *path;
	int err;

	n = reccur__u32(cur);
	if (cur->bad || n > cur->left / 8)
		return -EBADMSG;
	for (i = 0; i < n; i++) {
		pid = reccur__u32(cur);
		reccur__str(cur, comm, sizeof(comm));
		if (cur->bad)
			return -EBADMSG;
		err = collector__replay_profile_proc(r->c, i == 0, pid, comm);
		if (err)
			return err;
	}
	n = reccur__u32(cur);
	if (cur->bad || n > cur->left / 33)
		return -EBADMSG;
	for (i = 0; i < n; i++) {
		pid = reccur__u32(cur);
		start = reccur__u64(cur);
		end = reccur__u64(cur);
		pgoff = reccur__u64(cur);
		path = string(r, reccur__u32(cur));
		len = reccur__u8(cur);
		if (cur->bad || !path || len > sizeof(bid))
			return -EBADMSG;
		reccur__get(cur, bid, len);
		if (cur->bad)
			return -EBADMSG;
		err = collector__replay_profile_map(r->c, pid, start, end, pgoff, path, bid, len);
		if (err)
			return err;
	}
	collector__replay_profile_end(r->c);
	return 0;
}

static int on_bpf_stats(struct replay *r, struct reccur *cur)
{
	static struct model_bpf_stats st;
	__u32 i;

	memset(&st, 0, sizeof(st));
	st.have = true;
	st.nprogs = reccur__u32(cur);
	if (cur->bad || st.nprogs > MODEL_MAX_PROGS)
		return -EBADMSG;
	for (i = 0; i < st.nprogs; i++) {
		reccur__str(cur, st.progs[i].name, sizeof(st.progs[i].name));
		st.progs[i].runs = reccur__u64(cur);
		st.progs[i].run_time_ns = reccur__u64(cur);
	}
	if (cur->bad)
		return -EBADMSG;
	collector__replay_bpf_stats(r->c, &st);
	return 0;
}

/* size bytes recorded of a struct of have bytes: what both know is read */
static void get_sized(struct reccur *cur, void *p, __u32 size, size_t have)
{
	reccur__get(cur, p, size < have ? size : have);
	if (size > have)
		reccur__skip(cur, size - have);
}

/* A rotated segment's start (collect/record.h: recorder__carry). */
static int on_carry(struct replay *r, struct reccur *cur)
{
	struct collector_carry *k = calloc(1, sizeof(*k));
	__u32 i, n, size;

	if (!k)
		return -ENOMEM;
	k->cur_phase = reccur__u32(cur);
	k->phase_since_ns = reccur__u64(cur);
	k->focus_pid = reccur__u32(cur);
	k->root_phased = reccur__u8(cur);
	k->norder = reccur__u32(cur);
	if (k->norder > MP_MAX_PHASES)
		goto bad;
	for (i = 0; i < k->norder; i++)
		k->order[i] = reccur__u32(cur);
	n = reccur__u32(cur);
	size = reccur__u32(cur);
	if (n > MP_MAX_PHASES || size > (1U << 16))
		goto bad;
	for (i = 0; i < n && !cur->bad; i++) {
		k->time_ns[i] = reccur__u64(cur);
		get_sized(cur, &k->moved_in[i], size, sizeof(k->moved_in[i]));
		get_sized(cur, &k->moved_out[i], size, sizeof(k->moved_out[i]));
		get_sized(cur, &k->relabel_acc[i], size, sizeof(k->relabel_acc[i]));
	}
	k->relabel_since_ns = reccur__u64(cur);
	k->req_last_phase = reccur__u32(cur);
	if (cur->bad)
		goto bad;
	collector__replay_carry(r->c, k);
	free(k);
	return 0;
bad:
	free(k);
	return -EBADMSG;
}

/* When a record happened, if it says: 0 if it does not. */
static __u64 record_time(const struct recfile_rec *rec)
{
	struct reccur cur;
	__u64 ts = 0;

	reccur__init(&cur, rec->data, rec->len);
	switch (rec->type) {
	case REC_EVENT:
		/* a record's data need not be aligned: copied, not read through a struct */
		if (rec->len >= offsetof(struct mp_event, ts_ns) + sizeof(ts))
			memcpy(&ts, (const char *)rec->data + offsetof(struct mp_event, ts_ns),
			       sizeof(ts));
		return ts;
	case REC_SAMPLE:
		reccur__u32(&cur);
		reccur__u32(&cur);
		reccur__u32(&cur);
		return reccur__u64(&cur);
	case REC_TICK:
	case REC_SYSMEM:
	case REC_MARK:
	case REC_FINISH:
	case REC_ORIGIN:
	case REC_VRAM:
		/* (REC_ROOM's time is when it was read, for the event after it: not its own) */
		return reccur__u64(&cur);
	case REC_ALLOC:
		return rec->len == sizeof(struct mp_alloc_event) ?
		       ((const struct mp_alloc_event *)rec->data)->ts_ns : 0;
	default:
		return 0;
	}
}

/* Moves the window on at a record of time ts. */
static void window_step(struct replay *r, __u64 ts)
{
	if (!r->from_ns) {
		/* the start is known once observation started */
		__u64 start = r->m->start_ns;

		r->from_ns = start + (r->o->from_s > 0 ? (__u64)(r->o->from_s * 1e9) : 0);
		r->to_ns = r->o->to_s >= 0 ? start + (__u64)(r->o->to_s * 1e9) : ~0ULL;
	}
	if (r->win == WIN_BEFORE && ts >= r->from_ns) {
		collector__replay_window_open(r->c);
		r->win = WIN_IN;
	}
	if (r->win == WIN_IN && ts > r->to_ns)
		r->win = WIN_AFTER;
}

/* One record. 0, -EBADMSG (malformed: r->why), -ENOMEM; 1 for an unknown type. */
static int apply(struct replay *r, const struct recfile_rec *rec, struct replay_result *res)
{
	struct reccur cur;
	int err = 0, k;
	__u64 ts;

	if (r->windowed && r->begun && r->m->start_ns && (ts = record_time(rec)))
		window_step(r, ts);
	if (r->win == WIN_AFTER) {
		res->finished |= rec->type == REC_FINISH;
		return 0;
	}

	reccur__init(&cur, rec->data, rec->len);
	if (rec->type != REC_BEGIN && rec->type != REC_STRING && rec->type < REC_NR_TYPES &&
	    !r->begun)
		return fail(r, "a record before the run's beginning", rec->type);
	switch (rec->type) {
	case REC_BEGIN:
		err = on_begin(r, &cur);
		break;
	case REC_STRING:
		err = on_string(r, &cur);
		break;
	case REC_STARTED:
		collector__replay_started(r->c, reccur__u64(&cur));
		break;
	case REC_EVENT: {
		struct mp_event e = {};

		/* a struct that grew (or shrank) at its end: what both know is read */
		if (rec->len < offsetof(struct mp_event, addr))
			return fail(r, "an event too short", rec->type);
		memcpy(&e, rec->data, rec->len < sizeof(e) ? rec->len : sizeof(e));
		collector__replay_event(r->c, &e);
		break;
	}
	case REC_SAMPLE:
		err = on_sample(r, &cur);
		break;
	case REC_STATS: {
		struct mp_phase_stats st;
		__u32 id = reccur__u32(&cur), size = reccur__u32(&cur);

		if (cur.bad || size > cur.left || id >= r->m->nphases)
			return fail(r, "bad phase counters", rec->type);
		/* counters added at the end by another version: what both know is read */
		memset(&st, 0, sizeof(st));
		reccur__get(&cur, &st, size < sizeof(st) ? size : sizeof(st));
		if (size > sizeof(st))
			reccur__skip(&cur, size - sizeof(st));
		if (cur.bad)
			return fail(r, "bad phase counters", rec->type);
		collector__replay_stats(r->c, id, &st);
		break;
	}
	case REC_RSS: {
		__s64 rss[MP_NR_CLASSES], peak[MP_NR_CLASSES], total, peak_rss[MP_NR_CLASSES] = {};
		__u32 pid = reccur__u32(&cur);
		__u64 peak_ns = 0;

		for (k = 0; k < MP_NR_CLASSES; k++)
			rss[k] = reccur__u64(&cur);
		for (k = 0; k < MP_NR_CLASSES; k++)
			peak[k] = reccur__u64(&cur);
		total = reccur__u64(&cur);
		/* the peak's moment, in recordings that have it */
		if (!cur.bad && cur.left >= (1 + MP_NR_CLASSES) * sizeof(__u64)) {
			peak_ns = reccur__u64(&cur);
			for (k = 0; k < MP_NR_CLASSES; k++)
				peak_rss[k] = reccur__u64(&cur);
		}
		if (!cur.bad)
			collector__replay_rss(r->c, pid, rss, peak, total, peak_ns, peak_rss);
		break;
	}
	case REC_DROPS: {
		__u64 d[REC_DROPS_N] = {};

		for (k = 0; k < REC_DROPS_N && (k < 6 || cur.left >= sizeof(__u64)); k++)
			d[k] = reccur__u64(&cur);
		if (!cur.bad)
			collector__replay_drops(r->c, d);
		break;
	}
	case REC_TICK:
		/* the RSS history of a window starts with it */
		if (r->win == WIN_BEFORE && r->windowed)
			break;
		collector__replay_tick(r->c, reccur__u64(&cur));
		break;
	case REC_FORGET:
		collector__replay_forget(r->c, reccur__u32(&cur));
		break;
	case REC_MAPPINGS:
		err = on_mappings(r, &cur);
		break;
	case REC_SYSMEM:
		err = on_sysmem(r, &cur);
		break;
	case REC_OOM_INFO:
		err = on_oom_info(r, &cur);
		break;
	case REC_MARKERS:
		collector__replay_markers(r->c, reccur__u64(&cur));
		if (cur.left >= sizeof(__u32))
			collector__replay_alloc_probes(r->c, reccur__u32(&cur));
		break;
	case REC_ORIGIN:
		err = on_origin(r, &cur);
		break;
	case REC_ALLOC: {
		struct mp_alloc_event e;

		if (rec->len != sizeof(e))
			return fail(r, "a malformed record", rec->type);
		memcpy(&e, rec->data, sizeof(e));
		if (e.phase >= MP_MAX_PHASES || e.alloc_phase >= MP_MAX_PHASES)
			return fail(r, "a malformed record", rec->type);
		collector__replay_alloc(r->c, &e);
		break;
	}
	case REC_ROOM: {
		bool cg_known, sys_known;
		__s64 cg, sys;

		reccur__u64(&cur);
		cg_known = reccur__u8(&cur);
		cg = (__s64)reccur__u64(&cur);
		sys_known = reccur__u8(&cur);
		sys = (__s64)reccur__u64(&cur);
		if (!cur.bad)
			collector__replay_room(r->c, cg_known, cg, sys_known, sys);
		break;
	}
	case REC_VRAM:
		err = on_vram(r, &cur);
		break;
	case REC_SETUP:
		err = on_setup(r, &cur);
		break;
	case REC_ROOT_COMM: {
		char comm[MP_COMM_LEN + 1];

		reccur__u32(&cur);
		reccur__str(&cur, comm, sizeof(comm));
		if (!cur.bad)
			collector__replay_root_comm(r->c, comm);
		break;
	}
	case REC_STOP_REASON:
		reccur__str(&cur, r->m->stop_reason, sizeof(r->m->stop_reason));
		break;
	case REC_ENGINE:
		err = on_engine(r, &cur);
		break;
	case REC_UNMATCHED: {
		static struct model_unmatched u;

		reccur__str(&cur, u.phase, sizeof(u.phase));
		reccur__str(&cur, u.binary, sizeof(u.binary));
		reccur__str(&cur, u.symbol, sizeof(u.symbol));
		reccur__str(&cur, u.reason, sizeof(u.reason));
		if (!cur.bad)
			collector__replay_unmatched(r->c, &u);
		break;
	}
	case REC_PROFILE:
		err = on_profile(r, &cur);
		break;
	case REC_BPF_STATS:
		err = on_bpf_stats(r, &cur);
		break;
	case REC_ROOT_STATUS: {
		bool reaped = reccur__u8(&cur);
		int st = (int)reccur__u32(&cur);

		if (!cur.bad && reaped)
			collector__replay_root_status(r->c, st);
		break;
	}
	case REC_MARK: {
		char text[HISTORY_TEXT];
		__u64 ts = reccur__u64(&cur);
		__u32 kind = reccur__u32(&cur), pid = reccur__u32(&cur);
		__u32 n;
		const char *t = reccur__strref(&cur, &n);

		if (!cur.bad && t) {
			snprintf(text, sizeof(text), "%.*s", (int)n, t);
			collector__replay_mark(r->c, ts, kind, pid, text);
		}
		break;
	}
	case REC_CARRY:
		err = on_carry(r, &cur);
		break;
	case REC_FINISH:
		collector__replay_finish(r->c, reccur__u64(&cur));
		res->finished = true;
		break;
	default:
		/* a newer memphase's kind of data: skipped, counted */
		res->unknown++;
		return 1;
	}
	if (err == -EBADMSG || (!err && cur.bad))
		return fail(r, "a malformed record", rec->type);
	return err;
}

/* The live run said it already. */
static void quiet_notice(void *ctx, const char *msg)
{
}

struct collector *replay__file(FILE *f, struct model *m, const struct replay_opts *o,
			       struct replay_result *res, char *why, size_t why_len)
{
	static const struct collector_hooks quiet = { .notice = quiet_notice };
	struct recfile_reader *rd;
	struct recfile_rec rec;
	struct replay r = { .m = m, .o = o, .phase = -1 };
	__u32 i;
	int err;

	memset(res, 0, sizeof(*res));
	memset(m, 0, sizeof(*m));
	rd = recfile_reader__new(f, why, why_len);
	if (!rd)
		return NULL;
	r.windowed = o->from_s > 0 || o->to_s >= 0 || o->phase;
	r.win = r.windowed ? WIN_BEFORE : WIN_IN;
	strmap__init(&r.base_maps, NULL);
	r.c = collector__new_replay(m, o->keep_raw, &quiet);
	if (!r.c) {
		snprintf(why, why_len, "%s", strerror(errno));
		recfile_reader__free(rd);
		return NULL;
	}
	while ((err = recfile_reader__next(rd, &rec)) > 0) {
		err = apply(&r, &rec, res);
		if (err < 0)
			break;
		res->records++;
	}
	if (!err && r.windowed && r.begun) {
		/* a window that opens after the last record is empty: it opens at the end */
		if (r.win == WIN_BEFORE)
			collector__replay_window_open(r.c);
		collector__replay_window_close(r.c, r.from_ns ? r.from_ns : m->start_ns,
					       r.to_ns ? r.to_ns : ~0ULL, r.phase);
	}
	strmap__free(&r.base_maps);
	if (err == -EBADMSG && !r.why[0])
		snprintf(r.why, sizeof(r.why), "%s", recfile_reader__why(rd));
	if (!err && !r.begun) {
		err = -EBADMSG;
		snprintf(r.why, sizeof(r.why), "the recording holds no run (it ends at byte %llu)",
			 (unsigned long long)recfile_reader__offset(rd));
	}
	res->truncated = recfile_reader__truncated(rd, &res->tail_bytes);
	res->chunks = recfile_reader__chunks(rd);
	recfile_reader__free(rd);
	for (i = 0; i < r.nstrings; i++)
		free(r.strings[i]);
	free(r.strings);
	if (err < 0) {
		snprintf(why, why_len, "%s", r.why[0] ? r.why : strerror(-err));
		collector__free(r.c);
		if (r.begun)
			model__free(m);
		errno = -err;
		return NULL;
	}
	return r.c;
}
