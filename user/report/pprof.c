// SPDX-License-Identifier: GPL-2.0
/* pprof's profile.proto, gzipped, from the profile's raw samples (see pprof.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/pbwriter.h"
#include "lib/strmap.h"
#include "lib/util.h"
#include "model/causes.h"
#include "report/pprof.h"

/* profile.proto's field numbers (github.com/google/pprof, proto/profile.proto) */
enum { PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE, PROFILE_MAPPING, PROFILE_LOCATION,
       PROFILE_FUNCTION, PROFILE_STRING_TABLE, PROFILE_TIME_NANOS = 9, PROFILE_DURATION_NANOS,
       PROFILE_PERIOD_TYPE, PROFILE_PERIOD, PROFILE_COMMENT, PROFILE_DEFAULT_SAMPLE_TYPE };
enum { VALUE_TYPE = 1, VALUE_UNIT };
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE, SAMPLE_LABEL };
enum { LABEL_KEY = 1, LABEL_STR, LABEL_NUM, LABEL_NUM_UNIT };
enum { MAPPING_ID = 1, MAPPING_START, MAPPING_LIMIT, MAPPING_OFFSET, MAPPING_FILENAME,
       MAPPING_BUILD_ID, MAPPING_HAS_FUNCTIONS };
enum { LOCATION_ID = 1, LOCATION_MAPPING_ID, LOCATION_ADDRESS, LOCATION_LINE };
enum { LINE_FUNCTION_ID = 1 };
enum { FUNCTION_ID = 1, FUNCTION_NAME, FUNCTION_SYSTEM_NAME, FUNCTION_FILENAME };

#define KEY_MAX	8192	/* a function's key: a name (512) and a path (4096) */

#define NOT_SAMPLED	"[not sampled]"
#define NO_ORIGIN	"[unknown]"

/*
 * One merged sample: its locations (innermost first) and its labels. A phase's growth no
 * sample carries is one more, NOT_SAMPLED, with the phase's label only.
 */
struct pp_sample {
	__u64 *locs;
	__u32 nlocs;
	__u32 phase;
	int request;		/* index in requests, -1: none */
	__u32 cls;
	const char *mapping;	/* the grown mapping's origin label; NULL: NOT_SAMPLED */
	const char *cause;	/* NULL: no rule matched */
	__u64 bytes, count;
};

struct pp {
	const struct model *m;
	struct pbw b;			/* the Profile message */
	struct strmap strs;		/* string -> index in the string table + 1 */
	const char **strv;
	size_t nstr, capstr;
	struct strmap ids;		/* function, location and mapping keys -> id */
	__u64 nfuncs, nlocs, nmaps;
	struct strmap merged;		/* sample key -> index in samples + 1 */
	struct pp_sample *samples;
	size_t nsamples, capsamples;
	__u32 *origins_by_thread;	/* origins__by_thread() */
	char key[KEY_MAX];
};

/* s's index in the string table (added if new); errors stick in the writer */
static __u64 str(struct pp *pp, const char *s)
{
	struct strmap_entry *e = strmap__get(&pp->strs, s ? s : "");

	if (!e || (!e->value && util__grow((void **)&pp->strv, &pp->capstr, pp->nstr,
				     sizeof(*pp->strv)))) {
		pp->b.err = -ENOMEM;
		return 0;
	}
	if (!e->value) {
		pp->strv[pp->nstr++] = e->key;	/* the map's copy: its address stays */
		e->value = pp->nstr;
	}
	return e->value - 1;
}

/* the id of key in ids, *fresh when it was just given */
static __u64 id_of(struct pp *pp, const char *key, __u64 *counter, bool *fresh)
{
	struct strmap_entry *e = strmap__get(&pp->ids, key);

	*fresh = false;
	if (!e) {
		pp->b.err = -ENOMEM;
		return 0;
	}
	if (!e->value) {
		e->value = ++*counter;
		*fresh = true;
	}
	return e->value;
}

static void value_type(struct pp *pp, unsigned int field, const char *type, const char *unit)
{
	__u64 t = str(pp, type), u = str(pp, unit);
	size_t mark = pbw__begin(&pp->b, field);

	pbw__uint(&pp->b, VALUE_TYPE, t);
	pbw__uint(&pp->b, VALUE_UNIT, u);
	pbw__end(&pp->b, mark);
}

static __u64 function_id(struct pp *pp, const char *name, const char *file)
{
	__u64 id, n, f;
	size_t mark;
	bool fresh;

	snprintf(pp->key, sizeof(pp->key), "f\x1f%s\x1f%s", name, file);
	id = id_of(pp, pp->key, &pp->nfuncs, &fresh);
	if (!fresh)
		return id;
	n = str(pp, name);
	f = str(pp, file);
	mark = pbw__begin(&pp->b, PROFILE_FUNCTION);
	pbw__uint(&pp->b, FUNCTION_ID, id);
	pbw__uint(&pp->b, FUNCTION_NAME, n);
	pbw__uint(&pp->b, FUNCTION_SYSTEM_NAME, n);
	pbw__uint(&pp->b, FUNCTION_FILENAME, f);
	pbw__end(&pp->b, mark);
	return id;
}

/* the code mapping of pid holding ip, NULL if none was kept */
static const struct profile_map *map_at(const struct profile *p, __u32 pid, __u64 ip)
{
	size_t i;

	for (i = 0; i < p->nmaps; i++)
		if (p->maps[i].pid == pid && p->maps[i].start <= ip && ip < p->maps[i].end)
			return &p->maps[i];
	return NULL;
}

static __u64 mapping_id(struct pp *pp, const struct profile_map *pm)
{
	char hex[2 * sizeof(pm->build_id) + 1] = "";
	__u64 id, file, bid;
	size_t mark;
	bool fresh;
	int i;

	snprintf(pp->key, sizeof(pp->key), "m\x1f%u\x1f%" PRIx64, pm->pid, (uint64_t)pm->start);
	id = id_of(pp, pp->key, &pp->nmaps, &fresh);
	if (!fresh)
		return id;
	for (i = 0; i < pm->build_id_len; i++)
		snprintf(hex + 2 * i, sizeof(hex) - 2 * i, "%02x", pm->build_id[i]);
	file = str(pp, pm->path);
	bid = str(pp, hex);
	mark = pbw__begin(&pp->b, PROFILE_MAPPING);
	pbw__uint(&pp->b, MAPPING_ID, id);
	pbw__uint(&pp->b, MAPPING_START, pm->start);
	pbw__uint(&pp->b, MAPPING_LIMIT, pm->end);
	pbw__uint(&pp->b, MAPPING_OFFSET, pm->pgoff);
	pbw__uint(&pp->b, MAPPING_FILENAME, file);
	pbw__uint(&pp->b, MAPPING_BUILD_ID, bid);
	pbw__uint(&pp->b, MAPPING_HAS_FUNCTIONS, 1);
	pbw__end(&pp->b, mark);
	return id;
}

/*
 * The location of one frame: pid's address ip (0: none) named name. A caller's frame is
 * a return address: less one, it lies inside the call instruction, as pprof expects.
 */
static __u64 location_id(struct pp *pp, __u32 pid, __u64 ip, bool is_return, const char *name)
{
	const struct profile_map *pm = ip ? map_at(&pp->m->profile, pid, ip) : NULL;
	__u64 id, fn, map = 0, addr = ip && is_return ? ip - 1 : ip;
	size_t mark, line;
	bool fresh;

	snprintf(pp->key, sizeof(pp->key), "l\x1f%u\x1f%" PRIx64 "\x1f%p", pid, (uint64_t)addr,
		 (const void *)name);
	id = id_of(pp, pp->key, &pp->nlocs, &fresh);
	if (!fresh)
		return id;
	if (pm)
		map = mapping_id(pp, pm);
	fn = function_id(pp, name, pm ? pm->path : "");
	mark = pbw__begin(&pp->b, PROFILE_LOCATION);
	pbw__uint(&pp->b, LOCATION_ID, id);
	if (map)
		pbw__uint(&pp->b, LOCATION_MAPPING_ID, map);
	if (addr)
		pbw__uint(&pp->b, LOCATION_ADDRESS, addr);
	line = pbw__begin(&pp->b, LOCATION_LINE);
	pbw__uint(&pp->b, LINE_FUNCTION_ID, fn);
	pbw__end(&pp->b, line);
	pbw__end(&pp->b, mark);
	return id;
}

/*
 * pprof takes the first mapping for the main binary (its name and build id head `-top`):
 * the main process's lowest file mapping, its executable as a rule (mappings are kept in
 * address order).
 */
static void main_mapping(struct pp *pp)
{
	const struct model_proc *mp = model__main((struct model *)pp->m);
	const struct profile *p = &pp->m->profile;
	size_t i;

	for (i = 0; mp && i < p->nmaps; i++) {
		if (p->maps[i].pid == mp->pid && p->maps[i].path[0] == '/') {
			mapping_id(pp, &p->maps[i]);
			return;
		}
	}
}

/* Adds one raw sample to the merged samples. */
static int add_sample(struct pp *pp, const struct profile_sample *r, const int *cause_of)
{
	const struct model *m = pp->m;
	const struct profile_stack *st = &m->profile.stacks[r->stack];
	const struct origin *o = origins__at(&m->origins, origins__of_sample(
		&m->origins, pp->origins_by_thread, &m->profile, r));
	struct pp_sample s = { .phase = r->phase, .cls = r->cls, .bytes = r->weight, .count = 1 };
	struct strmap_entry *e;
	size_t len, off, i;
	char *key = NULL;
	int err = -ENOMEM;

	s.request = model__request_of(m, r->pid, r->ts_ns);
	s.mapping = o ? o->label : NO_ORIGIN;
	s.cause = cause_of[r->stack] >= 0 ? m->rules.causes[cause_of[r->stack]].name : NULL;
	/* no address ([no stack]): the stack's one name */
	s.nlocs = r->n ? r->n : (st->nframes ? 1 : 0);
	s.locs = calloc(s.nlocs + 1, sizeof(*s.locs));
	len = 96 + (size_t)s.nlocs * 17;
	key = malloc(len);
	if (!s.locs || !key)
		goto cleanup;
	for (i = 0; i < s.nlocs; i++) {
		/* frames are outermost first, addresses innermost first */
		const char *name = r->n && st->nframes == r->n ? st->frames[st->nframes - 1 - i] :
				   r->n ? "[unknown]" : st->frames[0];

		s.locs[i] = location_id(pp, r->pid, r->n ? r->ips[i] : 0, i > 0, name);
	}
	if (pbw__err(&pp->b))
		goto cleanup;
	off = snprintf(key, len, "%u/%d/%u/%p/%p", s.phase, s.request, s.cls,
		       (const void *)s.mapping, (const void *)s.cause);
	for (i = 0; i < s.nlocs; i++)
		off += snprintf(key + off, len - off, "/%" PRIx64, (uint64_t)s.locs[i]);
	e = strmap__get(&pp->merged, key);
	if (!e)
		goto cleanup;
	if (e->value) {
		pp->samples[e->value - 1].bytes += s.bytes;
		pp->samples[e->value - 1].count++;
		err = 0;
		goto cleanup;
	}
	if (util__grow((void **)&pp->samples, &pp->capsamples, pp->nsamples, sizeof(s)))
		goto cleanup;
	pp->samples[pp->nsamples++] = s;
	e->value = pp->nsamples;
	s.locs = NULL;
	err = 0;
cleanup:
	free(s.locs);
	free(key);
	return err;
}

static void label_str(struct pp *pp, const char *key, const char *val)
{
	__u64 k = str(pp, key), v = str(pp, val);
	size_t mark = pbw__begin(&pp->b, SAMPLE_LABEL);

	pbw__uint(&pp->b, LABEL_KEY, k);
	pbw__uint(&pp->b, LABEL_STR, v);
	pbw__end(&pp->b, mark);
}

/* A number: requests are numbered, and sort as numbers in pprof's -tags */
static void label_num(struct pp *pp, const char *key, __u64 val, const char *unit)
{
	__u64 k = str(pp, key), u = str(pp, unit);
	size_t mark = pbw__begin(&pp->b, SAMPLE_LABEL);

	pbw__uint(&pp->b, LABEL_KEY, k);
	pbw__uint(&pp->b, LABEL_NUM, val);
	pbw__uint(&pp->b, LABEL_NUM_UNIT, u);
	pbw__end(&pp->b, mark);
}

/* Each phase's growth no sample carries: one sample at a "[not sampled]" frame. */
static int add_unsampled(struct pp *pp)
{
	const struct model *m = pp->m;
	struct pp_sample s = { .request = -1 };
	unsigned int i;

	for (i = 0; i < m->norder; i++) {
		s.phase = m->order[i];
		s.bytes = model__unsampled(m, s.phase);
		if (!s.bytes)
			continue;
		s.nlocs = 1;
		s.locs = calloc(1, sizeof(*s.locs));
		if (!s.locs || util__grow((void **)&pp->samples, &pp->capsamples, pp->nsamples,
					  sizeof(s))) {
			free(s.locs);
			return -ENOMEM;
		}
		s.locs[0] = location_id(pp, 0, 0, false, NOT_SAMPLED);
		pp->samples[pp->nsamples++] = s;
	}
	return pbw__err(&pp->b);
}

static void write_sample(struct pp *pp, const struct pp_sample *s)
{
	const struct model *m = pp->m;
	size_t mark = pbw__begin(&pp->b, PROFILE_SAMPLE), packed;
	__u32 i;

	packed = pbw__begin(&pp->b, SAMPLE_LOCATION_ID);
	for (i = 0; i < s->nlocs; i++)
		pbw__varint(&pp->b, s->locs[i]);
	pbw__end(&pp->b, packed);
	packed = pbw__begin(&pp->b, SAMPLE_VALUE);
	pbw__varint(&pp->b, s->bytes);
	pbw__varint(&pp->b, s->count);
	pbw__end(&pp->b, packed);
	label_str(pp, "phase", s->phase < MP_MAX_PHASES && m->names[s->phase][0] ?
		  m->names[s->phase] : "[unknown]");
	if (s->request >= 0)
		label_num(pp, "request", s->request + 1, "request");
	if (!s->mapping)
		goto end;	/* NOT_SAMPLED: no class, mapping or cause */
	label_str(pp, "class", mp_class_name((int)s->cls));
	label_str(pp, "mapping", s->mapping);
	if (s->cause)
		label_str(pp, "cause", s->cause);
end:
	pbw__end(&pp->b, mark);
}

static int pprof_write(FILE *f, const struct output_ctx *ctx)
{
	const struct model *m = ctx->m;
	const struct profile *p = &m->profile;
	const struct cause_rule *rule;
	int *cause_of = NULL, err = 0;
	struct pp *pp;
	size_t k;

	pp = calloc(1, sizeof(*pp));
	if (!pp)
		return -ENOMEM;
	pp->m = m;
	pbw__init(&pp->b);
	strmap__init(&pp->strs, NULL);
	strmap__init(&pp->ids, NULL);
	strmap__init(&pp->merged, NULL);
	cause_of = calloc(p->nstacks + 1, sizeof(*cause_of));
	if (!cause_of) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (k = 0; k < p->nstacks; k++)
		cause_of[k] = causes__match_stack(m, &p->stacks[k], &rule);
	err = origins__by_thread(&m->origins, &pp->origins_by_thread);
	if (err)
		goto cleanup;

	str(pp, "");		/* the string table starts with "" */
	value_type(pp, PROFILE_SAMPLE_TYPE, "rss_growth", "bytes");
	value_type(pp, PROFILE_SAMPLE_TYPE, "samples", "count");
	value_type(pp, PROFILE_PERIOD_TYPE, "rss_growth", "bytes");
	main_mapping(pp);
	for (k = 0; k < p->nraw && !err; k++)
		if (p->raw[k]->stack < p->nstacks)
			err = add_sample(pp, p->raw[k], cause_of);
	if (!err)
		err = add_unsampled(pp);
	if (err)
		goto cleanup;
	for (k = 0; k < pp->nsamples; k++)
		write_sample(pp, &pp->samples[k]);
	if (m->start_wall_ns)
		pbw__uint(&pp->b, PROFILE_TIME_NANOS, m->start_wall_ns);
	pbw__uint(&pp->b, PROFILE_DURATION_NANOS,
		  m->end_ns > m->start_ns ? m->end_ns - m->start_ns : 0);
	/* the sampling unit (a sample's bytes are the growth it stands for, often more) */
	if (m->sample_bytes)
		pbw__uint(&pp->b, PROFILE_PERIOD, m->sample_bytes);
	pbw__uint(&pp->b, PROFILE_COMMENT,
		  str(pp, "memphase: host RSS growth by stack, one sample per --sample-bytes "
			  "of a thread's growth"));
	pbw__uint(&pp->b, PROFILE_DEFAULT_SAMPLE_TYPE, str(pp, "rss_growth"));
	/* last: every string is in by now */
	for (k = 0; k < pp->nstr; k++)
		pbw__string(&pp->b, PROFILE_STRING_TABLE, pp->strv[k]);
	err = pbw__write_gzip(&pp->b, f);
cleanup:
	for (k = 0; k < pp->nsamples; k++)
		free(pp->samples[k].locs);
	free(pp->samples);
	free(pp->origins_by_thread);
	free(pp->strv);
	free(cause_of);
	strmap__free(&pp->merged);
	strmap__free(&pp->ids);
	strmap__free(&pp->strs);
	pbw__free(&pp->b);
	free(pp);
	return err;
}

const struct output_format pprof_format = {
	.name = "pprof",
	.help = "Write a gzipped pprof profile (go tool pprof, Pyroscope, Parca): RSS growth by "
		"stack, labelled by phase, request, class, mapping and cause",
	.needs = OUTPUT_NEEDS_STACKS | OUTPUT_NEEDS_RAW,
	.write = pprof_write,
};
