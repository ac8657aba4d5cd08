// SPDX-License-Identifier: GPL-2.0
/* Stack samples: unwinding (dwarf) or fp addresses -> symbols -> folded stacks. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "lib/flamegraph.h"
#include "lib/perfdata.h"
#include "collect/stacks.h"
#include "lib/strmap.h"
#include "collect/unwind.h"
#include "lib/utf8.h"
#include "lib/util.h"

struct raw_sample {
	__u32 pid, tid, phase, n;
	__u64 ts_ns, weight;
	__u64 ips[];
};

struct stacks {
	struct unwinder *u;
	bool keep_raw;
	struct strmap folded;		/* folded line (without weight) -> bytes */
	struct strmap syms;		/* "pid:ip:ret" -> (char *) name */
	__u64 bytes[MP_MAX_PHASES];
	__u64 samples[MP_MAX_PHASES];
	__u64 total, unwind_failures;
	struct raw_sample **raw;
	size_t nraw, capraw;
	struct {
		__u32 pid;
		bool sampled;	/* it has samples: perf.data needs its mappings */
	} pids[1024];			/* processes whose maps perf.data may need */
	unsigned int npids;
};

struct stacks *stacks__new(struct unwinder *u, bool keep_raw)
{
	struct stacks *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->u = u;
	st->keep_raw = keep_raw;
	strmap__init(&st->folded, NULL);
	strmap__init(&st->syms, strmap__free_ptr);
	return st;
}

void stacks__free(struct stacks *st)
{
	size_t i;

	if (!st)
		return;
	strmap__free(&st->syms);
	strmap__free(&st->folded);
	for (i = 0; i < st->nraw; i++)
		free(st->raw[i]);
	free(st->raw);
	free(st);
}

static void pid_note(struct stacks *st, __u32 pid, bool sampled)
{
	unsigned int i;

	for (i = 0; i < st->npids; i++) {
		if (st->pids[i].pid == pid) {
			st->pids[i].sampled |= sampled;
			return;
		}
	}
	if (st->npids < sizeof(st->pids) / sizeof(st->pids[0])) {
		st->pids[st->npids].pid = pid;
		st->pids[st->npids++].sampled = sampled;
	}
}

void stacks__note_process(struct stacks *st, __u32 pid)
{
	if (!st || !st->u)
		return;
	unwinder__snapshot(st->u, pid);
	pid_note(st, pid, false);
}

void stacks__forget_process(struct stacks *st, __u32 pid)
{
	char prefix[16];
	unsigned int i;

	if (!st)
		return;
	/* its cached names ("pid:ip:ret"): the pid may come back as another program */
	snprintf(prefix, sizeof(prefix), "%u:", pid);
	strmap__remove_prefix(&st->syms, prefix);
	for (i = 0; i < st->npids && st->pids[i].pid != pid; i++)
		;
	if (i < st->npids) {
		/* perf.data writes the mappings of sampled processes at the end */
		if (st->keep_raw && st->pids[i].sampled)
			return;
		memmove(&st->pids[i], &st->pids[i + 1], (st->npids - i - 1) * sizeof(st->pids[0]));
		st->npids--;
	}
	if (st->u)
		unwinder__forget(st->u, pid);
}

/*
 * One frame (or comm) as the folded format needs it, malloc'd: valid UTF-8 without control
 * characters (others become U+FFFD), no ';' (the frame separator, made ':') and never
 * empty ("[unknown]"). NULL on ENOMEM.
 */
static char *frame_clean(const char *s)
{
	char *c = utf8__sanitize(s), *p;

	if (c && !c[0]) {
		free(c);
		c = strdup("[unknown]");
	}
	for (p = c; p && *p; p++)
		if (*p == ';')
			*p = ':';
	return c;
}

static const char *symbol(struct stacks *st, __u32 pid, __u64 ip, bool is_return)
{
	struct unwind_sym sym;
	struct strmap_entry *e;
	char key[64], *name;

	snprintf(key, sizeof(key), "%u:%" PRIx64 ":%d", pid, (uint64_t)ip, is_return);
	e = strmap__find(&st->syms, key);
	if (e)
		return (const char *)(uintptr_t)e->value;
	if (!st->u || unwinder__symbolize(st->u, pid, ip, is_return, &sym))
		snprintf(sym.name, sizeof(sym.name), "[unknown]+0x%" PRIx64, (uint64_t)ip);
	/* "__libc_start_main@@GLIBC_2.34": the symbol version is noise in a stack */
	name = strchr(sym.name, '@');
	if (name && name != sym.name)
		*name = '\0';
	name = frame_clean(sym.name);
	e = strmap__get(&st->syms, key);
	if (!name || !e) {
		free(name);
		return "[unknown]";
	}
	e->value = (uintptr_t)name;
	return name;
}

static int raw_keep(struct stacks *st, const struct mp_stack_event *h, const __u64 *ips, int n)
{
	struct raw_sample *r, **v;

	if (st->nraw == st->capraw) {
		size_t cap = st->capraw ? st->capraw * 2 : 1024;

		v = realloc(st->raw, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		st->raw = v;
		st->capraw = cap;
	}
	r = malloc(sizeof(*r) + n * sizeof(__u64));
	if (!r)
		return -ENOMEM;
	r->pid = h->pid;
	r->tid = h->tid;
	r->phase = h->phase;
	r->n = n;
	r->ts_ns = h->ts_ns;
	r->weight = h->weight;
	memcpy(r->ips, ips, n * sizeof(__u64));
	st->raw[st->nraw++] = r;
	return 0;
}

int stacks__add(struct stacks *st, const struct model *m, const void *data, size_t len)
{
	const struct mp_stack_event *h = data;
	const void *payload = (const char *)data + sizeof(*h);
	__u64 ips[STACKS_MAX_FRAMES];
	struct strmap_entry *e;
	FILE *f;
	char *line = NULL, *comm, raw_comm[MP_COMM_LEN + 1];
	size_t cap = 0;
	int n = 0, i;

	if (len < sizeof(*h) || h->phase >= MP_MAX_PHASES)
		return -EINVAL;
	if (h->mode == MP_STACKS_DWARF) {
		if (len < sizeof(*h) + h->stack_len)
			return -EINVAL;
		if (st->u)
			n = unwinder__unwind(st->u, h->pid, h->regs, payload, h->stack_len, ips,
					     STACKS_MAX_FRAMES);
		if (n <= 1)
			st->unwind_failures++;
		if (n <= 0) {
			ips[0] = h->regs[MP_RIP];
			n = 1;
		}
	} else {
		n = h->nframes < STACKS_MAX_FRAMES ? h->nframes : STACKS_MAX_FRAMES;
		if (len < sizeof(*h) + n * sizeof(__u64))
			return -EINVAL;
		memcpy(ips, payload, n * sizeof(__u64));
		if (n <= 1)
			st->unwind_failures++;
	}
	/* n == 0: the kernel's walk found nothing; the bytes stay, under [no stack] */
	pid_note(st, h->pid, true);
	memcpy(raw_comm, h->comm, MP_COMM_LEN);
	raw_comm[MP_COMM_LEN] = '\0';
	comm = frame_clean(raw_comm);
	if (!comm)
		return -ENOMEM;

	/* phase;comm;outermost;...;innermost */
	f = open_memstream(&line, &cap);
	if (!f) {
		free(comm);
		return -ENOMEM;
	}
	fprintf(f, "%s;%s", m->names[h->phase][0] ? m->names[h->phase] : "[unknown]", comm);
	free(comm);
	if (!n)
		fprintf(f, ";[no stack]");
	for (i = n - 1; i >= 0; i--)
		fprintf(f, ";%s", symbol(st, h->pid, ips[i], i > 0));
	if (fclose(f)) {
		free(line);
		return -ENOMEM;
	}
	e = strmap__get(&st->folded, line);
	free(line);
	if (!e)
		return -ENOMEM;
	e->value += h->weight;
	st->bytes[h->phase] += h->weight;
	st->samples[h->phase]++;
	st->total++;
	if (st->keep_raw && n)
		return raw_keep(st, h, ips, n);
	return 0;
}

__u64 stacks__sampled_bytes(const struct stacks *st, unsigned int phase)
{
	return st && phase < MP_MAX_PHASES ? st->bytes[phase] : 0;
}

__u64 stacks__samples(const struct stacks *st, unsigned int phase)
{
	return st && phase < MP_MAX_PHASES ? st->samples[phase] : 0;
}


__u64 stacks__unwind_failures(const struct stacks *st)
{
	return st ? st->unwind_failures : 0;
}

/* Growth (without swap) that no sample carries, per phase. */
static __u64 unsampled(const struct stacks *st, const struct model *m, unsigned int id)
{
	__u64 g = model__growth_total(&m->stats[id], false), s = st->bytes[id];

	return g > s ? g - s : 0;
}

/* The folded lines in output order, as one array the folded and SVG writers share. */
struct folded_lines {
	struct fg_stack *v;
	size_t n;
	char **owned;		/* the [not sampled] lines' frames */
	size_t nowned;
};

static void folded_lines_free(struct folded_lines *fl)
{
	size_t i;

	for (i = 0; i < fl->nowned; i++)
		free(fl->owned[i]);
	free(fl->owned);
	free(fl->v);
}

/* does key begin with the phase name followed by ';'? */
static bool in_phase(const char *key, const char *name)
{
	size_t n = strlen(name);

	return n && !strncmp(key, name, n) && key[n] == ';';
}

/*
 * Per phase in the order the phases were first entered: its stacks by stack (byte order),
 * then "phase;COMM;[not sampled]" for the growth no sample carries, COMM being the main
 * process's. Stacks of a phase never entered (none, normally) come last.
 */
static int folded_lines_build(struct folded_lines *fl, const struct stacks *st,
			       const struct model *m)
{
	struct strmap_entry **v = strmap__sorted(&st->folded);
	const struct model_proc *main_proc = model__main((struct model *)m);
	char raw_comm[MP_COMM_LEN + 1] = "", *comm = NULL, *line;
	bool *used = NULL;
	unsigned int i;
	size_t k;
	int err = -ENOMEM;

	memset(fl, 0, sizeof(*fl));
	if (!v)
		return -ENOMEM;
	fl->v = calloc(st->folded.len + m->norder + 1, sizeof(*fl->v));
	fl->owned = calloc(m->norder + 1, sizeof(*fl->owned));
	used = calloc(st->folded.len + 1, sizeof(*used));
	if (main_proc)
		memcpy(raw_comm, main_proc->comm, MP_COMM_LEN);
	comm = frame_clean(raw_comm);
	if (!fl->v || !fl->owned || !used || !comm)
		goto cleanup;
	for (i = 0; i < m->norder; i++) {
		unsigned int id = m->order[i];
		__u64 rest = unsampled(st, m, id);

		for (k = 0; v[k]; k++) {
			if (used[k] || !in_phase(v[k]->key, m->names[id]))
				continue;
			used[k] = true;
			fl->v[fl->n].frames = v[k]->key;
			fl->v[fl->n++].weight = v[k]->value;
		}
		if (!rest)
			continue;
		if (asprintf(&line, "%s;%s;[not sampled]", m->names[id], comm) < 0)
			goto cleanup;
		fl->owned[fl->nowned++] = line;
		fl->v[fl->n].frames = line;
		fl->v[fl->n++].weight = rest;
	}
	for (k = 0; v[k]; k++) {
		if (used[k])
			continue;
		fl->v[fl->n].frames = v[k]->key;
		fl->v[fl->n++].weight = v[k]->value;
	}
	err = 0;
cleanup:
	if (err)
		folded_lines_free(fl);
	free(comm);
	free(used);
	free(v);
	return err;
}

int stacks__write_folded(const struct stacks *st, const struct model *m, FILE *f)
{
	struct folded_lines fl;
	size_t k;
	int err;

	err = folded_lines_build(&fl, st, m);
	if (err)
		return err;
	for (k = 0; k < fl.n; k++)
		fprintf(f, "%s %llu\n", fl.v[k].frames, (unsigned long long)fl.v[k].weight);
	folded_lines_free(&fl);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}

int stacks__write_svg(const struct stacks *st, const struct model *m, FILE *f)
{
	struct fg_opts o = { .title = "memphase: RSS growth by phase and code path",
			     .unit = "bytes", .width = 1200 };
	const char *order[MP_MAX_PHASES];
	char sub[256], cmd[128] = "";
	struct folded_lines fl;
	unsigned int i;
	int err;

	err = folded_lines_build(&fl, st, m);
	if (err)
		return err;
	/* phases left to right in the order they were entered */
	for (i = 0; i < m->norder; i++)
		order[i] = m->names[m->order[i]];
	o.first_order = order;
	o.nfirst = m->norder;
	if (m->argv && m->argv[0])
		snprintf(cmd, sizeof(cmd), "%s", m->argv[0]);
	snprintf(sub, sizeof(sub), "%s (pid %u): %llu samples", cmd, m->root_pid,
		 (unsigned long long)st->total);
	o.subtitle = sub;
	err = flamegraph__write(f, fl.v, fl.n, &o);
	folded_lines_free(&fl);
	return err;
}

struct perf_ctx {
	struct perfdata *pd;
	int err;
};

static int perf_map_cb(void *ctx, pid_t pid, __u64 start, __u64 end, __u64 pgoff,
		       const char *path, const unsigned char *build_id, int build_id_len)
{
	struct perf_ctx *pc = ctx;
	int err = perfdata__mmap(pc->pd, pid, pid, 0, start, end - start, pgoff, path, build_id,
				 build_id_len);

	if (err && !pc->err)
		pc->err = err;
	return 0;
}

static int cmp_raw(const void *a, const void *b)
{
	const struct raw_sample *x = *(struct raw_sample *const *)a;
	const struct raw_sample *y = *(struct raw_sample *const *)b;

	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

struct tid_phase {
	__u32 tid;
	__u32 phase;
};

int stacks__write_perf(const struct stacks *st, const struct model *m, FILE *f)
{
	unsigned int event_of[MP_MAX_PHASES], nevents = 0, i;
	char raw_comm[MP_COMM_LEN + 1] = "", *comm;
	const char *events[MP_MAX_PHASES];
	struct perf_ctx pc = {};
	struct tid_phase *tp = NULL;
	bool have[MP_MAX_PHASES] = {};
	size_t ntp = 0, k, j;
	int err;

	/* one event per phase, in the order entered; phases never entered (none, normally) after */
	for (i = 0; i < m->norder; i++) {
		have[m->order[i]] = true;
		event_of[m->order[i]] = nevents;
		events[nevents++] = m->names[m->order[i]];
	}
	for (k = 0; k < st->nraw; k++) {
		i = st->raw[k]->phase;
		if (have[i])
			continue;
		have[i] = true;
		event_of[i] = nevents;
		events[nevents++] = m->names[i][0] ? m->names[i] : "[unknown]";
	}
	pc.pd = perfdata__new(f, events, nevents);
	if (!pc.pd)
		return -errno;
	tp = calloc(st->nraw + 1, sizeof(*tp));
	if (!tp) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* the processes: their name, then their code mappings */
	for (i = 0; i < st->npids; i++) {
		__u32 pid = st->pids[i].pid;
		const struct model_proc *p = model__proc((struct model *)m, pid, false);

		memcpy(raw_comm, p ? p->comm : "", p ? MP_COMM_LEN : 1);
		comm = raw_comm[0] ? utf8__sanitize(raw_comm) : strdup("memphase-target");
		err = comm ? perfdata__comm(pc.pd, pid, pid, 0, comm, true)
			   : -ENOMEM;
		free(comm);
		if (err)
			goto cleanup;
		if (st->u)
			unwinder__for_each_map(st->u, pid, perf_map_cb, &pc);
		if (pc.err) {
			err = pc.err;
			goto cleanup;
		}
	}
	qsort(st->raw, st->nraw, sizeof(*st->raw), cmp_raw);
	for (k = 0; k < st->nraw; k++) {
		const struct raw_sample *r = st->raw[k];
		__u64 chain[STACKS_MAX_FRAMES];

		/* the thread's comm is its phase: rename it when the phase changes */
		for (j = 0; j < ntp && tp[j].tid != r->tid; j++)
			;
		if (j == ntp || tp[j].phase != r->phase) {
			if (j == ntp) {
				tp[ntp].tid = r->tid;
				ntp++;
			}
			tp[j].phase = r->phase;
			err = perfdata__comm(pc.pd, r->pid, r->tid, r->ts_ns ? r->ts_ns - 1 : 0,
					     m->names[r->phase], false);
			if (err)
				goto cleanup;
		}
		memcpy(chain, r->ips, r->n * sizeof(__u64));
		/* return addresses point after the call: perf expects them as they are */
		err = perfdata__sample(pc.pd, event_of[r->phase], r->pid, r->tid, r->ts_ns,
				       r->weight, chain, r->n);
		if (err)
			goto cleanup;
	}
	err = perfdata__close(pc.pd);
cleanup:
	free(tp);
	perfdata__free(pc.pd);
	return err;
}
