// SPDX-License-Identifier: GPL-2.0
/* The BPF object's load, on two CPUs where it can be (see loader.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include "kbtf.h"
#include "loader.h"
#include "memphase.skel.h"

/* the first object's maps created before its load, by the two threads */
struct premade {
	struct bpf_map *map;
	__u64 cost;
	bool side;			/* the thread's to create */
	int fd;				/* -1: not created (libbpf creates it) */
};

struct side {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct memphase_bpf *skel;	/* the first object */
	const struct loader_opts *o;
	struct memphase_bpf *side;	/* the second, loaded by the thread */
	struct premade pm[LOADER_MAX_MAPS];
	unsigned int npm;
	int btf_fd;			/* the first object's BTF (a copy) for them, or -1 */
	bool side_made;			/* the thread created its share */
	bool maps_ready;		/* the first object's maps exist */
	bool main_done;			/* the first object's load returned ... */
	int main_err;			/* ... this */
	int err;
};

/* From the first object's load, before its first tp_btf program: its maps exist. */
static void maps_created(void *ctx)
{
	struct side *sd = ctx;

	pthread_mutex_lock(&sd->lock);
	sd->maps_ready = true;
	pthread_cond_broadcast(&sd->cond);
	pthread_mutex_unlock(&sd->lock);
}

static const char *const side_progs[] = LOADER_SIDE_PROGS;
static const char *const late_progs[] = LOADER_LATE_PROGS;

#define NSIDE (sizeof(side_progs) / sizeof(side_progs[0]))
#define NLATE (sizeof(late_progs) / sizeof(late_progs[0]))

/*
 * The late programs' load (loader.h), in two parts (objects), each on a thread of its
 * own: the first of LOADER_LATE_PROGS (the heaviest) alone, the others together.
 */
struct late_part {
	pthread_t th;
	bool threaded;			/* th runs late_load() (else it ran in begin) */
	const char *const *names;	/* the programs it loads */
	size_t n;
	struct loader_late *l;
	struct memphase_bpf *obj;	/* loaded, when done and err is 0 */
	bool done;
	int err;
};

struct loader_late {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct memphase_bpf *skel;	/* the first object, loaded */
	const struct phases *phases;
	struct bpfmaps_config cc;	/* copies: the caller's are gone by the load */
	struct bpf_object_open_opts oo;
	char btf_path[32];		/* oo's: the minimal BTF, a descriptor of our own */
	int btf_fd;
	bool begun;
	unsigned int ndone;
	struct late_part part[LOADER_LATE_OBJS];
};

static bool prog_in(const struct bpf_program *prog, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(bpf_program__name(prog), names[i]))
			return true;
	return false;
}

/* Every program of obj but the named ones left out (a named one loads only if its
 * configuration, the same as the other openings', has it load). */
static int autoload_only(struct bpf_object *obj, const char *const *names, size_t n)
{
	struct bpf_program *prog;
	int err = 0;

	bpf_object__for_each_program(prog, obj) {
		bool mine = prog_in(prog, names, n);

		if (!err)
			err = bpf_program__set_autoload(prog, mine && bpf_program__autoload(prog));
	}
	return err;
}

/* Every map of obj is the first object's (the read-only data, frozen, too). */
static int maps_reuse(struct bpf_object *obj, struct memphase_bpf *skel)
{
	struct bpf_map *map;
	int err = 0;

	bpf_object__for_each_map(map, obj) {
		if (err)
			break;
		err = bpf_map__reuse_fd(map, bpf_map__fd(bpf_object__find_map_by_name(
			skel->obj, bpf_map__name(map))));
	}
	return err;
}

/*
 * What creating a map costs, in units of roughly a ns here: the kernel allocates and
 * clears its memory (a hash's buckets, 16 bytes each; its elements when preallocated) and
 * sets up each element of a preallocated hash or a per-CPU array. 0: a map libbpf creates
 * itself (the global data, whose contents it sets; kinds with inner maps or without BTF).
 */
static __u64 map_cost(const struct bpf_map *map)
{
	__u64 n = bpf_map__max_entries(map), kv = bpf_map__key_size(map) +
						bpf_map__value_size(map);
	__u64 buckets = 1;

	if (bpf_map__is_internal(map))
		return 0;
	while (buckets < n)
		buckets <<= 1;
	switch (bpf_map__type(map)) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
		return buckets * 16 + (bpf_map__map_flags(map) & BPF_F_NO_PREALLOC ? 0 :
				       n * (256 + kv));
	case BPF_MAP_TYPE_ARRAY:
		return n * bpf_map__value_size(map) / 4;
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		return n * 256;
	case BPF_MAP_TYPE_RINGBUF:
		return n / 4;
	default:
		return 0;
	}
}

/* The map created as libbpf would, with the BTF at btf_fd (-1: none): its fd, or -errno. */
static int map_create(const struct bpf_map *map, int btf_fd)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = bpf_map__map_flags(map),
		    .numa_node = bpf_map__numa_node(map), .map_extra = bpf_map__map_extra(map));
	int fd;

	if (btf_fd >= 0 && bpf_map__btf_value_type_id(map)) {
		mo.btf_fd = btf_fd;
		mo.btf_key_type_id = bpf_map__btf_key_type_id(map);
		mo.btf_value_type_id = bpf_map__btf_value_type_id(map);
	}
	fd = bpf_map_create(bpf_map__type(map), bpf_map__name(map), bpf_map__key_size(map),
			    bpf_map__value_size(map), bpf_map__max_entries(map), &mo);
	return fd < 0 ? -errno : fd;
}

/* Creates one thread's share of the premade maps (side: the thread's), from the first
 * object's definitions, which nothing changes meanwhile. A map that fails is left to
 * libbpf. */
static void premade_create(struct side *sd, bool side)
{
	unsigned int i;

	for (i = 0; i < sd->npm; i++)
		if (sd->pm[i].side == side)
			sd->pm[i].fd = map_create(sd->pm[i].map, sd->btf_fd);
}

/*
 * Splits the first object's maps that libbpf need not create between the two threads
 * (the costliest first, each to the thread with less so far), and loads a copy of the
 * object's BTF for them. Without that BTF, none is premade.
 */
static void premade_plan(struct side *sd)
{
	const void *raw;
	struct bpf_map *map;
	struct btf *btf;
	__u64 load[2] = {};
	unsigned int i, j;
	__u32 size;

	sd->btf_fd = -1;
	raw = btf__raw_data(bpf_object__btf(sd->skel->obj), &size);
	btf = raw ? btf__new(raw, size) : NULL;
	if (!btf || btf__load_into_kernel(btf)) {
		btf__free(btf);
		return;
	}
	sd->btf_fd = dup(btf__fd(btf));
	btf__free(btf);
	if (sd->btf_fd < 0)
		return;
	bpf_object__for_each_map(map, sd->skel->obj) {
		struct premade pm = { .map = map, .cost = map_cost(map), .fd = -1 };

		if (!pm.cost || sd->npm == LOADER_MAX_MAPS)
			continue;
		for (i = sd->npm++; i > 0 && sd->pm[i - 1].cost < pm.cost; i--)
			sd->pm[i] = sd->pm[i - 1];
		sd->pm[i] = pm;
	}
	for (i = 0; i < sd->npm; i++) {
		j = load[1] < load[0];
		sd->pm[i].side = j;
		load[j] += sd->pm[i].cost;
	}
}

/* The premade maps into the first object (libbpf keeps a copy of each fd). */
static void premade_take(struct side *sd)
{
	unsigned int i;

	for (i = 0; i < sd->npm; i++) {
		if (sd->pm[i].fd < 0)
			continue;
		bpf_map__reuse_fd(sd->pm[i].map, sd->pm[i].fd);
		close(sd->pm[i].fd);
		sd->pm[i].fd = -1;
	}
	if (sd->btf_fd >= 0)
		close(sd->btf_fd);
	sd->btf_fd = -1;
}

/* The second object: open and configure it like the first, only the side programs
 * autoloaded; once the first object's maps exist, take them, load and attach. */
static void *side_load(void *arg)
{
	struct side *sd = arg;
	struct memphase_bpf *side;
	bool ready;
	int err;

	premade_create(sd, true);
	pthread_mutex_lock(&sd->lock);
	sd->side_made = true;
	pthread_cond_broadcast(&sd->cond);
	pthread_mutex_unlock(&sd->lock);
	side = memphase_bpf__open_opts(sd->o->oo);
	if (!side) {
		sd->err = -errno;
		return NULL;
	}
	err = bpfmaps__configure(side, sd->o->phases, sd->o->cc);
	/* configured as the first one was: the side programs it would have loaded */
	if (!err)
		err = autoload_only(side->obj, side_progs, NSIDE);
	pthread_mutex_lock(&sd->lock);
	while (!sd->maps_ready && !sd->main_done)
		pthread_cond_wait(&sd->cond, &sd->lock);
	/* no tp_btf program loaded: the maps exist once the first load succeeded */
	ready = sd->maps_ready || !sd->main_err;
	pthread_mutex_unlock(&sd->lock);
	if (!err && !ready)
		err = -ECANCELED;
	if (!err)
		err = maps_reuse(side->obj, sd->skel);
	if (!err)
		err = memphase_bpf__load(side);
	/* while the first object loads: they see no target yet */
	if (!err)
		err = memphase_bpf__attach(side);
	if (err) {
		memphase_bpf__destroy(side);
		sd->err = err;
		return NULL;
	}
	sd->side = side;
	return NULL;
}

/* A part of the late load: an opening of the object, configured like the first, loading
 * only its programs with the first one's maps. */
static void *late_load(void *arg)
{
	struct late_part *lp = arg;
	struct loader_late *l = lp->l;
	struct memphase_bpf *obj;
	int err;

	obj = memphase_bpf__open_opts(&l->oo);
	err = obj ? bpfmaps__configure(obj, l->phases, &l->cc) : -errno;
	if (!err)
		err = autoload_only(obj->obj, lp->names, lp->n);
	if (!err)
		err = maps_reuse(obj->obj, l->skel);
	if (!err)
		err = memphase_bpf__load(obj);
	if (err) {
		memphase_bpf__destroy(obj);
		obj = NULL;
	}
	pthread_mutex_lock(&l->lock);
	lp->obj = obj;
	lp->err = err;
	lp->done = true;
	/* the last part done: the minimal BTF is read */
	if (++l->ndone == LOADER_LATE_OBJS) {
		close(l->btf_fd);
		l->btf_fd = -1;
	}
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

/* The late load's state (the others are loaded), not begun: 0 and *lp, or -errno. */
static int late_new(struct memphase_bpf *skel, const struct loader_opts *o,
		    struct loader_late **lp)
{
	struct loader_late *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cond, NULL);
	l->skel = skel;
	l->phases = o->phases;
	l->cc = *o->cc;
	l->oo = *o->oo;
	/* close-on-exec: the command may be forked while it is open */
	l->btf_fd = fcntl(o->btf_fd, F_DUPFD_CLOEXEC, 0);
	if (l->btf_fd < 0) {
		free(l);
		return -errno;
	}
	snprintf(l->btf_path, sizeof(l->btf_path), "/proc/self/fd/%d", l->btf_fd);
	l->oo.btf_custom_path = l->btf_path;
	/* the first of LOADER_LATE_PROGS, the heaviest, alone; the others together */
	l->part[0].names = late_progs;
	l->part[0].n = 1;
	l->part[1].names = late_progs + 1;
	l->part[1].n = NLATE - 1;
	l->part[0].l = l->part[1].l = l;
	*lp = l;
	return 0;
}

void loader__late_begin(struct loader_late *l)
{
	sigset_t all, old;
	unsigned int i;

	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	if (l->begun) {
		pthread_mutex_unlock(&l->lock);
		return;
	}
	l->begun = true;
	pthread_mutex_unlock(&l->lock);
	/* signals stay the caller's (the main thread's) */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 0; i < LOADER_LATE_OBJS; i++)
		l->part[i].threaded = !pthread_create(&l->part[i].th, NULL, late_load,
						      &l->part[i]);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* without a thread: here */
	for (i = 0; i < LOADER_LATE_OBJS; i++)
		if (!l->part[i].threaded)
			late_load(&l->part[i]);
}

int loader__late_wait(struct loader_late *l, struct bpf_object *objs[LOADER_LATE_OBJS])
{
	unsigned int i;
	int err = 0;

	loader__late_begin(l);
	pthread_mutex_lock(&l->lock);
	while (l->ndone < LOADER_LATE_OBJS)
		pthread_cond_wait(&l->cond, &l->lock);
	for (i = 0; i < LOADER_LATE_OBJS; i++) {
		objs[i] = l->part[i].obj ? l->part[i].obj->obj : NULL;
		if (l->part[i].err)
			err = l->part[i].err;
	}
	pthread_mutex_unlock(&l->lock);
	return err;
}

unsigned int loader__late_done(struct loader_late *l, struct bpf_object *objs[LOADER_LATE_OBJS])
{
	unsigned int i, n = 0;

	if (!l)
		return 0;
	pthread_mutex_lock(&l->lock);
	for (i = 0; i < LOADER_LATE_OBJS; i++)
		if (l->part[i].done && l->part[i].obj)
			objs[n++] = l->part[i].obj->obj;
	pthread_mutex_unlock(&l->lock);
	return n;
}

void loader__late_free(struct loader_late *l)
{
	unsigned int i;

	if (!l)
		return;
	for (i = 0; i < LOADER_LATE_OBJS; i++) {
		if (l->part[i].threaded)
			pthread_join(l->part[i].th, NULL);
		memphase_bpf__destroy(l->part[i].obj);
	}
	if (l->btf_fd >= 0)
		close(l->btf_fd);
	free(l);
}

int loader__load(struct memphase_bpf *skel, const struct loader_opts *o,
		 struct memphase_bpf **side, struct loader_late **late)
{
	struct side sd = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
			   .skel = skel, .o = o, .btf_fd = -1 };
	struct bpf_program *moved[NSIDE] = {}, *deferred[NLATE] = {};
	/* one CPU: the second object would only add its own open and load */
	bool split = o->split && sysconf(_SC_NPROCESSORS_ONLN) >= 2;
	unsigned int n = 0, nlate = 0;
	struct bpf_program *prog;
	pthread_t th;
	size_t i;
	int err;

	*side = NULL;
	*late = NULL;
	for (i = 0; split && i < NSIDE; i++) {
		moved[n] = bpf_object__find_program_by_name(skel->obj, side_progs[i]);
		if (moved[n] && bpf_program__autoload(moved[n]) &&
		    !bpf_program__set_autoload(moved[n], false))
			n++;
	}
	/* the late programs: not this object's, if a thread can load them later */
	bpf_object__for_each_program(prog, skel->obj) {
		if (split && n && prog_in(prog, late_progs, NLATE) && bpf_program__autoload(prog) &&
		    !bpf_program__set_autoload(prog, false))
			deferred[nlate++] = prog;
	}
	if (n)
		premade_plan(&sd);
	if (!n || pthread_create(&th, NULL, side_load, &sd)) {
		for (i = 0; i < n; i++)
			bpf_program__set_autoload(moved[i], true);
		for (i = 0; i < nlate; i++)
			bpf_program__set_autoload(deferred[i], true);
		premade_take(&sd);
		return memphase_bpf__load(skel);
	}
	/* the maps, on both CPUs: taken once both shares are made */
	premade_create(&sd, false);
	pthread_mutex_lock(&sd.lock);
	while (!sd.side_made)
		pthread_cond_wait(&sd.cond, &sd.lock);
	pthread_mutex_unlock(&sd.lock);
	premade_take(&sd);
	kbtf__on_load(maps_created, &sd);
	err = memphase_bpf__load(skel);
	kbtf__on_load(NULL, NULL);
	pthread_mutex_lock(&sd.lock);
	sd.main_done = true;
	sd.main_err = err;
	pthread_cond_broadcast(&sd.cond);
	pthread_mutex_unlock(&sd.lock);
	pthread_join(th, NULL);
	if (!err)
		err = sd.err;
	if (!err && nlate)
		err = late_new(skel, o, late);
	if (err) {
		memphase_bpf__destroy(sd.side);
		return err;
	}
	*side = sd.side;
	return 0;
}
