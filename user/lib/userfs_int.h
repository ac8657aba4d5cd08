/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The file helper's inside (lib/userfs.c): its protocol, its per-file state, and the
 * path resolution it does as the user (lib/userfs_path.c). Nothing else includes it.
 */
#ifndef __MP_USERFS_INT_H
#define __MP_USERFS_INT_H

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>

#define UF_MAX_FILES	32
#define UF_MAX_LINKS	40	/* the kernel's own limit on links in one lookup */
#define UF_SOCK_FD	3	/* the helper's end of the socket */
#define UF_PROC_MAGIC	0x9fa0	/* PROC_SUPER_MAGIC */

enum uf_op {
	UF_HELLO = 1,
	UF_OPEN,
	UF_RENEW,
	UF_COMMIT,
	UF_DISCARD,
	UF_SET_ASIDE,
	UF_REMOVE,
	UF_MAY_READ,		/* with an fd: may the user open its file for reading? */
	UF_OPEN_PROC,		/* with a /proc/PID fd: its maps or environ, opened as the user */
	UF_REMOVE_AT_END,	/* the committed file goes when the helper does */
	UF_READ_SINCE,		/* has the committed file been read since it was written? */
};

struct uf_req {
	__u32 op;
	__s32 id;
	char path[PATH_MAX];
};

struct uf_rep {
	__s32 err;		/* 0 or -errno */
	__s32 id;
	__u32 kind;
	__u32 seekable;
	__u64 dev, ino;
	__u32 rdev_major, rdev_minor;
	char name[256];
	char why[160];
};

struct uf_ent {
	int dirfd;		/* -1: free */
	int kind;
	char base[NAME_MAX + 1];
	char tmp[NAME_MAX + 1];	/* the temporary file not yet renamed, "" */
	int tmp_pin;		/* O_PATH: the temporary file; -1 */
	int pin;		/* O_PATH: the file the last commit put there; -1 */
	mode_t mode;		/* of the file it replaces */
	bool have_mode;
	bool remove_at_end;	/* the helper's end removes the committed file */
};

struct helper {
	uid_t uid;
	struct uf_ent ents[UF_MAX_FILES];
};

static inline __attribute__((format(printf, 3, 4)))
int why(struct uf_rep *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	return err;
}

/*
 * Resolves path (relative to at) into e's directory and name, as the user, following a
 * link only when it is the user's own or root's (lib/userfs_path.c). Streams: *sfd is the
 * open stream. 0 or -errno (r->why says why).
 */
int userfs_path__resolve(struct helper *h, int at, const char *path, int *links,
			 struct uf_ent *e, struct uf_rep *r, int *sfd);

#endif
