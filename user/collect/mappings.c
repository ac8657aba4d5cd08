// SPDX-License-Identifier: GPL-2.0
/*
 * Growth per mapping into the model: the threads' batches (MP_EV_MAPLOG) summed per key,
 * the BPF mappings hash read and added to them, each key named (its file's path by dev and
 * inode, learnt from the targets' /proc/PID/map_files as the user, or what kind of mapping
 * it is) and given its origin. A file the process no longer maps by then is named by the
 * path the BPF side read from its dentries when it was mapped.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect/mappings.h"
#include "collect/record.h"
#include "lib/procmaps.h"
#include "lib/strmap.h"
#include "lib/userfs.h"
#include "lib/util.h"
#include "memphase.skel.h"

/*
 * Mapping growth the threads sent in batches (MP_EV_MAPLOG), one entry per key once
 * compacted. At most MAPLOG_MAX_KEYS keys (as many as the BPF mappings hash holds): the
 * growth of further keys is kept under its phase and class's [unknown], and counted.
 */
#define MAPLOG_MAX_KEYS		65536
#define MAPLOG_COMPACT		16384	/* entries added before they are merged by key */

struct maplog {
	struct map_sum *v;
	size_t n, cap;
	size_t nsorted;		/* v[0, nsorted): sorted, one per key */
	__u64 full;		/* entries kept under [unknown] for want of room */
};

__u64 mappings__maplog_full(const struct maplog *ml)
{
	return ml ? ml->full : 0;
}

/* What paths caches per "dev:ino" (kernel dev_t numbering); one block, free() frees it. */
struct known_file {
	bool deleted;
	char path[];
};

/* A file's key in paths: "dev:ino", dev in the kernel's dev_t numbering (major << 20). */
static void path_key(char *buf, size_t len, __u64 dev, __u64 ino)
{
	snprintf(buf, len, "%" PRIu64 ":%" PRIu64, (uint64_t)dev, (uint64_t)ino);
}

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
		path_key(key, sizeof(key), ((__u64)e.dev_major << 20) | e.dev_minor, e.inode);
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
		path_key(key, sizeof(key), k->dev, k->ino);
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

void mappings__clear(struct model *m)
{
	model__clear_mappings(m);
	for (size_t i = 0; i < m->origins.n; i++)
		m->origins.v[i].grown = 0;
}

void mappings__origin(struct model *m, const struct model_mapping *mm)
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

struct maplog *mappings__maplog_new(void)
{
	return calloc(1, sizeof(struct maplog));
}

void mappings__maplog_free(struct maplog *ml)
{
	if (!ml)
		return;
	free(ml->v);
	free(ml);
}

static void maplog_compact(struct maplog *ml)
{
	sums_merge(ml->v, &ml->n);
	ml->nsorted = ml->n;
}

int mappings__maplog_add(struct maplog *ml, const void *data, size_t len)
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

__u64 mappings__maplog_bytes(struct maplog *ml, const struct mp_map_key *key,
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
static int batches_read(struct maplog *ml, struct map_sum **out, size_t *nout)
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
	mappings__origin(m, &mm);
	model__offer_mapping(m, key->phase, &mm);
	recorder__mapping(rec, key->phase, &mm);
}

/*
 * Every mapping's growth: its entry in the mappings hash plus what the threads' batches
 * brought user space (a key may be in either or both).
 */
int mappings__read(struct memphase_bpf *skel, struct maplog *ml, struct model *m,
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
	mappings__clear(m);
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

int mappings__file_name(const struct strmap *paths, __u64 dev, __u64 ino, char *buf,
		       size_t size)
{
	struct strmap_entry *e;
	char key[64];

	path_key(key, sizeof(key), dev, ino);
	e = strmap__find(paths, key);
	if (!e || !e->value)
		return -ENOENT;
	snprintf(buf, size, "%s", ((struct known_file *)(uintptr_t)e->value)->path);
	return 0;
}

void mappings__learn_file(struct strmap *paths, const char *path, const char *name)
{
	char key[64], *exact = NULL;
	struct stat st;
	size_t n = strlen(name), d = strlen(" (deleted)");

	if (stat(path, &st))
		return;
	path_key(key, sizeof(key), ((__u64)major(st.st_dev) << 20) | minor(st.st_dev), st.st_ino);
	/* readlink() of a deleted file's link appends " (deleted)": not part of the name */
	if (!st.st_nlink && n > d && !strcmp(name + n - d, " (deleted)"))
		exact = strndup(name, n - d);
	paths_add(paths, key, exact ? exact : name, !st.st_nlink);
	free(exact);
}

int mappings__fpath_join(const struct mp_fpath *fp, char *buf, size_t size)
{
	size_t len = fp->len < sizeof(fp->path) ? fp->len : sizeof(fp->path), at = 0;
	const char *end = fp->path + len, *name, *next;

	if (!fp->whole || !len || fp->path[len - 1] || size < 2)
		return -ENOENT;
	/* the last name (nearest the root) first: walk the names from the end */
	for (next = end; next > fp->path; next = name) {
		size_t n;

		for (name = next - 1; name > fp->path && name[-1]; name--)
			;
		n = strlen(name);
		if (!n || memchr(name, '/', n))
			return -ENOENT;
		if (at + 1 + n >= size)
			return -ENAMETOOLONG;
		buf[at++] = '/';
		memcpy(buf + at, name, n);
		at += n;
	}
	buf[at] = '\0';
	return 0;
}

void mappings__learn_fpath(struct strmap *paths, __u64 dev, __u64 ino,
			   const struct mp_fpath *fp)
{
	char key[64], path[MP_FPATH_MAX + 1];

	if (!ino || mappings__fpath_join(fp, path, sizeof(path)))
		return;
	path_key(key, sizeof(key), dev, ino);
	paths_add(paths, key, path, !fp->nlink);
}

void mappings__learn_paths(struct strmap *paths, struct userfs *fs, __u32 pid)
{
	paths_learn(paths, fs, pid);
}
