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
#include "collect/bpfmaps.h"
#include "collect/mappings.h"
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

/* Slots named in mms_used past which one batch read of the whole array costs less. */
#define MMS_BATCH_OVER	256

/* The whole of mms in one batch: its ready entries packed into v (MP_MAX_MMS of them). */
static int mms_read_all(int fd, struct mp_mm *v)
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

/*
 * The ready entries of mms (an array: see struct mp_mm) into *out (malloc'd): only the
 * slots whose bit the BPF side set in mms_used when it claimed them, or all of them in one
 * batch when many are. A bit whose slot is free again is cleared, and the slot looked at
 * once more: a claim between the two looks sets it again, or is seen. How many, or -ENOMEM.
 */
static int mms_read(struct memphase_bpf *skel, struct mp_mm **out)
{
	int fd = bpf_map__fd(skel->maps.mms), n = 0, nbits = 0;
	__u64 *used = skel->bss->mms_used;
	struct mp_mm *v;
	__u32 w, slot;

	for (w = 0; w < MP_MAX_MMS / 64; w++)
		nbits += __builtin_popcountll(__atomic_load_n(&used[w], __ATOMIC_ACQUIRE));
	v = malloc((nbits > MMS_BATCH_OVER ? MP_MAX_MMS : (nbits ? nbits : 1)) * sizeof(*v));
	*out = v;
	if (!v)
		return -ENOMEM;
	if (nbits > MMS_BATCH_OVER)
		return mms_read_all(fd, v);
	for (w = 0; w < MP_MAX_MMS / 64; w++) {
		__u64 bits = __atomic_load_n(&used[w], __ATOMIC_ACQUIRE);

		while (bits && n < nbits) {
			__u64 bit = bits & -bits;

			bits &= bits - 1;
			slot = w * 64 + __builtin_ctzll(bit);
			if (bpf_map_lookup_elem(fd, &slot, &v[n]) || !v[n].tgid) {
				__atomic_fetch_and(&used[w], ~bit, __ATOMIC_SEQ_CST);
				if (bpf_map_lookup_elem(fd, &slot, &v[n]) || !v[n].tgid)
					continue;
				__atomic_fetch_or(&used[w], bit, __ATOMIC_SEQ_CST);
			}
			if (v[n].seeded & MP_MM_READY)
				n++;
		}
	}
	return n;
}

/* Frees an entry of mms (found by its id: the slot of a copy read earlier); its bit in
 * mms_used goes first, so that a claim of the freed slot sets it again. */
static void mms_free(struct memphase_bpf *skel, const struct mp_mm *mm)
{
	int fd = bpf_map__fd(skel->maps.mms);
	static const struct mp_mm zero;
	struct mp_mm cur;
	__u32 i, slot;

	for (i = 0; i < MP_MM_PROBES; i++) {
		slot = (mm->mm_id + i) & (MP_MAX_MMS - 1);
		if (!bpf_map_lookup_elem(fd, &slot, &cur) && cur.tgid == mm->tgid &&
		    cur.mm_id == mm->mm_id && cur.gen == mm->gen) {
			__atomic_fetch_and(&skel->bss->mms_used[slot / 64], ~(1ULL << (slot & 63)),
					   __ATOMIC_SEQ_CST);
			bpf_map_update_elem(fd, &slot, &zero, BPF_ANY);
			return;
		}
	}
}

/*
 * Adds to each of the n address spaces of v its CPUs' shares of its size (see struct
 * mp_mm_pc), and raises its peaks to the sizes now (the BPF side raises them at shrinks).
 * Only the share slots of these address spaces are read.
 */
static int mms_add_shares(struct memphase_bpf *skel, struct mp_mm *v, int n)
{
	int fd = bpf_map__fd(skel->maps.mmpc), nc = ncpus(), i, c, k;
	bool read[MP_MMPC_SLOTS] = { false };
	struct mp_mm_pc *pc;
	__s64 total;
	__u32 slot;

	pc = calloc((size_t)nc * MP_MMPC_SLOTS, sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		slot = v[i].mm_id % MP_MMPC_SLOTS;
		if (read[slot])
			continue;
		read[slot] = true;
		if (bpf_map_lookup_elem(fd, &slot, &pc[(size_t)slot * nc]))
			memset(&pc[(size_t)slot * nc], 0, nc * sizeof(*pc));
	}
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
	struct mp_mm *v;
	int n, i, j, err;

	n = mms_read(skel, &v);
	if (n < 0)
		return n;
	err = mms_add_shares(skel, v, n);
	if (err) {
		free(v);
		return err;
	}
	qsort(v, n, sizeof(*v), cmp_gen);
	for (i = 0; i < n; i++) {
		bool newer = false;

		model__set_rss(m, v[i].tgid, v[i].rss, v[i].peak, v[i].peak_total);
		model__note_peak_at(m, v[i].tgid, v[i].peak_ns, v[i].peak_rss);
		for (j = i + 1; j < n && !newer; j++)
			newer = v[j].tgid == v[i].tgid;
		if (newer && !v[i].rss[MP_ANON] && !v[i].rss[MP_FILE] && !v[i].rss[MP_SHMEM])
			mms_free(skel, &v[i]);
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


static int collect_drops(struct memphase_bpf *skel, struct maplog *ml,
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
	m->mappings_full = d.mappings_full + mappings__maplog_full(ml);
	m->stacks_capped = d.stacks_capped;
	m->origins_lost = d.origins;
	m->origins_capped = d.origins_capped;
	m->origins_same = d.origins_same;
	free(v);
	return 0;
}

/* tgid's entry into *t: which of its slots holds it, or -ENOENT. */
static int target_find(struct memphase_bpf *skel, __u32 tgid, struct mp_target *t)
{
	int fd = bpf_map__fd(skel->maps.tslots);
	__u32 i, slot;

	for (i = 0; i < MP_T_PROBES; i++) {
		slot = mp_tslot(tgid, i);
		if (!bpf_map_lookup_elem(fd, &slot, t) && t->tgid == tgid)
			return i;
	}
	return -ENOENT;
}

/* Per-process peaks, kept with the process (its address spaces' entries may be gone). */
static void collect_peaks(struct memphase_bpf *skel, struct model *m)
{
	struct mp_target t;
	unsigned int i;

	for (i = 0; i < m->nprocs; i++) {
		struct model_proc *p = &m->procs[i];

		if (p->forgotten || target_find(skel, p->pid, &t) < 0)
			continue;
		model__raise_peaks(m, p->pid, t.peak, t.peak_total);
	}
}

int bpfmaps__maps(struct memphase_bpf *skel, struct maplog *ml, struct model *m)
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


int bpfmaps__allocs_exit(struct memphase_bpf *skel, struct model *m, __u32 pid, __u32 phase,
			 struct recorder *rec)
{
	int fd = bpf_map__fd(skel->maps.allocs), err;
	struct mp_alloc_key cur, next, *prev = NULL, *keys = NULL;
	struct mp_alloc_event e = { .type = MP_EV_FREE, .pid = pid, .phase = phase };
	size_t nkeys = 0, cap = 0, i;
	struct mp_alloc_val v;

	/* its keys first, then delete them: deleting while walking restarts the walk */
	while (!(err = bpf_map_get_next_key(fd, prev, &next))) {
		cur = next;
		prev = &cur;
		if (cur.tgid != pid)
			continue;
		if (util__grow((void **)&keys, &cap, nkeys, sizeof(*keys))) {
			err = -ENOMEM;
			break;
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

int bpfmaps__reap(struct memphase_bpf *skel, struct model *m, struct stacks *st, __u64 now_ns)
{
	unsigned int i, n = 0;
	struct mp_mm *v;
	int j, nmm;

	for (i = 0; i < m->nprocs; i++) {
		struct model_proc *p = &m->procs[i];

		/* exited, or out of the user's reach: its entries go, what it did stays */
		if (model_proc__followed(p) || p->forgotten ||
		    model_proc__end_ns(p) + BPFMAPS_REAP_NS > now_ns)
			continue;
		bpfmaps__del_target(skel, p->pid);
		stacks__forget_process(st, p->pid);
		p->forgotten = true;
		n++;
	}
	if (!n)
		return 0;
	/* address spaces whose owner is forgotten */
	nmm = mms_read(skel, &v);
	for (j = 0; j < nmm; j++) {
		struct model_proc *p = model__proc(m, v[j].tgid, false);

		if (p && p->forgotten)
			mms_free(skel, &v[j]);
	}
	free(v);
	return n;
}

/* A process lives in one of its slots of tslots (the BPF side's target_add/target_lookup). */
int bpfmaps__add_target(struct memphase_bpf *skel, __u32 tgid, __u32 flags)
{
	struct mp_target t = { .tgid = tgid, .flags = flags }, home, cur;
	int fd = bpf_map__fd(skel->maps.tslots);
	__u32 i, slot = mp_tslot(tgid, 0);

	if (bpf_map_lookup_elem(fd, &slot, &home))
		return -errno;
	for (i = 0; i < MP_T_PROBES; i++) {
		slot = mp_tslot(tgid, i);
		if (bpf_map_lookup_elem(fd, &slot, &cur))
			return -errno;
		if (!cur.tgid || cur.tgid == tgid)
			break;
	}
	if (i == MP_T_PROBES)
		return -ENOSPC;
	if (i && !home.chained) {
		home.chained = 1;
		slot = mp_tslot(tgid, 0);
		if (bpf_map_update_elem(fd, &slot, &home, BPF_ANY))
			return -errno;
		slot = mp_tslot(tgid, i);
	}
	t.chained = i ? cur.chained : home.chained;
	t.slot = slot;
	return bpf_map_update_elem(fd, &slot, &t, BPF_ANY) ? -errno : 0;
}

/*
 * Forgets every target (the BPF programs then ignore every event) and continues the ones a
 * program held: for the links' release after memphase is done, while the programs still run.
 */
void bpfmaps__drop_targets(struct memphase_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.tslots);
	static const struct mp_target zero;
	struct mp_target t;
	__u32 key;

	for (key = 0; key < MP_TSLOTS; key++) {
		if (bpf_map_lookup_elem(fd, &key, &t) || !t.tgid)
			continue;
		bpf_map_update_elem(fd, &key, &zero, BPF_ANY);
		if ((t.flags & MP_T_HELD) && !(t.flags & MP_T_EXITED))
			kill(t.tgid, SIGCONT);
	}
}

void bpfmaps__del_target(struct memphase_bpf *skel, __u32 tgid)
{
	struct mp_target cur;
	int i = target_find(skel, tgid, &cur);
	__u32 slot, chained;

	if (i < 0)
		return;
	/* the slot frees up; whether its home's others may hold processes stays known */
	slot = mp_tslot(tgid, i);
	chained = cur.chained;
	memset(&cur, 0, sizeof(cur));
	cur.chained = chained;
	bpf_map__update_elem(skel->maps.tslots, &slot, sizeof(slot), &cur, sizeof(cur), 0);
}

void bpfmaps__reserve_unknown(struct memphase_bpf *skel, unsigned int nphases)
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
void bpfmaps__seen_file(struct memphase_bpf *skel, const char *path)
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

/* prog's descriptor: its own, or that of its namesake in side if that loaded it */
static int prog_fd_any(const struct bpf_program *prog, struct bpf_object *side)
{
	struct bpf_program *op;
	int fd = bpf_program__fd(prog);

	if (fd >= 0 || !side)
		return fd;
	op = bpf_object__find_program_by_name(side, bpf_program__name(prog));
	return op ? bpf_program__fd(op) : -1;
}

int bpfmaps__bpf_stats(struct memphase_bpf *skel, struct bpf_object *side, struct model *m)
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
		/* loaded from the side object (loader.h) */
		int fd = prog_fd_any(prog, side);

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

int bpfmaps__flush_threads(struct memphase_bpf *skel, struct bpf_object *side)
{
	return iter_run(skel->progs.flush_threads, side);
}

int bpfmaps__seed_attach(struct memphase_bpf *skel, struct bpf_object *side, __u32 tgid)
{
	int err;

	skel->bss->seed_tgid = tgid;
	err = iter_run(skel->progs.seed_attach, side);
	/* not seeded (no task of it with an address space, sizes unreadable): the first
	 * events take the baseline, as the BPF side does without it */
	if (err || skel->bss->seed_tgid) {
		int aerr;

		skel->bss->seed_tgid = 0;
		aerr = bpfmaps__add_target(skel, tgid, 0);
		return aerr ? aerr : err ? err : -ESRCH;
	}
	return 0;
}

int bpfmaps__configure(struct memphase_bpf *skel, const struct phases *ph,
		       const struct bpfmaps_config *cc)
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
	cfg->origin_small_per_sec = BPFMAPS_ORIGINS_SMALL_PER_SEC;
	cfg->origin_small_max = BPFMAPS_ORIGINS_SMALL_MAX;
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
	skel->rodata->ring_wake_bytes = kib * 1024 / 4;
	/* run on demand (bpfmaps__flush_threads(), bpfmaps__seed_attach()), never attached
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
