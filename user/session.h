/* SPDX-License-Identifier: GPL-2.0 */
/* One observation: skeleton lifecycle, target, poll loop, outputs. */
#ifndef __MP_SESSION_H
#define __MP_SESSION_H

#include "env.h"

/* attach --watched: the process was gone before it could be observed (nothing written) */
#define SESSION_EXIT_GONE	3

/*
 * Runs `memphase run` or `memphase attach` as configured in e; returns 0 or -errno.
 * *status: what memphase exits with: the command's status (128 + N when signal N ended
 * it), 0 for attach or when memphase detached, TARGET_EXIT_* when memphase failed.
 */
int session__run(const struct env *e, int *status);


#endif
