/* SPDX-License-Identifier: GPL-2.0 */
/* `memphase report FILE`: a recording read back, the summary and the files asked for. */
#ifndef __MP_REPORT_COMMAND_H
#define __MP_REPORT_COMMAND_H

#include "env.h"

/* 0 or -errno; *status: what memphase exits with. */
int report_command__run(const struct env *e, int *status);

#endif
