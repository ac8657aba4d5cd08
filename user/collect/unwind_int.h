/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The unwinder's inside (collect/unwind.c): its files, one per distinct executable file
 * shared by all processes (collect/unwind_file.c), a process's mappings of them, and the
 * unwinder they hang on. Nothing else includes it.
 */
#ifndef __MP_UNWIND_INT_H
#define __MP_UNWIND_INT_H

#include <stdbool.h>
#include <string.h>
#include <sys/types.h>
#include <gelf.h>
#include <linux/types.h>

#define UW_PROC_BUCKETS		256
#define UW_BUILD_ID_MAX		64

struct userfs;
struct elfsym_table;
struct uw_proc;

struct uw_file {
	struct uw_file *next;
	struct userfs *fs;	/* the unwinder's: for its debug file */
	unsigned int refs;
	__u64 dev, ino;		/* identity in /proc/PID/maps; 0/0 for [vdso] */
	char *path;		/* exact path, for debuglink lookups */
	const char *base;	/* its basename */
	Elf *elf;		/* NULL: not an ELF file */
	void *image;		/* [vdso]: the copy elf was made from */
	GElf_Phdr *loads;	/* PT_LOAD headers */
	size_t nloads;
	unsigned char build_id[UW_BUILD_ID_MAX];
	int build_id_len;
	int syms_state;		/* 0 not read yet, 1 read, -errno failed */
	struct elfsym_table *syms;
};

struct uw_map {
	__u64 start, end, pgoff;
	__u64 dev, ino;
	__u64 bias;		/* load bias of file (when has_bias) */
	bool has_bias;
	char *path;		/* exact path (procmaps.h); "" for anonymous memory */
	bool deleted;		/* the file was deleted */
	struct uw_file *file;	/* NULL: anonymous, or the file could not be opened */
};

struct unwinder {
	struct uw_proc *procs[UW_PROC_BUCKETS];
	struct uw_file *files;
	long page_size;
	struct userfs *fs;	/* may the user read it? (NULL: yes) */
};

static inline const char *uw_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The file of mapping m of pid, opened as the user (a new reference), or NULL. */
struct uw_file *uw_file_get(struct unwinder *u, pid_t pid, const struct uw_map *m);
/* Drops a reference; the last one frees the file. */
void uw_file_put(struct unwinder *u, struct uw_file *f);
/* The load bias of m in f into *bias: false when no PT_LOAD holds its offset. */
bool uw_map_bias(const struct uw_file *f, const struct uw_map *m, long page_size,
		 __u64 *bias);
/* The address range libdwfl expects for f's image at bias. */
void uw_file_range(const struct uw_file *f, __u64 bias, __u64 *lo, __u64 *hi);

#endif
