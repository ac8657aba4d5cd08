// SPDX-License-Identifier: GPL-2.0
/* The run model: phases, processes, OOM kills. Pure code. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/model.h"
#include "model/requests_int.h"

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

void model__window_open(struct model *m)
{
	struct model_request *r = model_requests__open(m);

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
	m->window = true;
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
	struct model_request *r = model_requests__open(m);
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
	r = model_requests__open(m);
	if (!r)
		return;
	if (!r->vram_seen) {
		r->vram_seen = true;
		r->vram_start = m->gpu.vram;
	}
	r->vram_end = m->gpu.vram;
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
				model_requests__event(m, e);
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
		model_requests__exit(m, e);
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
		model_requests__exit(m, e);
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
			    model_requests__open(m)) {
				struct model_request *r = model_requests__open(m);
				unsigned int c;

				for (c = 0; c < MP_NR_CLASSES; c++)
					r->rss_end[c] = (__s64)e->rss[c];
				r->rss_end[MP_SWAP] = r->rss_start[MP_SWAP];
				if (m->req_have_rss && m->req_last_phase < MP_MAX_PHASES)
					r->phase_growth[m->req_last_phase] +=
						model_rss_total(r->rss_end) - model_rss_total(m->req_last_rss);
				r->oom = true;
				model_requests__close(m, r, e->ts_ns);
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

void model__note_peak_at(struct model *m, __u32 pid, __u64 ns, const __s64 rss[MP_NR_CLASSES])
{
	struct model_proc *p = model__proc(m, pid, false);

	if (!p || !ns || ns <= p->peak_ns)
		return;
	p->peak_ns = ns;
	memcpy(p->peak_rss, rss, sizeof(p->peak_rss));
}

__u32 model__phase_at(const struct model *m, __u64 ts_ns)
{
	const struct history *h = &m->history;
	size_t lo = 0, hi = h->niv;

	if (ts_ns >= m->phase_since_ns || !h->niv)
		return m->cur_phase;
	/* the last interval that started at or before ts_ns (intervals are in time order) */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (h->iv[mid].start_ns <= ts_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? h->iv[lo - 1].phase : h->iv[0].phase;
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

void model__note_tree(struct model *m)
{
	__s64 sum[MP_NR_CLASSES] = {}, total;
	unsigned int i;
	int k;

	for (i = 0; i < m->nprocs; i++) {
		const struct model_proc *p = &m->procs[i];

		for (k = 0; k < MP_NR_CLASSES; k++) {
			if (model_proc__followed(p))
				sum[k] += p->rss[k];
			if (p->peak[k] > m->tree_peak[k])
				m->tree_peak[k] = p->peak[k];
		}
		if (p->peak_total > m->tree_peak_total)
			m->tree_peak_total = p->peak_total;
	}
	total = sum[MP_ANON] + sum[MP_FILE] + sum[MP_SHMEM];
	for (k = 0; k < MP_NR_CLASSES; k++)
		if (sum[k] > m->tree_peak[k])
			m->tree_peak[k] = sum[k];
	if (total > m->tree_peak_total)
		m->tree_peak_total = total;
}

void model__finish(struct model *m, __u64 now_ns)
{
	if (m->finished)
		return;
	model__note_tree(m);
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

__u64 model__unsampled(const struct model *m, unsigned int id)
{
	__u64 g, s;

	if (id >= MP_MAX_PHASES)
		return 0;
	g = model__growth_total(&m->stats[id], false);
	s = m->sampled_bytes[id];
	return g > s ? g - s : 0;
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
