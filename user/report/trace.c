// SPDX-License-Identifier: GPL-2.0
/* The run as trace-event JSON (Perfetto, chrome://tracing, speedscope). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/json.h"
#include "lib/strmap.h"
#include "lib/util.h"
#include "model/causes.h"
#include "report/trace.h"

#define TIMELINE_TID	0	/* the phase timeline's track, under the root */
#define REQUESTS_TID	1	/* the requests' track, under the root */
#define TICK_NS		125	/* the trace's times are multiples of 1/8 us */

/*
 * A time as the trace writes it: nanoseconds since the start of the run, clipped to its end,
 * down to a multiple of TICK_NS. Written as microseconds with three decimals, such a time is
 * exact in binary floating point too, so that one slice's ts + dur is the next one's ts
 * whether an importer reads the decimals (Perfetto) or adds doubles (speedscope,
 * chrome://tracing): with whole nanoseconds, 112 of the 591 slices of a run of
 * llama-explain that end where the next begins overlapped it by a rounding error in doubles.
 */
static __u64 tick(const struct model *m, __u64 ts)
{
	__u64 end = m->end_ns > m->start_ns ? m->end_ns - m->start_ns : 0;
	__u64 t = ts > m->start_ns ? ts - m->start_ns : 0;

	if (t > end)
		t = end;
	return t - t % TICK_NS;
}

/* What came after the end of the run (a reading after the root exited) is not in the trace. */
static bool after_end(const struct model *m, __u64 ts)
{
	return ts > m->end_ns;
}

static const char *phase_name(const struct model *m, __u32 id)
{
	return id < m->nphases ? m->names[id] : "?";
}

/* ts: a tick() */
static void event_head(struct jsonw *w, const char *ph, const char *name, const char *cat,
		       __u32 pid, __u32 tid, __u64 ts)
{
	jsonw__start_object(w);
	jsonw__string_field(w, "ph", ph);
	jsonw__string_field(w, "name", name);
	if (cat)
		jsonw__string_field(w, "cat", cat);
	jsonw__u64_field(w, "pid", pid);
	jsonw__u64_field(w, "tid", tid);
	jsonw__milli_field(w, "ts", ts);
}

/*
 * One track's phase slices, given in time order and written when the next one is known: a
 * slice that goes on in the same phase is merged into the one before, a slice shorter than
 * a tick is left out (speedscope ends the wrong frame at a zero-length one), and a slice
 * never starts before the one before ended, so that the track's slices follow each other.
 */
struct track {
	struct jsonw *w;
	const struct model *m;
	__u32 pid, tid;
	__u32 phase;
	__u64 start, end;	/* the slice pending, in ticks; start == end: none */
};

static void track__init(struct track *t, struct jsonw *w, const struct model *m, __u32 pid,
			__u32 tid)
{
	*t = (struct track){ .w = w, .m = m, .pid = pid, .tid = tid };
}

static void track__flush(struct track *t)
{
	if (t->end <= t->start)
		return;
	event_head(t->w, "X", phase_name(t->m, t->phase), "phase", t->pid, t->tid, t->start);
	jsonw__milli_field(t->w, "dur", t->end - t->start);
	jsonw__end_object(t->w);
	t->start = t->end;
}

static void track__add(struct track *t, __u32 phase, __u64 start_ns, __u64 end_ns)
{
	__u64 s = tick(t->m, start_ns), e = tick(t->m, end_ns);

	if (s < t->end)
		s = t->end;
	if (e <= s)
		return;
	if (t->end > t->start && t->phase == phase && t->end == s) {
		t->end = e;
		return;
	}
	track__flush(t);
	t->phase = phase;
	t->start = s;
	t->end = e;
}

static void meta(struct jsonw *w, const char *what, __u32 pid, __u32 tid, const char *name)
{
	jsonw__start_object(w);
	jsonw__string_field(w, "ph", "M");
	jsonw__string_field(w, "name", what);
	jsonw__u64_field(w, "pid", pid);
	jsonw__u64_field(w, "tid", tid);
	jsonw__name(w, "args");
	jsonw__start_object(w);
	jsonw__string_field(w, "name", name);
	jsonw__end_object(w);
	jsonw__end_object(w);
}

/* When a process's threads stop: its exit, or the end of the run. */
static __u64 proc_end(const struct model *m, __u32 pid)
{
	const struct model_proc *p = model__proc((struct model *)m, pid, false);

	return p && p->exited && p->exit_ns && p->exit_ns < m->end_ns ? p->exit_ns : m->end_ns;
}

/* A thread's change of its process's phase, and until when that phase held. */
struct change_span {
	const struct history_change *c;
	__u64 until;		/* the process's next change (any thread's), or its end */
	bool first;		/* the process's first change */
};

static int cmp_ts(__u64 a, __u64 b)
{
	return a < b ? -1 : a > b;
}

static int cmp_by_pid(const void *a, const void *b)
{
	const struct history_change *x = ((const struct change_span *)a)->c;
	const struct history_change *y = ((const struct change_span *)b)->c;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return cmp_ts(x->ts_ns, y->ts_ns);
}

static int cmp_by_tid(const void *a, const void *b)
{
	const struct history_change *x = ((const struct change_span *)a)->c;
	const struct history_change *y = ((const struct change_span *)b)->c;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return cmp_ts(x->ts_ns, y->ts_ns);
}

/*
 * Each thread's phases, from its changes. The phase is the process's (BPF keeps one per
 * target): a thread's slice lasts until the next change in its process, whichever thread
 * made it, so that a process's thread tracks together tell its phases once. The time before
 * a process's first change goes, in the phase that change left, to the thread that made it.
 */
static int thread_slices(struct jsonw *w, const struct model *m)
{
	const struct history *h = &m->history;
	struct change_span *v;
	struct track t;
	char name[64];
	size_t i;

	if (!h->nch)
		return 0;
	v = calloc(h->nch, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < h->nch; i++)
		v[i].c = &h->ch[i];
	qsort(v, h->nch, sizeof(*v), cmp_by_pid);
	for (i = 0; i < h->nch; i++) {
		bool next = i + 1 < h->nch && v[i + 1].c->pid == v[i].c->pid;

		v[i].first = !i || v[i - 1].c->pid != v[i].c->pid;
		v[i].until = next ? v[i + 1].c->ts_ns : proc_end(m, v[i].c->pid);
	}
	qsort(v, h->nch, sizeof(*v), cmp_by_tid);
	for (i = 0; i < h->nch; i++) {
		const struct history_change *c = v[i].c;

		if (!i || v[i - 1].c->tid != c->tid) {
			snprintf(name, sizeof(name), "thread %u", c->tid);
			meta(w, "thread_name", c->pid, c->tid, name);
			track__init(&t, w, m, c->pid, c->tid);
		}
		if (v[i].first)
			track__add(&t, c->old_phase, m->start_ns, c->ts_ns);
		track__add(&t, c->phase, c->ts_ns, v[i].until);
		if (i + 1 == h->nch || v[i + 1].c->tid != c->tid)
			track__flush(&t);
	}
	free(v);
	return 0;
}

/* The phase timeline: its closed intervals, then the open one. */
static void timeline_slices(struct jsonw *w, const struct model *m)
{
	const struct history *h = &m->history;
	__u64 since = history__open_since(h, m->start_ns);
	struct track t;
	size_t i;

	meta(w, "thread_name", m->root_pid, TIMELINE_TID, "phase timeline");
	track__init(&t, w, m, m->root_pid, TIMELINE_TID);
	for (i = 0; i < h->niv; i++)
		track__add(&t, h->iv[i].phase, h->iv[i].start_ns, h->iv[i].end_ns);
	if (since)
		track__add(&t, m->cur_phase, since, m->end_ns);
	track__flush(&t);
}

/*
 * The requests as slices on their own track: name "request N", their tokens and growth. A
 * request ends where the next begins, or before (a request cut at its prompt's tokenizing
 * when that came before the last one's end is shown from that end).
 */
static void request_slices(struct jsonw *w, const struct model *m)
{
	__u64 prev = 0, s, e;
	char name[32];
	unsigned int i, c;

	if (!m->nrequests)
		return;
	meta(w, "thread_name", m->root_pid, REQUESTS_TID, "requests");
	for (i = 0; i < m->nrequests; i++) {
		const struct model_request *r = &m->requests[i];
		__s64 growth = 0;

		s = tick(m, r->start_ns);
		e = tick(m, r->end_ns ? r->end_ns : m->end_ns);
		s = s < prev ? prev : s;
		if (e <= s)
			continue;	/* shorter than a tick, or after the end */
		prev = e;
		for (c = 0; c < MP_NR_CLASSES; c++)
			if (c != MP_SWAP)
				growth += r->rss_end[c] - r->rss_start[c];
		snprintf(name, sizeof(name), "request %u", i + 1);
		event_head(w, "X", name, "request", m->root_pid, REQUESTS_TID, s);
		jsonw__milli_field(w, "dur", e - s);
		jsonw__name(w, "args");
		jsonw__start_object(w);
		jsonw__u64_field(w, "prompt_tokens", r->prompt_tokens);
		jsonw__u64_field(w, "generated_tokens", r->gen_tokens);
		jsonw__s64_field(w, "rss_growth_bytes", growth);
		jsonw__bool_field(w, "oom", r->oom);
		jsonw__end_object(w);
		jsonw__end_object(w);
	}
}

static void counter_head(struct jsonw *w, const struct model *m, const char *name, __u64 ts)
{
	event_head(w, "C", name, "memory", m->root_pid, 0, tick(m, ts));
	jsonw__name(w, "args");
	jsonw__start_object(w);
}

static void counters(struct jsonw *w, const struct model *m, const struct timeline *tl)
{
	const struct history *h = &m->history;
	unsigned int i, n = tl ? timeline__len(tl) : 0;
	int c;

	for (i = 0; i < n; i++) {
		const struct timeline_sample *t = timeline__at(tl, i);

		if (after_end(m, t->ts_ns))
			continue;
		counter_head(w, m, "RSS bytes", t->ts_ns);
		for (c = 0; c < MP_NR_CLASSES; c++)
			jsonw__s64_field(w, mp_class_name(mp_class_order[c]),
					 t->rss[mp_class_order[c]]);
		jsonw__end_object(w);
		jsonw__end_object(w);
	}
	for (i = 0; i < h->nmem; i++) {
		const struct history_mem *s = &h->mem[i];

		if (after_end(m, s->ts_ns))
			continue;
		counter_head(w, m, "system memory bytes", s->ts_ns);
		jsonw__u64_field(w, "MemAvailable", s->mem_available);
		jsonw__u64_field(w, "SwapFree", s->swap_free);
		jsonw__end_object(w);
		jsonw__end_object(w);
		if (!s->cg_usage && !s->cg_limit)
			continue;
		counter_head(w, m, "memory cgroup bytes", s->ts_ns);
		jsonw__u64_field(w, "usage", s->cg_usage);
		if (s->cg_limit)
			jsonw__u64_field(w, "limit", s->cg_limit);
		jsonw__end_object(w);
		jsonw__end_object(w);
	}
}

/* Pinned and managed host memory held, and VRAM (with NVML), where they changed. */
static void gpu_counters(struct jsonw *w, const struct model *m)
{
	const struct history *h = &m->history;
	unsigned int i;

	for (i = 0; i < h->ngpu; i++) {
		const struct history_gpu *s = &h->gpu[i];

		if (after_end(m, s->ts_ns))
			continue;
		counter_head(w, m, "GPU memory bytes", s->ts_ns);
		jsonw__s64_field(w, "pinned host", s->pinned);
		jsonw__s64_field(w, "managed host", s->managed);
		if (m->gpu.nvml)
			jsonw__u64_field(w, "VRAM", s->vram);
		jsonw__end_object(w);
		jsonw__end_object(w);
	}
}

static void marks(struct jsonw *w, const struct model *m)
{
	const struct history *h = &m->history;
	size_t i;

	for (i = 0; i < h->nmk; i++) {
		const struct history_mark *k = &h->mk[i];

		if (after_end(m, k->ts_ns))
			continue;
		event_head(w, "i", k->text[0] ? k->text : history__mark_name(k->kind),
			   history__mark_name(k->kind), k->pid, k->pid, tick(m, k->ts_ns));
		/* OOM kills and guard actions concern the whole run: global instants */
		jsonw__string_field(w, "s", k->kind == HISTORY_OOM || k->kind == HISTORY_GUARD ?
				    "g" : "p");
		jsonw__end_object(w);
	}
}

/*
 * The sampled stacks as the trace's stackFrames dictionary: a tree of a node per (caller's
 * node, frame), ids from 1 (speedscope's reader takes an sf of 0 for no stack).
 */
struct frame_node {
	const char *name;	/* interned by the profile */
	__u32 parent;		/* 0: outermost */
};

struct frames {
	struct strmap index;	/* "PARENT\x1fNAME" -> node id */
	struct frame_node *v;	/* node id - 1 */
	size_t n, cap;
	__u32 *leaf;		/* per merged stack: its innermost frame's node, 0 not yet */
	int *cause;		/* per merged stack: its cause in the rules, -1 none, -2 unknown */
	char *buf;		/* scratch: an index key, a stack's text */
	size_t bufcap;
};

static int frames__init(struct frames *f, const struct profile *p)
{
	size_t k;

	memset(f, 0, sizeof(*f));
	strmap__init(&f->index, NULL);
	f->leaf = calloc(p->nstacks + 1, sizeof(*f->leaf));
	f->cause = malloc((p->nstacks + 1) * sizeof(*f->cause));
	if (!f->leaf || !f->cause)
		return -ENOMEM;
	for (k = 0; k < p->nstacks; k++)
		f->cause[k] = -2;
	return 0;
}

static void frames__free(struct frames *f)
{
	strmap__free(&f->index);
	free(f->v);
	free(f->leaf);
	free(f->cause);
	free(f->buf);
}

/* f->buf with room for len bytes, or NULL */
static char *frames__buf(struct frames *f, size_t len)
{
	char *b;

	if (len <= f->bufcap)
		return f->buf;
	b = realloc(f->buf, len);
	if (!b)
		return NULL;
	f->buf = b;
	f->bufcap = len;
	return b;
}

/* The node of name called from parent (0: outermost), made when new; 0 on ENOMEM. */
static __u32 frames__node(struct frames *f, __u32 parent, const char *name)
{
	char *key = frames__buf(f, strlen(name) + 16);
	struct strmap_entry *e;

	if (!key)
		return 0;
	/* frames have no control characters: \x1f cannot be part of one */
	snprintf(key, strlen(name) + 16, "%u\x1f%s", parent, name);
	e = strmap__get(&f->index, key);
	if (!e)
		return 0;
	if (e->value)
		return (__u32)e->value;
	if (util__grow((void **)&f->v, &f->cap, f->n, sizeof(*f->v)))
		return 0;
	f->v[f->n++] = (struct frame_node){ .name = name, .parent = parent };
	e->value = f->n;
	return (__u32)f->n;
}

/* The node of merged stack k's innermost frame (0: a sample without a stack). 0 or -ENOMEM. */
static int frames__stack(struct frames *f, const struct profile *p, size_t k, __u32 *leaf)
{
	const struct profile_stack *st = &p->stacks[k];
	__u32 i, id = 0;

	if (!f->leaf[k]) {
		for (i = 0; i < st->nframes; i++) {
			id = frames__node(f, id, st->frames[i]);
			if (!id)
				return -ENOMEM;
		}
		f->leaf[k] = id;
	}
	*leaf = f->leaf[k];
	return 0;
}

/* Merged stack k's frames, innermost first, joined by " <- " (the summary's arrow). */
static const char *frames__text(struct frames *f, const struct profile_stack *st)
{
	size_t len = 1, o = 0;
	char *b;
	__u32 i;

	for (i = 0; i < st->nframes; i++)
		len += strlen(st->frames[i]) + 4;
	b = frames__buf(f, len);
	if (!b)
		return NULL;
	b[0] = '\0';
	for (i = st->nframes; i-- > 0;)
		o += snprintf(b + o, len - o, "%s%s", o ? " <- " : "", st->frames[i]);
	return b;
}

/* The sample's name: its stack's cause, or its innermost frame. */
static const char *sample_name(struct frames *f, const struct model *m, size_t k)
{
	const struct profile_stack *st = &m->profile.stacks[k];
	const struct cause_rule *rule;

	if (f->cause[k] == -2)
		f->cause[k] = causes__match_stack(m, st, &rule);
	if (f->cause[k] >= 0)
		return m->rules.causes[f->cause[k]].name;
	return st->nframes ? st->frames[st->nframes - 1] : "[no stack]";
}

static int cmp_when(const void *a, const void *b)
{
	const struct profile_when *x = *(const struct profile_when *const *)a;
	const struct profile_when *y = *(const struct profile_when *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

/* One sample: an instant on its thread's track, its stack by sf and, for Perfetto, as text. */
static int sample(struct jsonw *w, const struct model *m, struct frames *f,
		  const struct profile_when *s)
{
	const struct profile_stack *st = &m->profile.stacks[s->stack];
	const char *text;
	__u32 leaf;
	int err;

	err = frames__stack(f, &m->profile, s->stack, &leaf);
	if (err)
		return err;
	event_head(w, "i", sample_name(f, m, s->stack), "rss_growth", s->pid, s->tid,
		   tick(m, s->ts_ns));
	jsonw__string_field(w, "s", "t");
	if (leaf)
		jsonw__u64_field(w, "sf", leaf);
	jsonw__name(w, "args");
	jsonw__start_object(w);
	jsonw__u64_field(w, "bytes", s->weight);
	jsonw__string_field(w, "phase", phase_name(m, st->phase));
	text = frames__text(f, st);
	if (!text)
		return -ENOMEM;
	if (text[0])
		jsonw__string_field(w, "stack", text);
	jsonw__end_object(w);
	jsonw__end_object(w);
	return 0;
}

/*
 * The stack samples of growth, each an instant on the track of the thread that took it (in
 * time order per thread: chrome://tracing drops an instant earlier than the one before).
 */
static int samples(struct jsonw *w, const struct model *m, struct frames *f)
{
	const struct profile *p = &m->profile;
	const struct profile_when **v;
	size_t i, n = 0;
	int err = 0;

	if (!p->nwhen)
		return 0;
	v = malloc(p->nwhen * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < p->nwhen; i++)
		if (p->when[i].stack < p->nstacks && !after_end(m, p->when[i].ts_ns))
			v[n++] = &p->when[i];
	qsort(v, n, sizeof(*v), cmp_when);
	for (i = 0; i < n && !err; i++)
		err = sample(w, m, f, v[i]);
	free(v);
	return err;
}

/* The stackFrames dictionary: "ID": {"name": FRAME, "parent": ID of its caller}. */
static void stack_frames(struct jsonw *w, const struct frames *f)
{
	char id[24];
	size_t i;

	jsonw__name(w, "stackFrames");
	jsonw__start_object(w);
	for (i = 0; i < f->n; i++) {
		snprintf(id, sizeof(id), "%zu", i + 1);
		jsonw__name(w, id);
		jsonw__start_object(w);
		jsonw__string_field(w, "name", f->v[i].name);
		if (f->v[i].parent)
			jsonw__u64_field(w, "parent", f->v[i].parent);
		jsonw__end_object(w);
	}
	jsonw__end_object(w);
}

static int trace_write(FILE *f, const struct output_ctx *ctx)
{
	const struct model *m = ctx->m;
	struct jsonw *w = NULL;
	char name[MP_COMM_LEN + 32];
	struct frames fr;
	unsigned int i;
	int err;

	err = frames__init(&fr, &m->profile);
	if (err)
		goto cleanup;
	w = jsonw__new(f, false);
	if (!w) {
		err = -ENOMEM;
		goto cleanup;
	}
	jsonw__start_object(w);
	jsonw__string_field(w, "displayTimeUnit", "ms");
	jsonw__name(w, "traceEvents");
	jsonw__start_array(w);
	for (i = 0; i < m->nprocs; i++) {
		const struct model_proc *p = &m->procs[i];

		snprintf(name, sizeof(name), "%.*s (pid %u)", MP_COMM_LEN,
			 p->comm[0] ? p->comm : "?", p->pid);
		meta(w, "process_name", p->pid, 0, name);
	}
	timeline_slices(w, m);
	request_slices(w, m);
	err = thread_slices(w, m);
	counters(w, m, ctx->tl);
	gpu_counters(w, m);
	marks(w, m);
	if (!err)
		err = samples(w, m, &fr);
	jsonw__end_array(w);
	stack_frames(w, &fr);
	jsonw__end_object(w);
cleanup:
	jsonw__free(w);
	frames__free(&fr);
	fflush(f);
	if (!err && ferror(f))
		err = -EIO;
	return err;
}

const struct output_format trace_format = {
	.name = "trace",
	.help = "Write the run as a Chrome/Perfetto trace (trace-event JSON: phases per thread, "
		"requests, RSS, memory and GPU counters, OOM kills, guard actions, libraries, "
		"stack samples of growth) to FILE",
	.write = trace_write,
};
