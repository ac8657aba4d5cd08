/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Mapping origins: the stack of the syscall (mmap, mremap, or brk for the heap) that created
 * each mapping, symbolized, and the mapping's label: the innermost frame outside the
 * allocators (lib/causerules.h), or, for a glibc malloc arena, the thread that owns it.
 * Written by the collector, read by the views.
 */
#ifndef __MP_ORIGINS_H
#define __MP_ORIGINS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "memphase.h"
#include "lib/causerules.h"
#include "model/profile.h"

/* glibc's HEAP_MAX_SIZE on 64-bit: an arena reserves this (or twice this, then trims). */
#define ORIGIN_ARENA_BYTES	(64ULL << 20)

struct origin {
	__u32 pid, tid;
	char comm[MP_COMM_LEN + 1];
	__u32 phase;
	__u32 how;		/* enum mp_origin_how */
	__u32 backing;		/* enum mp_origin_backing */
	__u32 prot;		/* PROT_* (mremap: 0, unknown) */
	__u64 ts_ns;
	__u64 start, len;
	const char **frames;	/* outermost first, interned in the profile */
	__u32 nframes;
	bool arena;		/* a glibc malloc arena's reservation */
	const char *label;	/* interned; never NULL ("[no frame]" when nothing is left) */
	const char *path;	/* interned path of the mapping once named, or NULL */
	__u64 grown;		/* RSS growth of its mapping, all phases and classes (exact) */
	__u64 seq;		/* order of creation: the newest origin of an address wins */
};

struct origins {
	struct origin *v;
	size_t n, cap;
	__u32 *by_addr;		/* indices into v sorted by (pid, start, seq) */
	__u64 maxlen;		/* longest origin: how far back a lookup looks */
	__u64 seq;
	__u64 arenas;		/* arenas seen: threads with an arena reservation */
	__u64 reused;		/* origins that replaced one of the same pid and start */
	/* a report's window: origins from before it still name mappings and causes, but
	 * counts and lists start here (0: the whole run) */
	__u64 since_ns;
};

/* Is e counted (created since the window's start)? */
static inline bool origins__counted(const struct origins *o, const struct origin *e)
{
	return e->ts_ns >= o->since_ns;
}
/* Origins counted: created in the window (all of them without one). */
size_t origins__recorded(const struct origins *o);

void origins__init(struct origins *o);
void origins__free(struct origins *o);
/*
 * Records an origin. frames[0..n) outermost first (interned into p); the label is computed
 * with r's allocator patterns. An origin of the same pid, start and backing replaces the
 * one before (that mapping is gone: its range was created again), so a program that maps
 * and unmaps the same buffer over and over keeps one record. 0 or -ENOMEM.
 */
int origins__add(struct origins *o, struct profile *p, const struct causerules *r,
		 const struct origin *in, const char *const *frames, __u32 n);
/*
 * The newest origin of pid whose range holds addr (for the heap, kind MP_MAP_HEAP, its brk
 * origin) and whose backing can be kind's (a file mapping's origin maps a file), as an
 * index + 1; 0 if none. O(log n) plus the origins of pid that start within maxlen below
 * addr.
 */
__u32 origins__find(const struct origins *o, __u32 pid, __u32 kind, __u64 addr);
/* The origin of a find() result, or NULL. */
static inline const struct origin *origins__at(const struct origins *o, __u32 id)
{
	return id && id <= o->n ? &o->v[id - 1] : NULL;
}
/*
 * The origins by thread: *idx (malloc'd, o->n entries) holds their indices sorted by pid,
 * tid and time, for origins__of_sample(). 0 or -ENOMEM.
 */
int origins__by_thread(const struct origins *o, __u32 **idx);
/*
 * The mapping raw sample r grew (1 + index in the origins, 0 unknown): its own origin, or,
 * when the sample did not know it, the next mapping its thread created if that one was
 * created from the same stack: the syscall the sample was taken in. Pages an
 * mmap(MAP_POPULATE) (or an mremap) brings in are charged before the call returns, when
 * BPF cannot look the mapping up yet and before its origin is recorded at the syscall's
 * exit. byt: origins__by_thread()'s index (NULL: r's own only). O(log n).
 */
__u32 origins__of_sample(const struct origins *o, const __u32 *byt, const struct profile *p,
			 const struct profile_sample *r);
/* The label of frames[0..n) (outermost first): the innermost non-allocator frame. */
const char *origins__label_of(const struct causerules *r, const char *const *frames, __u32 n);

#endif
