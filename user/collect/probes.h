/* SPDX-License-Identifier: GPL-2.0 */
/* Phase markers -> uprobes on the files a target maps. */
#ifndef __MP_PROBES_H
#define __MP_PROBES_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "collect/cuda.h"
#include "collect/phases.h"

struct bpf_program;

/* not in this libbpf's (1.1) or the uapi headers' (6.1) enum bpf_attach_type */
#define PROBES_UPROBE_MULTI	48	/* BPF_TRACE_UPROBE_MULTI */
struct probes;
struct userfs;
struct creds;

/*
 * Does the kernel have multi-uprobe links? Then the marker program is loaded for them
 * (bpf_program__set_expected_attach_type before load) and each file's markers are one link.
 */
bool probes__multi_supported(void);
/* The programs the probes attach, loaded. */
struct probes_progs {
	struct bpf_program *marker;	/* every marker's (the cookie tells the phase) */
	struct bpf_program *marker_ret;	/* markers' return probes (ret_phase), may be NULL */
	struct bpf_program *alloc_entry;	/* allocation functions' entry ... */
	struct bpf_program *alloc_return;	/* ... and return (allocations) */
};

/*
 * fs: may the invoking user read a file a target maps (userfs__may_read: one they may not
 * read is not scanned); user: the invoking user, as whom a marker's binary path is opened
 * to say why it never matched (NULL for both: root's rights).
 */
struct probes *probes__new(const struct phases *ph, const struct probes_progs *pp,
			   struct userfs *fs, const struct creds *user, int verbose);
void probes__free(struct probes *p);	/* detaches; NULL-safe */
/*
 * The second kind of probe: allocation functions (syms[i]'s cookie is i, the index of its
 * rule in cfg.allocs), attached with an entry program, and for allocations also a return
 * program, in every file scanned from now on.
 */
void probes__set_allocs(struct probes *p, const struct alloc_sym *syms, unsigned int n);

/*
 * Looks up every marker in one file and attaches uprobes (all pids: the BPF side
 * filters by the target set). name is the path shown to the user and matched against
 * marker binaries; open_path (NULL = name) is what is opened, e.g. a
 * /proc/PID/map_files link for a deleted file. Files are remembered by device and
 * inode: a second call for the same file does nothing. Returns the number of probes
 * attached, or -errno.
 */
int probes__scan_file(struct probes *p, const char *name, const char *open_path);
/* The file mapped at addr in pid (an EXEC_MAP event). */
int probes__scan_mapping(struct probes *p, pid_t pid, __u64 addr);
/* Every file-backed executable mapping of a running process (attach mode). */
int probes__scan_pid(struct probes *p, pid_t pid);
/* Marker probes attached so far. */
unsigned int probes__count(const struct probes *p);
/* Allocation functions probed so far. */
unsigned int probes__alloc_count(const struct probes *p);
/* Names of user markers never found in any scanned file (for a warning); "a, b". */
void probes__missing_user(const struct probes *p, char *buf, size_t len);
/* 1 when marker i (of the phases) is a user marker that never attached, with why, else 0. */
int probes__unmatched(const struct probes *p, unsigned int i, char *why, size_t len);

#endif
