// SPDX-License-Identifier: GPL-2.0
/* The recording: the collector's inputs as typed records (see record.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "collect/record.h"
#include "collect/stacks.h"
#include "lib/recfile.h"
#include "lib/strmap.h"
#include "lib/util.h"

#define FLUSH_NS	1000000000ULL	/* a chunk at least every second */

struct shadow_proc {
	__u32 pid;
	bool forgotten;
	__s64 rss[MP_NR_CLASSES], peak[MP_NR_CLASSES], peak_total;
	__u64 peak_ns;
};

struct recorder {
	struct recfile_writer *w;
	__u64 max_bytes;
	__u64 last_flush_ns;
	__u64 thinned;
	__u64 nticks;
	struct recbuf b;
	struct strmap strings;		/* string -> id + 1 */
	__u32 nstrings;
	/* what was recorded last, to record only changes */
	struct mp_phase_stats stats[MP_MAX_PHASES];
	struct shadow_proc procs[MODEL_MAX_PROCS];
	__u64 drops[REC_DROPS_N];
	struct recbuf maps;		/* the mapping pass being built */
	struct recbuf map_origins;	/* and the origin id of each of its mappings */
	__u32 nmaps;
	__u32 maps_crc;
	bool have_maps;
};

struct recorder *recorder__new(const struct recorder_opts *o)
{
	struct recorder *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->w = recfile_writer__new(o->fd);
	if (!r->w) {
		int err = errno;

		free(r);
		errno = err;
		return NULL;
	}
	r->max_bytes = o->max_bytes;
	strmap__init(&r->strings, NULL);
	return r;
}

int recorder__free(struct recorder *r)
{
	int err;

	if (!r)
		return 0;
	err = recfile_writer__free(r->w);
	recbuf__free(&r->b);
	recbuf__free(&r->maps);
	recbuf__free(&r->map_origins);
	strmap__free(&r->strings);
	free(r);
	return err;
}

int recorder__flush(struct recorder *r)
{
	return r ? recfile_writer__flush(r->w) : 0;
}

void recorder__poll(struct recorder *r, __u64 now_ns)
{
	if (!r || now_ns - r->last_flush_ns < FLUSH_NS)
		return;
	recfile_writer__flush(r->w);
	r->last_flush_ns = now_ns;
}

__u64 recorder__bytes(const struct recorder *r)
{
	return r ? recfile_writer__bytes(r->w) : 0;
}

__u64 recorder__thinned(const struct recorder *r)
{
	return r ? r->thinned : 0;
}

/*
 * --record-max: past half the budget, RSS ticks and counter snapshots are kept one in
 * 2, then 4, 8, ... as the file fills (the counters are totals: a later snapshot holds
 * everything an earlier one did). Events, OOM records and the end are always written.
 */
static bool thin_out(struct recorder *r)
{
	__u64 used = recfile_writer__bytes(r->w), step;
	unsigned int shift;

	if (!r->max_bytes || used < r->max_bytes / 2)
		return false;
	shift = used >= r->max_bytes ? 10 : 1 + (used - r->max_bytes / 2) * 16 / r->max_bytes;
	step = 1ULL << (shift > 10 ? 10 : shift);
	if (r->nticks % step) {
		r->thinned++;
		return true;
	}
	return false;
}

static void start(struct recorder *r)
{
	recbuf__reset(&r->b);
}

static void put(struct recorder *r, enum rec_type type)
{
	if (!r->b.failed)
		recfile_writer__add(r->w, type, r->b.data, r->b.len);
}

/* The id of s, written as a REC_STRING record the first time. */
static __u32 string_id(struct recorder *r, const char *s)
{
	struct strmap_entry *e = strmap__find(&r->strings, s ? s : "");
	struct recbuf b = {};

	if (e)
		return e->value - 1;
	e = strmap__get(&r->strings, s ? s : "");
	if (!e)
		return 0;
	e->value = ++r->nstrings;
	recbuf__u32(&b, e->value - 1);
	recbuf__str(&b, s);
	if (!b.failed)
		recfile_writer__add(r->w, REC_STRING, b.data, b.len);
	recbuf__free(&b);
	return e->value - 1;
}

void recorder__begin(struct recorder *r, const struct model *m, int mode)
{
	unsigned int i, argc = 0;

	if (!r)
		return;
	start(r);
	recbuf__u32(&r->b, m->root_pid);
	recbuf__u32(&r->b, mode);
	recbuf__u64(&r->b, m->start_ns);
	recbuf__u32(&r->b, m->nphases);
	for (i = 0; i < m->nphases; i++)
		recbuf__str(&r->b, m->names[i]);
	while (m->argv && m->argv[argc])
		argc++;
	recbuf__u32(&r->b, argc);
	for (i = 0; i < argc; i++)
		recbuf__str(&r->b, m->argv[i]);
	/* appended later: a reader that stops at argv still reads the rest */
	recbuf__u64(&r->b, m->start_wall_ns);
	put(r, REC_BEGIN);
}

static void put_u64(struct recorder *r, enum rec_type type, __u64 v)
{
	if (!r)
		return;
	start(r);
	recbuf__u64(&r->b, v);
	put(r, type);
}

void recorder__started(struct recorder *r, __u64 ts_ns)
{
	put_u64(r, REC_STARTED, ts_ns);
}

void recorder__event(struct recorder *r, const void *data, __u32 len)
{
	if (r)
		recfile_writer__add(r->w, REC_EVENT, data, len);
}

void recorder__sample(struct recorder *r, const struct stacks_sample *s)
{
	__u32 i, comm;

	if (!r)
		return;
	/* past the budget, samples go (counted): the counters still say what grew */
	if (r->max_bytes && recfile_writer__bytes(r->w) >= r->max_bytes) {
		r->thinned++;
		return;
	}
	comm = string_id(r, s->comm);
	for (i = 0; i < s->nframes; i++)
		string_id(r, s->frames[i]);
	start(r);
	recbuf__u32(&r->b, s->pid);
	recbuf__u32(&r->b, s->tid);
	recbuf__u32(&r->b, s->phase);
	recbuf__u64(&r->b, s->ts_ns);
	recbuf__u64(&r->b, s->weight);
	recbuf__u8(&r->b, s->unwind_failed);
	recbuf__u32(&r->b, comm);
	recbuf__u32(&r->b, s->nframes);
	for (i = 0; i < s->nframes; i++)
		recbuf__u32(&r->b, string_id(r, s->frames[i]));
	recbuf__u32(&r->b, s->nips);
	for (i = 0; i < s->nips; i++)
		recbuf__u64(&r->b, s->ips[i]);
	/* after what the first readers knew: the sample's class and address, its CPU */
	recbuf__u32(&r->b, s->cls);
	recbuf__u64(&r->b, s->addr);
	recbuf__u32(&r->b, s->cpu);
	put(r, REC_SAMPLE);
}

void recorder__origin(struct recorder *r, const struct stacks_sample *s)
{
	__u32 i, comm;

	if (!r)
		return;
	comm = string_id(r, s->comm);
	for (i = 0; i < s->nframes; i++)
		string_id(r, s->frames[i]);
	start(r);
	recbuf__u64(&r->b, s->ts_ns);
	recbuf__u32(&r->b, s->pid);
	recbuf__u32(&r->b, s->tid);
	recbuf__u32(&r->b, s->phase);
	recbuf__u64(&r->b, s->addr);
	recbuf__u64(&r->b, s->weight);
	recbuf__u32(&r->b, s->map_how);
	recbuf__u32(&r->b, s->map_prot);
	recbuf__u32(&r->b, comm);
	recbuf__u32(&r->b, s->nframes);
	for (i = 0; i < s->nframes; i++)
		recbuf__u32(&r->b, string_id(r, s->frames[i]));
	put(r, REC_ORIGIN);
}

void recorder__alloc(struct recorder *r, const void *data, __u32 len)
{
	if (r)
		recfile_writer__add(r->w, REC_ALLOC, data, len);
}

static void counters(struct recorder *r, const struct model *m, bool always)
{
	/* the first six are what the first readers knew */
	__u64 drops[REC_DROPS_N] = { m->lost_kernel, m->lost_stacks, m->mapping_lost_bytes,
				     m->vma_busy, m->mappings_full, m->stacks_capped,
				     m->vma_deferred, m->origins_lost, m->origins_capped,
				     m->origins_same, m->gpu.allocs_full, m->gpu.unread };
	unsigned int i;

	if (!always && thin_out(r))
		return;
	for (i = 0; i < m->nphases && i < MP_MAX_PHASES; i++) {
		/* BPF's counters: a replay applies the relabels itself */
		if (!memcmp(&r->stats[i], &m->counted[i], sizeof(m->counted[i])))
			continue;
		r->stats[i] = m->counted[i];
		start(r);
		recbuf__u32(&r->b, i);
		recbuf__u32(&r->b, sizeof(m->counted[i]));
		recbuf__put(&r->b, &m->counted[i], sizeof(m->counted[i]));
		put(r, REC_STATS);
	}
	for (i = 0; i < m->nprocs; i++) {
		const struct model_proc *p = &m->procs[i];
		struct shadow_proc *sp = &r->procs[i];
		int c;

		if (sp->pid == p->pid && !memcmp(sp->rss, p->rss, sizeof(p->rss)) &&
		    !memcmp(sp->peak, p->peak, sizeof(p->peak)) && sp->peak_total == p->peak_total &&
		    sp->peak_ns == p->peak_ns)
			continue;
		sp->pid = p->pid;
		memcpy(sp->rss, p->rss, sizeof(p->rss));
		memcpy(sp->peak, p->peak, sizeof(p->peak));
		sp->peak_total = p->peak_total;
		sp->peak_ns = p->peak_ns;
		start(r);
		recbuf__u32(&r->b, p->pid);
		for (c = 0; c < MP_NR_CLASSES; c++)
			recbuf__u64(&r->b, p->rss[c]);
		for (c = 0; c < MP_NR_CLASSES; c++)
			recbuf__u64(&r->b, p->peak[c]);
		recbuf__u64(&r->b, p->peak_total);
		/* added later: older readers stop before it */
		recbuf__u64(&r->b, p->peak_ns);
		for (c = 0; c < MP_NR_CLASSES; c++)
			recbuf__u64(&r->b, p->peak_rss[c]);
		put(r, REC_RSS);
	}
	if (memcmp(drops, r->drops, sizeof(drops))) {
		memcpy(r->drops, drops, sizeof(drops));
		start(r);
		for (i = 0; i < REC_DROPS_N; i++)
			recbuf__u64(&r->b, drops[i]);
		put(r, REC_DROPS);
	}
}

void recorder__counters(struct recorder *r, const struct model *m)
{
	if (r)
		counters(r, m, false);
}

void recorder__tick(struct recorder *r, const struct model *m, __u64 now_ns)
{
	if (!r)
		return;
	if (!thin_out(r))
		put_u64(r, REC_TICK, now_ns);
	r->nticks++;
}

void recorder__forgotten(struct recorder *r, const struct model *m)
{
	unsigned int i;

	if (!r)
		return;
	for (i = 0; i < m->nprocs; i++) {
		struct shadow_proc *sp = &r->procs[i];

		if (sp->pid != m->procs[i].pid)
			sp->forgotten = false;
		if (!m->procs[i].forgotten || sp->forgotten)
			continue;
		sp->forgotten = true;
		start(r);
		recbuf__u32(&r->b, m->procs[i].pid);
		put(r, REC_FORGET);
	}
}

void recorder__mappings_begin(struct recorder *r)
{
	if (!r)
		return;
	recbuf__reset(&r->maps);
	recbuf__reset(&r->map_origins);
	r->nmaps = 0;
}

void recorder__mapping(struct recorder *r, unsigned int phase, const struct model_mapping *mm)
{
	if (!r)
		return;
	recbuf__u32(&r->maps, phase);
	recbuf__u32(&r->maps, mm->cls);
	recbuf__u32(&r->maps, mm->kind);
	recbuf__u8(&r->maps, mm->deleted);
	recbuf__u64(&r->maps, mm->bytes);
	recbuf__u64(&r->maps, mm->start);
	recbuf__u64(&r->maps, mm->size);
	recbuf__u32(&r->maps, string_id(r, mm->path));
	recbuf__u32(&r->map_origins, mm->origin);
	r->nmaps++;
}

void recorder__mappings_end(struct recorder *r)
{
	__u32 crc;

	if (!r || r->maps.failed || r->map_origins.failed)
		return;
	/* the same counters as last time: nothing new to say */
	crc = crc32(crc32(0L, r->maps.data, r->maps.len), r->map_origins.data,
		    r->map_origins.len) ^ r->nmaps;
	if (r->have_maps && crc == r->maps_crc)
		return;
	r->have_maps = true;
	r->maps_crc = crc;
	start(r);
	recbuf__u32(&r->b, r->nmaps);
	recbuf__put(&r->b, r->maps.data, r->maps.len);
	/* after the entries (readers that do not know it stop before): their origins */
	recbuf__put(&r->b, r->map_origins.data, r->map_origins.len);
	put(r, REC_MAPPINGS);
}

void recorder__mark(struct recorder *r, __u64 ts_ns, __u32 kind, __u32 pid, const char *text)
{
	if (!r)
		return;
	start(r);
	recbuf__u64(&r->b, ts_ns);
	recbuf__u32(&r->b, kind);
	recbuf__u32(&r->b, pid);
	recbuf__str(&r->b, text);
	put(r, REC_MARK);
}

void recorder__sysmem(struct recorder *r, const struct sysmem *sm, __u64 ts_ns)
{
	if (!r)
		return;
	start(r);
	recbuf__u64(&r->b, ts_ns);
	recbuf__u8(&r->b, sm->have_meminfo);
	recbuf__u64(&r->b, sm->mem_total);
	recbuf__u64(&r->b, sm->mem_available);
	recbuf__u64(&r->b, sm->swap_total);
	recbuf__u64(&r->b, sm->swap_free);
	recbuf__u32(&r->b, sm->cg_version);
	recbuf__str(&r->b, sm->cg_path);
	recbuf__u64(&r->b, sm->cg_usage);
	recbuf__u8(&r->b, sm->cg_limited);
	recbuf__str(&r->b, sm->cg_limit_path);
	recbuf__u64(&r->b, sm->cg_limit);
	recbuf__u64(&r->b, sm->cg_limit_usage);
	recbuf__u64(&r->b, sm->cg_reclaimable);
	recbuf__u8(&r->b, sm->have_psi);
	recbuf__f64(&r->b, sm->psi_some_avg10);
	recbuf__f64(&r->b, sm->psi_full_avg10);
	recbuf__u64(&r->b, sm->psi_some_total_us);
	recbuf__u64(&r->b, sm->psi_full_total_us);
	put(r, REC_SYSMEM);
}

void recorder__oom_info(struct recorder *r, const struct model_oom *o)
{
	unsigned int i, c;

	if (!r)
		return;
	start(r);
	recbuf__u64(&r->b, o->ts_ns);
	recbuf__u32(&r->b, o->cgroup_oom);
	recbuf__str(&r->b, o->cgroup);
	recbuf__u64(&r->b, o->cgroup_limit);
	recbuf__u8(&r->b, o->have_window);
	recbuf__f64(&r->b, o->window_s);
	recbuf__u32(&r->b, MP_MAX_PHASES);
	for (i = 0; i < MP_MAX_PHASES; i++)
		for (c = 0; c < MP_NR_CLASSES; c++)
			recbuf__u64(&r->b, o->before[i][c]);
	put(r, REC_OOM_INFO);
	/* an OOM kill is what a recording must not lose */
	recfile_writer__flush(r->w);
}

void recorder__engine(struct recorder *r, const struct model_engine *e)
{
	unsigned int i;

	if (!r || !e->known)
		return;
	start(r);
	recbuf__u32(&r->b, e->pid);
	recbuf__str(&r->b, e->program);
	recbuf__u32(&r->b, e->nsettings);
	for (i = 0; i < e->nsettings; i++) {
		recbuf__str(&r->b, e->settings[i].name);
		recbuf__str(&r->b, e->settings[i].value);
		recbuf__u32(&r->b, e->settings[i].src);
		recbuf__str(&r->b, e->settings[i].from);
		recbuf__str(&r->b, e->settings[i].what);
		recbuf__str(&r->b, e->settings[i].flag);
	}
	recbuf__u32(&r->b, e->nunknown);
	for (i = 0; i < e->nunknown; i++)
		recbuf__str(&r->b, e->unknown[i]);
	recbuf__str(&r->b, e->flags ? e->flags : "");
	recbuf__str(&r->b, e->deprecated ? e->deprecated : "");
	recbuf__str(&r->b, e->slots_setting);
	recbuf__str(&r->b, e->shared_setting);
	put(r, REC_ENGINE);
}

void recorder__markers(struct recorder *r, unsigned int n, unsigned int alloc_probes)
{
	if (!r)
		return;
	start(r);
	recbuf__u64(&r->b, n);
	recbuf__u32(&r->b, alloc_probes);	/* after what the first readers knew */
	put(r, REC_MARKERS);
}

void recorder__setup(struct recorder *r, const struct model *m, const char *preset,
		     const char *const *allocators, unsigned int nallocators,
		     const char *const *cause_files, const char *const *cause_texts,
		     unsigned int ncause_files)
{
	unsigned int i;

	if (!r)
		return;
	start(r);
	recbuf__u32(&r->b, (__u32)m->request_phase);
	recbuf__u32(&r->b, m->request_idle_mask);
	recbuf__u32(&r->b, m->request_end_mask);
	recbuf__u32(&r->b, m->request_lead_mask);
	recbuf__u8(&r->b, m->request_by_marker);
	recbuf__str(&r->b, preset ? preset : "");
	recbuf__u32(&r->b, nallocators);
	for (i = 0; i < nallocators; i++)
		recbuf__str(&r->b, allocators[i]);
	recbuf__u32(&r->b, ncause_files);
	for (i = 0; i < ncause_files; i++) {
		recbuf__str(&r->b, cause_files[i]);
		recbuf__str(&r->b, cause_texts[i]);
	}
	recbuf__u8(&r->b, m->gpu.nvml);
	recbuf__str(&r->b, m->gpu.nvml_why);
	recbuf__u64(&r->b, m->sample_bytes);	/* after what the first readers knew */
	put(r, REC_SETUP);
}

void recorder__room(struct recorder *r, __u64 ts_ns, bool cg_known, __s64 cg, bool sys_known,
		    __s64 sys)
{
	if (!r)
		return;
	start(r);
	recbuf__u64(&r->b, ts_ns);
	recbuf__u8(&r->b, cg_known);
	recbuf__u64(&r->b, (__u64)cg);
	recbuf__u8(&r->b, sys_known);
	recbuf__u64(&r->b, (__u64)sys);
	put(r, REC_ROOM);
}

void recorder__vram(struct recorder *r, __u64 ts_ns, __u32 phase,
		    const struct model_gpu_device *dev, unsigned int n)
{
	if (!r)
		return;
	start(r);
	recbuf__u64(&r->b, ts_ns);
	recbuf__u32(&r->b, phase);
	recbuf__u32(&r->b, sizeof(*dev));
	recbuf__u32(&r->b, n);
	recbuf__put(&r->b, dev, n * sizeof(*dev));
	put(r, REC_VRAM);
}

void recorder__root_comm(struct recorder *r, __u32 pid, const char *comm)
{
	if (!r)
		return;
	start(r);
	recbuf__u32(&r->b, pid);
	recbuf__str(&r->b, comm);
	put(r, REC_ROOT_COMM);
}

void recorder__stop_reason(struct recorder *r, const char *why)
{
	if (!r)
		return;
	start(r);
	recbuf__str(&r->b, why);
	put(r, REC_STOP_REASON);
}

void recorder__unmatched(struct recorder *r, const struct model_unmatched *u)
{
	if (!r)
		return;
	start(r);
	recbuf__str(&r->b, u->phase);
	recbuf__str(&r->b, u->binary);
	recbuf__str(&r->b, u->symbol);
	recbuf__str(&r->b, u->reason);
	put(r, REC_UNMATCHED);
}

void recorder__profile(struct recorder *r, const struct profile *p)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < p->nmaps; i++)
		string_id(r, p->maps[i].path);
	start(r);
	recbuf__u32(&r->b, p->nprocs);
	for (i = 0; i < p->nprocs; i++) {
		recbuf__u32(&r->b, p->procs[i].pid);
		recbuf__str(&r->b, p->procs[i].comm);
	}
	recbuf__u32(&r->b, p->nmaps);
	for (i = 0; i < p->nmaps; i++) {
		const struct profile_map *pm = &p->maps[i];
		int n = pm->build_id_len > 0 && pm->build_id_len <= 20 ? pm->build_id_len : 0;

		recbuf__u32(&r->b, pm->pid);
		recbuf__u64(&r->b, pm->start);
		recbuf__u64(&r->b, pm->end);
		recbuf__u64(&r->b, pm->pgoff);
		recbuf__u32(&r->b, string_id(r, pm->path));
		recbuf__u8(&r->b, n);
		recbuf__put(&r->b, pm->build_id, n);
	}
	put(r, REC_PROFILE);
}

void recorder__bpf_stats(struct recorder *r, const struct model_bpf_stats *st)
{
	unsigned int i;

	if (!r)
		return;
	start(r);
	recbuf__u32(&r->b, st->nprogs);
	for (i = 0; i < st->nprogs; i++) {
		recbuf__str(&r->b, st->progs[i].name);
		recbuf__u64(&r->b, st->progs[i].runs);
		recbuf__u64(&r->b, st->progs[i].run_time_ns);
	}
	put(r, REC_BPF_STATS);
}

void recorder__root_status(struct recorder *r, bool reaped, int wait_status)
{
	if (!r)
		return;
	start(r);
	recbuf__u8(&r->b, reaped);
	recbuf__u32(&r->b, wait_status);
	put(r, REC_ROOT_STATUS);
}

void recorder__finish(struct recorder *r, __u64 end_ns)
{
	put_u64(r, REC_FINISH, end_ns);
	recorder__flush(r);
}

/* The final counters are never thinned out. */
void recorder__counters_all(struct recorder *r, const struct model *m)
{
	if (r)
		counters(r, m, true);
}

void recorder__carry(struct recorder *r, const struct model *m)
{
	unsigned int i;

	if (!r)
		return;
	start(r);
	recbuf__u32(&r->b, m->cur_phase);
	recbuf__u64(&r->b, m->phase_since_ns);
	recbuf__u32(&r->b, m->focus_pid);
	recbuf__u8(&r->b, m->root_phased);
	recbuf__u32(&r->b, m->norder);
	for (i = 0; i < m->norder; i++)
		recbuf__u32(&r->b, m->order[i]);
	recbuf__u32(&r->b, MP_MAX_PHASES);
	recbuf__u32(&r->b, sizeof(struct model_ivl));
	for (i = 0; i < MP_MAX_PHASES; i++) {
		recbuf__u64(&r->b, m->time_ns[i]);
		recbuf__put(&r->b, &m->moved_in[i], sizeof(m->moved_in[i]));
		recbuf__put(&r->b, &m->moved_out[i], sizeof(m->moved_out[i]));
		recbuf__put(&r->b, &m->relabel_acc[i], sizeof(m->relabel_acc[i]));
	}
	recbuf__u64(&r->b, m->relabel_since_ns);
	recbuf__u32(&r->b, m->req_last_phase);
	put(r, REC_CARRY);
}

/* In the model's order: a replay adding them in turn gives each the id the mappings name. */
void recorder__origins(struct recorder *r, const struct origins *o)
{
	struct stacks_sample s = {};
	size_t i;

	if (!r)
		return;
	for (i = 0; i < o->n; i++) {
		const struct origin *e = &o->v[i];
		__u32 k;

		s.ts_ns = e->ts_ns;
		s.pid = e->pid;
		s.tid = e->tid;
		s.phase = e->phase;
		s.addr = e->start;
		s.weight = e->len;
		s.map_how = e->how | e->backing << MP_ORIGIN_BACKING_SHIFT;
		s.map_prot = e->prot;
		s.comm = e->comm;
		s.nframes = e->nframes < STACKS_MAX_FRAMES ? e->nframes : STACKS_MAX_FRAMES;
		for (k = 0; k < s.nframes; k++)
			s.frames[k] = e->frames[k];
		recorder__origin(r, &s);
	}
}
