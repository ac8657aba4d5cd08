/* SPDX-License-Identifier: GPL-2.0 */
/* Growth per mapping, named, into the model (see mappings.c). */
#ifndef __MP_MAPPINGS_H
#define __MP_MAPPINGS_H

#include "model/model.h"

struct memphase_bpf;
struct strmap;
struct userfs;
struct recorder;

/*
 * Mapping growth the BPF side sent in threads' batches (MP_EV_MAPLOG events), summed per
 * key until mappings__read() adds it to the mappings' counters.
 */
struct maplog;
struct maplog *mappings__maplog_new(void);
void mappings__maplog_free(struct maplog *ml);
/* Adds one MP_EV_MAPLOG record of len bytes: 0, -EINVAL (malformed) or -ENOMEM. */
int mappings__maplog_add(struct maplog *ml, const void *data, size_t len);
/* The growth ml holds for key, and (*full) how many entries it kept under their class's
 * [unknown] for want of room. */
__u64 mappings__maplog_bytes(struct maplog *ml, const struct mp_map_key *key,
			   __u64 *full);

struct strmap;
/*
 * Reads the per-mapping growth counters into the model's top lists. File paths are
 * found in /proc/PID/maps by device and inode and cached in paths ("dev:ino" -> path),
 * so a mapping seen once keeps its name after its process exits.
 */
struct recorder;
struct userfs;
/* Each mapping offered to the model is recorded too (rec NULL: not). */
/* The mapping counters cleared before a new pass (origins' growth too). */
void mappings__clear(struct model *m);
/* A mapping of the pass tells its origin (id mm->origin, 0: none) its path and growth. */
void mappings__origin(struct model *m, const struct model_mapping *mm);
/* fs: the invoking user, as whom the processes' maps are read for the names (NULL: root) */
int mappings__read(struct memphase_bpf *skel, struct maplog *ml, struct model *m,
		      struct strmap *paths, struct userfs *fs, struct recorder *rec);
/* The path learned for a file (kernel dev_t numbering, inode; buf NULL and size 0: only
 * whether there is one). 0 or -ENOENT. */
int mappings__file_name(const struct strmap *paths, __u64 dev, __u64 ino, char *buf,
		       size_t size);
/* Learns one file's name (an executable the kernel mapped at exec); it is looked at
 * through path (e.g. /proc/PID/exe). */
void mappings__learn_file(struct strmap *paths, const char *path, const char *name);
/* Learns the paths of every file pid maps (after a MP_EV_FILE_MAP, at attach), its maps
 * read as the user fs is (NULL: root). */
void mappings__learn_paths(struct strmap *paths, struct userfs *fs, __u32 pid);
/*
 * The path in fp (MP_EV_FILE_MAP, MP_EV_EXEC_MAP: names leaf first) as one string into buf:
 * 0, -ENOENT (cut short, or a file of no directory) or -ENAMETOOLONG.
 */
int mappings__fpath_join(const struct mp_fpath *fp, char *buf, size_t size);
/* Learns the file dev:ino's path from fp when nothing (/proc/PID/maps) named it before. */
void mappings__learn_fpath(struct strmap *paths, __u64 dev, __u64 ino,
			   const struct mp_fpath *fp);
/* Keys whose growth went under [unknown] for want of room (0 without ml). */
__u64 mappings__maplog_full(const struct maplog *ml);

#endif
