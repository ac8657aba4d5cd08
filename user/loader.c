// SPDX-License-Identifier: GPL-2.0
/* The BPF object's load, on two CPUs where it can be (see loader.h). */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include "kbtf.h"
#include "loader.h"
#include "memphase.skel.h"

struct side {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct memphase_bpf *skel;	/* the first object */
	const struct loader_opts *o;
	struct memphase_bpf *side;	/* the second, loaded by the thread */
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

#define NSIDE (sizeof(side_progs) / sizeof(side_progs[0]))

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

/* The second object: open and configure it like the first, only the side programs
 * autoloaded; once the first object's maps exist, take them, load and attach. */
static void *side_load(void *arg)
{
	struct side *sd = arg;
	struct memphase_bpf *side;
	bool ready;
	int err;

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

int loader__load(struct memphase_bpf *skel, const struct loader_opts *o,
		 struct memphase_bpf **side)
{
	struct side sd = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
			   .skel = skel, .o = o };
	struct bpf_program *moved[NSIDE] = {};
	/* one CPU: the second object would only add its own open and load */
	bool split = o->split && sysconf(_SC_NPROCESSORS_ONLN) >= 2;
	unsigned int n = 0;
	pthread_t th;
	size_t i;
	int err;

	*side = NULL;
	for (i = 0; split && i < NSIDE; i++) {
		moved[n] = bpf_object__find_program_by_name(skel->obj, side_progs[i]);
		if (moved[n] && bpf_program__autoload(moved[n]) &&
		    !bpf_program__set_autoload(moved[n], false))
			n++;
	}
	if (!n || pthread_create(&th, NULL, side_load, &sd)) {
		for (i = 0; i < n; i++)
			bpf_program__set_autoload(moved[i], true);
		return memphase_bpf__load(skel);
	}
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
	if (err) {
		memphase_bpf__destroy(sd.side);
		return err;
	}
	*side = sd.side;
	return 0;
}
