// SPDX-License-Identifier: GPL-2.0
/*
 * The collector's recordings: a rotated segment's end and the next one's start (the state
 * so far carried over), and a recording fed back through the collector for `memphase
 * report` (collector__replay_*: each record applied as the live run applied what it read),
 * with a report's window cut out of it.
 */
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
#include "lib/strmap.h"
#include "lib/utf8.h"
#include "lib/util.h"
#include "model/oom.h"
#include "memphase.skel.h"
#include "collect/collector_int.h"

void collector__segment_end(struct collector *c)
{
	__u64 now = util__now_ns();

	if (!c->rec)
		return;
	collector__consume(c);
	bpfmaps__maps(c->skel, c->maplog, c->m);
	recorder__counters_all(c->rec, c->m);
	if (c->mappings)
		mappings__read(c->skel, c->maplog, c->m, &c->paths, c->fs, c->rec);
	if (c->stacks && !stacks__finish(c->stacks, c->m))
		recorder__profile(c->rec, &c->m->profile);
	recorder__finish(c->rec, now);
}

void collector__segment_begin(struct collector *c, struct recorder *rec)
{
	struct model *m = c->m;
	struct model_proc *root = model__root(m);
	unsigned int i;

	c->rec = rec;
	if (!rec)
		return;
	recorder__begin(rec, m, c->rec_mode);
	collector__record_setup(c);
	if (root && root->comm[0])
		recorder__root_comm(rec, root->pid, root->comm);
	recorder__markers(rec, m->markers_attached, m->gpu.probes);
	recorder__engine(rec, &m->engine);
	recorder__started(rec, m->start_ns);
	/* the process table: each process as a fork from its parent (or an exec) */
	for (i = 0; i < m->nprocs; i++) {
		const struct model_proc *p = &m->procs[i];
		struct mp_event e = { .type = p->parent ? MP_EV_FORK : MP_EV_EXEC,
				      .ts_ns = m->start_ns };

		if (p->pid == m->root_pid || p->forgotten)
			continue;
		e.pid = p->parent ? p->parent : p->pid;
		e.tid = e.pid;
		e.arg = p->pid;
		memcpy(e.comm, p->comm, MP_COMM_LEN);
		recorder__event(rec, &e, sizeof(e));
	}
	recorder__carry(rec, m);
	recorder__origins(rec, &m->origins);
	recorder__counters_all(rec, m);
	if (c->mappings)
		mappings__read(c->skel, c->maplog, m, &c->paths, c->fs, rec);
	recorder__flush(rec);
}

/* ---- replay (collect/replay.c): each recorded input, applied as it was live ---- */

struct collector *collector__new_replay(struct model *m, bool keep_raw,
					const struct collector_hooks *hooks)
{
	struct collector *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->m = m;
	c->replay = true;
	c->keep_raw = keep_raw;
	if (hooks)
		c->hooks = *hooks;
	strmap__init(&c->paths, strmap__free_ptr);
	c->growth_ring = calloc(1, sizeof(*c->growth_ring));
	c->tl = timeline__new(COLLECTOR_TIMELINE_CAP, COLLECTOR_RATE_WINDOW_S);
	if (!c->growth_ring || !c->tl) {
		collector__free(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

int collector__replay_begin(struct collector *c, __u32 pid, __u64 init_ns, __u64 wall_ns,
			    char names[][PHASE_NAME_MAX], unsigned int nphases, char *const argv[])
{
	unsigned int i;
	int err;

	model__init(c->m, pid, init_ns);
	c->m->start_wall_ns = wall_ns;
	c->m->profile.keep_raw = c->keep_raw;
	for (i = 0; i < nphases; i++) {
		err = model__set_phase_name(c->m, i, names[i]);
		if (err)
			return err;
	}
	return argv ? model__set_argv(c->m, argv) : 0;
}

void collector__replay_started(struct collector *c, __u64 ts_ns)
{
	collector__apply_started(c, ts_ns);
}

void collector__replay_event(struct collector *c, const struct mp_event *e)
{
	collector__apply_event(c, e);
}

int collector__replay_sample(struct collector *c, const struct stacks_sample *s)
{
	return stacks__apply(c->m, s);
}

int collector__replay_origin(struct collector *c, const struct stacks_sample *s)
{
	return stacks__origin_apply(c->m, s);
}

void collector__replay_alloc(struct collector *c, const struct mp_alloc_event *e)
{
	model__on_alloc(c->m, e);
}

void collector__replay_room(struct collector *c, bool cg_known, __s64 cg, bool sys_known,
			    __s64 sys)
{
	collector__room_apply(c, cg_known, cg, sys_known, sys);
}

void collector__replay_vram(struct collector *c, __u64 ts_ns, __u32 phase,
			    const struct model_gpu_device *dev, unsigned int n)
{
	model__on_vram(c->m, phase, ts_ns, dev, n);
}

void collector__replay_nvml(struct collector *c, bool loaded, const char *why)
{
	c->m->gpu.nvml = loaded;
	snprintf(c->m->gpu.nvml_why, sizeof(c->m->gpu.nvml_why), "%s", why);
}

void collector__replay_alloc_probes(struct collector *c, unsigned int n)
{
	c->m->gpu.probes = n;
}

int collector__replay_setup(struct collector *c, int request_phase, __u32 idle, __u32 end,
			    __u32 lead, bool by_marker, const char *preset,
			    const char *const *allocators, unsigned int nallocators,
			    const char *const *names, const char *const *texts, unsigned int nfiles)
{
	struct causerules *r = &c->m->rules;
	char err[512];
	unsigned int i;
	int ret;

	model__set_requests(c->m, request_phase, idle, end, lead);
	c->m->request_by_marker = by_marker;
	c->m->nrelabels = 0;
	ret = collector__relabels_set(c->m, preset[0] ? presets__find(preset) : NULL);
	if (ret)
		return ret;
	causerules__free(r);
	causerules__init(r);
	ret = causerules__parse(r, presets__causes(), "data/causes.rules", err, sizeof(err));
	for (i = 0; !ret && i < nfiles; i++)
		ret = causerules__parse(r, texts[i], names[i], err, sizeof(err));
	for (i = 0; !ret && i < nallocators; i++)
		ret = causerules__add_allocator(r, allocators[i]);
	if (!ret)
		ret = causerules__use_preset(r, preset[0] ? preset : NULL);
	if (ret)
		fprintf(stderr, "memphase: the recording's cause rules: %s\n",
			ret == -ENOMEM ? strerror(ENOMEM) : err);
	return ret;
}

void collector__replay_carry(struct collector *c, const struct collector_carry *k)
{
	struct model *m = c->m;
	unsigned int i;

	if (k->cur_phase >= MP_MAX_PHASES || k->norder > MP_MAX_PHASES)
		return;
	m->cur_phase = k->cur_phase;
	m->phase_since_ns = k->phase_since_ns;
	m->focus_pid = k->focus_pid;
	m->root_phased = k->root_phased;
	m->req_last_phase = k->req_last_phase;
	m->norder = 0;
	for (i = 0; i < k->norder; i++)
		if (k->order[i] < MP_MAX_PHASES)
			m->order[m->norder++] = k->order[i];
	memcpy(m->time_ns, k->time_ns, sizeof(m->time_ns));
	memcpy(m->moved_in, k->moved_in, sizeof(m->moved_in));
	memcpy(m->moved_out, k->moved_out, sizeof(m->moved_out));
	memcpy(m->relabel_acc, k->relabel_acc, sizeof(m->relabel_acc));
	m->relabel_since_ns = k->relabel_since_ns;
	/* a phase whose counters never change again still shows what was moved into it */
	for (i = 0; i < m->nphases; i++)
		model__set_stats(m, i, &m->counted[i]);
}

void collector__replay_stats(struct collector *c, unsigned int id,
			     const struct mp_phase_stats *st)
{
	model__set_stats(c->m, id, st);
}

void collector__replay_rss(struct collector *c, __u32 pid, const __s64 rss[MP_NR_CLASSES],
			   const __s64 peak[MP_NR_CLASSES], __s64 peak_total, __u64 peak_ns,
			   const __s64 peak_rss[MP_NR_CLASSES])
{
	model__set_rss(c->m, pid, rss, peak, peak_total);
	model__note_peak_at(c->m, pid, peak_ns, peak_rss);
}

void collector__replay_drops(struct collector *c, const __u64 *d)
{
	c->m->lost_kernel = d[0];
	c->m->lost_stacks = d[1];
	c->m->mapping_lost_bytes = d[2];
	c->m->vma_busy = d[3];
	c->m->mappings_full = d[4];
	c->m->stacks_capped = d[5];
	c->m->vma_deferred = d[6];
	c->m->origins_lost = d[7];
	c->m->origins_capped = d[8];
	c->m->origins_same = d[9];
	c->m->gpu.allocs_full = d[10];
	c->m->gpu.unread = d[11];
}

void collector__replay_tick(struct collector *c, __u64 now_ns)
{
	collector__apply_tick(c, now_ns);
}

void collector__replay_forget(struct collector *c, __u32 pid)
{
	struct model_proc *p = model__proc(c->m, pid, false);

	if (p)
		p->forgotten = true;
}

void collector__replay_mappings_clear(struct collector *c)
{
	mappings__clear(c->m);
}

void collector__replay_mapping(struct collector *c, unsigned int phase,
			       const struct model_mapping *mm)
{
	mappings__origin(c->m, mm);
	model__offer_mapping(c->m, phase, mm);
}

void collector__replay_sysmem(struct collector *c, const struct sysmem *sm, __u64 ts_ns)
{
	collector__apply_sysmem(c, *sm, ts_ns);
}

void collector__replay_mark(struct collector *c, __u64 ts_ns, __u32 kind, __u32 pid,
			    const char *text)
{
	model__add_mark(c->m, ts_ns, kind, pid, text);
}

void collector__replay_oom_info(struct collector *c, const struct model_oom *info)
{
	struct model *m = c->m;
	struct model_oom *o;

	if (!m->nooms || m->ooms[m->nooms - 1].ts_ns != info->ts_ns)
		return;
	o = &m->ooms[m->nooms - 1];
	o->cgroup_oom = info->cgroup_oom;
	memcpy(o->cgroup, info->cgroup, sizeof(o->cgroup));
	o->cgroup_limit = info->cgroup_limit;
	o->have_window = info->have_window;
	o->window_s = info->window_s;
	memcpy(o->before, info->before, sizeof(o->before));
}

void collector__replay_markers(struct collector *c, unsigned int n)
{
	c->m->markers_attached = n;
}

void collector__replay_root_comm(struct collector *c, const char *comm)
{
	struct model_proc *root = model__root(c->m);

	if (root)
		snprintf(root->comm, sizeof(root->comm), "%.*s", (int)sizeof(root->comm) - 1,
			 comm);
}

void collector__replay_unmatched(struct collector *c, const struct model_unmatched *u)
{
	model__add_unmatched(c->m, u->phase, u->binary, u->symbol, u->reason);
}

int collector__replay_profile_proc(struct collector *c, bool first, __u32 pid,
				   const char *comm)
{
	if (first)
		c->m->profile.nmaps = 0;
	return profile__add_proc(&c->m->profile, pid, comm);
}

int collector__replay_profile_map(struct collector *c, __u32 pid, __u64 start, __u64 end,
				  __u64 pgoff, const char *path, const unsigned char *build_id,
				  int build_id_len)
{
	return profile__add_map(&c->m->profile, pid, start, end, pgoff, path, build_id,
				build_id_len);
}

void collector__replay_profile_end(struct collector *c)
{
	profile__sort_raw(&c->m->profile);
}

void collector__replay_bpf_stats(struct collector *c, const struct model_bpf_stats *st)
{
	c->m->bpf_stats = *st;
}

void collector__replay_root_status(struct collector *c, int wait_status)
{
	collector__root_status(c, wait_status);
}

void collector__replay_finish(struct collector *c, __u64 end_ns)
{
	timeline__add_peaks(c->tl, c->m, end_ns);
	model__finish(c->m, end_ns);
}

/* ---- a window of a replayed run (report --from/--to/--phase) ---- */

struct replay_base {
	struct mp_phase_stats stats[MP_MAX_PHASES];
	__u64 psi_some_us[MP_MAX_PHASES], psi_full_us[MP_MAX_PHASES];
	/* totals the drop records carry, and the arenas seen */
	__u64 origins_lost, origins_capped, origins_same, arenas, allocs_full, unread;
};

static __u64 counted_since(__u64 now, __u64 base)
{
	return now > base ? now - base : 0;
}

void collector__replay_window_open(struct collector *c)
{
	struct model *m = c->m;

	if (!c->base)
		c->base = calloc(1, sizeof(*c->base));
	if (!c->base)
		return;
	memcpy(c->base->stats, m->stats, sizeof(m->stats));
	memcpy(c->base->psi_some_us, m->psi_some_us, sizeof(m->psi_some_us));
	memcpy(c->base->psi_full_us, m->psi_full_us, sizeof(m->psi_full_us));
	c->base->origins_lost = m->origins_lost;
	c->base->origins_capped = m->origins_capped;
	c->base->origins_same = m->origins_same;
	c->base->arenas = m->origins.arenas;
	c->base->allocs_full = m->gpu.allocs_full;
	c->base->unread = m->gpu.unread;
	/* what counts starts here; state (mappings, origins, memory held) stays */
	model__window_open(m);
}

static bool in_window(__u64 ts, __u64 from, __u64 to)
{
	return ts >= from && ts <= to;
}

/* Clips the history to [from, to] (and to one phase, when phase >= 0). */
static void clip_history(struct history *h, __u64 from, __u64 to, int phase)
{
	size_t i, n;

	for (i = n = 0; i < h->niv; i++) {
		struct history_interval iv = h->iv[i];

		if (iv.end_ns < from || iv.start_ns > to || (phase >= 0 && (int)iv.phase != phase))
			continue;
		iv.start_ns = iv.start_ns < from ? from : iv.start_ns;
		iv.end_ns = iv.end_ns > to ? to : iv.end_ns;
		h->iv[n++] = iv;
	}
	h->niv = n;
	for (i = n = 0; i < h->nch; i++)
		if (in_window(h->ch[i].ts_ns, from, to))
			h->ch[n++] = h->ch[i];
	h->nch = n;
	for (i = n = 0; i < h->nmk; i++)
		if (in_window(h->mk[i].ts_ns, from, to))
			h->mk[n++] = h->mk[i];
	h->nmk = n;
	for (i = n = 0; i < h->nmem; i++)
		if (in_window(h->mem[i].ts_ns, from, to))
			h->mem[n++] = h->mem[i];
	h->nmem = n;
	for (i = n = 0; i < h->ngpu; i++)
		if (in_window(h->gpu[i].ts_ns, from, to))
			h->gpu[n++] = h->gpu[i];
	h->ngpu = n;
}

void collector__replay_window_close(struct collector *c, __u64 from, __u64 to, int phase)
{
	struct model *m = c->m;
	struct history *h = &m->history;
	__u64 since, *s, *b;
	unsigned int i, j, n;

	if (!m->finished || m->end_ns > to)
		m->end_ns = m->end_ns > to || !m->finished ? to : m->end_ns;
	m->finished = true;
	/* the open interval of the timeline becomes a closed one, to be clipped */
	since = h->niv ? h->iv[h->niv - 1].end_ns : m->start_ns;
	if (m->end_ns > since)
		history__add_interval(h, m->cur_phase, m->focus_pid ? m->focus_pid : m->root_pid,
				      since, m->end_ns);
	if (from < m->start_ns)
		from = m->start_ns;
	clip_history(h, from, m->end_ns, phase);
	/* the counters are totals: what the window added is the difference */
	for (i = 0; c->base && i < MP_MAX_PHASES; i++) {
		s = (__u64 *)&m->stats[i];
		b = (__u64 *)&c->base->stats[i];
		for (j = 0; j < sizeof(m->stats[i]) / sizeof(__u64); j++)
			s[j] = s[j] >= b[j] ? s[j] - b[j] : 0;
		m->psi_some_us[i] -= m->psi_some_us[i] >= c->base->psi_some_us[i] ?
				     c->base->psi_some_us[i] : m->psi_some_us[i];
		m->psi_full_us[i] -= m->psi_full_us[i] >= c->base->psi_full_us[i] ?
				     c->base->psi_full_us[i] : m->psi_full_us[i];
	}
	if (c->base) {
		m->origins_lost = counted_since(m->origins_lost, c->base->origins_lost);
		m->origins_capped = counted_since(m->origins_capped, c->base->origins_capped);
		m->origins_same = counted_since(m->origins_same, c->base->origins_same);
		m->origins.arenas = counted_since(m->origins.arenas, c->base->arenas);
		m->gpu.allocs_full = counted_since(m->gpu.allocs_full, c->base->allocs_full);
		m->gpu.unread = counted_since(m->gpu.unread, c->base->unread);
	}
	/* origins from before the window still name what grew in it; counted from its start */
	m->origins.since_ns = from;
	model_gpu__window_close(&m->gpu, phase);
	memset(m->time_ns, 0, sizeof(m->time_ns));
	for (i = 0; i < h->niv; i++)
		if (h->iv[i].phase < MP_MAX_PHASES)
			m->time_ns[h->iv[i].phase] += h->iv[i].end_ns - h->iv[i].start_ns;
	h->closed = true;
	m->start_ns = from;
	for (i = n = 0; i < m->nooms; i++)
		if (in_window(m->ooms[i].ts_ns, from, m->end_ns) &&
		    (phase < 0 || m->ooms[i].phase == (__u32)phase))
			m->ooms[n++] = m->ooms[i];
	m->nooms = n;
	/* phases the window saw nothing of are left out of the tables */
	for (i = n = 0; i < m->norder; i++) {
		const struct mp_phase_stats *st = &m->stats[m->order[i]];
		bool seen = m->time_ns[m->order[i]] || st->calls || st->faults;
		int k;

		for (k = 0; k < MP_NR_CLASSES; k++)
			seen |= st->growth[k] || st->shrink[k];
		if (seen)
			m->order[n++] = m->order[i];
	}
	m->norder = n;
	if (phase < 0)
		return;
	/* one phase: the others are left out */
	for (i = 0; i < MP_MAX_PHASES; i++) {
		if ((int)i == phase)
			continue;
		memset(&m->stats[i], 0, sizeof(m->stats[i]));
		m->time_ns[i] = m->samples[i] = m->sampled_bytes[i] = 0;
		m->psi_some_us[i] = m->psi_full_us[i] = 0;
		m->ntop[i] = 0;
	}
	m->order[0] = phase;
	m->norder = 1;
}
