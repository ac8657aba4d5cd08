// SPDX-License-Identifier: GPL-2.0
/* The run model: phases, processes, OOM kills. Pure code. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/model.h"

const int mp_class_order[MP_NR_CLASSES] = { MP_ANON, MP_FILE, MP_SHMEM, MP_SWAP };

static void order_note(struct model *m, unsigned int id)
{
	unsigned int i;

	for (i = 0; i < m->norder; i++)
		if (m->order[i] == id)
			return;
	if (m->norder < MP_MAX_PHASES)
		m->order[m->norder++] = id;
}

void model__init(struct model *m, __u32 root_pid, __u64 start_ns)
{
	memset(m, 0, sizeof(*m));
	model__init_zeroed(m, root_pid, start_ns);
}

void model__init_zeroed(struct model *m, __u32 root_pid, __u64 start_ns)
{
	m->root_pid = root_pid;
	m->start_ns = start_ns;
	m->phase_since_ns = start_ns;
	m->cur_phase = 0;
	strcpy(m->names[0], "startup");
	m->nphases = 1;
	order_note(m, 0);
	profile__init(&m->profile, false);
	origins__init(&m->origins);
	causerules__init(&m->rules);
	m->request_phase = -1;
	m->relabel_since_ns = start_ns;
	if (root_pid)
		model__proc(m, root_pid, true);
}

void model__free(struct model *m)
{
	char **a;

	if (!m)
		return;
	profile__free(&m->profile);
	history__free(&m->history);
	origins__free(&m->origins);
	causerules__free(&m->rules);
	model_engine__free(&m->engine);
	if (!m->argv)
		return;
	for (a = m->argv; *a; a++)
		free(*a);
	free(m->argv);
	m->argv = NULL;
}

int model__set_phase_name(struct model *m, unsigned int id, const char *name)
{
	if (id >= MP_MAX_PHASES || strlen(name) >= PHASE_NAME_MAX)
		return -EINVAL;
	strcpy(m->names[id], name);
	if (id >= m->nphases)
		m->nphases = id + 1;
	return 0;
}

int model__set_argv(struct model *m, char *const argv[])
{
	size_t n = 0, i;

	while (argv[n])
		n++;
	m->argv = calloc(n + 1, sizeof(char *));
	if (!m->argv)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		m->argv[i] = strdup(argv[i]);
		if (!m->argv[i])
			return -ENOMEM;
	}
	return 0;
}

struct model_proc *model__proc(struct model *m, __u32 pid, bool create)
{
	struct model_proc *p;
	unsigned int i;

	for (i = 0; i < m->nprocs; i++)
		if (m->procs[i].pid == pid)
			return &m->procs[i];
	if (!create)
		return NULL;
	if (m->nprocs == MODEL_MAX_PROCS) {
		/* many short-lived processes: reuse the record of one long gone */
		for (i = 0; i < m->nprocs; i++)
			if (m->procs[i].forgotten && m->procs[i].pid != m->root_pid)
				break;
		if (i == m->nprocs) {
			m->lost_model++;
			return NULL;
		}
		p = &m->procs[i];
		m->procs_recycled++;
	} else {
		p = &m->procs[m->nprocs++];
	}
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->exit_code = -1;
	return p;
}

struct model_proc *model__root(struct model *m)
{
	return model__proc(m, m->root_pid, false);
}

struct model_proc *model__main(struct model *m)
{
	struct model_proc *root = model__root(m), *best = root;
	unsigned int i;

	if (m->root_phased)
		return root;
	/* a wrapper: the descendant that held the most */
	for (i = 0; i < m->nprocs; i++)
		if (!best || m->procs[i].peak_total > best->peak_total)
			best = &m->procs[i];
	return best;
}

static void phase_switch(struct model *m, __u32 phase, __u64 ts)
{
	if (phase >= MP_MAX_PHASES)
		return;
	if (ts > m->phase_since_ns)
		m->time_ns[m->cur_phase] += ts - m->phase_since_ns;
	/* the open interval is closed here; model__finish() leaves the last one open (a
	 * snapshot of the model shares the history) */
	history__add_interval(&m->history, m->cur_phase, m->focus_pid ? m->focus_pid : m->root_pid,
			      m->phase_since_ns, ts > m->phase_since_ns ? ts : m->phase_since_ns);
	m->phase_since_ns = ts > m->phase_since_ns ? ts : m->phase_since_ns;
	m->cur_phase = phase;
	order_note(m, phase);
}

/* ---- relabels: a later marker shows what earlier intervals were ---- */

int model__add_relabel(struct model *m, __u32 at, const __u32 *from, const __u32 *to,
		       unsigned int n)
{
	struct model_relabel *r;
	unsigned int i;

	if (m->nrelabels >= MODEL_MAX_RELABELS)
		return -E2BIG;
	if (at >= MP_MAX_PHASES)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (from[i] >= MP_MAX_PHASES || to[i] >= MP_MAX_PHASES || from[i] == to[i] ||
		    from[i] == at)
			return -EINVAL;
	r = &m->relabels[m->nrelabels++];
	memset(r, 0, sizeof(*r));
	r->at = at;
	for (i = 0; i < n; i++)
		r->to[from[i]] = to[i] + 1;
	return 0;
}

__u32 model__shown_phase(const struct model *m, __u32 pid, __u64 ts_ns, __u32 phase)
{
	unsigned int i;

	if (phase >= MP_MAX_PHASES)
		return phase;
	for (i = 0; i < m->nrelabeled; i++) {
		const struct model_relabeled *w = &m->relabeled[i];

		if (w->pid == pid && ts_ns >= w->from_ns && ts_ns <= w->to_ns &&
		    m->relabels[w->k].to[phase])
			return m->relabels[w->k].to[phase] - 1;
	}
	return phase;
}

static void ivl_add(struct model_ivl *d, const struct model_ivl *a)
{
	unsigned int c;

	for (c = 0; c < MP_NR_CLASSES; c++) {
		d->growth[c] += a->growth[c];
		d->shrink[c] += a->shrink[c];
	}
	for (c = 0; c < MP_NR_IVL_MAP; c++)
		d->map[c] += a->map[c];
	d->faults += a->faults;
	d->entries += a->entries;
	d->calls += a->calls;
}

static __u64 plus_minus(__u64 v, __u64 in, __u64 out)
{
	v += in;
	return v > out ? v - out : 0;
}

/* A phase's counters as shown: BPF's, plus what relabels moved in, less what they moved out. */
static void ivl_apply(struct mp_phase_stats *s, const struct model_ivl *in,
		      const struct model_ivl *out)
{
	unsigned int c;

	for (c = 0; c < MP_NR_CLASSES; c++) {
		s->growth[c] = plus_minus(s->growth[c], in->growth[c], out->growth[c]);
		s->shrink[c] = plus_minus(s->shrink[c], in->shrink[c], out->shrink[c]);
	}
	s->faults = plus_minus(s->faults, in->faults, out->faults);
	s->mmap_bytes = plus_minus(s->mmap_bytes, in->map[MP_IVL_MMAP], out->map[MP_IVL_MMAP]);
	s->munmap_bytes = plus_minus(s->munmap_bytes, in->map[MP_IVL_MUNMAP],
				     out->map[MP_IVL_MUNMAP]);
	s->brk_bytes = plus_minus(s->brk_bytes, in->map[MP_IVL_BRK], out->map[MP_IVL_BRK]);
	s->brk_shrink_bytes = plus_minus(s->brk_shrink_bytes, in->map[MP_IVL_BRK_SHRINK],
					 out->map[MP_IVL_BRK_SHRINK]);
	s->entries = plus_minus(s->entries, in->entries, out->entries);
	s->calls = plus_minus(s->calls, in->calls, out->calls);
}

/* What the interval that ends at this event counted, and the call that starts the next. */
static void relabel_count(struct model *m, const struct mp_event *e)
{
	struct model_ivl *a;
	unsigned int c;

	if (!m->nrelabels || e->old_phase >= MP_MAX_PHASES || e->arg >= MP_MAX_PHASES)
		return;
	a = &m->relabel_acc[e->old_phase];
	for (c = 0; c < MP_NR_CLASSES; c++) {
		a->growth[c] += e->ivl_growth[c];
		a->shrink[c] += e->ivl_shrink[c];
	}
	for (c = 0; c < MP_NR_IVL_MAP; c++)
		a->map[c] += e->ivl_map[c];
	a->faults += e->ivl_faults;
	a = &m->relabel_acc[e->arg];
	a->calls++;
	if (e->arg != e->old_phase)
		a->entries++;
}

/* q goes where p is in the order of first entry (unless it is there already). */
static void order_before(struct model *m, unsigned int q, unsigned int p)
{
	unsigned int i, at = m->norder;

	for (i = 0; i < m->norder; i++) {
		if (m->order[i] == q)
			return;
		if (m->order[i] == p && at == m->norder)
			at = i;
	}
	if (m->norder >= MP_MAX_PHASES)
		return;
	memmove(&m->order[at + 1], &m->order[at], (m->norder - at) * sizeof(m->order[0]));
	m->order[at] = q;
	m->norder++;
}

/* p leaves the order when nothing of it is left (a later entry notes it again). */
static void order_drop_empty(struct model *m, unsigned int p)
{
	const struct mp_phase_stats *s = &m->stats[p];
	unsigned int i, n;

	if (s->entries || s->calls || m->time_ns[p] || p == m->cur_phase)
		return;
	for (i = n = 0; i < m->norder; i++)
		if (m->order[i] != p)
			m->order[n++] = m->order[i];
	m->norder = n;
}

/* Relabel k: what pid did since relabel_since_ns, up to ts, in its from phases. */
static void relabel_do(struct model *m, unsigned int k, __u32 pid, __u64 ts)
{
	const __u8 *to = m->relabels[k].to;
	struct history *h = &m->history;
	__s64 dbytes[MP_MAX_PHASES] = {}, dn[MP_MAX_PHASES] = {};
	__u64 from = m->relabel_since_ns, d;
	unsigned int p, q;
	size_t i;

	for (p = 0; p < MP_MAX_PHASES; p++) {
		if (!to[p])
			continue;
		q = to[p] - 1;
		ivl_add(&m->moved_out[p], &m->relabel_acc[p]);
		ivl_add(&m->moved_in[q], &m->relabel_acc[p]);
		/* shown at once; the next counter snapshot applies the same */
		ivl_apply(&m->stats[q], &m->relabel_acc[p], &(struct model_ivl){});
		ivl_apply(&m->stats[p], &(struct model_ivl){}, &m->relabel_acc[p]);
		if (m->relabel_acc[p].entries || m->relabel_acc[p].calls)
			order_before(m, q, p);
	}
	/* the timeline's intervals (closed ones follow each other back to `from`) */
	for (i = h->niv; i-- > 0 && h->iv[i].start_ns >= from;) {
		struct history_interval *iv = &h->iv[i];

		if (iv->pid != pid || iv->phase >= MP_MAX_PHASES || !to[iv->phase])
			continue;
		d = iv->end_ns - iv->start_ns;
		m->time_ns[iv->phase] -= m->time_ns[iv->phase] > d ? d : m->time_ns[iv->phase];
		iv->phase = to[iv->phase] - 1;
		m->time_ns[iv->phase] += d;
		m->relabel_intervals++;
	}
	/* every thread's phase changes */
	for (i = h->nch; i-- > 0 && h->ch[i].ts_ns >= from;) {
		struct history_change *ch = &h->ch[i];

		if (ch->pid != pid)
			continue;
		if (ch->phase < MP_MAX_PHASES && to[ch->phase])
			ch->phase = to[ch->phase] - 1;
		if (ch->old_phase < MP_MAX_PHASES && to[ch->old_phase])
			ch->old_phase = to[ch->old_phase] - 1;
	}
	/* the stack samples taken meanwhile (later ones: model__shown_phase) */
	profile__relabel(&m->profile, pid, from, ts, to, dbytes, dn);
	for (p = 0; p < MP_MAX_PHASES; p++) {
		m->sampled_bytes[p] += dbytes[p];
		m->samples[p] += dn[p];
	}
	for (p = 0; p < MP_MAX_PHASES; p++)
		if (to[p])
			order_drop_empty(m, p);
	if (m->nrelabeled < MODEL_MAX_RELABELED)
		m->relabeled[m->nrelabeled++] = (struct model_relabeled){
			.from_ns = from, .to_ns = ts, .pid = pid, .k = k };
	else
		m->relabels_dropped++;
}

/* After the timeline entered e->arg: a relabel point? */
static void relabel_check(struct model *m, const struct mp_event *e)
{
	bool point = false;
	unsigned int k;

	if (e->arg == e->old_phase)
		return;
	for (k = 0; k < m->nrelabels; k++) {
		if (m->relabels[k].at != e->arg)
			continue;
		point = true;
		if (m->nrelabeled < MODEL_MAX_RELABELED)
			relabel_do(m, k, e->pid, e->ts_ns);
		else
			m->relabels_dropped++;
	}
	if (!point)
		return;
	memset(m->relabel_acc, 0, sizeof(m->relabel_acc));
	m->relabel_since_ns = e->ts_ns;
}

/* ---- requests and the context ---- */

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

static __s64 rss_total(const __s64 rss[MP_NR_CLASSES])
{
	return rss[MP_FILE] + rss[MP_ANON] + rss[MP_SHMEM];
}

static struct model_request *request_open(struct model *m)
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
		g[n++] = (double)(rss_total(r->rss_end) - rss_total(r->rss_start));
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
static void request_exit(struct model *m, const struct mp_event *e)
{
	struct model_request *r = request_open(m);
	__s64 rss[MP_NR_CLASSES];
	unsigned int c;

	if (!r || m->lead || e->pid != (m->focus_pid ? m->focus_pid : m->root_pid))
		return;
	for (c = 0; c < MP_NR_CLASSES; c++)
		rss[c] = (__s64)e->rss[c];
	if (rss_total(rss) <= 0)
		return;		/* not known (a recording of an older build) */
	if (m->req_have_rss && m->req_last_phase < MP_MAX_PHASES)
		r->phase_growth[m->req_last_phase] += rss_total(rss) - rss_total(m->req_last_rss);
	memcpy(r->rss_end, rss, sizeof(rss));
	memcpy(m->req_last_rss, rss, sizeof(rss));
	m->req_have_rss = true;
}

static void request_close(struct model *m, struct model_request *r, __u64 ts)
{
	struct linfit f;
	__s64 now = rss_total(r->rss_end);

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

void model__window_open(struct model *m)
{
	struct model_request *r = request_open(m);

	if (r && r != m->requests)
		m->requests[0] = *r;
	m->nrequests = r ? 1 : 0;
	m->requests_dropped = 0;
	m->req_vram_pending = 0;
	m->context.tokens_seen = 0;
	m->context.first_ns = 0;
	memset(&m->context.fit, 0, sizeof(m->context.fit));
	m->room_cgroup_known = m->room_system_known = false;
	model_gpu__window_open(&m->gpu);
}

/* The GPU side as it stands now, in the history (the trace's counter track). */
static void gpu_note(struct model *m, __u64 ts_ns)
{
	struct history_gpu s = {
		.ts_ns = ts_ns,
		.pinned = m->gpu.current[MP_ALLOC_PINNED],
		.managed = m->gpu.current[MP_ALLOC_MANAGED],
		.vram = m->gpu.vram,
	};

	history__add_gpu(&m->history, &s);
}

void model__on_alloc(struct model *m, const struct mp_alloc_event *e)
{
	struct model_request *r = request_open(m);
	__u64 *to;

	model_gpu__on_event(&m->gpu, e);
	gpu_note(m, e->ts_ns);
	if (e->cls >= MP_NR_ALLOC_CLS || m->finished ||
	    e->pid != (m->focus_pid ? m->focus_pid : m->root_pid))
		return;
	if (m->lead)
		to = e->type == MP_EV_ALLOC ? m->lead_alloc : m->lead_freed;
	else if (r)
		to = e->type == MP_EV_ALLOC ? r->gpu_alloc : r->gpu_freed;
	else
		return;
	if (e->type == MP_EV_ALLOC || e->type == MP_EV_FREE)
		to[e->cls] += e->size;
}

void model__on_vram(struct model *m, __u32 phase, __u64 now_ns,
		    const struct model_gpu_device *dev, unsigned int ndev)
{
	struct model_request *r;

	model_gpu__reading(&m->gpu, phase, now_ns, dev, ndev);
	gpu_note(m, now_ns);
	if (m->req_vram_pending && m->req_vram_pending <= m->nrequests) {
		r = &m->requests[m->req_vram_pending - 1];
		if (r->vram_seen)
			r->vram_end = m->gpu.vram;
	}
	m->req_vram_pending = 0;
	r = request_open(m);
	if (!r)
		return;
	if (!r->vram_seen) {
		r->vram_seen = true;
		r->vram_start = m->gpu.vram;
	}
	r->vram_end = m->gpu.vram;
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
			linfit__add(&cx->fit, (double)cx->tokens_seen, (double)rss_total(rss));
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
		linfit__add(&cx->fit, (double)pos, (double)rss_total(rss));
	}
}

/* A phase event of the timeline's process: requests, their growth by phase, tokens. */
static void request_event(struct model *m, const struct mp_event *e)
{
	struct model_request *r = request_open(m);
	__s64 rss[MP_NR_CLASSES];
	__u32 ph = e->arg, c;
	__u64 prompt = 0, gen = 0;

	for (c = 0; c < MP_NR_CLASSES; c++)
		rss[c] = (__s64)e->rss[c];
	if (rss_total(rss) <= 0 && m->req_have_rss)
		memcpy(rss, m->req_last_rss, sizeof(rss));	/* not known yet */
	if (m->req_have_rss && m->req_last_phase < MP_MAX_PHASES) {
		__s64 d = rss_total(rss) - rss_total(m->req_last_rss);

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
			request_close(m, r, e->ts_ns);
		return;
	}
	if (m->request_by_marker ? e->record == MP_REC_REQUEST :
	    (int)ph == m->request_phase && (!r || r->passed)) {
		/* starts at its prompt's tokenizing when that came last */
		__u64 start = m->lead ? m->lead_ns : e->ts_ns;

		if (r) {
			if (m->lead)
				memcpy(r->rss_end, m->lead_rss, sizeof(rss));
			request_close(m, r, start);
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

void model__on_event(struct model *m, const struct mp_event *e)
{
	char text[HISTORY_TEXT];
	struct model_proc *p, *c;

	switch (e->type) {
	case MP_EV_PHASE:
		/*
		 * Every process's phases count in the table. The timeline (current phase,
		 * time per phase) follows the root, or, while the root has no phases of its
		 * own (a wrapper: sh -c, a launcher script), the child that last had one.
		 */
		if (e->arg < MP_MAX_PHASES)
			order_note(m, e->arg);
		/* a recorded value without a change (MP_EV_PHASE says so) is no new slice */
		if (e->arg != e->old_phase)
			history__add_change(&m->history, e->ts_ns, e->pid, e->tid, e->arg,
					    e->old_phase);
		if (e->pid == m->root_pid)
			m->root_phased = true;
		if (!m->root_phased)
			m->focus_pid = e->pid;
		if ((e->pid == m->root_pid || e->pid == m->focus_pid) && !m->finished) {
			relabel_count(m, e);
			phase_switch(m, e->arg, e->ts_ns);
			relabel_check(m, e);
			if (m->request_phase >= 0 || m->request_by_marker)
				request_event(m, e);
		}
		break;
	case MP_EV_FORK:
		c = model__proc(m, e->arg, true);
		if (c) {
			c->parent = e->pid;
			memcpy(c->comm, e->comm, MP_COMM_LEN);
		}
		break;
	case MP_EV_EXEC:
		p = model__proc(m, e->pid, true);
		if (p)
			memcpy(p->comm, e->comm, MP_COMM_LEN);
		snprintf(text, sizeof(text), "%.*s", MP_COMM_LEN, e->comm);
		history__add_mark(&m->history, e->ts_ns, HISTORY_EXEC, e->pid, text);
		break;
	case MP_EV_LEFT:
		/* as far as the observation goes, the process ended here */
		request_exit(m, e);
		if (!m->root_phased && e->pid == m->focus_pid && e->pid != m->root_pid &&
		    !m->finished) {
			phase_switch(m, 0, e->ts_ns);
			m->focus_pid = m->root_pid;
		}
		p = model__proc(m, e->pid, true);
		if (!p)
			break;
		p->left = e->arg ? e->arg : MP_LEFT_UIDS;
		p->left_ns = e->ts_ns;
		snprintf(p->left_path, sizeof(p->left_path), "%.*s", (int)sizeof(e->path) - 1,
			 e->path);
		if (!p->comm[0])
			memcpy(p->comm, e->comm, MP_COMM_LEN);
		snprintf(text, sizeof(text), "%.*s left: %s", MP_COMM_LEN, e->comm,
			 model__left_reason(p->left));
		history__add_mark(&m->history, e->ts_ns, HISTORY_LEFT, e->pid, text);
		break;
	case MP_EV_GUARD:
		snprintf(text, sizeof(text), "%.*s stopped: over --max-rss", MP_COMM_LEN, e->comm);
		history__add_mark(&m->history, e->ts_ns, HISTORY_GUARD, e->pid, text);
		break;
	case MP_EV_EXIT:
		request_exit(m, e);
		/* under a wrapper, the time after the phased child ends is the wrapper's */
		if (!m->root_phased && e->pid == m->focus_pid && e->pid != m->root_pid &&
		    !m->finished) {
			phase_switch(m, 0, e->ts_ns);
			m->focus_pid = m->root_pid;
		}
		p = model__proc(m, e->pid, true);
		if (!p)
			break;
		p->exited = true;
		p->exit_ns = e->ts_ns;
		if (!p->comm[0])
			memcpy(p->comm, e->comm, MP_COMM_LEN);
		/* wait(2) status layout */
		if (e->arg & 0x7f) {
			p->exit_signal = e->arg & 0x7f;
			p->exit_code = -1;
		} else {
			p->exit_code = (e->arg >> 8) & 0xff;
		}
		break;
	case MP_EV_OOM:
		snprintf(text, sizeof(text), "%.*s OOM-killed", MP_COMM_LEN, e->comm);
		history__add_mark(&m->history, e->ts_ns, HISTORY_OOM, e->pid, text);
		p = model__proc(m, e->pid, true);
		if (p) {
			p->oom_killed = true;
			if (!p->comm[0])
				memcpy(p->comm, e->comm, MP_COMM_LEN);
		}
		if (m->nooms < MODEL_MAX_OOMS) {
			struct model_oom *o = &m->ooms[m->nooms++];

			memset(o, 0, sizeof(*o));
			o->cgroup_oom = -1;
			o->pid = e->pid;
			o->phase = e->old_phase;
			o->ts_ns = e->ts_ns;
			memcpy(o->comm, e->comm, MP_COMM_LEN);
			memcpy(o->rss, e->rss, sizeof(o->rss));
			/* the request it died in ends here, with what the process held */
			if (e->pid == (m->focus_pid ? m->focus_pid : m->root_pid) &&
			    request_open(m)) {
				struct model_request *r = request_open(m);
				unsigned int c;

				for (c = 0; c < MP_NR_CLASSES; c++)
					r->rss_end[c] = (__s64)e->rss[c];
				r->rss_end[MP_SWAP] = r->rss_start[MP_SWAP];
				if (m->req_have_rss && m->req_last_phase < MP_MAX_PHASES)
					r->phase_growth[m->req_last_phase] +=
						rss_total(r->rss_end) - rss_total(m->req_last_rss);
				r->oom = true;
				request_close(m, r, e->ts_ns);
			}
		} else {
			m->lost_model++;
		}
		break;
	default:
		break;
	}
}

void model__set_stats(struct model *m, unsigned int id, const struct mp_phase_stats *s)
{
	if (id >= MP_MAX_PHASES)
		return;
	m->counted[id] = *s;
	m->stats[id] = *s;
	ivl_apply(&m->stats[id], &m->moved_in[id], &m->moved_out[id]);
	if (m->stats[id].entries || m->stats[id].calls)
		order_note(m, id);
}

void model__set_rss(struct model *m, __u32 pid, const __s64 rss[MP_NR_CLASSES],
		    const __s64 peak[MP_NR_CLASSES], __s64 peak_total)
{
	struct model_proc *p = model__proc(m, pid, true);
	int c;

	if (!p)
		return;
	for (c = 0; c < MP_NR_CLASSES; c++) {
		p->rss[c] = rss[c];
		if (peak[c] > p->peak[c])
			p->peak[c] = peak[c];
	}
	if (peak_total > p->peak_total)
		p->peak_total = peak_total;
}

void model__raise_peaks(struct model *m, __u32 pid, const __s64 peak[MP_NR_CLASSES],
			__s64 peak_total)
{
	struct model_proc *p = model__proc(m, pid, false);
	int c;

	if (!p)
		return;
	for (c = 0; c < MP_NR_CLASSES; c++)
		if (peak[c] > p->peak[c])
			p->peak[c] = peak[c];
	if (peak_total > p->peak_total)
		p->peak_total = peak_total;
}

void model__finish(struct model *m, __u64 now_ns)
{
	if (m->finished)
		return;
	if (now_ns > m->phase_since_ns)
		m->time_ns[m->cur_phase] += now_ns - m->phase_since_ns;
	m->phase_since_ns = now_ns;
	m->end_ns = now_ns;
	m->finished = true;
}

__u64 model__phase_time(const struct model *m, unsigned int id, __u64 now_ns)
{
	__u64 t;

	if (id >= MP_MAX_PHASES)
		return 0;
	t = m->time_ns[id];
	if (!m->finished && id == m->cur_phase && now_ns > m->phase_since_ns)
		t += now_ns - m->phase_since_ns;
	return t;
}

__u64 model__growth_total(const struct mp_phase_stats *s, bool with_swap)
{
	return s->growth[MP_ANON] + s->growth[MP_FILE] + s->growth[MP_SHMEM] +
	       (with_swap ? s->growth[MP_SWAP] : 0);
}

void model__add_mark(struct model *m, __u64 ts_ns, __u32 kind, __u32 pid, const char *text)
{
	history__add_mark(&m->history, ts_ns, kind, pid, text);
}

void model__add_mem(struct model *m, const struct history_mem *s)
{
	history__add_mem(&m->history, s);
}

void model__clear_mappings(struct model *m)
{
	memset(m->ntop, 0, sizeof(m->ntop));
	memset(m->nmappings, 0, sizeof(m->nmappings));
	memset(m->mapping_bytes, 0, sizeof(m->mapping_bytes));
}

void model__offer_mapping(struct model *m, unsigned int id, const struct model_mapping *mm)
{
	struct model_mapping *top;
	unsigned int n, i;

	if (id >= MP_MAX_PHASES || !mm->bytes)
		return;
	m->nmappings[id]++;
	m->mapping_bytes[id] += mm->bytes;
	top = m->top[id];
	n = m->ntop[id];
	if (n == MODEL_TOP_MAPPINGS && top[n - 1].bytes >= mm->bytes)
		return;
	if (n < MODEL_TOP_MAPPINGS)
		n++;
	/* insertion into the sorted list, dropping the smallest when full */
	for (i = n - 1; i > 0 && top[i - 1].bytes < mm->bytes; i--)
		top[i] = top[i - 1];
	top[i] = *mm;
	m->ntop[id] = n;
}

const char *model__kind_name(__u32 kind)
{
	static const char *const n[MP_NR_MAP_KINDS] = {
		[MP_MAP_UNKNOWN] = "unknown", [MP_MAP_HEAP] = "heap",
		[MP_MAP_STACK] = "stack", [MP_MAP_THREAD_STACK] = "thread_stack",
		[MP_MAP_ANON] = "anon", [MP_MAP_FILE] = "file",
		[MP_MAP_SHMEM] = "shmem", [MP_MAP_DEVICE] = "device",
		[MP_MAP_SPECIAL] = "special",
	};

	return kind < MP_NR_MAP_KINDS ? n[kind] : "?";
}

void model__add_unmatched(struct model *m, const char *phase, const char *binary,
			  const char *symbol, const char *reason)
{
	struct model_unmatched *u;

	if (m->nunmatched >= MODEL_MAX_UNMATCHED) {
		m->lost_model++;
		return;
	}
	u = &m->unmatched[m->nunmatched++];
	snprintf(u->phase, sizeof(u->phase), "%s", phase);
	snprintf(u->binary, sizeof(u->binary), "%s", binary);
	snprintf(u->symbol, sizeof(u->symbol), "%s", symbol);
	snprintf(u->reason, sizeof(u->reason), "%s", reason);
}

__u32 model__largest_live(const struct model *m)
{
	__u32 best = m->root_pid;
	__s64 most = -1;
	unsigned int i;

	for (i = 0; i < m->nprocs; i++) {
		const struct model_proc *p = &m->procs[i];
		__s64 rss = p->rss[MP_ANON] + p->rss[MP_FILE] + p->rss[MP_SHMEM];

		if (model_proc__followed(p) && rss > most) {
			most = rss;
			best = p->pid;
		}
	}
	return best;
}

const char *model__left_reason(__u32 why)
{
	if (why & MP_LEFT_PRCTL)
		return "it made itself not dumpable";
	if (why & (MP_LEFT_UIDS | MP_LEFT_GIDS))
		return why & MP_LEFT_UIDS ? "it ran a setuid program" : "it ran a setgid program";
	if (why & MP_LEFT_CAPS)
		return "it ran a program with file capabilities";
	if (why & MP_LEFT_NODUMP)
		return "it ran a program you cannot read";
	return "it made a secure exec";
}
