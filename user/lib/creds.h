/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who memphase acts for. memphase runs as root; the person who started it is the
 * "invoking user": SUDO_UID/SUDO_GID under sudo (both must be valid ids), otherwise the
 * real uid/gid. Files are written, and processes are shown, with that user's rights; the
 * command of `run` runs as that user (or as --user NAME), never as root unless the
 * invoking user is root and said --allow-root.
 */
#ifndef __MP_CREDS_H
#define __MP_CREDS_H

#include <stdbool.h>
#include <sys/types.h>

#define CREDS_MAX_GROUPS	256
#define CREDS_NAME_MAX		64

struct creds {
	uid_t uid;
	gid_t gid;
	int ngroups;			/* supplementary groups, -1: not looked up */
	gid_t groups[CREDS_MAX_GROUPS];
	char name[CREDS_NAME_MAX];	/* login name, "" when the uid has none */
	bool root;			/* uid 0: no privileges to drop */
};

/*
 * The invoking user. With euid 0 and SUDO_UID or SUDO_GID set, both must be decimal ids
 * (not -1): otherwise -EINVAL. Groups are the user's (initgroups) when the uid has a
 * passwd entry, else just gid.
 */
int creds__invoking(struct creds *c);
/* root itself */
void creds__root(struct creds *c);
/* A user by name or number (--user): its uid, primary gid and groups. -ENOENT. */
int creds__lookup(struct creds *c, const char *user);
/*
 * Becomes c for good: supplementary groups, gid, then uid (all real, effective and saved
 * ids). No-op for c->root. 0 or -errno.
 */
int creds__drop(const struct creds *c);

#endif
