/* SPDX-License-Identifier: GPL-2.0 */
/* Who started memphase (the files are theirs) and who the command runs as. */
#ifndef __MP_USERS_H
#define __MP_USERS_H

#include "env.h"
#include "lib/creds.h"

/*
 * user: from SUDO_UID and SUDO_GID (both valid ids), else root. run_as (run mode): --user,
 * else the invoking user; never root unless root itself started memphase and said so
 * (--allow-root) or named root with --user. 0, or -errno after one line on stderr.
 */
int users__choose(const struct env *e, struct creds *user, struct creds *run_as);

#endif
