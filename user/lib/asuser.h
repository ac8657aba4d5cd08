/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What memphase opens on the invoking user's behalf, opened as that user. memphase runs
 * as root; a file the user names (a rules file, a marker's binary, the folder of watch's
 * files) or a port the user asks for must be theirs to open, not root's. A short-lived
 * child becomes the user for good (struct creds: uid, gid, supplementary groups; no
 * capability survives the change), opens the file or binds the socket with the kernel
 * checking that user's rights, and hands the descriptor back (SCM_RIGHTS): root then
 * reads or serves only what the user could have. The child has memphase's descriptors,
 * so /dev/stdin and /dev/fd/N (a shell's <(...)) name what they name for the user, under
 * the same checks.
 *
 * Not root (capabilities only), or root itself: the same calls, done in place.
 */
#ifndef __MP_ASUSER_H
#define __MP_ASUSER_H

#include <stddef.h>
#include <sys/socket.h>
#include "lib/creds.h"

#define ASUSER_TIMEOUT_MS	10000	/* an open (a FIFO nobody writes) or a read, at most */
#define ASUSER_TEXT_MAX		(1U << 20)	/* a rules file */

/*
 * Opens path as c with flags (O_RDONLY, or O_PATH to only find it; O_CLOEXEC is
 * added): *fd. 0, or -errno with why set (a line without the path) when errno alone
 * does not say it (-ETIMEDOUT: it did not open within ASUSER_TIMEOUT_MS).
 */
int asuser__open(const struct creds *c, const char *path, int flags, int *fd, char *why,
		 size_t whylen);
/*
 * Reads the whole file at path as c: a regular file, a FIFO or a character device of at
 * most max bytes (a NUL byte ends nothing: *len is what was read), within
 * ASUSER_TIMEOUT_MS. *text is malloc'd and NUL-terminated. 0, or -errno with why set
 * (-EFBIG: more than max bytes).
 */
int asuser__read(const struct creds *c, const char *path, size_t max, char **text,
		 size_t *len, char *why, size_t whylen);
/*
 * A socket of the address's family bound to it and listening (backlog), as c: a port
 * below the kernel's ip_unprivileged_port_start is refused as it would be for the user.
 * *fd (non-blocking, close-on-exec). 0 or -errno.
 */
int asuser__listen(const struct creds *c, const struct sockaddr *sa, socklen_t salen,
		   int backlog, int *fd);

#endif
