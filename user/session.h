/* SPDX-License-Identifier: GPL-2.0 */
/* One observation: skeleton lifecycle, target, poll loop, outputs. */
#ifndef __MP_SESSION_H
#define __MP_SESSION_H

#include "env.h"

/* Runs `memphase run` or `memphase attach` as configured in e; returns 0 or -errno. */
int session__run(const struct env *e);

#endif
