// SPDX-License-Identifier: GPL-2.0
/* Stack samples: unwinding (dwarf) or fp addresses -> symbols -> the model's profile. */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "collect/stacks.h"
#include "lib/strmap.h"
#include "collect/unwind.h"
#include "lib/utf8.h"
#include "lib/util.h"

struct stacks {
	struct unwinder *u;
	bool keep_raw;			/* the profile keeps raw samples: mappings at the end */
	struct strmap syms;		/* "pid:ip:ret" -> (char *) name */
	struct {
		__u32 pid;
		bool sampled;		/* it has samples: perf.data needs its mappings */
	} pids[1024];			/* processes noted (snapshots) */
	unsigned int npids;
};

struct stacks *stacks__new(struct unwinder *u, bool keep_raw)
{
	struct stacks *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->u = u;
	st->keep_raw = keep_raw;
	strmap__init(&st->syms, strmap__free_ptr);
	return st;
}

void stacks__free(struct stacks *st)
{
	if (!st)
		return;
	strmap__free(&st->syms);
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

/* drops the cached names ("pid:ip:ret") of pid */
static void syms_forget(struct stacks *st, __u32 pid)
{
	char prefix[16];

	snprintf(prefix, sizeof(prefix), "%u:", pid);
	strmap__remove_prefix(&st->syms, prefix);
}

void stacks__exec_process(struct stacks *st, __u32 pid)
{
	if (!st)
		return;
	syms_forget(st, pid);
	if (!st->u)
		return;
	unwinder__snapshot(st->u, pid);
	unwinder__exec(st->u, pid);
	pid_note(st, pid, false);
}

void stacks__forget_process(struct stacks *st, __u32 pid)
{
	unsigned int i;

	if (!st)
		return;
	/* its cached names: the pid may come back as another program */
	syms_forget(st, pid);
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
 * One frame (or comm) as the profile keeps it, malloc'd: valid UTF-8 without control
 * characters (others become U+FFFD) and never empty ("[unknown]"). NULL on ENOMEM.
 */
static char *frame_clean(const char *s)
{
	char *c = utf8__sanitize(s);

	if (c && !c[0]) {
		free(c);
		c = strdup("[unknown]");
	}
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

/*
 * Where pinned or managed memory came from: the innermost frames, caller first. A dwarf
 * sample taken at the function's return starts in its caller; frames of the CUDA
 * libraries themselves (cuda*, cu[A-Z]*: the runtime calling the driver) are skipped.
 */
static void origin_add(struct model *m, __u32 cls, __u32 phase, const char *const *frames,
		       int nf, bool have, __u64 bytes)
{
	char where[GPU_ORIGIN_LEN];
	size_t used = 0;
	int i, shown = 0;

	where[0] = '\0';
	for (i = nf - 1; have && i >= 0 && shown < 4 && used < sizeof(where); i--) {
		const char *f = frames[i];

		if (!strncmp(f, "cuda", 4) || (f[0] == 'c' && f[1] == 'u' && f[2] >= 'A' &&
					       f[2] <= 'Z'))
			continue;
		used += snprintf(where + used, sizeof(where) - used, "%s%s", shown ? " < " : "",
				 f);
		shown++;
	}
	if (!where[0])
		snprintf(where, sizeof(where), "[no stack]");
	model_gpu__origin(&m->gpu, cls, phase, where, bytes);
}

int stacks__resolve(struct stacks *st, const void *data, size_t len, struct stacks_sample *s)
{
	const struct mp_stack_event *h = data;
	const void *payload = (const char *)data + sizeof(*h);
	char raw_comm[MP_COMM_LEN + 1];
	int n = 0, i;

	memset(s, 0, offsetof(struct stacks_sample, frames));
	if (len < sizeof(*h) || h->phase >= MP_MAX_PHASES)
		return -EINVAL;
	if (h->mode == MP_STACKS_DWARF) {
		if (len < sizeof(*h) + h->stack_len)
			return -EINVAL;
		if (st->u)
			n = unwinder__unwind(st->u, h->pid, h->regs, payload, h->stack_len, s->ips,
					     STACKS_MAX_FRAMES);
		s->unwind_failed = n <= 1;
		if (n <= 0) {
			s->ips[0] = h->regs[MP_RIP];
			n = 1;
		}
	} else {
		n = h->nframes < STACKS_MAX_FRAMES ? h->nframes : STACKS_MAX_FRAMES;
		if (len < sizeof(*h) + n * sizeof(__u64))
			return -EINVAL;
		memcpy(s->ips, payload, n * sizeof(__u64));
		s->unwind_failed = n <= 1;
	}
	pid_note(st, h->pid, true);
	memcpy(raw_comm, h->comm, MP_COMM_LEN);
	raw_comm[MP_COMM_LEN] = '\0';
	s->comm = frame_clean(raw_comm);
	if (!s->comm)
		return -ENOMEM;
	s->pid = h->pid;
	s->tid = h->tid;
	s->phase = h->phase;
	s->cpu = h->cpu;
	s->ts_ns = h->ts_ns;
	s->weight = h->weight;
	s->cls = h->cls;
	s->addr = h->addr;
	s->map_how = h->map_how;
	s->map_prot = h->map_prot;
	s->nips = n;
	/* n == 0: the kernel's walk found nothing; the bytes stay, under [no stack] */
	if (!n)
		s->frames[s->nframes++] = "[no stack]";
	for (i = n - 1; i >= 0; i--)
		s->frames[s->nframes++] = symbol(st, h->pid, s->ips[i], i > 0);
	return 0;
}

int stacks__apply(struct model *m, const struct stacks_sample *s)
{
	__u32 origin, phase;
	int err;

	if (s->phase >= MP_MAX_PHASES)
		return -EINVAL;
	/* taken in an interval a later marker showed as another phase (a --fit probe's) */
	phase = model__shown_phase(m, s->pid, s->ts_ns, s->phase);
	if (s->cls >= MP_STACK_CLS_ALLOC) {
		/* an allocation probe's sample: its callers, not RSS growth */
		origin_add(m, s->cls - MP_STACK_CLS_ALLOC, s->phase, s->frames, s->nframes,
			   s->nips > 0, s->weight);
		return 0;
	}
	if (s->unwind_failed)
		m->unwind_failures++;
	/* the mapping it grew, if memphase saw it created */
	origin = s->addr ? origins__find(&m->origins, s->pid, MP_MAP_UNKNOWN, s->addr) : 0;
	err = profile__add_from(&m->profile, phase, s->comm, s->frames, s->nframes, s->weight,
				origin);
	if (!err)
		err = profile__add_when(&m->profile, s->pid, s->tid, s->ts_ns, s->weight);
	if (err)
		return err;
	m->sampled_bytes[phase] += s->weight;
	m->samples[phase]++;
	/* every sample, [no stack] ones too (n 0): pprof's totals are the phases' sampled bytes */
	return profile__add_raw(&m->profile, s->pid, s->tid, s->cpu, phase, s->ts_ns, s->weight,
				s->cls, origin, s->ips, s->nips);
}

int stacks__add(struct stacks *st, struct model *m, const void *data, size_t len)
{
	struct stacks_sample s;
	int err;

	err = stacks__resolve(st, data, len, &s);
	if (!err)
		err = stacks__apply(m, &s);
	free((char *)s.comm);
	return err;
}

int stacks__origin_apply(struct model *m, const struct stacks_sample *s)
{
	struct origin o = {};

	if (s->phase >= MP_MAX_PHASES || !s->comm)
		return -EINVAL;
	snprintf(o.comm, sizeof(o.comm), "%s", s->comm);
	o.pid = s->pid;
	o.tid = s->tid;
	o.phase = s->phase;
	o.how = s->map_how & MP_ORIGIN_HOW_MASK;
	o.backing = s->map_how >> MP_ORIGIN_BACKING_SHIFT;
	o.prot = s->map_prot;
	o.ts_ns = s->ts_ns;
	o.start = s->addr;
	o.len = s->weight;
	return origins__add(&m->origins, &m->profile, &m->rules, &o, s->frames, s->nframes);
}

int stacks__origin(struct stacks *st, struct model *m, const void *data, size_t len)
{
	struct stacks_sample s;
	int err;

	err = stacks__resolve(st, data, len, &s);
	if (!err)
		err = stacks__origin_apply(m, &s);
	free((char *)s.comm);
	return err;
}

struct map_ctx {
	struct profile *p;
	int err;
};

static int map_cb(void *ctx, pid_t pid, __u64 start, __u64 end, __u64 pgoff,
		  const char *path, const unsigned char *build_id, int build_id_len)
{
	struct map_ctx *mc = ctx;
	int err = profile__add_map(mc->p, pid, start, end, pgoff, path, build_id, build_id_len);

	if (err && !mc->err)
		mc->err = err;
	return 0;
}

int stacks__finish(struct stacks *st, struct model *m)
{
	struct map_ctx mc = { .p = &m->profile };
	char comm[MP_COMM_LEN + 1];
	unsigned int i;
	int err;

	if (!st)
		return 0;
	/* again after a guard's snapshot: the mappings as they are now */
	m->profile.nmaps = 0;
	for (i = 0; i < st->npids; i++) {
		const struct model_proc *p = model__proc(m, st->pids[i].pid, false);

		memset(comm, 0, sizeof(comm));
		if (p)
			memcpy(comm, p->comm, MP_COMM_LEN);
		err = profile__add_proc(&m->profile, st->pids[i].pid, comm);
		if (err)
			return err;
		if (m->profile.keep_raw && st->u)
			unwinder__for_each_map(st->u, st->pids[i].pid, map_cb, &mc);
		if (mc.err)
			return mc.err;
	}
	profile__sort_raw(&m->profile);
	return 0;
}
