// SPDX-License-Identifier: GPL-2.0
/* Reading the BPF maps into the model. */
#include <errno.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect/collect.h"
#include "collect/record.h"
#include "collect/cuda.h"
#include "collect/phases.h"
#include "collect/probes.h"
#include "collect/stacks.h"
#include "lib/procmaps.h"
#include "lib/strmap.h"
#include "lib/util.h"
#include "memphase.skel.h"

static int ncpus(void)
{
	static int n;

	if (!n)
		n = libbpf_num_possible_cpus();
	return n;
}

static int collect_stats(struct memphase_bpf *skel, struct model *m)
{
	int fd = bpf_map__fd(skel->maps.stats), n = ncpus(), c, k, h, s;
	struct mp_phase_stats *v, sum;
	__u32 id;

	v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (id = 0; id < m->nphases; id++) {
		if (bpf_map_lookup_elem(fd, &id, v))
			continue;
		memset(&sum, 0, sizeof(sum));
		for (c = 0; c < n; c++) {
			sum.faults += v[c].faults;
			sum.calls += v[c].calls;
			sum.entries += v[c].entries;
			for (k = 0; k < MP_NR_CLASSES; k++) {
				sum.growth[k] += v[c].growth[k];
				sum.shrink[k] += v[c].shrink[k];
			}
			sum.mmap_bytes += v[c].mmap_bytes;
			sum.munmap_bytes += v[c].munmap_bytes;
			sum.brk_bytes += v[c].brk_bytes;
			sum.brk_shrink_bytes += v[c].brk_shrink_bytes;
			sum.reclaim_ns += v[c].reclaim_ns;
			sum.reclaim_count += v[c].reclaim_count;
			sum.reclaimed_pages += v[c].reclaimed_pages;
			for (h = 0; h < MP_NR_HISTS; h++)
				for (s = 0; s < MP_MAX_SLOTS; s++)
					sum.hist[h][s] += v[c].hist[h][s];
		}
		model__set_stats(m, id, &sum);
	}
	free(v);
	return 0;
}

static int cmp_gen(const void *a, const void *b)
{
	const struct mp_mm *x = a, *y = b;

	return x->gen < y->gen ? -1 : x->gen > y->gen;
}

/* The used slots of mms (an array: see struct mp_mm), read into v (MP_MAX_MMS entries) and
 * packed at its start: how many. */
static int mms_read(int fd, struct mp_mm *v)
{
	static __u32 keys[MP_MAX_MMS];
	__u32 count = MP_MAX_MMS, out, i;
	int n = 0, err;

	err = bpf_map_lookup_batch(fd, NULL, &out, keys, v, &count, NULL);
	if (err && err != -ENOENT) {
		/* no batch operations: one lookup per slot */
		for (i = 0, count = 0; i < MP_MAX_MMS; i++)
			if (!bpf_map_lookup_elem(fd, &i, &v[count]))
				count++;
	}
	for (i = 0; i < count && i < MP_MAX_MMS; i++)
		if (v[i].tgid && (v[i].seeded & MP_MM_READY))
			v[n++] = v[i];
	return n;
}

/* Frees an entry of mms (found by its id: the slot of a copy read earlier). */
static void mms_free(int fd, const struct mp_mm *mm)
{
	static const struct mp_mm zero;
	struct mp_mm cur;
	__u32 i, slot;

	for (i = 0; i < MP_MM_PROBES; i++) {
		slot = (mm->mm_id + i) & (MP_MAX_MMS - 1);
		if (!bpf_map_lookup_elem(fd, &slot, &cur) && cur.tgid == mm->tgid &&
		    cur.mm_id == mm->mm_id && cur.gen == mm->gen) {
			bpf_map_update_elem(fd, &slot, &zero, BPF_ANY);
			return;
		}
	}
}

/*
 * Adds to each of the n address spaces of v its CPUs' shares of its size (see struct
 * mp_mm_pc), and raises its peaks to the sizes now (the BPF side raises them at shrinks).
 */
static int mms_add_shares(struct memphase_bpf *skel, struct mp_mm *v, int n)
{
	int fd = bpf_map__fd(skel->maps.mmpc), nc = ncpus(), i, c, k;
	struct mp_mm_pc *pc;
	__s64 total;
	__u32 slot;

	pc = calloc((size_t)nc * MP_MMPC_SLOTS, sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	for (slot = 0; slot < MP_MMPC_SLOTS; slot++)
		if (bpf_map_lookup_elem(fd, &slot, &pc[(size_t)slot * nc]))
			memset(&pc[(size_t)slot * nc], 0, nc * sizeof(*pc));
	for (i = 0; i < n; i++) {
		const struct mp_mm_pc *s = &pc[(size_t)(v[i].mm_id % MP_MMPC_SLOTS) * nc];

		for (c = 0; c < nc; c++)
			if (s[c].seq && s[c].seq == v[i].seq && s[c].mm_id == v[i].mm_id)
				for (k = 0; k < MP_NR_CLASSES; k++)
					v[i].rss[k] += s[c].part[k];
		for (k = 0; k < MP_NR_CLASSES; k++)
			if (v[i].rss[k] > v[i].peak[k])
				v[i].peak[k] = v[i].rss[k];
		total = v[i].rss[MP_FILE] + v[i].rss[MP_ANON] + v[i].rss[MP_SHMEM];
		if (total > v[i].peak_total)
			v[i].peak_total = total;
	}
	free(pc);
	return 0;
}

/*
 * A process has one address space per image it ran (exec replaces it): peaks count
 * over all of them, the current RSS is the newest image's (applied last). Images that
 * were replaced and are empty again are dropped from the map.
 */
static int collect_mms(struct memphase_bpf *skel, struct model *m)
{
	int fd = bpf_map__fd(skel->maps.mms);
	struct mp_mm *v;
	int n, i, j, err;

	v = calloc(MP_MAX_MMS, sizeof(*v));
	if (!v)
		return -ENOMEM;
	n = mms_read(fd, v);
	err = mms_add_shares(skel, v, n);
	if (err) {
		free(v);
		return err;
	}
	qsort(v, n, sizeof(*v), cmp_gen);
	for (i = 0; i < n; i++) {
		bool newer = false;

		model__set_rss(m, v[i].tgid, v[i].rss, v[i].peak, v[i].peak_total);
		for (j = i + 1; j < n && !newer; j++)
			newer = v[j].tgid == v[i].tgid;
		if (newer && !v[i].rss[MP_ANON] && !v[i].rss[MP_FILE] && !v[i].rss[MP_SHMEM])
			mms_free(fd, &v[i]);
	}
	free(v);
	return 0;
}

/* The drop counters, summed over the CPUs (every field of mp_drops is a __u64 count). */
static void drops_sum(const struct mp_drops *v, int n, struct mp_drops *sum)
{
	const size_t words = sizeof(*sum) / sizeof(__u64);
	__u64 *d = (__u64 *)sum;
	size_t i;
	int c;

	_Static_assert(sizeof(struct mp_drops) % sizeof(__u64) == 0, "mp_drops: __u64 fields");
	memset(sum, 0, sizeof(*sum));
	for (c = 0; c < n; c++)
		for (i = 0; i < words; i++)
			d[i] += ((const __u64 *)&v[c])[i];
}

/*
 * Mapping growth the threads sent in batches (MP_EV_MAPLOG), one entry per key once
 * compacted. At most MAPLOG_MAX_KEYS keys (as many as the BPF mappings hash holds): the
 * growth of further keys is kept under its phase and class's [unknown], and counted.
 */
#define MAPLOG_MAX_KEYS		65536
#define MAPLOG_COMPACT		16384	/* entries added before they are merged by key */

struct collect_maplog {
	struct map_sum *v;
	size_t n, cap;
	size_t nsorted;		/* v[0, nsorted): sorted, one per key */
	__u64 full;		/* entries kept under [unknown] for want of room */
};

static int collect_drops(struct memphase_bpf *skel, struct collect_maplog *ml,
			 struct model *m)
{
	int fd = bpf_map__fd(skel->maps.drops), n = ncpus();
	struct mp_drops *v, d = {};
	__u32 zero = 0;

	v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (!bpf_map_lookup_elem(fd, &zero, v))
		drops_sum(v, n, &d);
	m->lost_kernel = d.ringbuf + d.targets_full + d.mms_full + d.allocs_full + d.rss_unread;
	m->gpu.allocs_full = d.allocs_full;
	m->gpu.unread = d.alloc_unread;
	m->lost_stacks = d.stacks;
	m->mapping_lost_bytes = d.mapping_lost_bytes;
	m->vma_busy = d.vma_busy;
	m->vma_deferred = d.vma_deferred;
	m->mappings_full = d.mappings_full + (ml ? ml->full : 0);
	m->stacks_capped = d.stacks_capped;
	m->origins_lost = d.origins;
	m->origins_capped = d.origins_capped;
	m->origins_same = d.origins_same;
	free(v);
	return 0;
}

/* Per-process peaks, kept with the process (its address spaces' entries may be gone). */
static void collect_peaks(struct memphase_bpf *skel, struct model *m)
{
	struct mp_target t;
	unsigned int i;
	__u32 slot;

	for (i = 0; i < m->nprocs; i++) {
		struct model_proc *p = &m->procs[i];

		if (p->forgotten)
			continue;
		slot = p->pid % MP_TSLOTS;
		if (bpf_map__lookup_elem(skel->maps.tslots, &slot, sizeof(slot), &t, sizeof(t), 0) ||
		    (t.tgid != p->pid &&
		     bpf_map__lookup_elem(skel->maps.targets, &p->pid, sizeof(p->pid), &t,
					  sizeof(t), 0)))
			continue;
		model__raise_peaks(m, p->pid, t.peak, t.peak_total);
	}
}

int collect__maps(struct memphase_bpf *skel, struct collect_maplog *ml, struct model *m)
{
	int err;

	err = collect_stats(skel, m);
	if (!err)
		err = collect_mms(skel, m);
	if (!err)
		collect_peaks(skel, m);
	if (!err)
		err = collect_drops(skel, ml, m);
	return err;
}

/* What paths caches per "dev:ino" (kernel dev_t numbering); one block, free() frees it. */
struct known_file {
	bool deleted;
	char path[];
};

static void paths_add(struct strmap *paths, const char *key, const char *path, bool deleted)
{
	struct strmap_entry *e;
	struct known_file *k;
	size_t n = strlen(path);

	if (strmap__find(paths, key))
		return;
	k = malloc(sizeof(*k) + n + 1);
	if (!k)
		return;
	k->deleted = deleted;
	memcpy(k->path, path, n + 1);
	e = strmap__get(paths, key);
	if (!e) {
		free(k);
		return;
	}
	e->value = (uintptr_t)k;
}

/* Caches every file mapping of pid as "dev:ino" -> its exact path (read as the user). */
static void paths_learn(struct strmap *paths, struct userfs *fs, __u32 pid)
{
	struct procmaps *pm = procmaps__open_as(pid, fs);
	struct procmaps_entry e;
	char key[64];

	if (!pm)
		return;
	while (procmaps__next(pm, &e) > 0) {
		if (!e.inode || e.path[0] != '/')
			continue;
		snprintf(key, sizeof(key), "%" PRIu64 ":%" PRIu64,
			 (uint64_t)(((__u64)e.dev_major << 20) | e.dev_minor), e.inode);
		paths_add(paths, key, e.path, e.deleted);
	}
	procmaps__close(pm);
}

/*
 * A kernel mapping's name from its key: the BPF side puts the first 8 bytes of its struct
 * vm_special_mapping's name ("[uprobes]", "[vdso]") in place of the inode. False when
 * they do not read as one (another kind of VMA without a file).
 */
static bool special_name(const struct mp_map_key *k, char *buf, size_t len)
{
	char n[sizeof(k->ino) + 1] = "";
	size_t i;

	memcpy(n, &k->ino, sizeof(k->ino));
	if (n[0] != '[')
		return false;
	for (i = 1; n[i]; i++)
		if (n[i] < 0x20 || n[i] > 0x7e)
			return false;
	/* cut at 8 bytes: the closing bracket is put back */
	snprintf(buf, len, "%s%s", n, n[i - 1] == ']' ? "" : "]");
	return true;
}

/* Was the file of this mapping deleted since its name was learned? Its live VMA tells. */
static bool file_gone(const struct mp_map_key *k, const struct mp_map_val *v)
{
	char link[96];
	struct stat st;

	if (v->vm_end <= v->vm_start)
		return false;
	snprintf(link, sizeof(link), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, v->tgid,
		 (uint64_t)v->vm_start, (uint64_t)v->vm_end);
	return !stat(link, &st) && st.st_ino == k->ino && !st.st_nlink;
}

static void mapping_name(struct strmap *paths, struct userfs *fs, const struct mp_map_key *k,
			 const struct mp_map_val *v, struct model_mapping *mm)
{
	struct known_file *kf;
	struct strmap_entry *e;
	char key[64], sz[24], *buf = mm->path;
	size_t len = sizeof(mm->path);

	switch (k->kind) {
	case MP_MAP_HEAP:
		snprintf(buf, len, "[heap]");
		return;
	case MP_MAP_STACK:
		snprintf(buf, len, "[stack]");
		return;
	case MP_MAP_THREAD_STACK:
		snprintf(buf, len, "[thread stacks]");
		return;
	case MP_MAP_ANON:
		snprintf(buf, len, "[anon 0x%" PRIx64 " %s]", (uint64_t)k->start,
			 util__fmt_bytes(sz, sizeof(sz), v->vm_end - v->vm_start));
		return;
	case MP_MAP_SPECIAL:
		if (!special_name(k, buf, len))
			snprintf(buf, len, "[kernel mapping 0x%" PRIx64 " %s]", (uint64_t)k->start,
				 util__fmt_bytes(sz, sizeof(sz), v->vm_end - v->vm_start));
		return;
	case MP_MAP_FILE:
	case MP_MAP_SHMEM:
	case MP_MAP_DEVICE:
		snprintf(key, sizeof(key), "%" PRIu64 ":%" PRIu64, (uint64_t)k->dev,
			 (uint64_t)k->ino);
		e = strmap__find(paths, key);
		if (!e) {
			paths_learn(paths, fs, v->tgid);
			e = strmap__find(paths, key);
		}
		kf = e ? (struct known_file *)(uintptr_t)e->value : NULL;
		if (kf && !kf->deleted)
			kf->deleted = file_gone(k, v);
		if (kf) {
			snprintf(buf, len, "%s", kf->path);
			mm->deleted = kf->deleted;
		} else {
			snprintf(buf, len, "[%s %" PRIu64 ":%" PRIu64 " inode %" PRIu64 "]",
				 model__kind_name(k->kind), (uint64_t)(k->dev >> 20),
				 (uint64_t)(k->dev & 0xfffff), (uint64_t)k->ino);
		}
		return;
	default:
		snprintf(buf, len, "[unknown]");
	}
}

/* The origin learns its mapping's path (for `mapping` cause rules). */
static void origin_name(struct model *m, __u32 id, const char *path)
{
	struct origin *o = id ? &m->origins.v[id - 1] : NULL;

	if (o && !o->path && path[0] == '/')
		o->path = profile__intern(&m->profile, path);
}

void collect__mappings_clear(struct model *m)
{
	model__clear_mappings(m);
	for (size_t i = 0; i < m->origins.n; i++)
		m->origins.v[i].grown = 0;
}

void collect__mapping_origin(struct model *m, const struct model_mapping *mm)
{
	if (!mm->origin || mm->origin > m->origins.n)
		return;
	origin_name(m, mm->origin, mm->path);
	m->origins.v[mm->origin - 1].grown += mm->bytes;
}

/* A key's growth in the threads' batches, summed. */
struct map_sum {
	struct mp_map_key key;
	struct mp_map_val val;
	bool merged;		/* added to the key's entry in mappings */
};

static int map_sum_cmp(const void *a, const void *b)
{
	return memcmp(&((const struct map_sum *)a)->key, &((const struct map_sum *)b)->key,
		      sizeof(struct mp_map_key));
}

/* a's VMA (and process) for b's when b's is the larger: each CPU keeps the last one it saw */
static void vma_keep_larger(struct mp_map_val *a, const struct mp_map_val *b)
{
	if (b->vm_end > b->vm_start && b->vm_end - b->vm_start > a->vm_end - a->vm_start) {
		a->vm_start = b->vm_start;
		a->vm_end = b->vm_end;
		a->tgid = b->tgid;
	}
	if (!a->tgid)
		a->tgid = b->tgid;
}

/* v[0, *n) sorted by key, one entry per key (the same key's bytes added up) */
static void sums_merge(struct map_sum *v, size_t *n)
{
	size_t i, j;

	if (*n)
		qsort(v, *n, sizeof(*v), map_sum_cmp);
	for (i = 0, j = 0; i < *n; i++) {
		if (j && !map_sum_cmp(&v[j - 1], &v[i])) {
			v[j - 1].val.bytes += v[i].val.bytes;
			vma_keep_larger(&v[j - 1].val, &v[i].val);
			continue;
		}
		v[j++] = v[i];
	}
	*n = j;
}

struct collect_maplog *collect__maplog_new(void)
{
	return calloc(1, sizeof(struct collect_maplog));
}

void collect__maplog_free(struct collect_maplog *ml)
{
	if (!ml)
		return;
	free(ml->v);
	free(ml);
}

static void maplog_compact(struct collect_maplog *ml)
{
	sums_merge(ml->v, &ml->n);
	ml->nsorted = ml->n;
}

int collect__maplog_add(struct collect_maplog *ml, const void *data, size_t len)
{
	const struct mp_maplog_event *e = data;
	const size_t head = offsetof(struct mp_maplog_event, r);
	struct map_sum s;
	__u32 i;
	int err;

	if (len < head || e->type != MP_EV_MAPLOG || e->n > MP_MAPLOG_LEN ||
	    len < head + e->n * sizeof(e->r[0]))
		return -EINVAL;
	for (i = 0; i < e->n; i++) {
		const struct mp_map_rec *r = &e->r[i];

		memset(&s, 0, sizeof(s));
		s.key.phase = r->phase;
		s.key.cls = r->cls;
		s.key.kind = r->kind;
		s.key.dev = r->dev;
		s.key.ino = r->ino;
		s.key.start = r->start;
		s.val.bytes = r->bytes;
		s.val.tgid = e->tgid;
		if (r->kind != MP_MAP_UNKNOWN) {
			s.val.vm_start = r->vm_start;
			s.val.vm_end = r->vm_start + ((__u64)r->vm_pages << 12);
		}
		if (ml->nsorted >= MAPLOG_MAX_KEYS &&
		    !bsearch(&s, ml->v, ml->nsorted, sizeof(s), map_sum_cmp)) {
			memset(&s.key, 0, sizeof(s.key));
			s.key.phase = r->phase;
			s.key.cls = r->cls;
			s.val.vm_start = s.val.vm_end = 0;
			ml->full++;
		}
		err = util__grow((void **)&ml->v, &ml->cap, ml->n, sizeof(*ml->v));
		if (err)
			return err;
		ml->v[ml->n++] = s;
	}
	if (ml->n - ml->nsorted >= MAPLOG_COMPACT)
		maplog_compact(ml);
	return 0;
}

__u64 collect__maplog_bytes(struct collect_maplog *ml, const struct mp_map_key *key,
			   __u64 *full)
{
	struct map_sum probe, *e;

	*full = ml->full;
	maplog_compact(ml);
	memset(&probe, 0, sizeof(probe));
	probe.key = *key;
	e = ml->n ? bsearch(&probe, ml->v, ml->n, sizeof(*ml->v), map_sum_cmp) : NULL;
	return e ? e->val.bytes : 0;
}

/*
 * The threads' batches in ml (NULL: none): the keys they hold, one entry per key with the
 * bytes of all, sorted by key, into *out (NULL when none).
 */
static int batches_read(struct collect_maplog *ml, struct map_sum **out, size_t *nout)
{
	struct map_sum *v;

	*out = NULL;
	*nout = 0;
	if (!ml || !ml->n)
		return 0;
	maplog_compact(ml);
	v = malloc(ml->n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memcpy(v, ml->v, ml->n * sizeof(*v));
	*out = v;
	*nout = ml->n;
	return 0;
}

static void mapping_offer(struct model *m, struct strmap *paths, struct userfs *fs,
			  struct recorder *rec, const struct mp_map_key *key,
			  const struct mp_map_val *v)
{
	struct model_mapping mm;

	memset(&mm, 0, sizeof(mm));
	mapping_name(paths, fs, key, v, &mm);
	mm.cls = key->cls;
	mm.kind = key->kind;
	mm.bytes = v->bytes;
	mm.start = v->vm_start;
	mm.size = v->vm_end > v->vm_start ? v->vm_end - v->vm_start : 0;
	mm.origin = key->kind != MP_MAP_UNKNOWN ?
		    origins__find(&m->origins, v->tgid, key->kind, v->vm_start) : 0;
	collect__mapping_origin(m, &mm);
	model__offer_mapping(m, key->phase, &mm);
	recorder__mapping(rec, key->phase, &mm);
}

/*
 * Every mapping's growth: its entry in the mappings hash plus what the threads' batches
 * brought user space (a key may be in either or both).
 */
int collect__mappings(struct memphase_bpf *skel, struct collect_maplog *ml, struct model *m,
		      struct strmap *paths, struct userfs *fs, struct recorder *rec)
{
	int fd = bpf_map__fd(skel->maps.mappings), err;
	struct mp_map_key key, next, *prev = NULL;
	struct map_sum *slots, *e, probe;
	struct mp_map_val v;
	size_t nslots, i;

	err = batches_read(ml, &slots, &nslots);
	if (err)
		fprintf(stderr, "failed to read mapping batches: %s\n", strerror(-err));
	collect__mappings_clear(m);
	recorder__mappings_begin(rec);
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		probe.key = key;
		e = nslots ? bsearch(&probe, slots, nslots, sizeof(*slots), map_sum_cmp) : NULL;
		if (e) {
			/* the batches saw the key last: their VMA, unless the hash's is larger */
			v.bytes += e->val.bytes;
			vma_keep_larger(&e->val, &v);
			v.vm_start = e->val.vm_start;
			v.vm_end = e->val.vm_end;
			v.tgid = e->val.tgid;
			e->merged = true;
		}
		mapping_offer(m, paths, fs, rec, &key, &v);
	}
	for (i = 0; i < nslots; i++) {
		if (!slots[i].merged)
			mapping_offer(m, paths, fs, rec, &slots[i].key, &slots[i].val);
	}
	recorder__mappings_end(rec);
	free(slots);
	return 0;
}

int collect__file_name(const struct strmap *paths, __u64 dev, __u64 ino, char *buf,
		       size_t size)
{
	struct strmap_entry *e;
	char key[64];

	snprintf(key, sizeof(key), "%" PRIu64 ":%" PRIu64, (uint64_t)dev, (uint64_t)ino);
	e = strmap__find(paths, key);
	if (!e || !e->value)
		return -ENOENT;
	snprintf(buf, size, "%s", ((struct known_file *)(uintptr_t)e->value)->path);
	return 0;
}

void collect__learn_file(struct strmap *paths, const char *path, const char *name)
{
	char key[64], *exact = NULL;
	struct stat st;
	size_t n = strlen(name), d = strlen(" (deleted)");

	if (stat(path, &st))
		return;
	snprintf(key, sizeof(key), "%" PRIu64 ":%" PRIu64,
		 (uint64_t)(((__u64)major(st.st_dev) << 20) | minor(st.st_dev)),
		 (uint64_t)st.st_ino);
	/* readlink() of a deleted file's link appends " (deleted)": not part of the name */
	if (!st.st_nlink && n > d && !strcmp(name + n - d, " (deleted)"))
		exact = strndup(name, n - d);
	paths_add(paths, key, exact ? exact : name, !st.st_nlink);
	free(exact);
}

void collect__learn_paths(struct strmap *paths, struct userfs *fs, __u32 pid)
{
	paths_learn(paths, fs, pid);
}

int collect__allocs_exit(struct memphase_bpf *skel, struct model *m, __u32 pid, __u32 phase,
			 struct recorder *rec)
{
	int fd = bpf_map__fd(skel->maps.allocs), err;
	struct mp_alloc_key cur, next, *prev = NULL, *keys = NULL, *grown;
	struct mp_alloc_event e = { .type = MP_EV_FREE, .pid = pid, .phase = phase };
	size_t nkeys = 0, cap = 0, i;
	struct mp_alloc_val v;

	/* its keys first, then delete them: deleting while walking restarts the walk */
	while (!(err = bpf_map_get_next_key(fd, prev, &next))) {
		cur = next;
		prev = &cur;
		if (cur.tgid != pid)
			continue;
		if (nkeys == cap) {
			cap = cap ? 2 * cap : 16;
			grown = realloc(keys, cap * sizeof(*keys));
			if (!grown) {
				err = -ENOMEM;
				break;
			}
			keys = grown;
		}
		keys[nkeys++] = cur;
	}
	for (i = 0; i < nkeys; i++) {
		if (bpf_map_lookup_elem(fd, &keys[i], &v) || bpf_map_delete_elem(fd, &keys[i]))
			continue;
		e.ptr = keys[i].ptr;
		e.size = v.size;
		e.cls = v.cls;
		e.alloc_phase = v.phase;
		recorder__alloc(rec, &e, sizeof(e));
		model__on_alloc(m, &e);
	}
	free(keys);
	return err == -ENOENT ? (int)nkeys : err;
}

int collect__reap(struct memphase_bpf *skel, struct model *m, struct stacks *st, __u64 now_ns)
{
	int mfd = bpf_map__fd(skel->maps.mms);
	unsigned int i, n = 0;
	struct mp_mm *v;
	int j, nmm;

	for (i = 0; i < m->nprocs; i++) {
		struct model_proc *p = &m->procs[i];

		/* exited, or out of the user's reach: its entries go, what it did stays */
		if (model_proc__followed(p) || p->forgotten ||
		    model_proc__end_ns(p) + 1000000000ULL > now_ns)
			continue;
		collect__del_target(skel, p->pid);
		stacks__forget_process(st, p->pid);
		p->forgotten = true;
		n++;
	}
	if (!n)
		return 0;
	/* address spaces whose owner is forgotten */
	v = calloc(MP_MAX_MMS, sizeof(*v));
	if (!v)
		return n;
	nmm = mms_read(mfd, v);
	for (j = 0; j < nmm; j++) {
		struct model_proc *p = model__proc(m, v[j].tgid, false);

		if (p && p->forgotten)
			mms_free(mfd, &v[j]);
	}
	free(v);
	return n;
}

/* A process lives in its slot of tslots, or in the targets hash when the slot is taken
 * (the BPF side's target_add/target_lookup). */
int collect__add_target(struct memphase_bpf *skel, __u32 tgid, __u32 flags)
{
	struct mp_target t = { .tgid = tgid, .flags = flags }, cur;
	__u32 slot = tgid % MP_TSLOTS;

	if (bpf_map__lookup_elem(skel->maps.tslots, &slot, sizeof(slot), &cur, sizeof(cur), 0))
		return -errno;
	if (!cur.tgid || cur.tgid == tgid) {
		t.collided = cur.collided;
		if (bpf_map__update_elem(skel->maps.tslots, &slot, sizeof(slot), &t, sizeof(t), 0))
			return -errno;
		return 0;
	}
	cur.collided = 1;
	if (bpf_map__update_elem(skel->maps.targets, &tgid, sizeof(tgid), &t, sizeof(t), 0) ||
	    bpf_map__update_elem(skel->maps.tslots, &slot, sizeof(slot), &cur, sizeof(cur), 0))
		return -errno;
	return 0;
}

/*
 * Forgets every target (the BPF programs then ignore every event) and continues the ones a
 * program held: for the links' release after memphase is done, while the programs still run.
 */
void collect__drop_targets(struct memphase_bpf *skel)
{
	int sfd = bpf_map__fd(skel->maps.tslots), hfd = bpf_map__fd(skel->maps.targets);
	static const struct mp_target zero;
	struct mp_target t;
	__u32 key, next;

	for (key = 0; key < MP_TSLOTS; key++) {
		if (bpf_map_lookup_elem(sfd, &key, &t) || !t.tgid)
			continue;
		bpf_map_update_elem(sfd, &key, &zero, BPF_ANY);
		if ((t.flags & MP_T_HELD) && !(t.flags & MP_T_EXITED))
			kill(t.tgid, SIGCONT);
	}
	/* deleting the current key: start over from the first */
	while (!bpf_map_get_next_key(hfd, NULL, &next)) {
		if (!bpf_map_lookup_elem(hfd, &next, &t) && (t.flags & MP_T_HELD) &&
		    !(t.flags & MP_T_EXITED))
			kill(t.tgid, SIGCONT);
		if (bpf_map_delete_elem(hfd, &next))
			break;
	}
}

void collect__del_target(struct memphase_bpf *skel, __u32 tgid)
{
	__u32 slot = tgid % MP_TSLOTS;
	struct mp_target cur;

	if (!bpf_map__lookup_elem(skel->maps.tslots, &slot, sizeof(slot), &cur, sizeof(cur), 0) &&
	    cur.tgid == tgid) {
		/* the slot frees up; whether others of it wait in the hash stays known */
		__u32 collided = cur.collided;

		memset(&cur, 0, sizeof(cur));
		cur.collided = collided;
		bpf_map__update_elem(skel->maps.tslots, &slot, sizeof(slot), &cur, sizeof(cur), 0);
		return;
	}
	bpf_map__delete_elem(skel->maps.targets, &tgid, sizeof(tgid), 0);
}

void collect__reserve_unknown(struct memphase_bpf *skel, unsigned int nphases)
{
	struct mp_map_val zero = {};
	struct mp_map_key key;
	unsigned int id;
	int c;

	for (id = 0; id < nphases; id++) {
		for (c = 0; c < MP_NR_CLASSES; c++) {
			memset(&key, 0, sizeof(key));
			key.phase = id;
			key.cls = c;
			bpf_map__update_elem(skel->maps.mappings, &key, sizeof(key), &zero,
					     sizeof(zero), BPF_NOEXIST);
		}
	}
}

/* key: inode, kernel dev_t, exec */
void collect__seen_file(struct memphase_bpf *skel, const char *path)
{
	struct {
		__u64 ino, dev, exec;
	} key;
	struct stat st;
	__u8 one = 1;

	if (stat(path, &st))
		return;
	key.ino = st.st_ino;
	key.dev = ((__u64)major(st.st_dev) << 20) | minor(st.st_dev);
	key.exec = 1;
	bpf_map__update_elem(skel->maps.seen_files, &key, sizeof(key), &one, sizeof(one),
			     BPF_ANY);
}

/* prog's descriptor: its own, or that of its namesake in one of others[n] that loaded it */
static int prog_fd_any(const struct bpf_program *prog, struct bpf_object *const *others,
		       unsigned int n)
{
	int fd = bpf_program__fd(prog);
	struct bpf_program *op;
	unsigned int i;

	for (i = 0; fd < 0 && i < n; i++) {
		op = others[i] ? bpf_object__find_program_by_name(others[i],
								  bpf_program__name(prog)) : NULL;
		fd = op ? bpf_program__fd(op) : -1;
	}
	return fd;
}

int collect__bpf_stats(struct memphase_bpf *skel, struct bpf_object *const *others,
		       unsigned int n, struct model *m)
{
	struct model_bpf_stats *st = &m->bpf_stats;
	struct bpf_program *prog;
	int err = 0, ret;

	memset(st, 0, sizeof(*st));
	st->have = true;
	bpf_object__for_each_program(prog, skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		struct model_prog_stats *p;
		/* loaded from another object (loader.h) */
		int fd = prog_fd_any(prog, others, n);

		/* not loaded (autoload off): it never ran */
		if (fd < 0)
			continue;
		/* libbpf 1.1.2 has no bpf_prog_get_info_by_fd (1.2): the generic call */
		ret = bpf_obj_get_info_by_fd(fd, &info, &len);
		if (ret) {
			err = ret;
			continue;
		}
		if (st->nprogs == MODEL_MAX_PROGS)
			return -E2BIG;
		p = &st->progs[st->nprogs++];
		snprintf(p->name, sizeof(p->name), "%s", bpf_program__name(prog));
		p->runs = info.run_cnt;
		p->run_time_ns = info.run_time_ns;
	}
	return err;
}

/* Runs a task iterator program (skel's, or its namesake in side): it runs for each task
 * as the iterator is read, printing nothing. 0 or -errno (-ENOENT: not loaded). */
static int iter_run(struct bpf_program *prog, struct bpf_object *side)
{
	struct bpf_link *link;
	char buf[64];
	ssize_t n;
	int fd, err = 0;

	/* loaded from the side object (loader.h) */
	if (bpf_program__fd(prog) < 0 && side)
		prog = bpf_object__find_program_by_name(side, bpf_program__name(prog));
	if (!prog || bpf_program__fd(prog) < 0)
		return -ENOENT;
	link = bpf_program__attach_iter(prog, NULL);
	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		;
	if (n < 0)
		err = -errno;
	close(fd);
cleanup:
	bpf_link__destroy(link);
	return err;
}

int collect__flush_threads(struct memphase_bpf *skel, struct bpf_object *side)
{
	return iter_run(skel->progs.flush_threads, side);
}

int collect__seed_attach(struct memphase_bpf *skel, struct bpf_object *side, __u32 tgid)
{
	int err;

	skel->bss->seed_tgid = tgid;
	err = iter_run(skel->progs.seed_attach, side);
	/* not seeded (no task of it with an address space, sizes unreadable): the first
	 * events take the baseline, as the BPF side does without it */
	if (err || skel->bss->seed_tgid) {
		int aerr;

		skel->bss->seed_tgid = 0;
		aerr = collect__add_target(skel, tgid, 0);
		return aerr ? aerr : err ? err : -ESRCH;
	}
	return 0;
}

int collect__configure(struct memphase_bpf *skel, const struct phases *ph,
		       const struct collect_config *cc)
{
	struct mp_config *cfg = (struct mp_config *)&skel->rodata->cfg;
	unsigned int kib = cc->ringbuf_kib;
	int err;

	phases__fill_cfg(ph, cfg);
	cuda__fill_cfg(cfg);
	cfg->stack_mode = cc->stack_mode;
	cfg->sample_bytes = cc->sample_bytes;
	cfg->sample_interval_ns = cc->max_samples ? 1000000000ULL / cc->max_samples : 0;
	cfg->map_tracking = cc->mappings;
	cfg->max_rss_bytes = cc->max_rss;
	cfg->origin_min_bytes = cc->origin_min;
	cfg->origin_small_per_sec = COLLECT_ORIGINS_SMALL_PER_SEC;
	cfg->origin_small_max = COLLECT_ORIGINS_SMALL_MAX;
	skel->rodata->nr_cpus = libbpf_num_possible_cpus() > 0 ? libbpf_num_possible_cpus() : 1;
	/*
	 * dwarf samples are 16 KiB each: room for twice the samples the cap lets through
	 * between two polls (100 ms), 8 MiB without a cap. The ring's pages count twice in
	 * memphase's RSS (the kernel maps its data area twice), so no more than that.
	 */
	if (cc->stack_mode == MP_STACKS_DWARF) {
		__u64 need = cc->max_samples ? 2 * cc->max_samples / 10 * (MP_STACK_MAX / 1024 + 1)
					     : 8192;
		unsigned int want = 1024;

		while (want < need && want < 8192)
			want *= 2;
		if (kib < want)
			kib = want;
	}
	err = bpf_map__set_max_entries(skel->maps.events, kib * 1024);
	/* run on demand (collect__flush_threads(), collect__seed_attach()), never attached
	 * with the others */
	bpf_program__set_autoattach(skel->progs.flush_threads, false);
	bpf_program__set_autoattach(skel->progs.seed_attach, false);
	if (!err && !cc->mappings)
		err = bpf_program__set_autoload(skel->progs.flush_threads, false);
	if (!err && !cc->attach)
		err = bpf_program__set_autoload(skel->progs.seed_attach, false);
	/* a program the configuration can never use is not loaded (its verification is time) */
	if (!err && !ph->nmarkers)
		err = bpf_program__set_autoload(skel->progs.handle_marker, false);
	if (!err && !phases__has_return(ph))
		err = bpf_program__set_autoload(skel->progs.handle_marker_ret, false);
	/* before 6.10 the exec's reach is checked once it ran (handle_exec) */
	if (!err && access("/sys/kernel/tracing/events/sched/sched_prepare_exec", F_OK) &&
	    access("/sys/kernel/debug/tracing/events/sched/sched_prepare_exec", F_OK))
		err = bpf_program__set_autoload(skel->progs.handle_prepare_exec, false);
	/* markers as multi-uprobe links where the kernel has them: one detach per file */
	if (!err && probes__multi_supported())
		err = bpf_program__set_expected_attach_type(skel->progs.handle_marker,
							    PROBES_UPROBE_MULTI);
	if (!err && probes__multi_supported())
		err = bpf_program__set_expected_attach_type(skel->progs.handle_marker_ret,
							    PROBES_UPROBE_MULTI);
	if (err)
		fprintf(stderr, "memphase: failed to configure BPF object: %s\n", strerror(-err));
	return err;
}
