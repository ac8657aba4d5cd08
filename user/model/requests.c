// SPDX-License-Identifier: GPL-2.0
/*
 * Requests in the model: cut from the phase events of the process the timeline follows (at
 * the engine's own request entries once one is called, else by the preset's phases), their
 * growth by phase, tokens and GPU side, the fit over them and the projection made at their
 * end; and the context, a slot's (from the decodes' positions) or the tokens decoded.
 */
#include <errno.h>
#include <string.h>
#include "model/model.h"
#include "model/requests_int.h"

void model__set_requests(struct model *m, int request_phase, __u32 idle_mask, __u32 end_mask,
			 __u32 lead_mask)
{
	m->request_lead_mask = lead_mask;
	m->request_phase = request_phase;
	m->request_idle_mask = idle_mask;
	m->request_end_mask = end_mask;
}

void model__set_room(struct model *m, bool cg_known, __s64 cg_room, bool sys_known,
		     __s64 sys_room)
{
	struct model_proc *p = model__proc(m, m->focus_pid ? m->focus_pid : m->root_pid, false);

	m->room_cgroup_known = cg_known;
	m->room_cgroup = cg_room;
	m->room_system_known = sys_known;
	m->room_system = sys_room;
	m->room_rss = p ? p->rss[MP_FILE] + p->rss[MP_ANON] + p->rss[MP_SHMEM] : 0;
}

struct model_request *model_requests__open(struct model *m)
{
	struct model_request *r;

	if (!m->nrequests)
		return NULL;
	r = &m->requests[m->nrequests - 1];
	return r->end_ns ? NULL : r;
}

struct linfit model__request_fit(const struct model *m, size_t *first, unsigned int *nclosed)
{
	static double g[MODEL_MAX_REQUESTS];
	unsigned int i, n = 0;

	for (i = 0; i < m->nrequests; i++) {
		const struct model_request *r = &m->requests[i];

		if (!r->end_ns || r->oom)
			continue;	/* open, or cut short by the kill: not a whole request */
		g[n++] = (double)(model_rss_total(r->rss_end) - model_rss_total(r->rss_start));
	}
	if (nclosed)
		*nclosed = n;
	return linfit__requests(g, n, first);
}

unsigned int model__steady_requests(const struct model *m, unsigned int *idx)
{
	unsigned int i, n = 0, nclosed;
	size_t first;

	model__request_fit(m, &first, &nclosed);
	for (i = 0; i < m->nrequests; i++)
		if (m->requests[i].end_ns && !m->requests[i].oom)
			idx[n++] = i;
	if (first >= n)
		return 0;
	memmove(idx, idx + first, (n - first) * sizeof(*idx));
	return n - (unsigned int)first;
}

int model__request_of(const struct model *m, __u32 pid, __u64 ts_ns)
{
	unsigned int lo = 0, hi = m->nrequests;
	const struct model_request *r;

	/* requests follow each other in time: the last one started by ts_ns */
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (m->requests[mid].start_ns <= ts_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	r = &m->requests[lo - 1];
	if (r->pid != pid || (r->end_ns && r->end_ns < ts_ns))
		return -1;
	return (int)(lo - 1);
}

/* Room now: the room at the last reading less what the process grew since. */
static long request_left(const struct model *m, bool known, __s64 room, __s64 rss_now,
			 double per_request)
{
	if (!known)
		return -2;
	return linfit__requests_left((double)(room - (rss_now - m->room_rss)), per_request);
}

/*
 * The observed process ended with a request open: the request's RSS end moves to what the
 * process held when it exited (the exit event's sizes, taken before its address space was
 * torn down), and the growth since the last phase event goes to that phase. The request
 * stays open: it did not finish.
 */
void model_requests__exit(struct model *m, const struct mp_event *e)
{
	struct model_request *r = model_requests__open(m);
	__s64 rss[MP_NR_CLASSES];
	unsigned int c;

	if (!r || m->lead || e->pid != (m->focus_pid ? m->focus_pid : m->root_pid))
		return;
	for (c = 0; c < MP_NR_CLASSES; c++)
		rss[c] = (__s64)e->rss[c];
	if (model_rss_total(rss) <= 0)
		return;		/* not known (a recording of an older build) */
	if (m->req_have_rss && m->req_last_phase < MP_MAX_PHASES)
		r->phase_growth[m->req_last_phase] += model_rss_total(rss) - model_rss_total(m->req_last_rss);
	memcpy(r->rss_end, rss, sizeof(rss));
	memcpy(m->req_last_rss, rss, sizeof(rss));
	m->req_have_rss = true;
}

void model_requests__close(struct model *m, struct model_request *r, __u64 ts)
{
	struct linfit f;
	__s64 now = model_rss_total(r->rss_end);

	r->end_ns = ts > r->start_ns ? ts : r->start_ns + 1;
	m->req_vram_pending = (unsigned int)(r - m->requests) + 1;
	r->left_cgroup = r->left_system = -2;
	if (r->oom)
		return;		/* a partial request projects nothing */
	f = model__request_fit(m, NULL, NULL);
	r->left_cgroup = f.ok ? request_left(m, m->room_cgroup_known, m->room_cgroup, now,
					     f.slope) : -2;
	r->left_system = f.ok ? request_left(m, m->room_system_known, m->room_system, now,
					     f.slope) : -2;
}

/* What was pinned or managed during a lead phase goes to r (or nowhere); the lead's is 0. */
static void lead_gpu_to(struct model *m, struct model_request *r)
{
	unsigned int c;

	for (c = 0; r && c < MP_NR_ALLOC_CLS; c++) {
		r->gpu_alloc[c] += m->lead_alloc[c];
		r->gpu_freed[c] += m->lead_freed[c];
	}
	memset(m->lead_alloc, 0, sizeof(m->lead_alloc));
	memset(m->lead_freed, 0, sizeof(m->lead_freed));
}

/*
 * A decode of n tokens (RSS then: rss). With its last token's position and slot (e->dev:
 * seq << 32 | pos + 1), the fit takes a point when the longest slot reaches further; without,
 * over the tokens decoded. The first decode with a position drops the points without.
 */
static void context_event(struct model *m, const struct mp_event *e, __u64 n,
			  const __s64 *rss)
{
	struct model_context *cx = &m->context;
	__u32 seq = (__u32)(e->dev >> 32), pos = (__u32)e->dev;

	if (!cx->first_ns) {
		cx->first_ns = e->ts_ns;
		cx->pid = e->pid;
	}
	cx->tokens_seen += n;
	if (!pos) {
		if (!cx->by_pos)
			linfit__add(&cx->fit, (double)cx->tokens_seen, (double)model_rss_total(rss));
		return;
	}
	if (!cx->by_pos) {
		cx->by_pos = true;
		memset(&cx->fit, 0, sizeof(cx->fit));
	}
	if (seq < MODEL_MAX_SLOTS) {
		if (!(cx->slots_mask & (1ULL << seq))) {
			cx->slots_mask |= 1ULL << seq;
			cx->slots++;
		}
		if (pos > cx->slot_pos[seq])
			cx->slot_pos[seq] = pos;
	}
	if (pos > cx->longest) {
		cx->longest = pos;
		cx->longest_slot = seq;
		cx->rise_ns = e->ts_ns;
		linfit__add(&cx->fit, (double)pos, (double)model_rss_total(rss));
	}
}

/* A phase event of the timeline's process: requests, their growth by phase, tokens. */
void model_requests__event(struct model *m, const struct mp_event *e)
{
	struct model_request *r = model_requests__open(m);
	__s64 rss[MP_NR_CLASSES];
	__u32 ph = e->arg, c;
	__u64 prompt = 0, gen = 0;

	for (c = 0; c < MP_NR_CLASSES; c++)
		rss[c] = (__s64)e->rss[c];
	if (model_rss_total(rss) <= 0 && m->req_have_rss)
		memcpy(rss, m->req_last_rss, sizeof(rss));	/* not known yet */
	if (m->req_have_rss && m->req_last_phase < MP_MAX_PHASES) {
		__s64 d = model_rss_total(rss) - model_rss_total(m->req_last_rss);

		if (m->lead)
			m->lead_growth[m->req_last_phase] += d;
		else if (r)
			r->phase_growth[m->req_last_phase] += d;
	}
	if (r && !m->lead)
		memcpy(r->rss_end, rss, sizeof(rss));
	/* the engine's own request entry (the preset's): from its first call on, its calls
	 * alone cut requests */
	if (e->record == MP_REC_REQUEST && !m->request_by_marker) {
		if (r && m->lead)
			for (c = 0; c < MP_MAX_PHASES; c++)
				r->phase_growth[c] += m->lead_growth[c];
		m->lead = false;
		m->request_by_marker = true;
	}
	if (m->request_by_marker) {
		/* --request: its calls alone cut requests */
	} else if (ph < MP_MAX_PHASES && (m->request_lead_mask & (1U << ph)) &&
		   (!r || r->passed)) {
		/* the last lead before the request phase counts; earlier ones stay put */
		for (c = 0; r && m->lead && c < MP_MAX_PHASES; c++)
			r->phase_growth[c] += m->lead_growth[c];
		if (r && m->lead) {
			memcpy(r->rss_end, rss, sizeof(rss));
			lead_gpu_to(m, r);
		}
		m->lead = true;
		m->lead_ns = e->ts_ns;
		memcpy(m->lead_rss, rss, sizeof(rss));
		memset(m->lead_growth, 0, sizeof(m->lead_growth));
		lead_gpu_to(m, NULL);
	} else if (m->lead && ph < MP_MAX_PHASES && (int)ph != m->request_phase &&
		   !(m->request_idle_mask & (1U << ph))) {
		/* no request followed: the lead's growth was the open request's after all */
		for (c = 0; r && c < MP_MAX_PHASES; c++)
			r->phase_growth[c] += m->lead_growth[c];
		if (r)
			memcpy(r->rss_end, rss, sizeof(rss));
		lead_gpu_to(m, r);
		m->lead = false;
	}
	memcpy(m->req_last_rss, rss, sizeof(rss));
	m->req_have_rss = true;
	m->req_last_phase = ph;

	if (e->record == MP_REC_CTX && e->addr)
		m->context.n_ctx = e->addr;
	/* a size no copy has (a wrong argument: another engine's signature) says nothing */
	if (e->record == MP_REC_BYTES && ph < MP_MAX_PHASES && e->addr < MODEL_MAX_COPY) {
		m->rec_bytes[ph] += e->addr;
		m->rec_calls[ph]++;
		if (e->addr > m->rec_max[ph])
			m->rec_max[ph] = e->addr;
	}
	if (e->record == MP_REC_TOKENS && (__s64)e->addr > 0) {
		/* by the phase the batch entered: a prompt's, generation's or both */
		if ((int)ph == m->request_phase)
			prompt = e->addr;
		else if (e->ino && e->ino < e->addr)
			gen = e->ino, prompt = e->addr - e->ino;
		else
			gen = e->addr;
	}

	if (ph < MP_MAX_PHASES && (m->request_end_mask & (1U << ph))) {
		if (r)
			model_requests__close(m, r, e->ts_ns);
		return;
	}
	if (m->request_by_marker ? e->record == MP_REC_REQUEST :
	    (int)ph == m->request_phase && (!r || r->passed)) {
		/* starts at its prompt's tokenizing when that came last */
		__u64 start = m->lead ? m->lead_ns : e->ts_ns;

		if (r) {
			if (m->lead)
				memcpy(r->rss_end, m->lead_rss, sizeof(rss));
			model_requests__close(m, r, start);
		}
		if (m->nrequests == MODEL_MAX_REQUESTS) {
			m->requests_dropped++;
			m->lead = false;
			lead_gpu_to(m, NULL);
			return;
		}
		r = &m->requests[m->nrequests++];
		memset(r, 0, sizeof(*r));
		r->start_ns = start;
		r->pid = e->pid;
		memcpy(r->rss_start, m->lead ? m->lead_rss : rss, sizeof(rss));
		memcpy(r->rss_end, rss, sizeof(rss));
		if (m->lead)
			memcpy(r->phase_growth, m->lead_growth, sizeof(r->phase_growth));
		lead_gpu_to(m, r);
		m->lead = false;
	}
	if (r && ph < MP_MAX_PHASES && !(m->request_idle_mask & (1U << ph)) &&
	    (int)ph != m->request_phase)
		r->passed = true;
	if (r) {
		r->prompt_tokens += prompt;
		r->gen_tokens += gen;
	}
	if (prompt + gen && r)
		context_event(m, e, prompt + gen, rss);
}

bool model__context_fit(const struct model *m, double *per_token)
{
	struct linfit f = linfit__result(&m->context.fit);

	*per_token = f.slope;
	return f.ok;
}

const struct model_request *model__request_at(const struct model *m, __u64 ts_ns)
{
	unsigned int i;

	for (i = m->nrequests; i-- > 0;) {
		const struct model_request *r = &m->requests[i];

		if (r->start_ns <= ts_ns && (!r->end_ns || r->end_ns >= ts_ns))
			return r;
	}
	return NULL;
}
