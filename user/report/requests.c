// SPDX-License-Identifier: GPL-2.0
/*
 * Requests and the context (see requests.h). A request's growth is net: what the process
 * held at its end less at its start, so what requests keep adds up to what the process holds.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "model/ceilings.h"
#include "report/requests.h"
#include "lib/textwrap.h"
#include "lib/util.h"
#include "model/causes.h"

#define LIST_MAX	10	/* growths listed on the headline */
#define TABLE_MAX	6	/* requests in the table: the first and the last ones */

static __s64 total(const __s64 rss[MP_NR_CLASSES])
{
	return rss[MP_FILE] + rss[MP_ANON] + rss[MP_SHMEM];
}

static __s64 req_growth(const struct model_request *r)
{
	return total(r->rss_end) - total(r->rss_start);
}

/* "+16.1 MiB", "-2.0 MiB" */
static const char *signed_bytes(char *b, size_t len, __s64 v)
{
	char t[24];

	snprintf(b, len, "%s%s", v < 0 ? "-" : "+", util__fmt_bytes(t, sizeof(t), v < 0 ? -v : v));
	return b;
}

/* "1,300" */
static const char *grouped(char *b, size_t len, long v)
{
	char raw[32];
	size_t n, i, o = 0;

	n = (size_t)snprintf(raw, sizeof(raw), "%ld", v);
	for (i = 0; i < n && o + 2 < len; i++) {
		if (i && raw[i] != '-' && (n - i) % 3 == 0 && raw[i - 1] != '-')
			b[o++] = ',';
		b[o++] = raw[i];
	}
	b[o] = '\0';
	return b;
}

/* The last whole request (its projection is the latest). */
static const struct model_request *last_closed(const struct model *m)
{
	unsigned int i;

	for (i = m->nrequests; i-- > 0;)
		if (m->requests[i].end_ns && !m->requests[i].oom)
			return &m->requests[i];
	return NULL;
}

/* "the cgroup limit is reached after 1 more request", "MemAvailable after ~1,300" */
static void print_left(FILE *f, const char *what, long left, bool first)
{
	char n[32];

	if (left == -2)
		return;
	fprintf(f, "%s%s", first ? "  at this rate " : "; ", what);
	if (left == -1)
		fprintf(f, " is never reached (requests do not grow)");
	else if (left == 0)
		fprintf(f, "%s in the next request (no room left)", first ? " is reached" : "");
	else
		fprintf(f, "%s after %s%s more request%s", !first ? "" :
			strstr(what, "limit") ? " is reached" : " runs out",
			left > 99 ? "~" : "", grouped(n, sizeof(n), left), left == 1 ? "" : "s");
}

/* Pinned and managed host memory each request kept (allocated less freed), VRAM's change. */
static __s64 gpu_kept(const struct model_request *r, unsigned int cls)
{
	return (__s64)r->gpu_alloc[cls] - (__s64)r->gpu_freed[cls];
}

static void print_gpu(FILE *f, const struct model_request *r)
{
	char b[3][32];

	fprintf(f, " %9s %9s %9s", signed_bytes(b[0], 32, gpu_kept(r, MP_ALLOC_PINNED)),
		signed_bytes(b[1], 32, gpu_kept(r, MP_ALLOC_MANAGED)),
		r->vram_seen ? signed_bytes(b[2], 32, (__s64)(r->vram_end - r->vram_start)) : "-");
}

/* "tokenize +2.01 MiB, host +8.02 MiB": the mean growth by phase of requests idx[0..n) */
static void print_phases(FILE *f, const struct model *m, const unsigned int *idx,
			 unsigned int n, const char *what)
{
	char line[2048], b[32];
	unsigned int i, k;
	size_t used;
	__s64 sum;

	used = (size_t)snprintf(line, sizeof(line), "%s:", what);
	for (i = 0; i < m->norder && used < sizeof(line); i++) {
		unsigned int id = m->order[i];

		for (sum = 0, k = 0; k < n; k++)
			sum += m->requests[idx[k]].phase_growth[id];
		if (!sum)
			continue;
		used += (size_t)snprintf(line + used, sizeof(line) - used, "%s %s %s",
					 line[used - 1] == ':' ? "" : ",", m->names[id],
					 signed_bytes(b, sizeof(b), sum / (__s64)n));
	}
	fprintf(f, "  ");
	textwrap__print(f, 2, 4, line);
}

/*
 * The rest of the context's projection (bytes) split by cause, as the decoding process's
 * sampled growth since its first decode was: cs->bytes scaled to sum to bytes, order[] the
 * matched causes with any, most first (*n of them). False when nothing was sampled then.
 */
static bool context_split(const struct model *m, double bytes, struct cause_span *cs,
			  size_t **order, size_t *n)
{
	const struct model_context *cx = &m->context;
	size_t c, k;

	*order = NULL;
	*n = 0;
	struct cause_filter cf = { .pid = cx->pid, .from_ns = cx->first_ns,
				   .to_ns = cx->by_pos ? cx->rise_ns : 0 };

	if (!cx->first_ns || causes__span(m, &cf, cs))
		return false;
	*order = calloc(cs->ncauses + 1, sizeof(**order));
	if (!cs->total || !*order) {
		free(*order);
		*order = NULL;
		causes__span_free(cs);
		return false;
	}
	for (c = 0; c <= cs->ncauses; c++)
		cs->bytes[c] = (__u64)(bytes * (double)cs->bytes[c] / (double)cs->total + 0.5);
	for (c = 0; c < cs->ncauses; c++) {
		if (!cs->bytes[c])
			continue;
		for (k = (*n)++; k > 0 && cs->bytes[(*order)[k - 1]] < cs->bytes[c]; k--)
			(*order)[k] = (*order)[k - 1];
		(*order)[k] = c;
	}
	return true;
}

/* "(compute buffer +a, prompt cache +b, other +c)": the three largest causes, the rest */
static void print_context_split(FILE *f, const struct model *m, double bytes)
{
	struct cause_span cs;
	size_t *order, n, k;
	__u64 rest;
	char b[32];

	if (!context_split(m, bytes, &cs, &order, &n))
		return;
	rest = cs.bytes[cs.ncauses];
	fprintf(f, " (by cause: ");
	for (k = 0; k < n; k++) {
		if (k < 3)
			fprintf(f, "%s%s %s", k ? ", " : "", m->rules.causes[order[k]].name,
				signed_bytes(b, sizeof(b), (__s64)cs.bytes[order[k]]));
		else
			rest += cs.bytes[order[k]];
	}
	if (rest)
		fprintf(f, "%s%s %s", n ? ", " : "", n ? "other" : "code paths no rule names",
			signed_bytes(b, sizeof(b), (__s64)rest));
	fprintf(f, ")");
	free(order);
	causes__span_free(&cs);
}

/* How far the context reached: the longest slot's position, else the tokens decoded. */
static __u64 context_reached(const struct model_context *cx)
{
	return cx->by_pos ? cx->longest : cx->tokens_seen;
}

static void print_context(FILE *f, const struct model *m)
{
	const struct model_context *cx = &m->context;
	__u64 full = model_engine__slot_ctx(&m->engine, cx->n_ctx), at = context_reached(cx);
	char a[32], b[32], c[32];
	double per;

	if (!cx->n_ctx && !cx->tokens_seen)
		return;
	fprintf(f, "context: n_ctx %s", cx->n_ctx ? grouped(a, sizeof(a), (long)cx->n_ctx) :
		"unknown");
	if (full != cx->n_ctx)
		fprintf(f, " (%s a slot)", grouped(a, sizeof(a), (long)full));
	fprintf(f, ", %s tokens decoded", grouped(b, sizeof(b), (long)cx->tokens_seen));
	if (cx->by_pos)
		fprintf(f, "; the longest of %u slot%s reached %s", cx->slots,
			cx->slots == 1 ? "" : "s", grouped(c, sizeof(c), (long)cx->longest));
	if (!model__context_fit(m, &per)) {
		fprintf(f, "\n");
		return;
	}
	fprintf(f, ", %s per token", signed_bytes(c, sizeof(c), (__s64)per));
	if (full > at && per > 0) {
		fprintf(f, "\n  at %s tokens %s this run would hold about %s more host RAM",
			grouped(a, sizeof(a), (long)full), cx->by_pos ? "in a slot" : "",
			util__fmt_bytes(b, sizeof(b), (__s64)(per * (double)(full - at))));
		print_context_split(f, m, per * (double)(full - at));
	}
	fprintf(f, "\n");
}

/* The requests' table: the first and the last ones past TABLE_MAX. */
static void print_table(FILE *f, const struct model *m)
{
	bool gpu = model_gpu__any(&m->gpu);
	unsigned int i;
	char b[32];

	fprintf(f, "  REQ     START    TIME PROMPT    GEN       +RSS%s\n",
		gpu ? "   +PINNED  +MANAGED     +VRAM" : "");
	for (i = 0; i < m->nrequests; i++) {
		const struct model_request *r = &m->requests[i];
		__u64 end = r->end_ns ? r->end_ns : m->end_ns;

		if (m->nrequests > TABLE_MAX && i >= TABLE_MAX / 2 &&
		    i < m->nrequests - TABLE_MAX / 2) {
			if (i == TABLE_MAX / 2)
				fprintf(f, "  ... (%u more: the JSON has each)\n",
					m->nrequests - TABLE_MAX);
			continue;
		}
		fprintf(f, "  %-4u %7.2fs %6.2fs %6" PRIu64 " %6" PRIu64 " %10s", i + 1,
			model__rel_s(m, r->start_ns),
			(end > r->start_ns ? end - r->start_ns : 0) / 1e9,
			(uint64_t)r->prompt_tokens, (uint64_t)r->gen_tokens,
			signed_bytes(b, sizeof(b), req_growth(r)));
		if (gpu)
			print_gpu(f, r);
		fprintf(f, "%s\n", r->oom ? " (OOM-killed)" : r->end_ns ? "" : " (open)");
	}
}

void requests__print(FILE *f, const struct model *m)
{
	unsigned int idx[MODEL_MAX_REQUESTS], nsteady, one = 0, nclosed, last;
	const struct model_request *lc = last_closed(m);
	char b[3][32], what[96];
	struct ceilings cs;
	struct linfit fit;
	size_t first, len = 0;
	char *tail = NULL;
	FILE *t;
	int col;

	if (!m->nrequests && !m->context.n_ctx && !m->context.tokens_seen)
		return;
	fprintf(f, "\n");
	/* the long lines under the table, wrapped */
	t = open_memstream(&tail, &len);
	if (!t)
		t = f;
	if (m->nrequests) {
		fit = model__request_fit(m, &first, &nclosed);
		col = fprintf(f, "%u request%s", m->nrequests, m->nrequests == 1 ? "" : "s");
		if (fit.ok && nclosed > 1)
			textwrap__printf(f, col, 2, ": each kept %s of RSS%s (a straight line "
					 "over %u requests%s%s)",
					 signed_bytes(b[1], 32, (__s64)fit.slope),
					 first ? " after the first" : "", nclosed - (unsigned int)first,
					 fit.spread >= 1 ? ", within " : "",
					 fit.spread >= 1 ? util__fmt_bytes(b[2], 32, (__s64)fit.spread) :
					 "");
		else
			fprintf(f, "\n");
		print_table(f, m);
		/* what a request grew in each phase: the first apart when it is left out */
		nsteady = model__steady_requests(m, idx);
		if (nsteady && idx[0] > 0) {
			print_phases(f, m, &one, 1, "by phase, request 1");
			snprintf(what, sizeof(what), "a request after it (mean of %u)", nsteady);
			print_phases(f, m, idx, nsteady, what);
		} else if (nsteady) {
			snprintf(what, sizeof(what), "by phase, a request (mean of %u)", nsteady);
			print_phases(f, m, idx, nsteady, what);
		}
		/* the last one, when the run ended inside it */
		last = m->nrequests - 1;
		if (m->requests[last].oom || !m->requests[last].end_ns) {
			snprintf(what, sizeof(what), "by phase, request %u (%s)", last + 1,
				 m->requests[last].oom ? "OOM-killed" : "open");
			print_phases(f, m, &last, 1, what);
		}
		/* where the causes' ceilings are known, their section says it (a cap stops
		 * what a straight line would carry on) */
		if (lc && (lc->left_cgroup != -2 || lc->left_system != -2) &&
		    !(!ceilings__compute(m, &cs) && cs.have && cs.room_known)) {
			print_left(t, "the cgroup limit", lc->left_cgroup, true);
			print_left(t, "MemAvailable", lc->left_system, lc->left_cgroup == -2);
			fprintf(t, " (after request %u)\n", (unsigned int)(lc - m->requests) + 1);
		}
		if (m->requests_dropped)
			fprintf(t, "  %" PRIu64 " more requests not kept\n",
				(uint64_t)m->requests_dropped);
	}
	print_context(t, m);
	if (t != f) {
		fclose(t);
		textwrap__lines(f, tail);
	}
	free(tail);
}

void requests__print_oom(FILE *f, const struct model *m, const struct model_oom *o)
{
	const struct model_request *r = model__request_at(m, o->ts_ns);
	unsigned int i;
	char b[32];

	if (!m->nrequests)
		return;
	if (r)
		fprintf(f, "  in request %u of %u (started %.1f s before the kill)\n",
			(unsigned int)(r - m->requests) + 1, m->nrequests,
			(o->ts_ns > r->start_ns ? o->ts_ns - r->start_ns : 0) / 1e9);
	fprintf(f, "  each request added:");
	for (i = 0; i < m->nrequests && i < 2 * LIST_MAX; i++)
		fprintf(f, "%s %s", i ? "," : "", signed_bytes(b, sizeof(b),
							      req_growth(&m->requests[i])));
	fprintf(f, "%s\n", m->nrequests > 2 * LIST_MAX ? ", ..." : "");
}

static void left_field(struct jsonw *w, const char *name, long left)
{
	if (left < 0)
		jsonw__null_field(w, name);
	else
		jsonw__s64_field(w, name, left);
}

static void json_fit(struct jsonw *w, const struct model *m)
{
	const struct model_request *lc = last_closed(m);
	unsigned int nclosed;
	struct linfit fit;
	size_t first;

	fit = model__request_fit(m, &first, &nclosed);
	jsonw__name(w, "request_fit");
	if (!fit.ok) {
		jsonw__null(w);
		return;
	}
	jsonw__start_object(w);
	jsonw__u64_field(w, "requests", nclosed - first);
	jsonw__u64_field(w, "first_request", first + 1);
	jsonw__double_field(w, "growth_per_request_bytes", fit.slope);
	jsonw__double_field(w, "intercept_bytes", fit.intercept);
	jsonw__double_field(w, "spread_bytes", fit.spread);
	jsonw__name(w, "projection");
	jsonw__start_object(w);
	jsonw__u64_field(w, "after_request", lc ? (__u64)(lc - m->requests) + 1 : 0);
	left_field(w, "cgroup_requests_left", lc ? lc->left_cgroup : -2);
	left_field(w, "memavailable_requests_left", lc ? lc->left_system : -2);
	jsonw__end_object(w);
	jsonw__end_object(w);
}

/* projected_by_cause: the projection split as in the summary, and projected_unmatched_bytes
 * (both null: nothing sampled) */
static void json_context_split(struct jsonw *w, const struct model *m, double bytes)
{
	struct cause_span cs;
	size_t *order, n, k;

	if (!context_split(m, bytes, &cs, &order, &n)) {
		jsonw__null_field(w, "projected_by_cause");
		jsonw__null_field(w, "projected_unmatched_bytes");
		return;
	}
	jsonw__name(w, "projected_by_cause");
	jsonw__start_array(w);
	for (k = 0; k < n; k++) {
		jsonw__start_object(w);
		jsonw__string_field(w, "name", m->rules.causes[order[k]].name);
		jsonw__u64_field(w, "bytes", cs.bytes[order[k]]);
		jsonw__end_object(w);
	}
	jsonw__end_array(w);
	jsonw__u64_field(w, "projected_unmatched_bytes", cs.bytes[cs.ncauses]);
	free(order);
	causes__span_free(&cs);
}

static void json_context(struct jsonw *w, const struct model *m)
{
	const struct model_context *cx = &m->context;
	__u64 full = model_engine__slot_ctx(&m->engine, cx->n_ctx), at = context_reached(cx);
	double per;
	bool ok = model__context_fit(m, &per);

	jsonw__name(w, "context");
	jsonw__start_object(w);
	if (cx->n_ctx) {
		jsonw__u64_field(w, "n_ctx", cx->n_ctx);
		jsonw__u64_field(w, "slot_n_ctx", full);
	} else {
		jsonw__null_field(w, "n_ctx");
		jsonw__null_field(w, "slot_n_ctx");
	}
	jsonw__u64_field(w, "tokens_seen", cx->tokens_seen);
	jsonw__bool_field(w, "positions_known", cx->by_pos);
	if (cx->by_pos) {
		jsonw__u64_field(w, "slots_seen", cx->slots);
		jsonw__u64_field(w, "longest_slot_tokens", cx->longest);
	} else {
		jsonw__null_field(w, "slots_seen");
		jsonw__null_field(w, "longest_slot_tokens");
	}
	if (ok)
		jsonw__double_field(w, "growth_per_token_bytes", per);
	else
		jsonw__null_field(w, "growth_per_token_bytes");
	if (ok && cx->n_ctx) {
		double rest = full > at && per > 0 ? per * (double)(full - at) : 0;

		jsonw__double_field(w, "projected_full_context_bytes", rest);
		json_context_split(w, m, rest);
	} else {
		jsonw__null_field(w, "projected_full_context_bytes");
		jsonw__null_field(w, "projected_by_cause");
		jsonw__null_field(w, "projected_unmatched_bytes");
	}
	jsonw__end_object(w);
}

/* A request's sampled growth by cause (model/causes.h), most bytes first. */
static void json_request_causes(struct jsonw *w, const struct model *m,
				const struct cause_requests *cr, unsigned int r)
{
	size_t c, k, n = 0, *order = calloc(cr->ncauses + 1, sizeof(*order));

	for (c = 0; order && r < cr->nreq && c < cr->ncauses; c++) {
		__u64 b = causes__request_bytes(cr, r, c);

		if (!b)
			continue;
		for (k = n++; k > 0 && causes__request_bytes(cr, r, order[k - 1]) < b; k--)
			order[k] = order[k - 1];
		order[k] = c;
	}
	jsonw__name(w, "causes");
	jsonw__start_array(w);
	for (k = 0; k < n; k++) {
		jsonw__start_object(w);
		jsonw__string_field(w, "name", m->rules.causes[order[k]].name);
		jsonw__u64_field(w, "bytes", causes__request_bytes(cr, r, order[k]));
		jsonw__end_object(w);
	}
	jsonw__end_array(w);
	jsonw__u64_field(w, "causes_unmatched_bytes",
			 r < cr->nreq ? causes__request_bytes(cr, r, cr->ncauses) : 0);
	free(order);
}

void requests__json(struct jsonw *w, const struct model *m)
{
	struct cause_requests cr = {};
	unsigned int i, id, c;

	causes__by_request(m, &cr);	/* on ENOMEM empty: no causes listed */

	jsonw__name(w, "requests");
	jsonw__start_array(w);
	for (i = 0; i < m->nrequests; i++) {
		const struct model_request *r = &m->requests[i];

		jsonw__start_object(w);
		jsonw__double_field(w, "start_s", model__rel_s(m, r->start_ns));
		if (r->end_ns)
			jsonw__double_field(w, "end_s", model__rel_s(m, r->end_ns));
		else
			jsonw__null_field(w, "end_s");
		jsonw__bool_field(w, "oom_killed", r->oom);
		/* the projection made when it ended, from the requests up to it */
		left_field(w, "cgroup_requests_left", r->end_ns ? r->left_cgroup : -2);
		left_field(w, "memavailable_requests_left", r->end_ns ? r->left_system : -2);
		jsonw__name(w, "tokens");
		jsonw__start_object(w);
		jsonw__u64_field(w, "prompt", r->prompt_tokens);
		jsonw__u64_field(w, "generated", r->gen_tokens);
		jsonw__end_object(w);
		jsonw__name(w, "rss_growth_bytes");
		jsonw__start_object(w);
		for (c = 0; c < MP_NR_CLASSES; c++)
			jsonw__s64_field(w, mp_class_name(mp_class_order[c]),
					 r->rss_end[mp_class_order[c]] -
					 r->rss_start[mp_class_order[c]]);
		jsonw__end_object(w);
		if (model_gpu__any(&m->gpu)) {
			/* allocated and freed while it was open; VRAM at NVML's readings */
			jsonw__u64_field(w, "pinned_bytes", r->gpu_alloc[MP_ALLOC_PINNED]);
			jsonw__u64_field(w, "pinned_freed_bytes", r->gpu_freed[MP_ALLOC_PINNED]);
			jsonw__u64_field(w, "managed_bytes", r->gpu_alloc[MP_ALLOC_MANAGED]);
			jsonw__u64_field(w, "managed_freed_bytes", r->gpu_freed[MP_ALLOC_MANAGED]);
			if (r->vram_seen)
				jsonw__s64_field(w, "vram_delta_bytes",
						 (__s64)(r->vram_end - r->vram_start));
			else
				jsonw__null_field(w, "vram_delta_bytes");
		}
		jsonw__name(w, "phases");
		jsonw__start_array(w);
		for (id = 0; id < m->norder; id++) {
			unsigned int p = m->order[id];

			if (!r->phase_growth[p])
				continue;
			jsonw__start_object(w);
			jsonw__string_field(w, "name", m->names[p]);
			jsonw__s64_field(w, "growth_bytes", r->phase_growth[p]);
			jsonw__end_object(w);
		}
		jsonw__end_array(w);
		json_request_causes(w, m, &cr, i);
		jsonw__end_object(w);
	}
	jsonw__end_array(w);
	causes__requests_free(&cr);
	json_fit(w, m);
	json_context(w, m);
}
