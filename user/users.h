/* SPDX-License-Identifier: GPL-2.0 */
/* Who started memphase (the files are theirs) and who the command runs as. */
#ifndef __MP_USERS_H
#define __MP_USERS_H

#include "env.h"
#include "lib/creds.h"

/* The invoking user (creds__invoking). 0, or -EINVAL after one line on stderr. */
int users__invoking(struct creds *user);
/*
 * user: users__invoking(). run_as (run mode): the invoking user; --user NAME or
 * --allow-root (root) only when root itself started memphase (under sudo they are
 * refused: the command runs as the one who ran sudo). 0, or -errno after one line on
 * stderr.
 */
int users__choose(const struct env *e, struct creds *user, struct creds *run_as);

#endif
