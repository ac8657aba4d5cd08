/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A file's path from its dentries and mounts, as d_path() walks them: each name up to its
 * mount's root, then on from the mount point in the parent mount, until the mount that is
 * its own parent (the root of the namespace).
 */
#ifndef MEMPHASE_FPATH_H
#define MEMPHASE_FPATH_H

#include "helpers.h"

/* names and mount crossings walked at most (a deeper path is left to /proc) */
#define FPATH_STEPS	64

static __always_inline struct mount *fpath_mount(struct vfsmount *vm)
{
	return (struct mount *)((char *)vm - bpf_core_field_offset(struct mount, mnt));
}

static __always_inline struct vfsmount *fpath_vfsmount(struct mount *m)
{
	return (struct vfsmount *)((char *)m + bpf_core_field_offset(struct mount, mnt));
}

struct fpath_walk {
	struct dentry *d;
	struct vfsmount *vm;
	struct mount *m;
	__u32 off;
};

/*
 * One step of the walk (a bpf_loop() callback, so the verifier reads it once, not once per
 * step): a name, or a crossing to the parent mount. 1 ends the walk.
 */
static long fpath_step(__u32 i, void *data)
{
	struct fpath_walk *w = data;
	struct dentry *d = w->d, *root, *parent;
	struct mount *m = w->m, *mparent;
	struct vfsmount *vm = w->vm;
	const unsigned char *name;
	struct mp_fpath *fp;
	__u32 zero = 0, off = w->off;
	long n;

	fp = bpf_map_lookup_elem(&fpath_scratch, &zero);
	if (!fp)
		return 1;
	root = BPF_CORE_READ(vm, mnt_root);
	if (d == root) {
		mparent = BPF_CORE_READ(m, mnt_parent);
		if (mparent == m) {
			fp->whole = 1;
			return 1;
		}
		w->d = BPF_CORE_READ(m, mnt_mountpoint);
		w->m = mparent;
		w->vm = fpath_vfsmount(mparent);
		return 0;
	}
	parent = BPF_CORE_READ(d, d_parent);
	/* a root that is not its mount's: a file of no directory (memfd, SysV shm) */
	if (d == parent || !parent || off > MP_FPATH_MAX - MP_FPATH_NAME_MAX)
		return 1;
	name = BPF_CORE_READ(d, d_name.name);
	n = bpf_probe_read_kernel_str(fp->path + off, MP_FPATH_NAME_MAX, name);
	if (n <= 1)
		return 1;
	w->off = off + n;
	fp->len = w->off;
	w->d = parent;
	return 0;
}

/* The path of f into the CPU's fpath_scratch (names leaf first; whole when they reach the
 * root). */
static __always_inline void fpath_read(struct file *f, struct mp_fpath *fp)
{
	struct fpath_walk w = {};

	fp->len = 0;
	fp->whole = 0;
	fp->nlink = BPF_CORE_READ(f, f_inode, __i_nlink);
	w.d = BPF_CORE_READ(f, f_path.dentry);
	w.vm = BPF_CORE_READ(f, f_path.mnt);
	w.m = fpath_mount(w.vm);
	bpf_loop(FPATH_STEPS, fpath_step, &w, 0);
}

#endif /* MEMPHASE_FPATH_H */
